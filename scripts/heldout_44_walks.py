"""Six walks written after the run of all 93 walks at 5687dc7 (no change to either graph price
since ad0f462 then), before any run of them and before `--summary` read each kernel's pair
stretch at the load beside it. They are of the two kinds that run found the offline
model's small-kernel stretch pulling apart: small kernels between GEMMs on two or three
streams, which it now prices high, and lanes of small kernels beside decode GEMMs, which it
was made for. On one stream: a Llama-shaped decode at hidden 3072 and batch 4 (bf16), and a
CuPy chain of a custom element-wise kernel over 2 Mi floats. On several: two lanes of
pre-norm MLP blocks at 8 tokens (bf16, LayerNorm, 2048 → 8192 → 2048 with SiLU, residual add);
three lanes of RMSNorm-and-scale passes over 16 × 4096 beside a lane of decode projections
(4096 → 4096 at 4 tokens, bf16); a lane of GELU, multiply and add passes over 8 × 4096 beside
a lane of compute-bound prefill GEMMs (512 × 4096 × 4096, bf16); and two Qwen2-shaped decodes
(batch 1 and batch 4, bf16) side by side.

    python3 scripts/validate_all.py --out DIR --groups heldout44
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import rms_norm  # noqa: E402
from walk_registry import builder  # noqa: E402

QWEN2_SMALL = dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                   num_attention_heads=16, num_key_value_heads=2, vocab_size=32000,
                   max_position_embeddings=2048)


def llama_3072_decode_b4():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Llama", "bfloat16", 4, 1, hidden_size=3072,
                           intermediate_size=8192, num_hidden_layers=6, num_attention_heads=24,
                           num_key_value_heads=8, vocab_size=32000,
                           max_position_embeddings=2048)


def cupy_custom_elementwise():
    import cupy as cp
    k = cp.ElementwiseKernel("float32 x, float32 y", "float32 z",
                             "z = x * 0.75f + y * y * 0.25f - 0.1f", "iu_blend")
    a = cp.random.standard_normal(1 << 21, dtype=cp.float32)
    b = cp.random.standard_normal(1 << 21, dtype=cp.float32)

    def step():
        x, y = a, b
        for _ in range(40):
            x, y = k(x, y), x
        return x
    return step


def mlp_block_lanes_b8():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(2048)
            self.up = nn.Linear(2048, 8192)
            self.down = nn.Linear(8192, 2048)

        def forward(self, x):
            return x + self.down(nn.functional.silu(self.up(self.norm(x))))

    with torch.device("cuda"):
        lanes = [nn.Sequential(*[Block() for _ in range(4)]).bfloat16().eval() for _ in range(2)]
        x = torch.randn(8, 2048, dtype=torch.bfloat16)
    run = fork_lanes([lambda m=m: m(x) for m in lanes])

    def step():
        with torch.no_grad():
            return run()
    return step


def rmsnorm_lanes_beside_projections():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        ws = [torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(8)]
        x = torch.randn(4, 4096, dtype=torch.bfloat16)
        hs = [torch.randn(16, 4096, dtype=torch.bfloat16) for _ in range(3)]
        g = torch.randn(4096, dtype=torch.bfloat16)

    def projections():
        y = x
        for w in ws:
            y = torch.nn.functional.linear(y, w)
        return y

    def norms(h):
        def run():
            y = h
            for _ in range(6):
                y = rms_norm(y, g)
            return y
        return run

    run = fork_lanes([projections] + [norms(h) for h in hs])

    def step():
        with torch.no_grad():
            return run()
    return step


def gelu_chain_beside_prefill_gemms():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        ws = [torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(3)]
        x = torch.randn(512, 4096, dtype=torch.bfloat16)
        h = torch.randn(8, 4096, dtype=torch.bfloat16)
        s = torch.randn(8, 4096, dtype=torch.bfloat16)

    def prefill():
        y = x
        for w in ws:
            y = torch.nn.functional.linear(y, w)
        return y

    def small():
        y = h
        for _ in range(12):
            y = torch.nn.functional.gelu(y) * s + h
        return y

    run = fork_lanes([prefill, small])

    def step():
        with torch.no_grad():
            return run()
    return step


def two_qwen2_decodes():
    from walk_parts import corner, fork_join, hf_decoder_step
    one = hf_decoder_step("Qwen2", "bfloat16", 1, 1, **QWEN2_SMALL)
    four = hf_decoder_step("Qwen2", "bfloat16", 4, 1, **QWEN2_SMALL)
    return fork_join(lambda: corner(one()), lambda: corner(four()))


build = builder(131_44, {
    "iu_llama_3072_decode_b4": llama_3072_decode_b4,
    "iu_cupy_custom_elementwise": (cupy_custom_elementwise, "cupy"),
    "iu_mlp_block_lanes_b8": mlp_block_lanes_b8,
    "iu_rmsnorm_lanes_beside_projections": rmsnorm_lanes_beside_projections,
    "iu_gelu_chain_beside_prefill_gemms": gelu_chain_beside_prefill_gemms,
    "iu_two_qwen2_decodes": two_qwen2_decodes,
})
