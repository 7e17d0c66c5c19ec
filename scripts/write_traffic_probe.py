#!/usr/bin/env python3
"""Bytes read and written against bytes only read, beside a memory-bound GEMV on another
stream, as CUDA graphs replayed unprofiled and interleaved: whether a stand-in that only reads
what an element-wise kernel moves asks as much of the memory beside another stream's reads as
the kernel does.

Each graph forks four launches of one kernel onto one stream and four of a bf16 GEMV (1 x 8192
times 8192 x 8192: 128 MiB of weights) onto another, and joins them; `none+gemv` is the GEMV
chain alone. The kernels: a SiLU and a copy of 64 MiB (fp16, read and written), sums of 128
and 64 MiB (read only). `side_by_side_over_sum` is the pair's graph over the two chains' graphs
alone (1: no overlap at all).

    python3 scripts/write_traffic_probe.py --out write_traffic.json

Needs a CUDA device and PyTorch (docs/validation-h200.md, "A paced stand-in that writes").
"""
import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture, replay_ms, side_by_side  # noqa: E402


def kernels():
    """Name -> one launch, on the current stream, writing into buffers made here once."""
    dev = "cuda"
    a = torch.randn(4096, 8192, dtype=torch.float16, device=dev)
    out = torch.empty_like(a)
    big = torch.randn(8192, 8192, dtype=torch.float16, device=dev).view(-1)
    half = torch.randn(4096, 8192, dtype=torch.float16, device=dev).view(-1)
    total = torch.empty((), dtype=torch.float32, device=dev)
    return {
        "silu64_rw": lambda: torch.ops.aten.silu.out(a, out=out),
        "copy64_rw": lambda: out.copy_(a),
        "sum128_r": lambda: torch.sum(big, 0, dtype=torch.float32, out=total),
        "sum64_r": lambda: torch.sum(half, 0, dtype=torch.float32, out=total),
    }


def graph(side, gemv, n=4):
    """A graph of `n` launches of `side` (if any) forked beside `n` of `gemv` (if any)."""
    parts = [lambda f=f: [f() for _ in range(n)] for f in (side, gemv) if f]
    return capture(side_by_side(parts))[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--trials", type=int, default=15)
    args = ap.parse_args()
    torch.manual_seed(0)
    w = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    v = torch.randn(1, 8192, dtype=torch.bfloat16, device="cuda")
    g = torch.empty(1, 8192, dtype=torch.bfloat16, device="cuda")

    def gemv():
        return torch.mm(v, w, out=g)

    ks = kernels()
    graphs = {"none+gemv": graph(None, gemv)}
    for name, k in ks.items():
        graphs[name] = graph(k, None)
        graphs[name + "+gemv"] = graph(k, gemv)
    times = replay_ms(torch, graphs, 20, args.trials)
    ms = {name: statistics.median(t) for name, t in times.items()}
    rows = []
    for name in ks:
        alone, both, chain = ms[name], ms[name + "+gemv"], ms["none+gemv"]
        rows.append({"kernel": name, "alone_ms": alone, "gemv_alone_ms": chain,
                     "side_by_side_ms": both, "side_by_side_over_sum": both / (alone + chain)})
        print(f"{name:10} alone {alone:.4f} ms, GEMV chain {chain:.4f}, side by side {both:.4f} "
              f"({100 * both / (alone + chain):.0f}% of the sum)")
    with open(args.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "medians_ms": ms, "rows": rows}, f,
                  indent=1)


if __name__ == "__main__":
    main()
