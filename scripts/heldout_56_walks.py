"""Six walks written after b9b8128 (`--summary`: a small kernel beside kernels of fewer blocks
than SMs whose blocks leave no room for its own runs on the SMs they leave, in as many more
rounds of blocks as it needs there) and before any run. On one stream: a Phi-3-shaped decode
at batch 8 (bf16, 2048 wide). On several streams, small kernels of several grids beside
lanes of decode GEMVs 2048 → 8192 (whose cuBLAS kernels have held 128 whole SMs on the
H200): adds over 8 × 65536 bf16 beside one lane; SiLU-and-multiply over 4 × 14336 bf16
beside two lanes; a written-out RMSNorm over 32 × 2048 bf16 beside one lane; GELU over
64 × 8192 fp16 beside an fp16 lane; and residual adds over 16 × 4096 fp16 beside two lanes
of fp16 QKV GEMVs 4096 → 6144.

    python3 scripts/validate_all.py --out DIR --groups heldout56
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import beside_linear_lanes, repeated  # noqa: E402
from walk_registry import builder  # noqa: E402

# Phi3Config pads with token 32000 by default: within a 32000-token vocabulary it must be 0.
PHI3_2048 = dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=4,
                 num_attention_heads=16, num_key_value_heads=16, vocab_size=32000,
                 max_position_embeddings=2048, pad_token_id=0)


def phi3_decode_b8():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Phi3", "bfloat16", 8, 1, **PHI3_2048)


def wide_adds_beside_gemv_lane():
    import torch
    with torch.device("cuda"):
        x = torch.randn(8, 65536, dtype=torch.bfloat16)
        r = torch.randn(8, 65536, dtype=torch.bfloat16)
    return beside_linear_lanes(repeated(x, 8, lambda y: y + r), 1, 2048, 8192, 1, 4,
                               torch.bfloat16)


def silu_mul_beside_two_gemv_lanes():
    import torch
    with torch.device("cuda"):
        gate = torch.randn(4, 14336, dtype=torch.bfloat16)
        up = torch.randn(4, 14336, dtype=torch.bfloat16)
    swiglu = repeated(gate, 6, lambda y: torch.nn.functional.silu(y) * up)
    return beside_linear_lanes(swiglu, 2, 2048, 8192, 1, 4, torch.bfloat16)


def rmsnorm_b32_beside_gemv_lane():
    import torch
    from walk_parts import rms_norm
    with torch.device("cuda"):
        x = torch.randn(32, 2048, dtype=torch.bfloat16)
        g = torch.ones(2048, dtype=torch.bfloat16)
    return beside_linear_lanes(repeated(x, 6, lambda y: rms_norm(y, g)), 1, 2048, 8192, 1, 4,
                               torch.bfloat16)


def gelu_beside_fp16_gemv_lane():
    import torch
    with torch.device("cuda"):
        x = torch.randn(64, 8192, dtype=torch.float16)
    gelus = repeated(x, 8, lambda y: torch.nn.functional.gelu(y) * 0.9)
    return beside_linear_lanes(gelus, 1, 2048, 8192, 1, 4, torch.float16)


def residual_adds_beside_qkv_lanes():
    import torch
    with torch.device("cuda"):
        x = torch.randn(16, 4096, dtype=torch.float16)
        r = torch.randn(16, 4096, dtype=torch.float16)
    adds = repeated(x, 12, lambda y: y + r * 0.5)
    return beside_linear_lanes(adds, 2, 4096, 6144, 1, 3, torch.float16)


build = builder(131_56, {
    "kg_phi3_decode_b8": phi3_decode_b8,
    "kg_wide_adds_beside_gemv_lane": wide_adds_beside_gemv_lane,
    "kg_silu_mul_beside_two_gemv_lanes": silu_mul_beside_two_gemv_lanes,
    "kg_rmsnorm_b32_beside_gemv_lane": rmsnorm_b32_beside_gemv_lane,
    "kg_gelu_beside_fp16_gemv_lane": gelu_beside_fp16_gemv_lane,
    "kg_residual_adds_beside_qkv_lanes": residual_adds_beside_qkv_lanes,
})
