"""Six walks written after the L2's bandwidth entered the offline model (element-wise kernels
of a walk whose data the L2 holds share the bandwidth lanes of adds within the L2 were measured
to move together, and do not slow other lanes' kernels as device-memory traffic does), before
any run: lanes of element-wise and normalisation kernels on data the L2 holds, of several
widths, and such lanes beside GEMMs whose weights the L2 holds. Four lanes of bias and GELU
over 256 × 512 f32 (16 passes); two lanes of residual add and LayerNorm over 64 × 4096 bf16 (12
passes); three lanes of scaled softmax over 32 × 2048 fp16 (10 passes); two lanes of f32
element-wise chains (1 MiB) beside a lane of bf16 GEMVs 1024 → 1024 (8 layers, 16 MiB of
weights); six lanes of f32 multiply-adds over 64 × 1024 (8 passes); two lanes of fp16 adds over
2 × 2^20 elements (4 MiB a buffer, 8 passes).

    python3 scripts/validate_all.py --out DIR --groups heldout68
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import fork_lanes, linear_lane, no_grad_step, repeated  # noqa: E402
from walk_registry import builder  # noqa: E402


def lanes_of(count, make):
    """A step of `count` lanes forked and joined, each `make()` (a function issuing its work)."""
    return no_grad_step(fork_lanes([make() for _ in range(count)]))


def four_lanes_of_bias_gelu_f32():
    import torch
    f = torch.nn.functional

    def lane():
        with torch.device("cuda"):
            x = torch.randn(256, 512)
            b = torch.randn(512)
        return repeated(x, 16, lambda y, b=b: f.gelu(y + b))
    return lanes_of(4, lane)


def two_lanes_of_residual_layernorm_bf16():
    import torch
    f = torch.nn.functional

    def lane():
        with torch.device("cuda"):
            x = torch.randn(64, 4096, dtype=torch.bfloat16)
            r = torch.randn(64, 4096, dtype=torch.bfloat16)
            g = torch.ones(4096, dtype=torch.bfloat16)
        return repeated(x, 12, lambda y, r=r, g=g: f.layer_norm(y + r, (4096,), g))
    return lanes_of(2, lane)


def three_lanes_of_scaled_softmax_fp16():
    import torch

    def lane():
        with torch.device("cuda"):
            x = torch.randn(32, 2048, dtype=torch.float16)
        return repeated(x, 10, lambda y: torch.softmax(y * 1.7, dim=-1))
    return lanes_of(3, lane)


def elementwise_lanes_beside_gemv_lane_bf16():
    import torch

    def chain():
        with torch.device("cuda"):
            x = torch.randn(512, 512)
            s = torch.randn(512, 512)
        return repeated(x, 8, lambda y, s=s: y * 0.5 + s)
    gemvs = linear_lane(1024, 1024, 1, 8, torch.bfloat16)
    return no_grad_step(fork_lanes([gemvs, chain(), chain()]))


def six_lanes_of_small_multiply_adds_f32():
    import torch

    def lane():
        with torch.device("cuda"):
            x = torch.randn(64, 1024)
            w = torch.randn(64, 1024)
        return repeated(x, 8, lambda y, w=w: torch.addcmul(w, y, w, value=0.5))
    return lanes_of(6, lane)


def two_lanes_of_wide_adds_fp16():
    import torch

    def lane():
        with torch.device("cuda"):
            x = torch.randn(2, 1 << 20, dtype=torch.float16)
            r = torch.randn(2, 1 << 20, dtype=torch.float16)
        return repeated(x, 8, lambda y, r=r: y + r)
    return lanes_of(2, lane)


build = builder(131_68, {
    "ks_four_lanes_of_bias_gelu_f32": four_lanes_of_bias_gelu_f32,
    "ks_two_lanes_of_residual_layernorm_bf16": two_lanes_of_residual_layernorm_bf16,
    "ks_three_lanes_of_scaled_softmax_fp16": three_lanes_of_scaled_softmax_fp16,
    "ks_elementwise_lanes_beside_gemv_lane_bf16": elementwise_lanes_beside_gemv_lane_bf16,
    "ks_six_lanes_of_small_multiply_adds_f32": six_lanes_of_small_multiply_adds_f32,
    "ks_two_lanes_of_wide_adds_fp16": two_lanes_of_wide_adds_fp16,
})
