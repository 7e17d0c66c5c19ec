#!/usr/bin/env python3
"""Decode-shaped PyTorch linear layers (bf16 `torch.matmul` of 1-64 rows against a weight read
from device memory): each launch's graph node time, unprofiled, against its kernels' duration
profiled by CUPTI (torch.profiler) in eager launches one at a time, as `grid_node_probe.py`
does for a memory kernel — and, to say where a difference comes from, as CUPTI records them
launched back to back, back to back between small kernels, and in a graph replay.

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


def recorded_kernels(body):
    """The kernel events CUPTI (torch.profiler, CUDA activity) records while `body()` runs, in
    start order."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        body()
        torch.cuda.synchronize()
    path = "/tmp/linear_node_probe.json"
    p.export_chrome_trace(path)
    with open(path) as f:
        return sorted((e for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel"),
                      key=lambda e: e["ts"])


def per_launch(kernels, launchers, each, keep=None):
    """Median recorded time of each launcher's launches (the first two left out), from kernels
    recorded in launcher order, `each[c]` kernels a launch of which the first `keep[c]` (all
    where None) are the launch's own."""
    out, at = {}, 0
    for c in launchers:
        n = each[c]
        mine = kernels[at:at + 10 * n]
        at += 10 * n
        k = n if keep is None else keep[c]
        out[c] = statistics.median(sum(e["dur"] for e in mine[i * n:i * n + k])
                                   for i in range(2, 10))
    if at != len(kernels):
        sys.exit(f"expected {at} kernels, recorded {len(kernels)}")
    return out


def profiled_us(launchers, graphs, between):
    """Each launcher's kernels as CUPTI records them (kernels of one launch summed: cuBLAS may
    split K), ten launches a context, after every unprofiled timing: `alone` one at a time with
    a sync between (as grid_node_probe.py), `queued` back to back, `between` back to back with
    one small element-wise kernel after each (as a decode's norms and adds sit between its
    GEMVs), `graph` a replay of a captured graph of ten launches."""
    import torch

    def alone():
        for fn in launchers.values():
            for i in range(10):
                fn(i)
                torch.cuda.synchronize()
    groups = launch_groups(recorded_kernels(alone))
    if len(groups) != 10 * len(launchers):
        sys.exit(f"expected {10 * len(launchers)} launches, found {len(groups)} kernel groups")
    each, shapes, out = {}, {}, {"alone": {}}
    for k, c in enumerate(launchers):
        gs = groups[10 * k:10 * k + 10]
        each[c] = len(gs[0])
        out["alone"][c] = statistics.median(sum(e["dur"] for e in g) for g in gs[2:])
        shapes[c] = [(e["args"].get("grid"), e["name"][:40]) for e in gs[0]]

    def queued():
        for fn in launchers.values():
            for i in range(10):
                fn(i)
            torch.cuda.synchronize()
    out["queued"] = per_launch(recorded_kernels(queued), launchers, each)

    def interleaved():
        for fn in launchers.values():
            for i in range(10):
                fn(i)
                between()
            torch.cuda.synchronize()
    out["between"] = per_launch(recorded_kernels(interleaved), launchers,
                                {c: n + 1 for c, n in each.items()}, keep=each)

    def replays():
        for c in launchers:
            graphs[c].replay()
            torch.cuda.synchronize()
    out["graph"] = per_launch(recorded_kernels(replays), launchers, each)
    return out, each, shapes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="JSON file to write the rows to")
    args = ap.parse_args()
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from grid_node_probe import graph_of, node_us
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
    small = torch.zeros(4096, device="cuda", dtype=torch.bfloat16)

    def between():
        small.add_(1.0)
    node = {c: node_us(fn) for c, fn in launchers.items()}
    graphs = {c: graph_of(fn, 10) for c, fn in launchers.items()}
    prof, each, shapes = profiled_us(launchers, graphs, between)
    rows = [{"rows": c[0], "k": c[1], "n": c[2], "graph_node_unprofiled_us": node[c],
             "eager_profiled_us": prof["alone"][c],
             "eager_queued_profiled_us": prof["queued"][c],
             "eager_between_profiled_us": prof["between"][c],
             "graph_profiled_us": prof["graph"][c],
             "node_minus_profiled_us": node[c] - prof["alone"][c],
             "ratio": node[c] / prof["alone"][c], "kernels": shapes[c], "kernels_per_launch": each[c]}
            for c in launchers]
    print("rows x k -> n: graph node unprofiled | CUPTI: alone, queued, between small kernels, "
          "in the graph (us)")
    for r in rows:
        print(f"{r['rows']:3d} x {r['k']:5d} -> {r['n']:5d}: {r['graph_node_unprofiled_us']:8.3f} | "
              f"{r['eager_profiled_us']:8.3f} {r['eager_queued_profiled_us']:8.3f} "
              f"{r['eager_between_profiled_us']:8.3f} {r['graph_profiled_us']:8.3f} "
              f"k/launch {r['kernels_per_launch']}")
    json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, open(args.out, "w"),
              indent=1)


if __name__ == "__main__":
    main()
