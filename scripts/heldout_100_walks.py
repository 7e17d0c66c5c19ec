"""Six walks written after 8506f8a, which holds PyTorch's strided `elementwise_kernel` within the
L2 as its contiguous kernels are held (its blocks' share of the SMs over its recorded time
less the profile's ramp, where it held its whole share for its whole time), before any run:
its first held-out test. Lanes of broadcasts and non-contiguous operands, every lane's data
together well within both GPUs' L2s (the H100's 50 MiB, the H200's 60). Per lane and
together:

* two bf16 lanes of `y * r + c` over 1024 x 1024, a row `r` and a column `c` broadcast: two
  strided kernels a round; 2 MiB tensors, about 12 MiB together;
* three f32 lanes of `y + c` over 512 x 1024, a column broadcast: 2 MiB tensors, about 12 MiB
  together;
* four fp16 lanes of `(y + y.T) * 0.5` over 512 x 512, a transposed operand: 512 KiB tensors,
  about 6 MiB together;
* two bf16 lanes of `maximum(y, t)` over 2 Mi against a zero-dimensional tensor `t`: 4 MiB
  tensors, about 16 MiB together;
* six f32 lanes of `gelu(y + b)` over 256 x 512, a row bias `b` (a strided add and a
  contiguous GELU): 512 KiB tensors, about 6 MiB together;
* four fp16 lanes of `y * tanh(y[:, :1])` over 2048 x 512, each row scaled by a function of
  its own first element (a strided slice): 2 MiB tensors, about 16 MiB together.

Each lane is a chain over tensors of its own, on a stream of its own, forked from the current
stream and joined back (`heldout_94_walks.lanes`).

    python3 scripts/validate_all.py --out DIR --groups heldout100
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_94_walks import lanes  # noqa: E402
from heldout_95_walks import tensors  # noqa: E402
from walk_registry import builder  # noqa: E402


def on_matrix(ops, rows, width, step):
    """`ops` calls of `step(y)` on the lane's tensor viewed as `rows` x `width`."""
    def run(y):
        y = y.view(rows, width)
        for _ in range(ops):
            y = step(y)
        return y.flatten()
    return run


def row_and_column(ops, rows, width, dtype):
    (row,) = tensors(1, width, dtype)
    (column,) = tensors(1, rows, dtype)
    column = column.view(rows, 1)
    return on_matrix(ops, rows, width, lambda y: y * row + column)


def column_adds(ops, rows, width, dtype):
    (column,) = tensors(1, rows, dtype)
    column = column.view(rows, 1)
    return on_matrix(ops, rows, width, lambda y: y + column)


def transposed_means(ops, side):
    return on_matrix(ops, side, side, lambda y: (y + y.T) * 0.5)


def maxima(ops, dtype):
    import torch
    with torch.device("cuda"):
        floor = torch.zeros((), dtype=getattr(torch, dtype))

    def run(y):
        for _ in range(ops):
            y = torch.maximum(y, floor)
        return y
    return run


def bias_gelus(ops, rows, width, dtype):
    import torch
    (bias,) = tensors(1, width, dtype)
    return on_matrix(ops, rows, width, lambda y: torch.nn.functional.gelu(y + bias))


def first_column_scales(ops, rows, width):
    import torch
    return on_matrix(ops, rows, width, lambda y: y * torch.tanh(y[:, :1]))


build = builder(131_100, {
    "lz_two_lanes_of_row_and_column_bf16_1k_by_1k": lambda: lanes(
        "bfloat16", 1 << 20, [row_and_column(8, 1024, 1024, "bfloat16") for _ in range(2)]),
    "lz_three_lanes_of_column_adds_f32_512_by_1k": lambda: lanes(
        "float32", 1 << 19, [column_adds(12, 512, 1024, "float32") for _ in range(3)]),
    "lz_four_lanes_of_transposed_means_fp16_512": lambda: lanes(
        "float16", 1 << 18, [transposed_means(8, 512)] * 4),
    "lz_two_lanes_of_maxima_bf16_2m": lambda: lanes(
        "bfloat16", 1 << 21, [maxima(12, "bfloat16") for _ in range(2)]),
    "lz_six_lanes_of_bias_gelus_f32_256_by_512": lambda: lanes(
        "float32", 1 << 17, [bias_gelus(8, 256, 512, "float32") for _ in range(6)]),
    "lz_four_lanes_of_first_column_scales_fp16_2k_by_512": lambda: lanes(
        "float16", 1 << 20, [first_column_scales(8, 2048, 512)] * 4),
})
