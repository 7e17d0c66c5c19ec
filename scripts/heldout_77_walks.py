"""Six walks written after 31ca786 (held-out batch 76: `--l2-resident work`, element-wise
stand-ins that do their kernel's work from the L2, came within 5% on 5 of 6 such walks; on
batches 68-74 it was worse beside GEMM lanes and high on lanes of 1-block or very wide
kernels), before any run and before any narrower rule built on that: lanes of element-wise
kernels over data the L2 holds, of every size from one block to several MiB, alone and beside
GEMV and MLP lanes, every walk's data within two thirds of a 50 MiB L2. Four f32 lanes of
scale-and-add over 2 Ki elements (10 passes, grids of a block or two); two bf16 lanes of adds
over 1 Mi elements (3 passes, 2 MiB a tensor); two fp16 lanes of sigmoid-gated products over
16 x 2048 (6 passes) beside two lanes of four 1024-square GEMVs; three fp16 lanes of scaled
exponentials over 2 Ki, 32 Ki and 256 Ki elements (8 passes); six fp16 lanes of tanh products
over 32 Ki elements (6 passes); three bf16 lanes of residual scales over 16 x 4096 (6
passes) beside an MLP lane (1024 -> 2048 -> 1024, GELU, 4 tokens).

    python3 scripts/validate_all.py --out DIR --groups heldout77
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import (  # noqa: E402
    fork_lanes, lane_of, lanes_step as lanes, linear_lane, no_grad_step,
)
from walk_registry import builder  # noqa: E402


def four_lanes_of_small_scale_adds_f32():
    import torch

    def lane():
        with torch.device("cuda"):
            r = torch.randn(1 << 11)
        return lane_of((1 << 11,), torch.float32, 10, lambda y, r=r: y * 0.9 + r)
    return lanes(4, lane)


def two_lanes_of_wide_adds_bf16():
    import torch

    def lane():
        with torch.device("cuda"):
            r = torch.randn(1 << 20, dtype=torch.bfloat16)
        return lane_of((1 << 20,), torch.bfloat16, 3, lambda y, r=r: y + r)
    return lanes(2, lane)


def sigmoid_gate_lanes_beside_two_gemv_lanes_fp16():
    import torch

    def gate():
        with torch.device("cuda"):
            g = torch.randn(16, 2048, dtype=torch.float16)
        return lane_of((16, 2048), torch.float16, 6, lambda y, g=g: torch.sigmoid(g) * y)
    gates = [gate() for _ in range(2)]
    gemvs = [linear_lane(1024, 1024, 1, 4, torch.float16) for _ in range(2)]
    return no_grad_step(fork_lanes(gates + gemvs))


def scaled_exp_lanes_of_three_sizes_fp16():
    import torch
    sizes = iter((1 << 11, 1 << 15, 1 << 18))
    return lanes(3, lambda: lane_of((next(sizes),), torch.float16, 8,
                                    lambda y: torch.exp(y * 0.01) * 0.99))


def six_lanes_of_tanh_products_fp16():
    import torch
    return lanes(6, lambda: lane_of((1 << 15,), torch.float16, 6,
                                    lambda y: torch.tanh(y) * y))


def residual_scale_lanes_beside_mlp_lane_bf16():
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        up = torch.randn(2048, 1024, dtype=torch.bfloat16) * 0.02
        down = torch.randn(1024, 2048, dtype=torch.bfloat16) * 0.02
        x = torch.randn(4, 1024, dtype=torch.bfloat16)

    def mlp():
        return f.linear(f.gelu(f.linear(x, up)), down)

    def residual():
        with torch.device("cuda"):
            r = torch.randn(16, 4096, dtype=torch.bfloat16)
        return lane_of((16, 4096), torch.bfloat16, 6, lambda y, r=r: (y + r) * 0.5)
    return no_grad_step(fork_lanes([residual() for _ in range(3)] + [mlp]))


build = builder(131_77, {
    "lb_four_lanes_of_small_scale_adds_f32": four_lanes_of_small_scale_adds_f32,
    "lb_two_lanes_of_wide_adds_bf16": two_lanes_of_wide_adds_bf16,
    "lb_sigmoid_gate_lanes_beside_two_gemv_lanes_fp16":
        sigmoid_gate_lanes_beside_two_gemv_lanes_fp16,
    "lb_scaled_exp_lanes_of_three_sizes_fp16": scaled_exp_lanes_of_three_sizes_fp16,
    "lb_six_lanes_of_tanh_products_fp16": six_lanes_of_tanh_products_fp16,
    "lb_residual_scale_lanes_beside_mlp_lane_bf16": residual_scale_lanes_beside_mlp_lane_bf16,
})
