"""Six walks written after the small pair's floor was scaled by the SMs a kernel's blocks span
(a kernel spanning fewer SMs than the profile's pair of adds, 64 blocks on 8 SMs, pays that
part of the floor among lanes within the L2), before any run: its held-out test. The rule was
chosen on the stored runs, where lanes of one- to sixteen-block kernels came 4–16% high and
lanes of 64-block kernels within a few percent; it took rotary lanes, whose one or two blocks
each do a row's work, 6–10 points lower on an H100. Lanes of few-block kernels at sizes,
dtypes and kinds no stored walk has, one layout at the pair's size that the rule leaves alone,
and one of row-normalising kernels of two blocks (the kind it may price low). PyTorch's
element-wise kernels take 1024 elements a block of 128 threads, sixteen blocks an SM, so its
kernels span the pair's 8 SMs at 128 blocks:

* three bf16 lanes of `y * 1.001` over 512 elements (one block a kernel);
* five fp16 lanes of alternating `y * 0.999` and `y + 0.001` over 4 Ki (four blocks);
* two f32 lanes of `sigmoid(y) * y` over 16 Ki (sixteen blocks);
* four fp16 lanes of LayerNorm over 2 rows of 4096 (two blocks a kernel, a row each);
* three f32 lanes of `y + 0.5` over 128 Ki (128 blocks on 8 SMs, the pair's span: not moved
  by the rule);
* two f32 lanes of `y + z` over 512 elements beside two lanes of `y + z` over 512 Ki (one
  block beside 512).

Every lane's data together are within both L2s. Each lane is a chain over tensors of its own,
on a stream of its own, forked from the current stream and joined back
(`heldout_94_walks.lanes`).

    python3 scripts/validate_all.py --out DIR --groups heldout105
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_94_walks import lanes, scale_add  # noqa: E402
from heldout_95_walks import against_one, tensors  # noqa: E402
from heldout_98_walks import chain  # noqa: E402
from walk_registry import builder  # noqa: E402


def silu(ops):
    import torch
    return chain(ops, lambda y: torch.sigmoid(y) * y)


def row_norms(ops, rows, width):
    import torch

    def run(y):
        y = y.view(rows, width)
        for _ in range(ops):
            y = torch.nn.functional.layer_norm(y, (width,))
        return y
    return run


def adds_over(ops, n, dtype):
    """A chain of `ops` adds of a tensor of the lane's own, starting from an `n`-element tensor
    of its own as well (whatever the lane was given), so that lanes of one step differ in size."""
    (start,) = tensors(1, n, dtype)
    add = against_one(ops, n, dtype, lambda y, z: y + z)
    return lambda _: add(start)


build = builder(131_105, {
    "me_three_lanes_of_one_block_multiplies_bf16_512": lambda: lanes(
        "bfloat16", 512, [chain(12, lambda y: y * 1.001) for _ in range(3)]),
    "me_five_lanes_of_scale_adds_fp16_4k": lambda: lanes(
        "float16", 1 << 12, [scale_add(12) for _ in range(5)]),
    "me_two_lanes_of_silu_f32_16k": lambda: lanes(
        "float32", 1 << 14, [silu(10) for _ in range(2)]),
    "me_four_lanes_of_row_norms_fp16_2_by_4096": lambda: lanes(
        "float16", 2 * 4096, [row_norms(8, 2, 4096) for _ in range(4)]),
    "me_three_lanes_of_pair_span_adds_f32_128k": lambda: lanes(
        "float32", 1 << 17, [chain(12, lambda y: y + 0.5) for _ in range(3)]),
    "me_tiny_add_lanes_beside_wide_add_lanes_f32": lambda: lanes(
        "float32", 512, [adds_over(12, 512, "float32") for _ in range(2)]
        + [adds_over(12, 1 << 19, "float32") for _ in range(2)]),
})
