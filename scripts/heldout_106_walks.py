"""Six walks written after the lanes probe at 4, 12 and 24 ops a lane (an H100, 2026-12-08:
another lane costs a part a lane and a part a node; the small pair's whole floor, charged a
node, fits lanes of 9 nodes and comes 15-23% high on lanes of 49 nodes of one- to
sixteen-block kernels), before any change to the floor and before any run: lanes of few-block
kernels within the L2 at lane lengths no stored walk pairs with these kinds, the test of
whatever rule for lane length comes next and of the whole floor as shipped:
* two bf16 lanes of 40 `y * 1.001` over 512 elements (one block a kernel, long lanes);
* three fp16 lanes of 6 alternating `y * 0.999` and `y + 0.001` over 4 Ki (four blocks, short);
* four f32 lanes of 15 `sigmoid(y) * y` over 16 Ki (sixteen blocks, 30 nodes a lane);
* two f32 lanes of 4 `y + z` over 1 Ki (one block, very short lanes);
* five bf16 lanes of 24 GELUs over 2 Ki (two blocks, long lanes, many of them);
* one f32 lane of 48 `y + 0.5` over 4 Ki beside one of 6 (a long lane beside a short one).
Every lane's data together are within both L2s. Each lane is a chain over tensors of its own,
on a stream of its own, forked from the current stream and joined back
(`heldout_94_walks.lanes`).
    python3 scripts/validate_all.py --out DIR --groups heldout106
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heldout_94_walks import lanes, scale_add  # noqa: E402
from heldout_95_walks import against_one  # noqa: E402
from heldout_98_walks import chain  # noqa: E402
from heldout_105_walks import silu  # noqa: E402
from walk_registry import builder  # noqa: E402


def gelu(ops):
    import torch
    return chain(ops, torch.nn.functional.gelu)


build = builder(131_106, {
    "mf_two_long_lanes_of_one_block_multiplies_bf16_512": lambda: lanes(
        "bfloat16", 512, [chain(40, lambda y: y * 1.001) for _ in range(2)]),
    "mf_three_short_lanes_of_scale_adds_fp16_4k": lambda: lanes(
        "float16", 1 << 12, [scale_add(6) for _ in range(3)]),
    "mf_four_lanes_of_silu_f32_16k": lambda: lanes(
        "float32", 1 << 14, [silu(15) for _ in range(4)]),
    "mf_two_very_short_lanes_of_adds_f32_1k": lambda: lanes(
        "float32", 1 << 10, [against_one(4, 1 << 10, "float32", lambda y, z: y + z)
                             for _ in range(2)]),
    "mf_five_long_lanes_of_gelu_bf16_2k": lambda: lanes(
        "bfloat16", 1 << 11, [gelu(24) for _ in range(5)]),
    "mf_long_add_lane_beside_short_add_lane_f32_4k": lambda: lanes(
        "float32", 1 << 12, [chain(48, lambda y: y + 0.5), chain(6, lambda y: y + 0.5)]),
})
