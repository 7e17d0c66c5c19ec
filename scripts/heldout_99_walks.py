"""Six walks written after 5f389d7, before any run: lanes of short element-wise kernels whose
data all lanes together keep well within both GPUs' L2s (the H100's 50 MiB, the H200's 60).
5f389d7 has `--summary` hold a contiguous element-wise kernel within the L2 by its blocks'
share of the SMs over its recorded time less the profile's ramp (what a profiler records
beyond a kernel's blocks), where before it held none; these are its first held-out test,
with kernels of several lengths (from about the ramp to a few microseconds) and grids (a
quarter of a round to a whole one). Per lane and together:

* four bf16 lanes of `y * (y > 0)` over 1 Mi: a comparison into a `bool` mask, a multiply
  by it (a cast on every element); 2 MiB tensors, about 20 MiB together;
* three lanes of f32 → fp16 → f32 round trips and a scale over 512 Ki: two casts and a
  multiply; 2 MiB f32 tensors, about 15 MiB together;
* two fp16 lanes of `where(abs(y) < 1, y, 0)` over 1 Mi: an absolute value, a comparison, a
  select against a scalar; about 14 MiB together;
* six bf16 lanes of `clamp(y, -1, 1) * 2` over 512 Ki: 1 MiB tensors, about 18 MiB
  together;
* four fp16 lanes of `abs(y) + 1` over 256 Ki: kernels of about the ramp's length, 512 KiB
  tensors, about 6 MiB together;
* two f32 lanes of `sigmoid(3 y)` over 1 Mi: 4 MiB tensors, about 24 MiB together.

Each lane is a chain over tensors of its own, on a stream of its own, forked from the current
stream and joined back (`heldout_94_walks.lanes`).

    python3 scripts/validate_all.py --out DIR --groups heldout99
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_94_walks import lanes  # noqa: E402
from heldout_98_walks import chain  # noqa: E402
from walk_registry import builder  # noqa: E402


def positive_parts(ops):
    return chain(ops, lambda y: y * (y > 0))


def half_round_trips(ops):
    return chain(ops, lambda y: y.half().float() * 1.001)


def masked_zeros(ops):
    import torch
    return chain(ops, lambda y: torch.where(y.abs() < 1.0, y, 0.0))


def clamp_scales(ops):
    return chain(ops, lambda y: y.clamp(-1.0, 1.0) * 2.0)


def abs_adds(ops):
    return chain(ops, lambda y: y.abs() + 1.0)


def sigmoid_scales(ops):
    import torch
    return chain(ops, lambda y: torch.sigmoid(y * 3.0))


build = builder(131_99, {
    "ly_four_lanes_of_positive_parts_bf16_1m": lambda: lanes(
        "bfloat16", 1 << 20, [positive_parts(8)] * 4),
    "ly_three_lanes_of_half_round_trips_f32_512k": lambda: lanes(
        "float32", 1 << 19, [half_round_trips(8)] * 3),
    "ly_two_lanes_of_masked_zeros_fp16_1m": lambda: lanes(
        "float16", 1 << 20, [masked_zeros(8)] * 2),
    "ly_six_lanes_of_clamp_scales_bf16_512k": lambda: lanes(
        "bfloat16", 1 << 19, [clamp_scales(8)] * 6),
    "ly_four_lanes_of_abs_adds_fp16_256k": lambda: lanes(
        "float16", 1 << 18, [abs_adds(12)] * 4),
    "ly_two_lanes_of_sigmoid_scales_f32_1m": lambda: lanes(
        "float32", 1 << 20, [sigmoid_scales(8)] * 2),
})
