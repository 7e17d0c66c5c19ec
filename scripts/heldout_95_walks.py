"""Six walks written after 822d2cb, before any run: lanes of element-wise kernels within the L2
whose kernels read and write in other proportions than an add's two to one. 822d2cb has
`--summary` share the written third of the L2 figure among what kernels within the L2 write
(their result, taken as large as their largest input), where it shared the whole figure among
what they moved; an add prices as before, a unary kernel higher. These test it where reads and
writes part further: four f32 lanes of `addcmul` over 256 Ki (three tensors read, one
written); three fp16 lanes of in-place scales over 1 Mi (`mul_`: the tensor read and written
back); two bf16 lanes of `where` selects over 1 Mi (a byte mask and two tensors read, one
written); four lanes of casts between f16 and f32 over 512 Ki (a cast to f32 writes twice
what it reads, more than its largest input: the rule takes it short); four f32 lanes of
`lerp` over 256 Ki (an add's proportions at another size); two f32 lanes of adds of a 4 KiB
row broadcast over 1 Mi elements (one tensor read, one written, as a unary kernel). Each lane
is a chain over tensors of its own, on a stream of its own, forked from the current stream and
joined back (`heldout_94_walks.lanes`); every walk's tensors, results included, take under
25 MiB, within 2/3 of a 50 MiB L2.

    python3 scripts/validate_all.py --out DIR --groups heldout95
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_94_walks import lanes  # noqa: E402
from walk_registry import builder  # noqa: E402


def tensors(count, n, dtype):
    """`count` random tensors of `n` elements of `dtype` on the GPU."""
    import torch
    with torch.device("cuda"):
        return [torch.randn(n, dtype=getattr(torch, dtype)) for _ in range(count)]


def addcmuls(ops, n, dtype):
    a, b = tensors(2, n, dtype)

    def chain(y):
        import torch
        for _ in range(ops):
            y = torch.addcmul(y, a, b, value=0.001)
        return y
    return chain


def in_place_scales(ops):
    def chain(y):
        for k in range(ops):
            y.mul_(0.999 if k % 2 == 0 else 1.001)
        return y
    return chain


def against_one(ops, n, dtype, step):
    """A chain of `ops` calls of `step(y, z)`, `z` an `n`-element tensor of `dtype` of the
    lane's own."""
    (z,) = tensors(1, n, dtype)

    def chain(y):
        for _ in range(ops):
            y = step(y, z)
        return y
    return chain


def where_selects(ops, n, dtype):
    import torch
    return against_one(ops, n, dtype, lambda y, z: torch.where(y > 0, y, z))


def casts(ops):
    def chain(y):
        for k in range(ops):
            y = y.float() * 0.999 if k % 2 == 0 else y.half()
        return y
    return chain


def lerps(ops, n, dtype):
    import torch
    return against_one(ops, n, dtype, lambda y, z: torch.lerp(y, z, 0.1))


def row_adds(ops, rows, width, dtype):
    (row,) = tensors(1, width, dtype)

    def chain(y):
        y = y.view(rows, width)
        for _ in range(ops):
            y = y + row
        return y.flatten()
    return chain


build = builder(131_95, {
    "lu_four_lanes_of_addcmuls_f32_256k": lambda: lanes(
        "float32", 1 << 18, [addcmuls(16, 1 << 18, "float32") for _ in range(4)]),
    "lu_three_lanes_of_in_place_scales_fp16_1m": lambda: lanes(
        "float16", 1 << 20, [in_place_scales(24)] * 3),
    "lu_two_lanes_of_where_selects_bf16_1m": lambda: lanes(
        "bfloat16", 1 << 20, [where_selects(12, 1 << 20, "bfloat16") for _ in range(2)]),
    "lu_four_lanes_of_casts_fp16_f32_512k": lambda: lanes(
        "float16", 1 << 19, [casts(16)] * 4),
    "lu_four_lanes_of_lerps_f32_256k": lambda: lanes(
        "float32", 1 << 18, [lerps(24, 1 << 18, "float32") for _ in range(4)]),
    "lu_two_lanes_of_row_adds_f32_1m": lambda: lanes(
        "float32", 1 << 20, [row_adds(24, 1024, 1024, "float32") for _ in range(2)]),
})
