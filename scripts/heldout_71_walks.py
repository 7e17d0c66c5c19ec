"""Six walks written after dbf5139 (a concatenation holds only the blocks its recorded bytes can
fill), before any run: its first test, on lanes whose concatenations are small and large. Four
lanes of rotate-half rotary embeddings over 4 heads × 64 (fp16, 6 passes); two lanes appending a
token's keys to an 8 × 128 × 64 bf16 cache by `torch.cat` (6 passes, the cache growing); three
lanes joining a feature, its half and its ReLU over 64 × 256 f32 (6 passes, a projection back
between); two rotary lanes (8 heads × 128, bf16) beside a lane of bf16 GEMVs 2048 → 2048 (4
layers); two lanes of `torch.stack` of four 32 × 512 fp16 tensors and their sum (6 passes); six
lanes of concatenations of three 16-element f32 vectors (8 passes).

    python3 scripts/validate_all.py --out DIR --groups heldout71
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import lanes_step as lanes, linear_lane, repeated  # noqa: E402
from walk_registry import builder  # noqa: E402


def rotary_lane(heads, dim, dtype, passes):
    """A lane of `passes` rotate-half rotary embeddings over `heads` × `dim`."""
    import torch
    with torch.device("cuda"):
        x = torch.randn(heads, dim, dtype=dtype)
        cos = torch.randn(dim, dtype=dtype)
        sin = torch.randn(dim, dtype=dtype)
    half = dim // 2
    return repeated(x, passes,
                    lambda y: y * cos + torch.cat((-y[..., half:], y[..., :half]), dim=-1) * sin)


def four_lanes_of_rotate_half_fp16():
    import torch
    return lanes(4, lambda: rotary_lane(4, 64, torch.float16, 6))


def two_lanes_of_kv_cache_appends_bf16():
    import torch

    def lane():
        with torch.device("cuda"):
            cache = torch.randn(8, 128, 64, dtype=torch.bfloat16)
            new = torch.randn(8, 1, 64, dtype=torch.bfloat16)

        def run():
            c = cache
            for _ in range(6):
                c = torch.cat((c, new), dim=1)
            return c
        return run
    return lanes(2, lane)


def three_lanes_of_feature_joins_f32():
    import torch

    def lane():
        with torch.device("cuda"):
            x = torch.randn(64, 256)
            w = torch.randn(768, 256) * 0.02
        return repeated(x, 6, lambda y, w=w: torch.cat((y, y * 0.5, torch.relu(y)), dim=-1) @ w)
    return lanes(3, lane)


def rotary_lanes_beside_gemv_lane_bf16():
    import torch
    gemvs = linear_lane(2048, 2048, 1, 4, torch.bfloat16)
    return lanes(2, lambda: rotary_lane(8, 128, torch.bfloat16, 6), gemvs)


def two_lanes_of_stack_sums_fp16():
    import torch

    def lane():
        with torch.device("cuda"):
            parts = [torch.randn(32, 512, dtype=torch.float16) for _ in range(4)]
        return repeated(parts[0], 6,
                        lambda y, p=parts: torch.stack([y] + p[1:]).sum(0) * 0.25)
    return lanes(2, lane)


def six_lanes_of_tiny_cats_f32():
    import torch

    def lane():
        with torch.device("cuda"):
            a, b, c = (torch.randn(16) for _ in range(3))
        return repeated(a, 8, lambda y, b=b, c=c: torch.cat((y, b, c))[:16] * 0.9)
    return lanes(6, lane)


build = builder(131_71, {
    "kv_four_lanes_of_rotate_half_fp16": four_lanes_of_rotate_half_fp16,
    "kv_two_lanes_of_kv_cache_appends_bf16": two_lanes_of_kv_cache_appends_bf16,
    "kv_three_lanes_of_feature_joins_f32": three_lanes_of_feature_joins_f32,
    "kv_rotary_lanes_beside_gemv_lane_bf16": rotary_lanes_beside_gemv_lane_bf16,
    "kv_two_lanes_of_stack_sums_fp16": two_lanes_of_stack_sums_fp16,
    "kv_six_lanes_of_tiny_cats_f32": six_lanes_of_tiny_cats_f32,
})
