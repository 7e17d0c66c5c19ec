"""Six walks written after 67ce06d (lanes of element-wise kernels over data the L2 holds run side
by side in an unprofiled graph and slow each other, 1.25-1.7 times one lane's step, where the
replay's stand-ins of their short kernels do not), before any run and before any rule built
on that: lanes of such kernels, most of 1-3 us, every walk's data within two thirds of a 50
MiB L2. Three fp16 lanes of bias-GELU over 16 x 4096 (6 passes); four bf16 lanes of
SiLU-gated products over 8 x 8192 (6 passes); two f32 lanes of row softmax over 64 x 1024
(8 passes); five fp16 lanes of centre-and-scale over 16 Ki elements (10 passes, short
kernels); a lane of f32 adds over 1 Mi elements (6 passes) beside two f32 lanes of
written-out RMSNorm over 16 x 4096 (4 passes); two fp16 LayerNorm lanes over 32 x 2048
(6 passes) beside a lane of four 1024-square GEMVs.

    python3 scripts/validate_all.py --out DIR --groups heldout76
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import (  # noqa: E402
    fork_lanes, lane_of, lanes_step as lanes, linear_lane, no_grad_step, rms_norm,
)
from walk_registry import builder  # noqa: E402


def three_lanes_of_bias_gelu_fp16():
    import torch
    f = torch.nn.functional

    def lane():
        with torch.device("cuda"):
            b = torch.randn(4096, dtype=torch.float16)
        return lane_of((16, 4096), torch.float16, 6, lambda y, b=b: f.gelu(y + b))
    return lanes(3, lane)


def four_lanes_of_silu_mul_bf16():
    import torch
    f = torch.nn.functional

    def lane():
        with torch.device("cuda"):
            g = torch.randn(8, 8192, dtype=torch.bfloat16)
        return lane_of((8, 8192), torch.bfloat16, 6, lambda y, g=g: f.silu(y) * g)
    return lanes(4, lane)


def two_lanes_of_row_softmax_f32():
    import torch
    return lanes(2, lambda: lane_of((64, 1024), torch.float32, 8,
                                    lambda y: torch.softmax(y, dim=-1)))


def five_lanes_of_centre_scale_fp16():
    import torch
    return lanes(5, lambda: lane_of((1 << 14,), torch.float16, 10, lambda y: (y - 0.1) * 1.1))


def wide_adds_beside_rmsnorm_lanes_f32():
    import torch

    def norm():
        with torch.device("cuda"):
            g = torch.rand(4096)
        return lane_of((16, 4096), torch.float32, 4, lambda y, g=g: rms_norm(y, g))
    with torch.device("cuda"):
        r = torch.randn(1 << 20)
    adds = lane_of((1 << 20,), torch.float32, 6, lambda y: y + r)
    return lanes(2, norm, adds)


def layernorm_lanes_beside_gemv_lane_fp16():
    import torch
    norms = [lane_of((32, 2048), torch.float16, 6,
                     lambda y: torch.nn.functional.layer_norm(y, (2048,)))
             for _ in range(2)]
    return no_grad_step(fork_lanes(norms + [linear_lane(1024, 1024, 1, 4, torch.float16)]))


build = builder(131_76, {
    "la_three_lanes_of_bias_gelu_fp16": three_lanes_of_bias_gelu_fp16,
    "la_four_lanes_of_silu_mul_bf16": four_lanes_of_silu_mul_bf16,
    "la_two_lanes_of_row_softmax_f32": two_lanes_of_row_softmax_f32,
    "la_five_lanes_of_centre_scale_fp16": five_lanes_of_centre_scale_fp16,
    "la_wide_adds_beside_rmsnorm_lanes_f32": wide_adds_beside_rmsnorm_lanes_f32,
    "la_layernorm_lanes_beside_gemv_lane_fp16": layernorm_lanes_beside_gemv_lane_fp16,
})
