"""Six walks written after 9afa6d7, with the three offline changes of 2026-12-05 in (every
node pays the front end for each other lane; GEMMs that move little memory wait on their
loads; a kernel's stretch beside small kernels read at what they move), before any run: more
lanes than batches 60 and 61 hold, and wide element-wise chains beside GEMV lanes of other
shapes. On one stream: a Qwen2-shaped decode at batch 2 (bf16, 3584 wide, GQA 28/4). On
several streams: six lanes of 16 element-wise kernels each (bf16, 4 × 4096: scale, add,
SiLU, multiply); four lanes of RMSNorm and SiLU over 8 × 2048 bf16; a wide GELU chain over
32 × 16384 bf16 beside two lanes of bf16 GEMVs 2048 → 8192; eight expert lanes of small
fp16 MLPs (4 tokens, 1024 → 2816 → 1024, SiLU); wide residual adds over 16 × 32768 fp16
beside an fp16 GEMV lane 4096 → 11008.

    python3 scripts/validate_all.py --out DIR --groups heldout62
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import (beside_linear_lanes, fork_lanes, no_grad_step, repeated,  # noqa: E402
                        rms_norm)
from walk_registry import builder  # noqa: E402

QWEN2_3584 = dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=3,
                  num_attention_heads=28, num_key_value_heads=4, vocab_size=32000,
                  max_position_embeddings=2048)


def qwen2_3584_decode_b2():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Qwen2", "bfloat16", 2, 1, **QWEN2_3584)


def six_element_wise_lanes():
    import torch
    f = torch.nn.functional
    lanes = []
    for _ in range(6):
        with torch.device("cuda"):
            x = torch.randn(4, 4096, dtype=torch.bfloat16)
            r = torch.randn(4, 4096, dtype=torch.bfloat16)
        lanes.append(repeated(x, 4, lambda y, r=r: f.silu(y * 0.5 + r) * r))
    return no_grad_step(fork_lanes(lanes))


def four_rmsnorm_silu_lanes():
    import torch
    f = torch.nn.functional
    lanes = []
    for _ in range(4):
        with torch.device("cuda"):
            x = torch.randn(8, 2048, dtype=torch.bfloat16)
            g = torch.ones(2048, dtype=torch.bfloat16)
        lanes.append(repeated(x, 4, lambda y, g=g: f.silu(rms_norm(y, g))))
    return no_grad_step(fork_lanes(lanes))


def wide_gelu_beside_two_gemv_lanes():
    import torch
    with torch.device("cuda"):
        x = torch.randn(32, 16384, dtype=torch.bfloat16)
    gelus = repeated(x, 6, lambda y: torch.nn.functional.gelu(y) * 0.9)
    return beside_linear_lanes(gelus, 2, 2048, 8192, 1, 4, torch.bfloat16)


def eight_small_expert_lanes_b4():
    import torch
    f = torch.nn.functional
    lanes = []
    for _ in range(8):
        with torch.device("cuda"):
            x = torch.randn(4, 1024, dtype=torch.float16)
            up = torch.randn(2816, 1024, dtype=torch.float16) * 0.02
            down = torch.randn(1024, 2816, dtype=torch.float16) * 0.02
        lanes.append(lambda x=x, up=up, down=down: f.linear(f.silu(f.linear(x, up)), down))
    return no_grad_step(fork_lanes(lanes))


def wide_residual_adds_beside_gemv_lane():
    import torch
    with torch.device("cuda"):
        x = torch.randn(16, 32768, dtype=torch.float16)
        r = torch.randn(16, 32768, dtype=torch.float16)
    adds = repeated(x, 10, lambda y: y + r * 0.5)
    return beside_linear_lanes(adds, 1, 4096, 11008, 1, 4, torch.float16)


build = builder(131_62, {
    "km_qwen2_3584_decode_b2": qwen2_3584_decode_b2,
    "km_six_element_wise_lanes": six_element_wise_lanes,
    "km_four_rmsnorm_silu_lanes": four_rmsnorm_silu_lanes,
    "km_wide_gelu_beside_two_gemv_lanes": wide_gelu_beside_two_gemv_lanes,
    "km_eight_small_expert_lanes_b4": eight_small_expert_lanes_b4,
    "km_wide_residual_adds_beside_gemv_lane": wide_residual_adds_beside_gemv_lane,
})
