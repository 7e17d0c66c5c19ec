"""Six walks written after 526df8c (a GEMM over weights the L2 holds is not stretched beside
other such GEMMs by their loads), before any run: its first test, on lanes of GEMMs whose
weights stay in the L2 from one replay to the next (every walk's GEMM operands, summed over
its calls as the offline model reckons them, within two thirds of a 50 MiB L2). Two replicas
of a bf16 MLP of two blocks (four 1024-square linear layers, GELU between, 4 tokens); three lanes of two fp16
GEMVs 1024 -> 2048 and back (1 token); a bf16 pipeline of two stages of two linear layers with
LayerNorm (1024 wide, 16 tokens, three micro-batches, streams waiting on each other's
streams); a bf16 base lane of four 1024-square GEMVs beside a lane of rank-16 adapters and a
lane of their scaling; four fp16 expert lanes (1024 -> 512, SiLU, 512 -> 1024, 4 tokens);
query, key and value projections on three bf16 lanes (1024 -> 1024, 8 tokens), each followed
by a scale and a softmax over 8 heads.

    python3 scripts/validate_all.py --out DIR --groups heldout72
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import fork_lanes, lanes_step as lanes, no_grad_step, stage_pipeline  # noqa: E402
from walk_registry import builder  # noqa: E402


def mlp_lane(width, hidden, tokens, layers, dtype, act):
    """A lane of `layers` MLP blocks `width` -> `hidden` -> `width` over `tokens` rows,
    `act` after the first projection of each (weights of its own)."""
    import torch
    with torch.device("cuda"):
        ups = [torch.randn(hidden, width, dtype=dtype) * 0.02 for _ in range(layers)]
        downs = [torch.randn(width, hidden, dtype=dtype) * 0.02 for _ in range(layers)]
        x = torch.randn(tokens, width, dtype=dtype)
    f = torch.nn.functional

    def run():
        y = x
        for up, down in zip(ups, downs):
            y = f.linear(act(f.linear(y, up)), down)
        return y
    return run


def two_replica_mlps_bf16():
    import torch
    gelu = torch.nn.functional.gelu
    return lanes(2, lambda: mlp_lane(1024, 1024, 4, 2, torch.bfloat16, gelu))


def three_lanes_of_gemv_pairs_fp16():
    import torch
    return lanes(3, lambda: mlp_lane(1024, 2048, 1, 1, torch.float16, lambda y: y))


def two_stage_pipeline_bf16():
    import torch
    nn = torch.nn
    stages = [nn.Sequential(nn.Linear(1024, 1024), nn.LayerNorm(1024),
                            nn.Linear(1024, 1024)).cuda().bfloat16().eval() for _ in range(2)]
    micro = [torch.randn(16, 1024, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    return stage_pipeline(stages, micro)


def adapters_beside_base_bf16():
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        x = torch.randn(1, 1024, dtype=torch.bfloat16)
        base = [torch.randn(1024, 1024, dtype=torch.bfloat16) * 0.02 for _ in range(4)]
        downs = [torch.randn(16, 1024, dtype=torch.bfloat16) * 0.02 for _ in range(4)]
        ups = [torch.randn(1024, 16, dtype=torch.bfloat16) * 0.02 for _ in range(4)]
        gains = [torch.rand(1024, dtype=torch.bfloat16) for _ in range(4)]

    def base_lane():
        return [f.linear(x, w) for w in base][-1]

    def adapter_lane():
        return [f.linear(f.linear(x, d), u) for d, u in zip(downs, ups)][-1]

    def scale_lane():
        return [x * g + g for g in gains][-1]

    return no_grad_step(fork_lanes([base_lane, adapter_lane, scale_lane]))


def four_expert_lanes_fp16():
    import torch
    silu = torch.nn.functional.silu
    return lanes(4, lambda: mlp_lane(1024, 512, 4, 1, torch.float16, silu))


def qkv_projection_lanes_bf16():
    import torch

    def lane():
        with torch.device("cuda"):
            w = torch.randn(1024, 1024, dtype=torch.bfloat16) * 0.02
            x = torch.randn(8, 1024, dtype=torch.bfloat16)

        def run():
            y = torch.nn.functional.linear(x, w).view(8, 8, 128) * 0.088
            return torch.softmax(y, dim=-1)
        return run
    return lanes(3, lane)


build = builder(131_72, {
    "kw_two_replica_mlps_bf16": two_replica_mlps_bf16,
    "kw_three_lanes_of_gemv_pairs_fp16": three_lanes_of_gemv_pairs_fp16,
    "kw_two_stage_pipeline_bf16": two_stage_pipeline_bf16,
    "kw_adapters_beside_base_bf16": adapters_beside_base_bf16,
    "kw_four_expert_lanes_fp16": four_expert_lanes_fp16,
    "kw_qkv_projection_lanes_bf16": qkv_projection_lanes_bf16,
})
