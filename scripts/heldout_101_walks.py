"""Six walks written after 0928fb9, which prices an element-wise kernel within the L2 by the
larger of what it writes and a third of all it moves, reads across rows counting whole 32-byte
sectors, before any run: its first held-out test. Lanes of transposed and permuted operands
and of kernels with three tensor inputs, every lane's data together well within both GPUs'
L2s (the H100's 50 MiB, the H200's 60). Per lane and together:

* three fp16 lanes of `y + 0.5 * y.T` over 768 x 768 (`torch.add(..., alpha=)`, one kernel
  reading the transpose across its rows, a stride of 1536 bytes, not a power of two): 1.1 MiB
  tensors, about 10 MiB together;
* four bf16 lanes of `y.T.contiguous() * 0.999` over 1024 x 512 (a copy reading its source
  across the rows, then a contiguous multiply): 1 MiB tensors, about 12 MiB together;
* three f32 lanes of `y + 0.5 * y.transpose(1, 2)` over 64 x 64 x 64 (a permuted operand, 256
  bytes apart along the walk): 1 MiB tensors, about 9 MiB together;
* four bf16 lanes of `torch.lerp(y, a, w)` over 512 Ki with a tensor weight (three tensor
  inputs, one result): 1 MiB tensors, about 16 MiB together;
* two fp16 lanes of `torch.where(m, y, z)` over 1 Mi with a `bool` mask (three tensor inputs):
  2 MiB tensors, about 14 MiB together;
* four bf16 lanes of `y + x[:, ::2]` over 1024 x 512 (`x` 1024 x 1024: every other element,
  a short stride whose sectors carry the skipped ones): 1 MiB and 2 MiB tensors, about 16 MiB
  together.

Each lane is a chain over tensors of its own, on a stream of its own, forked from the current
stream and joined back (`heldout_94_walks.lanes`).

    python3 scripts/validate_all.py --out DIR --groups heldout101
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_94_walks import lanes  # noqa: E402
from heldout_95_walks import tensors  # noqa: E402
from heldout_100_walks import on_matrix  # noqa: E402
from walk_registry import builder  # noqa: E402


def transposed_adds(ops, side):
    import torch
    return on_matrix(ops, side, side, lambda y: torch.add(y, y.T, alpha=0.5))


def transposed_copies(ops, rows, width):
    """`ops` times the lane's matrix transposed into a contiguous one and scaled; the shape
    swaps each time, so the chain keeps a flat tensor between steps."""
    def run(y):
        shape = (rows, width)
        for _ in range(ops):
            y = y.view(*shape).T.contiguous() * 0.999
            shape = shape[::-1]
        return y.flatten()
    return run


def plane_transposes(ops, side):
    import torch

    def run(y):
        y = y.view(side, side, side)
        for _ in range(ops):
            y = torch.add(y, y.transpose(1, 2), alpha=0.5)
        return y.flatten()
    return run


def lerps(ops, n, dtype):
    import torch
    a, w = tensors(2, n, dtype)
    w = w.sigmoid()

    def run(y):
        for _ in range(ops):
            y = torch.lerp(y, a, w)
        return y
    return run


def where_blends(ops, n, dtype):
    import torch
    z, m = tensors(2, n, dtype)
    mask = m > 0

    def run(y):
        for _ in range(ops):
            y = torch.where(mask, y, z) * 0.999
        return y
    return run


def strided_half_adds(ops, rows, width, dtype):
    (x,) = tensors(1, rows * width * 2, dtype)
    half = x.view(rows, width * 2)[:, ::2]
    return on_matrix(ops, rows, width, lambda y: y + half)


build = builder(131_101, {
    "ma_three_lanes_of_transposed_adds_fp16_768": lambda: lanes(
        "float16", 768 * 768, [transposed_adds(8, 768)] * 3),
    "ma_four_lanes_of_transposed_copies_bf16_1k_by_512": lambda: lanes(
        "bfloat16", 1 << 19, [transposed_copies(8, 1024, 512)] * 4),
    "ma_three_lanes_of_plane_transposes_f32_64_cubed": lambda: lanes(
        "float32", 1 << 18, [plane_transposes(8, 64)] * 3),
    "ma_four_lanes_of_lerps_bf16_512k": lambda: lanes(
        "bfloat16", 1 << 19, [lerps(10, 1 << 19, "bfloat16") for _ in range(4)]),
    "ma_two_lanes_of_where_blends_fp16_1m": lambda: lanes(
        "float16", 1 << 20, [where_blends(8, 1 << 20, "float16") for _ in range(2)]),
    "ma_four_lanes_of_strided_half_adds_bf16_1k_by_512": lambda: lanes(
        "bfloat16", 1 << 19, [strided_half_adds(10, 1024, 512, "bfloat16") for _ in range(4)]),
})
