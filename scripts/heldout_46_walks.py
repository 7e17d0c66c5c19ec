"""Six walks written after the probes that parted what slows a small kernel beside a GEMM lane
(the load, and the SMs the lane's blocks leave free) and what the profile's GEMM pair holds
(its adds' time), and before any change to `--summary` that reads them; never run before. All
on several streams, of the kinds those probes set apart: small kernels beside GEMM lanes of
many blocks and of few, GEMM lanes of wide grids side by side, and decode work beside
sampling. A lane of 24 multiply-add passes over 8 × 2048 (bf16) beside a lane of bf16 linear
layers 1024 → 8192 at 4 tokens (wide outputs, many blocks), and the same passes beside linear
layers 8192 → 1024 (narrow outputs, split-K, few blocks); two lanes of fp16 linear layers
2048 → 6144 at 8 tokens; a lane of RMSNorm passes over 4 × 4096 beside a lane of bf16 up
projections 4096 → 14336 at 2 tokens; three lanes of LayerNorm and GELU over 8 × 1024 beside a
lane of decode attention (SDPA over a 2048-position fp16 cache, batch 4, 16 heads); and a
Qwen2-shaped decode (batch 4, bf16) beside a lane of top-k sampling over 4 × 32000 logits.

    python3 scripts/validate_all.py --out DIR --groups heldout46
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import attention_chain, linear_lane, rms_norm  # noqa: E402
from walk_parts import no_grad_step as no_grad  # noqa: E402
from walk_registry import builder  # noqa: E402

QWEN2_SMALL = dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                   num_attention_heads=16, num_key_value_heads=2, vocab_size=32000,
                   max_position_embeddings=2048)


def multiply_add_lane(passes):
    import torch
    with torch.device("cuda"):
        h = torch.randn(8, 2048, dtype=torch.bfloat16)
        s = torch.randn(8, 2048, dtype=torch.bfloat16)

    def run():
        y = h
        for _ in range(passes):
            y = y * s + h
        return y
    return run


def adds_beside_wide_decode_gemms():
    import torch
    from walk_parts import fork_lanes
    return no_grad(fork_lanes([linear_lane(1024, 8192, 4, 8, torch.bfloat16),
                               multiply_add_lane(24)]))


def adds_beside_narrow_decode_gemms():
    import torch
    from walk_parts import fork_lanes
    return no_grad(fork_lanes([linear_lane(8192, 1024, 4, 8, torch.bfloat16),
                               multiply_add_lane(24)]))


def two_wide_gemm_lanes_b8():
    import torch
    from walk_parts import fork_lanes
    return no_grad(fork_lanes([linear_lane(2048, 6144, 8, 6, torch.float16) for _ in range(2)]))


def rmsnorm_beside_up_projections_b2():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        h = torch.randn(4, 4096, dtype=torch.bfloat16)
        g = torch.randn(4096, dtype=torch.bfloat16)

    def norms():
        y = h
        for _ in range(8):
            y = rms_norm(y, g)
        return y

    return no_grad(fork_lanes([linear_lane(4096, 14336, 2, 4, torch.bfloat16), norms]))


def layernorm_gelu_lanes_beside_attention_b4():
    import torch
    import torch.nn.functional as F
    from walk_parts import fork_lanes
    nn = torch.nn
    with torch.device("cuda"):
        k = torch.randn(4, 16, 2048, 64, dtype=torch.float16)
        v = torch.randn(4, 16, 2048, 64, dtype=torch.float16)
        q = torch.randn(4, 16, 1, 64, dtype=torch.float16)
        norms = [nn.LayerNorm(1024).half() for _ in range(3)]
        xs = [torch.randn(8, 1024, dtype=torch.float16) for _ in range(3)]

    def lane(norm, x):
        def run():
            y = x
            for _ in range(6):
                y = F.gelu(norm(y))
            return y
        return run

    return no_grad(fork_lanes([attention_chain(q, k, v, 4)]
                              + [lane(n, x) for n, x in zip(norms, xs)]))


def qwen2_decode_beside_sampling():
    import torch
    from walk_parts import corner, fork_join, hf_decoder_step
    decode = hf_decoder_step("Qwen2", "bfloat16", 4, 1, **QWEN2_SMALL)
    with torch.device("cuda"):
        logits = torch.randn(4, 32000, dtype=torch.float32)

    def sample():
        with torch.no_grad():
            top, idx = torch.topk(logits, 50, dim=-1)
            p = torch.softmax(top / 0.8, dim=-1)
            return (p * idx.float()).sum(-1)
    return fork_join(lambda: corner(decode()), lambda: corner(sample()))


build = builder(131_46, {
    "iw_adds_beside_wide_decode_gemms": adds_beside_wide_decode_gemms,
    "iw_adds_beside_narrow_decode_gemms": adds_beside_narrow_decode_gemms,
    "iw_two_wide_gemm_lanes_b8": two_wide_gemm_lanes_b8,
    "iw_rmsnorm_beside_up_projections_b2": rmsnorm_beside_up_projections_b2,
    "iw_layernorm_gelu_lanes_beside_attention_b4": layernorm_gelu_lanes_beside_attention_b4,
    "iw_qwen2_decode_beside_sampling": qwen2_decode_beside_sampling,
})
