#!/usr/bin/env python3
"""A chain of small adds beside one or more streams of decode-shaped GEMM chains, as CUDA
graphs replayed unprofiled and interleaved: does a small kernel's stretch beside other
streams follow the GEMMs' memory load together, or what one GEMM's blocks hold of the SMs?

The offline model (`--summary`) stretches a small kernel by the load of all other lanes'
kernels together, through points measured beside one GEMM chain of three sizes (1024, 2048
and 4096 square at 16 tokens, fp16): +17% and +16% at the two smaller, +161% at the 4096
chain (96 whole-SM blocks). Three chains of 1536-square GEMMs (24 blocks each) side by side
then price their small kernels ~1.9 times as long, where their real graph shows little of it.
Here the same adds (1024 fp32 adds over 16 x 1024, longer than the GEMMs) run beside N
chains of d-square GEMMs (16 tokens, fp16, 256 MiB of weights a chain, so each streams from
device memory), for several (d, N); `stretch` is how much longer an add took while the GEMMs
ran (as `launch-econ`'s profile measures it: p / (b - p), b the GEMM chains' time alone
together, p what the adds' chain lost beside them), `load_gb_s` the chains' operand bytes
over their time alone together. After the timing, one profiled replay of each GEMM size
records its kernel's grid.

    python3 scripts/small_beside_lanes_probe.py --out small_beside_lanes.json

Needs a CUDA device and PyTorch.

Superseded: its figures are differences of two graphs' times, which also hold the per-node
level each graph ran at (the graph with 256 MiB of GEMMs beside the adds does not run at the
adds-alone graph's level); `scripts/small_kernel_kind_probe.py --stamped-only` reads the same
stretch by clock stamps within one replay (docs/validation-h200.md, "Stretches read by clock
stamps").
"""
import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture, gemm_kernels, replay_ms, side_by_side  # noqa: E402

TOKENS = 16
CHAIN_BYTES = 256 << 20
CASES = [(1024, 1), (1024, 2), (1024, 4), (1536, 1), (1536, 2), (1536, 3), (2048, 1),
         (2048, 2), (4096, 1)]


def gemm_chain(d):
    """Launch functions of one chain of d-square GEMMs over 256 MiB of weights."""
    layers = max(1, CHAIN_BYTES // (2 * d * d))
    ws = [torch.randn(d, d, dtype=torch.float16, device="cuda") for _ in range(layers)]
    x = torch.randn(TOKENS, d, dtype=torch.float16, device="cuda")
    y = torch.empty(TOKENS, d, dtype=torch.float16, device="cuda")
    return [lambda w=w: torch.mm(x, w, out=y) for w in ws], layers * (2 * d * d + 4 * TOKENS * d)


def adds_chain(n=1024):
    a, b = (torch.randn(TOKENS, 1024, device="cuda") for _ in range(2))
    y = torch.empty_like(a)
    return [lambda: torch.add(a, b, out=y)] * n


def graph(lanes):
    """One graph forking each lane (a list of launches) onto a stream of its own."""
    parts = [lambda lane=lane: [f() for f in lane] for lane in lanes]
    return capture(side_by_side(parts), warmups=1)[0]


def times(graphs, trials):
    """Median µs of one replay of each graph, interleaved ([`walk_parts.replay_ms`])."""
    t = replay_ms(torch, dict(enumerate(graphs)), 10, trials)
    return [statistics.median(t[k]) * 1e3 for k in range(len(graphs))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--trials", type=int, default=9)
    args = ap.parse_args()
    torch.manual_seed(0)
    rows = []
    for d, n in CASES:
        chains = [gemm_chain(d) for _ in range(n)]
        adds = adds_chain()
        g_gemms = graph([c[0] for c in chains])
        g_adds = graph([adds])
        g_both = graph([adds] + [c[0] for c in chains])
        b, a, both = times([g_gemms, g_adds, g_both], args.trials)
        p = both - a
        bytes_ = sum(c[1] for c in chains)
        rows.append({"d": d, "lanes": n, "gemms_alone_us": b, "adds_alone_us": a,
                     "both_us": both, "load_gb_s": bytes_ / b / 1e3,
                     "stretch": max(p, 0.0) / (b - p) if 0 < p < b else None,
                     "adds_outlast": a > b})
        print(rows[-1], flush=True)
        del chains, g_gemms, g_adds, g_both
        torch.cuda.empty_cache()
    grids = {}
    for d in sorted({d for d, _ in CASES}):
        grids[d] = gemm_kernels(d, TOKENS)
        print(d, grids[d], flush=True)
    with open(args.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "rows": rows, "kernels": grids}, f,
                  indent=1)


if __name__ == "__main__":
    main()
