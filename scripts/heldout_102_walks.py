"""Six walks written after the H200 run of batches 74, 76–78 and 97–101 at 928a615, which found
lanes of element-wise kernels beside lanes of decode GEMVs priced low by `--summary` where
two or more element-wise lanes ran beside them (−11 … −24%; one such lane beside two GEMV
lanes came within 10%, as on the earlier batches), before any rule built on that finding:
its held-out test. The GEMVs are cuBLAS's for one token, whose blocks take a whole SM each
(on an H200 a 1024 x 1024 bf16 GEMV is 128 blocks, each with all of an SM's registers); the
element-wise lanes' data are well within both GPUs' L2s:

* two bf16 lanes of GELU over 256 Ki beside one lane of four 1024 x 1024 bf16 GEMVs;
* three fp16 lanes of `silu(y) * y` over 512 Ki beside one lane of three 2048 x 2048 fp16
  GEMVs;
* one bf16 lane of LayerNorm over 64 x 4096 beside two lanes of four 1024 x 1024 bf16 GEMVs
  (the layout the model has priced within 10%);
* two fp16 lanes of written-out RMSNorm over 32 x 2048 beside two lanes of four 1024 x 1024
  fp16 GEMVs;
* four f32 lanes of `y * 0.5 + 1` over 128 Ki beside one lane of four 1536 x 1536 bf16 GEMVs;
* two bf16 lanes of `y * 1.001` over 2 Mi (kernels whose grids fill the GPU) beside one lane
  of four 1024 x 1024 bf16 GEMVs.

Each lane runs on a stream of its own, forked from the current stream and joined back
(`walk_parts.fork_lanes`).

    python3 scripts/validate_all.py --out DIR --groups heldout102
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import fork_lanes, lane_of, linear_lane, no_grad_step, rms_norm  # noqa: E402
from walk_registry import builder  # noqa: E402


def beside_gemv_lanes(element_wise, gemv_lanes, width, layers, dtype):
    """A step of the `element_wise` lanes forked beside `gemv_lanes` lanes of `layers`
    one-token GEMVs of `width` x `width` in `dtype` each."""
    import torch
    gemvs = [linear_lane(width, width, 1, layers, getattr(torch, dtype))
             for _ in range(gemv_lanes)]
    return no_grad_step(fork_lanes(element_wise + gemvs))


def gelu_lanes(count, elems, passes, dtype):
    import torch
    return [lane_of((elems,), getattr(torch, dtype), passes, torch.nn.functional.gelu)
            for _ in range(count)]


def silu_product_lanes(count, elems, passes, dtype):
    import torch
    f = torch.nn.functional
    return [lane_of((elems,), getattr(torch, dtype), passes, lambda y: f.silu(y) * y)
            for _ in range(count)]


def layer_norm_lanes(count, rows, width, passes, dtype):
    import torch
    f = torch.nn.functional
    return [lane_of((rows, width), getattr(torch, dtype), passes,
                    lambda y: f.layer_norm(y, (width,)))
            for _ in range(count)]


def rms_norm_lanes(count, rows, width, passes, dtype):
    import torch
    with torch.device("cuda"):
        g = torch.ones(width, dtype=getattr(torch, dtype))
    return [lane_of((rows, width), getattr(torch, dtype), passes, lambda y: rms_norm(y, g))
            for _ in range(count)]


def scale_lanes(count, elems, passes, dtype, scale, shift):
    import torch
    return [lane_of((elems,), getattr(torch, dtype), passes, lambda y: y * scale + shift)
            for _ in range(count)]


build = builder(131_102, {
    "mb_two_gelu_lanes_beside_gemv_lane_bf16": lambda: beside_gemv_lanes(
        gelu_lanes(2, 1 << 18, 8, "bfloat16"), 1, 1024, 4, "bfloat16"),
    "mb_three_silu_lanes_beside_wide_gemv_lane_fp16": lambda: beside_gemv_lanes(
        silu_product_lanes(3, 1 << 19, 6, "float16"), 1, 2048, 3, "float16"),
    "mb_layernorm_lane_beside_two_gemv_lanes_bf16": lambda: beside_gemv_lanes(
        layer_norm_lanes(1, 64, 4096, 6, "bfloat16"), 2, 1024, 4, "bfloat16"),
    "mb_two_rmsnorm_lanes_beside_two_gemv_lanes_fp16": lambda: beside_gemv_lanes(
        rms_norm_lanes(2, 32, 2048, 4, "float16"), 2, 1024, 4, "float16"),
    "mb_four_scale_lanes_f32_beside_gemv_lane_bf16": lambda: beside_gemv_lanes(
        scale_lanes(4, 1 << 17, 10, "float32", 0.5, 1.0), 1, 1536, 4, "bfloat16"),
    "mb_two_wide_scale_lanes_beside_gemv_lane_bf16": lambda: beside_gemv_lanes(
        scale_lanes(2, 1 << 21, 6, "bfloat16", 1.001, 0.0), 1, 1024, 4, "bfloat16"),
})
