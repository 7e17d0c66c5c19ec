"""Six walks written after 099392c, before any run: its held-out test. 099392c has the trace
reader count once an input an operator names twice where the operator runs inside another
that was given that tensor once and issued no GPU work before it (`isnan(y)` runs `y != y`,
`isfinite(y)` begins with `y == y`); it was chosen on one stored walk (batch 98's f32 lanes
of `where(isnan(y), z, y)`), and an H100 probe showed `y != y` reading `y` once
(`scripts/self_compare_probe.py`). Lanes of element-wise chains through `isnan` and
`isfinite` at sizes, dtypes and lane counts no stored walk has, and one walk the rule cannot
see (`y * y` is recorded as `aten::mul` of two tensors with nothing around it). Per lane (the
tensors a round of the chain touches) and together:

* three f32 lanes of `where(isnan(y), z, y) + 0.5` over 4 Mi: 16 MiB tensors, 4 MiB masks;
  past both L2s (the H100's 50 MiB, the H200's 60) together;
* two bf16 lanes of `where(isfinite(y), y, z) * 0.999` over 8 Mi: 16 MiB tensors, 8 MiB
  masks; past both together;
* four fp16 lanes of `y * ~isnan(y)` over 1 Mi: 2 MiB tensors, 1 MiB masks; within both;
* two f32 lanes of `y * isfinite(y) * 0.5` over 1 Mi: 4 MiB tensors, 1 MiB masks; within
  both;
* one f32 lane of `where(isnan(y), z, y) + 0.5` beside one lane of `y + z` over 8 Mi (the
  same bytes each round): 32 MiB tensors; past both;
* three bf16 lanes of `y * y * 0.5` over 4 Mi: 8 MiB tensors; past both together.

Each lane is a chain over tensors of its own, on a stream of its own, forked from the current
stream and joined back (`heldout_94_walks.lanes`).

    python3 scripts/validate_all.py --out DIR --groups heldout104
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_94_walks import lanes  # noqa: E402
from heldout_95_walks import against_one  # noqa: E402
from heldout_98_walks import chain  # noqa: E402
from walk_registry import builder  # noqa: E402


def nan_selects(ops, n, dtype):
    import torch
    return against_one(ops, n, dtype, lambda y, z: torch.where(torch.isnan(y), z, y) + 0.5)


def finite_selects(ops, n, dtype):
    import torch
    return against_one(ops, n, dtype, lambda y, z: torch.where(torch.isfinite(y), y, z) * 0.999)


def nan_masks(ops):
    import torch
    return chain(ops, lambda y: y * ~torch.isnan(y))


def finite_scales(ops):
    import torch
    return chain(ops, lambda y: y * torch.isfinite(y) * 0.5)


def adds(ops, n, dtype):
    return against_one(ops, n, dtype, lambda y, z: y + z)


build = builder(131_104, {
    "md_three_lanes_of_nan_selects_f32_4m": lambda: lanes(
        "float32", 1 << 22, [nan_selects(8, 1 << 22, "float32") for _ in range(3)]),
    "md_two_lanes_of_finite_selects_bf16_8m": lambda: lanes(
        "bfloat16", 1 << 23, [finite_selects(8, 1 << 23, "bfloat16") for _ in range(2)]),
    "md_four_lanes_of_nan_masks_fp16_1m": lambda: lanes(
        "float16", 1 << 20, [nan_masks(8)] * 4),
    "md_two_lanes_of_finite_scales_f32_1m": lambda: lanes(
        "float32", 1 << 20, [finite_scales(8)] * 2),
    "md_nan_select_lane_beside_add_lane_f32_8m": lambda: lanes(
        "float32", 1 << 23, [nan_selects(8, 1 << 23, "float32"), adds(8, 1 << 23, "float32")]),
    "md_three_lanes_of_self_products_bf16_4m": lambda: lanes(
        "bfloat16", 1 << 22, [chain(8, lambda y: y * y * 0.5)] * 3),
})
