#!/usr/bin/env python3
"""Which of two kernels side by side pays, read from stored profiled graph replays.

For every multi-stream walk of the given `validate_all.py` runs, each kernel of the profiled
graph replay (`WALK.graph.json`) is set against its name's median duration in the eager
recording (`WALK.eager.json`) and classed by how it met other streams' kernels: `second`
(it started while another stream's kernel ran), `first` (another stream's kernel started
while it ran, and it did not start beside one) or `alone`; and as fat (two or fewer blocks
an SM, longer than 3 µs) or not. Prints each class's count and median ratio (docs/
validation-h200.md, section "All 80 walks at this version"). The graph replays ran under
CUPTI, which lengthens kernels and staggers branches: read the classes against each other.

    python3 scripts/graph_overlap_stats.py RUN_DIR [RUN_DIR ...] [--per-walk]
"""
import argparse
import collections
import glob
import json
import os
import statistics
import sys


def kernels(path):
    with open(path) as f:
        trace = json.load(f)
    return sorted((e for e in trace["traceEvents"] if e.get("cat") == "kernel"),
                  key=lambda e: e["ts"])


def classify(graph, eager):
    """(class, fat, ratio) for each graph kernel whose name the eager recording has."""
    eager_us = collections.defaultdict(list)
    for k in eager:
        eager_us[k["name"]].append(k["dur"])
    for k in graph:
        if k["name"] not in eager_us:
            continue
        start, end, stream = k["ts"], k["ts"] + k["dur"], k["args"]["stream"]
        others = [o for o in graph if o["args"]["stream"] != stream]
        second = any(o["ts"] < start < o["ts"] + o["dur"] for o in others)
        joined = any(start < o["ts"] < end for o in others)
        fat = (k["args"].get("blocks per SM") or 9) <= 2 and k["dur"] > 3
        cls = "second" if second else ("first" if joined else "alone")
        yield cls, fat, k["dur"] / max(statistics.median(eager_us[k["name"]]), 1e-3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="directories validate_all.py wrote")
    ap.add_argument("--per-walk", action="store_true", help="also each walk's classes")
    args = ap.parse_args()
    ratios = collections.defaultdict(list)
    for run in args.runs:
        if not os.path.isdir(run):
            sys.exit(f"graph_overlap_stats: {run} is not a directory validate_all.py wrote")
        for graph_path in sorted(glob.glob(os.path.join(run, "*", "*.graph.json"))):
            eager_path = graph_path.replace(".graph.json", ".eager.json")
            if not os.path.exists(eager_path):
                continue
            graph = kernels(graph_path)
            if len({k["args"]["stream"] for k in graph}) < 2:
                continue
            walk = os.path.basename(graph_path).replace(".graph.json", "")
            for cls, fat, ratio in classify(graph, kernels(eager_path)):
                ratios[("all", cls, fat)].append(ratio)
                ratios[(walk, cls, fat)].append(ratio)
    if not ratios:
        sys.exit("graph_overlap_stats: no multi-stream walk with a profiled graph replay "
                 "(WALK.graph.json beside WALK.eager.json) under " + ", ".join(args.runs))
    for key in sorted(ratios, key=lambda k: (k[0] != "all", k)):
        if key[0] == "all" or args.per_walk:
            walk, cls, fat = key
            r = ratios[key]
            print(f"{walk:28s} {cls:6s} {'fat' if fat else 'other':5s} {len(r):5d} kernels, "
                  f"graph / eager median {statistics.median(r):.3f}")


if __name__ == "__main__":
    main()
