"""Six walks written after 9163eae (`--l2-resident paced` held out on an H100: nearer than the
default stand-ins on lanes made only of element-wise kernels over data the L2 holds, higher
on the small kernels between GEMM lanes and on lanes of tiny or mixed-size kernels), before
any run and before any rule built on that: a test of paced and of the default stand-ins on
both kinds, every walk's data within two thirds of a 50 MiB L2. Two bf16 lanes of GELU over
256 Ki elements (8 passes) beside two lanes of four 1024-square GEMVs; an fp16 lane of
SiLU-gated products over 16 x 2048 (8 passes) beside an MLP lane (1024 -> 2048 -> 1024, SiLU,
8 tokens, two blocks); four f32 lanes of adds over 1 Ki elements (12 passes); three bf16
lanes of multiplications over 4 Ki, 64 Ki and 512 Ki elements side by side (8 passes); two
bf16 LayerNorm lanes over 16 x 1024 (6 passes) beside a lane of six 1024-square projections
of 16 tokens; three fp16 lanes of written-out RMSNorm over 32 x 2048 (4 passes).

    python3 scripts/validate_all.py --out DIR --groups heldout74
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import (  # noqa: E402
    fork_lanes, lane_of, lanes_step as lanes, linear_lane, no_grad_step, rms_norm,
)
from walk_registry import builder  # noqa: E402


def gelu_lanes_beside_two_gemv_lanes_bf16():
    import torch
    gelu = [lane_of((1 << 18,), torch.bfloat16, 8, torch.nn.functional.gelu)
            for _ in range(2)]
    gemvs = [linear_lane(1024, 1024, 1, 4, torch.bfloat16) for _ in range(2)]
    return no_grad_step(fork_lanes(gelu + gemvs))


def silu_gate_lane_beside_mlp_lane_fp16():
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        ups = [torch.randn(2048, 1024, dtype=torch.float16) * 0.02 for _ in range(2)]
        downs = [torch.randn(1024, 2048, dtype=torch.float16) * 0.02 for _ in range(2)]
        x = torch.randn(8, 1024, dtype=torch.float16)

    def mlp():
        y = x
        for up, down in zip(ups, downs):
            y = f.linear(f.silu(f.linear(y, up)), down)
        return y
    gate = lane_of((16, 2048), torch.float16, 8, lambda y: f.silu(y) * y)
    return no_grad_step(fork_lanes([gate, mlp]))


def four_lanes_of_tiny_adds_f32():
    import torch

    def lane():
        with torch.device("cuda"):
            r = torch.randn(1 << 10)
        return lane_of((1 << 10,), torch.float32, 12, lambda y, r=r: y + r)
    return lanes(4, lane)


def mixed_size_mul_lanes_bf16():
    import torch

    def lane(n):
        with torch.device("cuda"):
            g = torch.rand(n, dtype=torch.bfloat16)
        return lane_of((n,), torch.bfloat16, 8, lambda y, g=g: y * g)
    return no_grad_step(fork_lanes([lane(n) for n in (1 << 12, 1 << 16, 1 << 19)]))


def layernorm_lanes_beside_projection_lane_bf16():
    import torch
    norms = [lane_of((16, 1024), torch.bfloat16, 6,
                     lambda y: torch.nn.functional.layer_norm(y, (1024,)))
             for _ in range(2)]
    return no_grad_step(fork_lanes(norms + [linear_lane(1024, 1024, 16, 6, torch.bfloat16)]))


def three_lanes_of_rmsnorm_fp16():
    import torch

    def lane():
        with torch.device("cuda"):
            g = torch.rand(2048, dtype=torch.float16)
        return lane_of((32, 2048), torch.float16, 4, lambda y, g=g: rms_norm(y, g))
    return lanes(3, lane)


build = builder(131_74, {
    "ky_gelu_lanes_beside_two_gemv_lanes_bf16": gelu_lanes_beside_two_gemv_lanes_bf16,
    "ky_silu_gate_lane_beside_mlp_lane_fp16": silu_gate_lane_beside_mlp_lane_fp16,
    "ky_four_lanes_of_tiny_adds_f32": four_lanes_of_tiny_adds_f32,
    "ky_mixed_size_mul_lanes_bf16": mixed_size_mul_lanes_bf16,
    "ky_layernorm_lanes_beside_projection_lane_bf16": layernorm_lanes_beside_projection_lane_bf16,
    "ky_three_lanes_of_rmsnorm_fp16": three_lanes_of_rmsnorm_fp16,
})
