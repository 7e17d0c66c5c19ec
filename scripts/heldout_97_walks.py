"""Six walks written after ea966fb, before any run: lanes of element-wise kernels whose data
together pass the whole L2, and one whose data pass only its 2/3 line. ea966fb has
`--summary` price such lanes no shorter than their kernels' recorded bytes at device
memory's bandwidth (`graph_step_streamed_floor_ms`): alone a lane's kernel reads what the
one before it wrote from the L2, beside the others it cannot. The L2s: the H100's 50 MiB,
the H200's 60. Per lane (inputs and result of its largest kernel) and together:

* three bf16 lanes of `addcmul` over 4 Mi elements: 32 MiB a lane, 96 together;
* two f32 lanes of clamps and square roots over 4 Mi: 32 MiB a lane, 64 together;
* four f32 lanes of multiplies over 2 Mi: 16 MiB a lane, 64 together;
* two fp16 lanes of `where` selects over 8 Mi: 56 MiB a lane (a mask, the two operands and
  the result), 112 together;
* three bf16 lanes of scale-adds over 4 Mi: 16 MiB a lane, 48 together (past the line, within
  both L2s: no floor);
* two bf16 lanes of `lerp` over 8 Mi: 48 MiB a lane, 96 together.

Each lane is a chain over tensors of its own, on a stream of its own, forked from the current
stream and joined back (`heldout_94_walks.lanes`).

    python3 scripts/validate_all.py --out DIR --groups heldout97
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_94_walks import clamp_sqrt, lanes, multiplies, scale_add  # noqa: E402
from heldout_95_walks import addcmuls, lerps, where_selects  # noqa: E402
from walk_registry import builder  # noqa: E402

build = builder(131_97, {
    "lw_three_lanes_of_addcmuls_bf16_4m": lambda: lanes(
        "bfloat16", 1 << 22, [addcmuls(12, 1 << 22, "bfloat16") for _ in range(3)]),
    "lw_two_lanes_of_clamp_sqrt_f32_4m": lambda: lanes(
        "float32", 1 << 22, [clamp_sqrt(12)] * 2),
    "lw_four_lanes_of_multiplies_f32_2m": lambda: lanes(
        "float32", 1 << 21, [multiplies(16)] * 4),
    "lw_two_lanes_of_where_selects_fp16_8m": lambda: lanes(
        "float16", 1 << 23, [where_selects(8, 1 << 23, "float16") for _ in range(2)]),
    "lw_three_lanes_of_scale_adds_bf16_4m": lambda: lanes(
        "bfloat16", 1 << 22, [scale_add(24)] * 3),
    "lw_two_lanes_of_lerps_bf16_8m": lambda: lanes(
        "bfloat16", 1 << 23, [lerps(12, 1 << 23, "bfloat16") for _ in range(2)]),
})
