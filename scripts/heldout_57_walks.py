"""Six walks written after d3904aa (`--summary`: the confinement of small kernels to the SMs
whole-SM kernels leave, taken back; the wait for room beside kernels that fill every SM and
the small-kernel stretch at the load the others move kept) and before any run: the first test
of the version without the confinement, on the kinds batch 56 and the crowding and two-lane
probes pointed at. On one stream: a Llama-shaped decode at batch 2 (bf16, 3072 wide, GQA
24/8). On several streams: SiLU over 16 × 32768 fp16 (a grid over every SM) beside a lane of
fp16 decode GEMVs 4096 → 4096; adds over 8 × 8192 bf16 (64 blocks) beside a lane of decode
GEMVs 2048 → 8192; an RMSNorm written out over 16 × 3072 bf16 beside a lane of GEMVs
3072 → 12288; small adds over 4 × 4096 bf16 beside two lanes of GEMVs 2048 → 8192 (whose
blocks together outnumber the SMs); a softmax over 8 × 32000 fp32 logits beside three lanes of
fp16 GEMVs 1024 → 4096.

    python3 scripts/validate_all.py --out DIR --groups heldout57
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import beside_linear_lanes, repeated  # noqa: E402
from walk_registry import builder  # noqa: E402

LLAMA_3072 = dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=4,
                  num_attention_heads=24, num_key_value_heads=8, vocab_size=32000,
                  max_position_embeddings=2048)


def llama_3072_decode_b2():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Llama", "bfloat16", 2, 1, **LLAMA_3072)


def wide_silu_beside_fp16_gemv_lane():
    import torch
    with torch.device("cuda"):
        x = torch.randn(16, 32768, dtype=torch.float16)
    silus = repeated(x, 8, lambda y: torch.nn.functional.silu(y) * 0.5)
    return beside_linear_lanes(silus, 1, 4096, 4096, 1, 4, torch.float16)


def adds_64_blocks_beside_gemv_lane():
    import torch
    with torch.device("cuda"):
        x = torch.randn(8, 8192, dtype=torch.bfloat16)
        r = torch.randn(8, 8192, dtype=torch.bfloat16)
    return beside_linear_lanes(repeated(x, 10, lambda y: y + r), 1, 2048, 8192, 1, 4,
                               torch.bfloat16)


def rmsnorm_3072_beside_wide_gemv_lane():
    import torch
    from walk_parts import rms_norm
    with torch.device("cuda"):
        x = torch.randn(16, 3072, dtype=torch.bfloat16)
        g = torch.ones(3072, dtype=torch.bfloat16)
    return beside_linear_lanes(repeated(x, 6, lambda y: rms_norm(y, g)), 1, 3072, 12288, 1, 4,
                               torch.bfloat16)


def small_adds_beside_two_gemv_lanes():
    import torch
    with torch.device("cuda"):
        x = torch.randn(4, 4096, dtype=torch.bfloat16)
        r = torch.randn(4, 4096, dtype=torch.bfloat16)
    return beside_linear_lanes(repeated(x, 12, lambda y: y + r), 2, 2048, 8192, 1, 4,
                               torch.bfloat16)


def logits_softmax_beside_three_gemv_lanes():
    import torch
    with torch.device("cuda"):
        x = torch.randn(8, 32000, dtype=torch.float32)
    softmaxes = repeated(x, 4, lambda y: torch.softmax(y, dim=-1) * 2.0)
    return beside_linear_lanes(softmaxes, 3, 1024, 4096, 1, 4, torch.float16)


build = builder(131_57, {
    "kh_llama_3072_decode_b2": llama_3072_decode_b2,
    "kh_wide_silu_beside_fp16_gemv_lane": wide_silu_beside_fp16_gemv_lane,
    "kh_adds_64_blocks_beside_gemv_lane": adds_64_blocks_beside_gemv_lane,
    "kh_rmsnorm_3072_beside_wide_gemv_lane": rmsnorm_3072_beside_wide_gemv_lane,
    "kh_small_adds_beside_two_gemv_lanes": small_adds_beside_two_gemv_lanes,
    "kh_logits_softmax_beside_three_gemv_lanes": logits_softmax_beside_three_gemv_lanes,
})
