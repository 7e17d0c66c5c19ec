"""Four walks written after held-out batch 27 and the shipped profile's small adds beside two
and three other lanes (`--summary`), before any run of them: a StarCoder2-shaped decode at
batch 8 on one stream, three GPT-2-shaped decodes at batch 1 side by side, four lanes of a
decoder's small kernels (RMSNorm, SiLU times up, residual adds at batch 1), and two lanes of
small bf16 adds beside a chain of bf16 projections at 32 tokens.

    python3 scripts/validate_all.py --out DIR --groups heldout28
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import decoder as _decoder  # noqa: E402


def three_gpt2_decodes_b1():
    from walk_parts import fork_lanes, hf_decoder_step
    cfg = dict(n_embd=1024, n_layer=4, n_head=16, vocab_size=32000, n_positions=1024)
    return fork_lanes([hf_decoder_step("GPT2", "float16", 1, 1, "LMHeadModel", **cfg)
                       for _ in range(3)])


def four_lanes_of_small_decoder_kernels():
    import torch
    from walk_parts import fork_lanes
    f = torch.nn.functional
    d = 2048

    def lane():
        with torch.device("cuda"):
            h = torch.randn(1, d, dtype=torch.bfloat16)
            w = torch.randn(d, dtype=torch.bfloat16)
            gate = torch.randn(1, 2 * d, dtype=torch.bfloat16)
            up = torch.randn(1, 2 * d, dtype=torch.bfloat16)

        def run():
            x = h
            for _ in range(12):
                v = x.float()
                v = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + 1e-6)
                n = w * v.to(torch.bfloat16)
                m = f.silu(gate) * up
                x = x + n + m[:, :d]
            return x
        return run
    return fork_lanes([lane() for _ in range(4)])


def two_add_lanes_beside_projections():
    import torch
    from walk_parts import fork_lanes, linear_chain
    f = torch.nn.functional
    with torch.device("cuda"):
        layers = [torch.nn.Linear(2048, 2048, bias=False).bfloat16() for _ in range(12)]
        v = torch.randn(32, 2048, dtype=torch.bfloat16)
        a = torch.randn(16, 1024, dtype=torch.bfloat16)
        b = torch.randn(16, 1024, dtype=torch.bfloat16)
    proj = linear_chain(layers, v, f.gelu)

    def adds():
        x = a
        for _ in range(40):
            x = x + b
        return x
    return fork_lanes([proj, adds, adds])


build = builder(128_28, {
    "id_starcoder2_decode_b8": _decoder("Starcoder2", "bfloat16", 8, 1, hidden_size=2048,
                                        intermediate_size=8192, num_hidden_layers=6,
                                        num_attention_heads=16, num_key_value_heads=4,
                                        max_position_embeddings=2048),
    "id_three_gpt2_decodes_b1": three_gpt2_decodes_b1,
    "id_four_lanes_of_small_decoder_kernels": four_lanes_of_small_decoder_kernels,
    "id_two_add_lanes_beside_projections": two_add_lanes_beside_projections,
})
