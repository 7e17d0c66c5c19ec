"""Six walks written after the H100 probes of lanes of `y + y.T` (2026-12-07: five sizes and
dtypes, one, two and four lanes, `graph_lane_memory_probe.py --transposed`), which found that
lanes reading a matrix across its rows take longer together than `--summary` prices where
their matrices are small (−19 … −27% at 512 x 512 and 768 x 768) and less long than it
prices where they are large (+8 … +17% at 1024 x 1024), before any rule built on that
finding: its held-out test. Lanes of transposed and permuted operands at sizes, dtypes, operations and lane counts
the probes did not time, every lane's data together within both GPUs' L2s (the H100's 50
MiB, the H200's 60). Per lane and together:

* two f32 lanes of `y + y.T` over 768 x 768: 2.25 MiB tensors, about 14 MiB together;
* four bf16 lanes of `y * y.T` over 512 x 512: 512 KiB tensors, about 6 MiB together;
* three fp16 lanes of `y + y.transpose(1, 2)` over 16 x 256 x 256 (16 planes, each read
  across its rows): 2 MiB tensors, about 18 MiB together;
* six f32 lanes of `y - 0.5 * y.T` over 256 x 256: 256 KiB tensors, about 5 MiB together;
* one fp16 lane of `y + y.T` over 1024 x 1024 beside one lane of adds of two 1024 x 1024
  fp16 matrices read along their rows (the same bytes): 2 MiB tensors, about 12 MiB together;
* two bf16 lanes of `y + y.T` over 1536 x 1536: 4.5 MiB tensors, about 27 MiB together.

Each lane is a chain over tensors of its own, on a stream of its own, forked from the current
stream and joined back (`heldout_94_walks.lanes`).

    python3 scripts/validate_all.py --out DIR --groups heldout103
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_94_walks import lanes  # noqa: E402
from heldout_95_walks import tensors  # noqa: E402
from heldout_100_walks import on_matrix  # noqa: E402
from walk_registry import builder  # noqa: E402


def with_transpose(ops, side, step):
    """`ops` calls of `step(y, y.T)` on the lane's tensor viewed as `side` x `side`."""
    return on_matrix(ops, side, side, lambda y: step(y, y.T))


def plane_transposes(ops, planes, side):
    def run(y):
        y = y.view(planes, side, side)
        for _ in range(ops):
            y = y + y.transpose(1, 2)
        return y.flatten()
    return run


def adds_along_rows(ops, side, dtype):
    (other,) = tensors(1, side * side, dtype)
    other = other.view(side, side)
    return on_matrix(ops, side, side, lambda y: y + other)


build = builder(131_103, {
    "mc_two_lanes_of_transposed_adds_f32_768": lambda: lanes(
        "float32", 768 * 768, [with_transpose(8, 768, lambda y, t: y + t)] * 2),
    "mc_four_lanes_of_transposed_products_bf16_512": lambda: lanes(
        "bfloat16", 512 * 512, [with_transpose(8, 512, lambda y, t: y * t)] * 4),
    "mc_three_lanes_of_plane_transposes_fp16_16_by_256": lambda: lanes(
        "float16", 16 * 256 * 256, [plane_transposes(8, 16, 256)] * 3),
    "mc_six_lanes_of_transposed_differences_f32_256": lambda: lanes(
        "float32", 256 * 256, [with_transpose(10, 256, lambda y, t: y - 0.5 * t)] * 6),
    "mc_transposed_lane_beside_row_lane_fp16_1k": lambda: lanes(
        "float16", 1024 * 1024, [with_transpose(8, 1024, lambda y, t: y + t),
                                 adds_along_rows(8, 1024, "float16")]),
    "mc_two_lanes_of_transposed_adds_bf16_1536": lambda: lanes(
        "bfloat16", 1536 * 1536, [with_transpose(8, 1536, lambda y, t: y + t)] * 2),
})
