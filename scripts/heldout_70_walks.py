"""Six walks written after `--l2-resident paced` (kernels beside other streams read their
recorded inputs paced from bytes the L2 keeps) was tried on batches 68 and 69, before any run:
its first test, and a third test of the offline L2 rule (de89203). Lanes of element-wise and
normalisation kernels over data the L2 holds: three lanes of masked scaling over 256 × 1024 f32
(comparison, where, multiply; 6 passes); two lanes of LayerNorm and GELU over 8 × 4096 bf16
(8 passes); four lanes of residual add and scale over 128 × 2048 fp16 (8 passes); two lanes of
f32 element-wise chains over 512 × 512 beside two lanes of fp16 GEMVs 1024 → 1024 (4 layers
each); five lanes of clamp and square root over 128 × 1024 f32 (6 passes); two lanes of softmax
and multiply over 64 × 1024 bf16 (6 passes).

    python3 scripts/validate_all.py --out DIR --groups heldout70
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import fork_lanes, linear_lane, no_grad_step, repeated  # noqa: E402
from walk_registry import builder  # noqa: E402


def lanes(count, make, *others):
    """A step of `count` lanes `make()` and the `others` lanes, forked and joined."""
    return no_grad_step(fork_lanes([make() for _ in range(count)] + list(others)))


def three_lanes_of_masked_scaling_f32():
    import torch

    def lane():
        with torch.device("cuda"):
            x = torch.randn(256, 1024)
        return repeated(x, 6, lambda y: torch.where(y > 0.1, y * 1.3, y * 0.2))
    return lanes(3, lane)


def two_lanes_of_layernorm_gelu_bf16():
    import torch
    f = torch.nn.functional

    def lane():
        with torch.device("cuda"):
            x = torch.randn(8, 4096, dtype=torch.bfloat16)
        return repeated(x, 8, lambda y: f.gelu(f.layer_norm(y, (4096,))))
    return lanes(2, lane)


def four_lanes_of_residual_scale_fp16():
    import torch

    def lane():
        with torch.device("cuda"):
            x = torch.randn(128, 2048, dtype=torch.float16)
            r = torch.randn(128, 2048, dtype=torch.float16)
        return repeated(x, 8, lambda y, r=r: (y + r) * 0.7)
    return lanes(4, lane)


def elementwise_lanes_beside_two_gemv_lanes_fp16():
    import torch

    def chain():
        with torch.device("cuda"):
            x = torch.randn(512, 512)
            s = torch.randn(512, 512)
        return repeated(x, 8, lambda y, s=s: torch.tanh(y) + s)
    gemvs = [linear_lane(1024, 1024, 1, 4, torch.float16) for _ in range(2)]
    return lanes(2, chain, *gemvs)


def five_lanes_of_clamp_sqrt_f32():
    import torch

    def lane():
        with torch.device("cuda"):
            x = torch.rand(128, 1024) + 0.5
        return repeated(x, 6, lambda y: torch.sqrt(torch.clamp(y, 0.25, 4.0)) + 0.5)
    return lanes(5, lane)


def two_lanes_of_softmax_mul_bf16():
    import torch

    def lane():
        with torch.device("cuda"):
            x = torch.randn(64, 1024, dtype=torch.bfloat16)
            v = torch.randn(64, 1024, dtype=torch.bfloat16)
        return repeated(x, 6, lambda y, v=v: torch.softmax(y, dim=-1) * v * 1024.0)
    return lanes(2, lane)


build = builder(131_70, {
    "ku_three_lanes_of_masked_scaling_f32": three_lanes_of_masked_scaling_f32,
    "ku_two_lanes_of_layernorm_gelu_bf16": two_lanes_of_layernorm_gelu_bf16,
    "ku_four_lanes_of_residual_scale_fp16": four_lanes_of_residual_scale_fp16,
    "ku_elementwise_lanes_beside_two_gemv_lanes_fp16": elementwise_lanes_beside_two_gemv_lanes_fp16,
    "ku_five_lanes_of_clamp_sqrt_f32": five_lanes_of_clamp_sqrt_f32,
    "ku_two_lanes_of_softmax_mul_bf16": two_lanes_of_softmax_mul_bf16,
})
