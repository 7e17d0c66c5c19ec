"""Six walks written after b343ed9 (`--l2-resident work` without its fallback: right on lanes of
mid-sized element-wise kernels over data the L2 holds, high on lanes of kernels shorter than
its work can be; a fallback held against the spin's request sent right stand-ins back too),
before any run and before the next narrowing (a work stand-in's floor held against its
kernel's node): lanes of element-wise kernels over data the L2 holds, no GEMMs, grids from
one block to a few hundred, every walk's data within two thirds of a 50 MiB L2. Five f32
lanes of adds over 512 elements (12 passes, one block each); three fp16 lanes of
multiply-adds over 8 Ki elements (8 passes, a few blocks); four bf16 lanes of ReLU products
over 64 Ki elements (6 passes); two f32 lanes of clamps over 512 Ki elements (6 passes);
a lane of f32 adds over 1 Ki elements (12 passes) beside two fp16 lanes of GELU over 256 Ki
elements (6 passes); three fp16 lanes of divisions over 4 Ki, 64 Ki and 1 Mi elements (6
passes).

    python3 scripts/validate_all.py --out DIR --groups heldout78
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import lane_of, lanes_step as lanes  # noqa: E402
from walk_registry import builder  # noqa: E402


def five_lanes_of_one_block_adds_f32():
    import torch

    def lane():
        with torch.device("cuda"):
            r = torch.randn(512)
        return lane_of((512,), torch.float32, 12, lambda y, r=r: y + r)
    return lanes(5, lane)


def three_lanes_of_multiply_adds_fp16():
    import torch

    def lane():
        with torch.device("cuda"):
            a = torch.randn(1 << 13, dtype=torch.float16)
        return lane_of((1 << 13,), torch.float16, 8, lambda y, a=a: torch.addcmul(a, y, a))
    return lanes(3, lane)


def four_lanes_of_relu_products_bf16():
    import torch
    return lanes(4, lambda: lane_of((1 << 16,), torch.bfloat16, 6,
                                    lambda y: torch.relu(y) * y))


def two_lanes_of_clamps_f32():
    import torch
    return lanes(2, lambda: lane_of((1 << 19,), torch.float32, 6,
                                    lambda y: torch.clamp(y, -0.5, 0.5)))


def tiny_adds_beside_two_gelu_lanes():
    import torch
    with torch.device("cuda"):
        r = torch.randn(1 << 10)
    adds = lane_of((1 << 10,), torch.float32, 12, lambda y: y + r)

    def gelu():
        return lane_of((1 << 18,), torch.float16, 6, torch.nn.functional.gelu)
    return lanes(2, gelu, adds)


def division_lanes_of_three_sizes_fp16():
    import torch
    sizes = iter((1 << 12, 1 << 16, 1 << 20))
    return lanes(3, lambda: lane_of((next(sizes),), torch.float16, 6, lambda y: y / 1.01))


build = builder(131_78, {
    "lc_five_lanes_of_one_block_adds_f32": five_lanes_of_one_block_adds_f32,
    "lc_three_lanes_of_multiply_adds_fp16": three_lanes_of_multiply_adds_fp16,
    "lc_four_lanes_of_relu_products_bf16": four_lanes_of_relu_products_bf16,
    "lc_two_lanes_of_clamps_f32": two_lanes_of_clamps_f32,
    "lc_tiny_adds_beside_two_gelu_lanes": tiny_adds_beside_two_gelu_lanes,
    "lc_division_lanes_of_three_sizes_fp16": division_lanes_of_three_sizes_fp16,
})
