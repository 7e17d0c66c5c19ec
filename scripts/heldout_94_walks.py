"""Six walks written after 2dffb33, before any run: lanes of element-wise kernels within the L2,
where the offline model's sharing can price streams side by side above their own serial price
(batch 91's two bf16 lanes on an H200) and 2dffb33 now holds such a step at the serial price.
Each lane is a chain of element-wise kernels over a tensor the L2 holds, on a stream of its
own, forked from the current stream and joined back: two lanes of fp16 scales and adds over
2 Mi elements; three lanes of bf16 multiplies over 1 Mi; four lanes of f32 clamps and
square roots over 512 Ki; two lanes of bf16 GELUs and adds over 4 Mi (16 MiB a tensor, near
the line); two lanes of unequal length (fp16, 32 kernels beside 8); and, as the case where
the bound should not bind, two lanes of 16 Ki-element adds (kernels under the floor).

    python3 scripts/validate_all.py --out DIR --groups heldout94
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def lanes(dtype, n, chains):
    """A step that forks one lane a chain in `chains` (each a function of a tensor returning
    a tensor, run on an `n`-element tensor of `dtype` of its own), under `torch.no_grad()`."""
    import torch
    from walk_parts import fork_lanes, no_grad_step
    with torch.device("cuda"):
        xs = [torch.randn(n, dtype=getattr(torch, dtype)) for _ in chains]
    parts = [lambda x=x, c=c: c(x) for x, c in zip(xs, chains)]
    return no_grad_step(fork_lanes(parts))


def scale_add(ops):
    def chain(y):
        for k in range(ops):
            y = y * 0.999 if k % 2 == 0 else y + 0.001
        return y
    return chain


def multiplies(ops):
    def chain(y):
        for _ in range(ops):
            y = y * 1.0001
        return y
    return chain


def clamp_sqrt(ops):
    def chain(y):
        import torch
        for k in range(ops):
            y = torch.clamp(y, -4.0, 4.0) if k % 2 == 0 else torch.sqrt(y.abs() + 1.0)
        return y
    return chain


def gelu_add(ops):
    def chain(y):
        import torch
        for k in range(ops):
            y = torch.nn.functional.gelu(y) if k % 2 == 0 else y + 0.01
        return y
    return chain


build = builder(131_94, {
    "lt_two_lanes_of_scale_adds_fp16_2m": lambda: lanes(
        "float16", 1 << 21, [scale_add(24), scale_add(24)]),
    "lt_three_lanes_of_multiplies_bf16_1m": lambda: lanes(
        "bfloat16", 1 << 20, [multiplies(16)] * 3),
    "lt_four_lanes_of_clamp_sqrt_f32_512k": lambda: lanes(
        "float32", 1 << 19, [clamp_sqrt(12)] * 4),
    "lt_two_lanes_of_gelu_adds_bf16_4m": lambda: lanes(
        "bfloat16", 1 << 22, [gelu_add(16), gelu_add(16)]),
    "lt_unequal_lanes_of_scale_adds_fp16": lambda: lanes(
        "float16", 1 << 20, [scale_add(32), scale_add(8)]),
    "lt_two_lanes_of_tiny_adds_fp16": lambda: lanes(
        "float16", 1 << 14, [scale_add(24), scale_add(24)]),
})
