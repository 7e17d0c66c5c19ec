"""Four walks written after held-out batch 39's run and the GEMM lane probes (no change to
either graph price since 41f1d11), before any run of them: a GLM-shaped decode at batch 4
(transformers, bf16) and a CuPy stack of eight RMSNorm passes over 4096 rows of 2048 (square,
row mean, reciprocal square root, scale), each on one stream; four lanes of six bf16 linear
layers of hidden 2048 over 4 tokens with a GELU after each, each lane on a stream of its own;
three lanes of four fp16 GEMMs over 16 tokens with a SiLU after each, one lane 1024, one 2048
and one 4096 wide, each on a stream of its own.

    python3 scripts/validate_all.py --out DIR --groups heldout40

The GLM decode failed to build in the batch's one run (GLM's default pad token lies outside
the 32 000-word vocabulary); its pad token has been set to 0 since, not yet run.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def glm_decode_b4():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Glm", "bfloat16", 4, 1, hidden_size=1024, intermediate_size=3072,
                           num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=4,
                           head_dim=64, vocab_size=32000, max_position_embeddings=2048,
                           pad_token_id=0)


def cupy_rmsnorm_stack():
    import cupy as cp
    x0 = cp.random.standard_normal((4096, 2048), dtype=cp.float32)
    weights = [cp.random.random(2048, dtype=cp.float32) + 0.5 for _ in range(8)]

    def step():
        x = x0
        for w in weights:
            scale = cp.reciprocal(cp.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6))
            x = x * scale * w
        return x
    return step


def four_gelu_linear_lanes_b4():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn
    with torch.device("cuda"):
        lanes = [nn.Sequential(*[nn.Sequential(nn.Linear(2048, 2048), nn.GELU())
                                 for _ in range(6)]).to(torch.bfloat16) for _ in range(4)]
        x = torch.randn(4, 2048, dtype=torch.bfloat16)
    run = fork_lanes(list(lanes))

    def step():
        with torch.no_grad():
            return run(x)
    return step


def three_widths_silu_lanes_b16():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        chains = [([torch.randn(d, d, dtype=torch.float16) / d ** 0.5 for _ in range(4)],
                   torch.randn(16, d, dtype=torch.float16)) for d in (1024, 2048, 4096)]

    def lane(ws, x):
        def run():
            h = x
            for w in ws:
                h = torch.nn.functional.silu(h @ w)
            return h
        return run

    run = fork_lanes([lane(ws, x) for ws, x in chains])

    def step():
        with torch.no_grad():
            return run()
    return step


build = builder(131_40, {
    "iq_glm_decode_b4": glm_decode_b4,
    "iq_cupy_rmsnorm_stack": (cupy_rmsnorm_stack, "cupy"),
    "iq_four_gelu_linear_lanes_b4": four_gelu_linear_lanes_b4,
    "iq_three_widths_silu_lanes_b16": three_widths_silu_lanes_b16,
})
