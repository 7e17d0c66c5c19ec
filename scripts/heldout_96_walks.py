"""Six walks written after f315f07, before any run: lanes of element-wise kernels whose data
together pass 2/3 of the L2 while each lane's alone stays under it, and two beside them that
stay under. f315f07 has `--summary` count, in its test of whether a walk's data stays in the
L2, what its lanes of element-wise kernels hold at once (on each stream its largest such
kernel's inputs and result, added up over the streams), where it had counted one tensor of
them whatever the number of lanes. The lines: 2/3 of the H100's 50 MiB L2 is 33 MiB, of the
H200's 60 MiB 40 MiB. Per lane (inputs and result of its largest kernel) and together:

* three bf16 lanes of GELU and scalar adds over 4 Mi elements: 16 MiB a lane, 48 together;
* two f32 lanes of `addcmul` over 2 Mi: 32 MiB a lane, 64 together;
* four fp16 lanes of scale-adds over 2 Mi: 8 MiB a lane, 32 together (under both lines);
* two f32 lanes of `lerp` over 4 Mi: 48 MiB a lane, 96 together (one lane alone past the
  H100's line and the H200's);
* six bf16 lanes of multiplies over 1.5 Mi: 6 MiB a lane, 36 together (past the H100's line,
  under the H200's);
* two bf16 lanes of a SwiGLU product, `silu(g) * u`, over a 2048-token prefill chunk of
  4096-wide rows (16 MiB a tensor): 48 MiB a lane, 96 together.

Each lane is a chain over tensors of its own, on a stream of its own, forked from the current
stream and joined back (`heldout_94_walks.lanes`).

    python3 scripts/validate_all.py --out DIR --groups heldout96
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_94_walks import gelu_add, lanes, multiplies, scale_add  # noqa: E402
from heldout_95_walks import addcmuls, lerps, tensors  # noqa: E402
from walk_registry import builder  # noqa: E402


def swiglu_products(ops, n, dtype):
    """`ops` rounds of `silu(y) * u`, `u` an `n`-element tensor of `dtype` of the lane's own (a
    gated MLP's activation over a prefill chunk, its GEMMs left out)."""
    (u,) = tensors(1, n, dtype)

    def chain(y):
        import torch
        for _ in range(ops):
            y = torch.nn.functional.silu(y) * u
        return y
    return chain


CHUNK = 2048 * 4096

build = builder(131_96, {
    "lv_three_lanes_of_gelu_adds_bf16_4m": lambda: lanes(
        "bfloat16", 1 << 22, [gelu_add(16)] * 3),
    "lv_two_lanes_of_addcmuls_f32_2m": lambda: lanes(
        "float32", 1 << 21, [addcmuls(12, 1 << 21, "float32") for _ in range(2)]),
    "lv_four_lanes_of_scale_adds_fp16_2m": lambda: lanes(
        "float16", 1 << 21, [scale_add(24)] * 4),
    "lv_two_lanes_of_lerps_f32_4m": lambda: lanes(
        "float32", 1 << 22, [lerps(12, 1 << 22, "float32") for _ in range(2)]),
    "lv_six_lanes_of_multiplies_bf16_1536k": lambda: lanes(
        "bfloat16", 3 << 19, [multiplies(16)] * 6),
    "lv_two_lanes_of_swiglu_products_bf16_2k_by_4k": lambda: lanes(
        "bfloat16", CHUNK, [swiglu_products(8, CHUNK, "bfloat16") for _ in range(2)]),
})
