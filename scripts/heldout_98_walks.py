"""Six walks written after f867331, before any run: lanes of element-wise chains that compare
or test their values into `bool` masks and use them. f867331 has the trace's bytes of a
comparison (`aten::gt` … `aten::isnan`) be a byte an element written, not a result as large
as its input; de66386 has `replay`'s mean hold its replayed half at the model's floor where
lanes' data together pass the whole L2 (the H100's 50 MiB, the H200's 60). Per lane (its
tensors a round of the chain touches) and together:

* two fp16 lanes of `masked_fill(y > t, 0)` over 8 Mi: a 16 MiB tensor, an 8 MiB mask; past
  both L2s together;
* three f32 lanes of `where(isnan(y), z, y) * 0.999` over 2 Mi: 8 MiB tensors, 2 MiB masks;
  past both together;
* four f32 lanes of `y * (y != 0)` over 512 Ki: 2 MiB tensors; within both L2s;
* two bf16 lanes of `where(y > z, y - z, y + z)` over 4 Mi: 8 MiB tensors; within the H200's
  L2, near the H100's;
* three fp16 lanes of `y * ((y >= -2) & (y <= 2))` over 1 Mi: two comparisons and a `bool`
  and a round; within both;
* four bf16 lanes of `masked_fill(y < -3, -3)` over 4 Mi: past both together.

Each lane is a chain over tensors of its own, on a stream of its own, forked from the current
stream and joined back (`heldout_94_walks.lanes`).

    python3 scripts/validate_all.py --out DIR --groups heldout98
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_94_walks import lanes  # noqa: E402
from heldout_95_walks import against_one  # noqa: E402
from walk_registry import builder  # noqa: E402


def chain(ops, step):
    """`ops` calls of `step(y)`."""
    def run(y):
        for _ in range(ops):
            y = step(y)
        return y
    return run


def masked_fills(ops, below, value):
    """Values below `value` set to it (`below`), else values above it set to 0."""
    if below:
        return chain(ops, lambda y: y.masked_fill(y < value, value))
    return chain(ops, lambda y: y.masked_fill(y > value, 0.0))


def nan_selects(ops, n, dtype):
    import torch
    return against_one(ops, n, dtype, lambda y, z: torch.where(torch.isnan(y), z, y) * 0.999)


def nonzero_scales(ops):
    return chain(ops, lambda y: y * (y != 0))


def signed_steps(ops, n, dtype):
    import torch
    return against_one(ops, n, dtype, lambda y, z: torch.where(y > z, y - z, y + z))


def band_masks(ops):
    return chain(ops, lambda y: y * ((y >= -2) & (y <= 2)))


build = builder(131_98, {
    "lx_two_lanes_of_masked_fills_fp16_8m": lambda: lanes(
        "float16", 1 << 23, [masked_fills(8, False, 1.5)] * 2),
    "lx_three_lanes_of_nan_selects_f32_2m": lambda: lanes(
        "float32", 1 << 21, [nan_selects(8, 1 << 21, "float32") for _ in range(3)]),
    "lx_four_lanes_of_nonzero_scales_f32_512k": lambda: lanes(
        "float32", 1 << 19, [nonzero_scales(12)] * 4),
    "lx_two_lanes_of_signed_steps_bf16_4m": lambda: lanes(
        "bfloat16", 1 << 22, [signed_steps(8, 1 << 22, "bfloat16") for _ in range(2)]),
    "lx_three_lanes_of_band_masks_fp16_1m": lambda: lanes(
        "float16", 1 << 20, [band_masks(8)] * 3),
    "lx_four_lanes_of_floor_fills_bf16_4m": lambda: lanes(
        "bfloat16", 1 << 22, [masked_fills(8, True, -3.0)] * 4),
})
