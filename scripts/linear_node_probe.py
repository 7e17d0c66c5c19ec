#!/usr/bin/env python3
"""Decode-shaped PyTorch linear layers (bf16 `torch.matmul` of 1-64 rows against a weight read
from device memory): each launch's graph node time, unprofiled, against its kernels' duration
profiled by CUPTI (torch.profiler) in eager launches one at a time, as `grid_node_probe.py`
does for a memory kernel.

Asks whether the long GEMV kernels of PyTorch's decodes run shorter in a graph than a
recording says (on H100s one-stream decodes' real graph nodes came out near 0.97 x their
recorded duration + 0.3 us; validation doc, "An H100 grid table"). Each shape has 80 weight
copies, so that a graph of 80 launches reads 80 different matrices, as layers do. cuBLAS may
split one matmul into two kernels (split K and its reduction): a launch's kernels are summed,
and its graph node is then both nodes.

    python3 scripts/linear_node_probe.py OUT.json
"""
import argparse
import json
import os
import statistics
import sys

# A launch's kernels run back to back; launches one at a time with a sync between are
# further apart than this (a synchronize and a launch call), us.
LAUNCH_GAP_US = 8.0

SHAPES = [(1, 1024, 1024), (1, 2048, 2048), (1, 4096, 4096), (1, 2048, 8192), (8, 4096, 4096),
          (16, 4096, 4096), (64, 2048, 2048), (1, 8192, 8192)]


def launch_groups(kernels, gap_us=LAUNCH_GAP_US):
    """Kernel events (Kineto `ts`/`dur`, us) in start order, grouped into launches: a kernel that
    starts more than `gap_us` after the previous one ended opens a new launch."""
    groups, last_end = [], None
    for e in kernels:
        if last_end is None or e["ts"] - last_end > gap_us:
            groups.append([])
        groups[-1].append(e)
        last_end = e["ts"] + e["dur"]
    return groups


def profiled_us(launchers):
    """Median CUPTI kernel time per launch (kernels of one launch summed: cuBLAS may split K),
    launches one at a time with a sync between, after every unprofiled timing."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for c, fn in launchers.items():
            for i in range(10):
                fn(i)
                torch.cuda.synchronize()
    path = "/tmp/linear_node_probe.json"
    p.export_chrome_trace(path)
    with open(path) as f:
        ev = sorted((e for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel"),
                    key=lambda e: e["ts"])
    groups = launch_groups(ev)
    if len(groups) != 10 * len(launchers):
        sys.exit(f"expected {10 * len(launchers)} launches, found {len(groups)} kernel groups")
    out, shapes = {}, {}
    for k, c in enumerate(launchers):
        gs = groups[10 * k:10 * k + 10]
        out[c] = statistics.median(sum(e["dur"] for e in g) for g in gs[2:])
        shapes[c] = ([(e["args"].get("grid"), e["name"][:40]) for e in gs[0]], len(gs[0]))
    return out, shapes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="JSON file to write the rows to")
    args = ap.parse_args()
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from grid_node_probe import node_us
    from validate import launch_on_other_stream
    launch_on_other_stream("torch")
    launchers = {}
    for rows, k, n in SHAPES:
        # 80 weights so that a graph of 80 launches reads 80 different matrices (as layers do)
        ws = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.01 for _ in range(80)]
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        y = torch.empty(rows, n, device="cuda", dtype=torch.bfloat16)

        def one(i, ws=ws, x=x, y=y):
            torch.matmul(x, ws[i % 80].t(), out=y)
        launchers[(rows, k, n)] = one
    node = {c: node_us(fn) for c, fn in launchers.items()}
    prof, shapes = profiled_us(launchers)
    rows = [{"rows": c[0], "k": c[1], "n": c[2], "graph_node_unprofiled_us": node[c],
             "eager_profiled_us": prof[c], "node_minus_profiled_us": node[c] - prof[c],
             "ratio": node[c] / prof[c], "kernels": shapes[c][0], "kernels_per_launch": shapes[c][1]}
            for c in launchers]
    for r in rows:
        print(f"{r['rows']:3d} x {r['k']:5d} -> {r['n']:5d}: node {r['graph_node_unprofiled_us']:8.3f} "
              f"profiled {r['eager_profiled_us']:8.3f} diff {r['node_minus_profiled_us']:+.3f} "
              f"ratio {r['ratio']:.3f} k/launch {r['kernels_per_launch']}")
    json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, open(args.out, "w"),
              indent=1)


if __name__ == "__main__":
    main()
