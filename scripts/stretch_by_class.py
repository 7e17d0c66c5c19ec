#!/usr/bin/env python3
"""How much longer each kind of kernel runs beside other streams' kernels: in the profiled
real graph each stored walk's run recorded, and in the offline model (`launch-econ replay
--summary --export-trace`), per kernel class, on the machine without a GPU.

For each stored multi-stream walk whose graph ran the recorded walk, and each class (GEMMs,
attention, normalisations, reductions, element-wise kernels, others):

- real: the median of the class's kernels that overlapped another stream's kernel in the
  profiled graph replay, each over its kernel's mean eager duration, divided by the same for
  the class's kernels that ran alone there (so the profiler's own cost on a graph's kernels
  cancels);
- model: the same for the model's nodes (a node holds the graph's per-node cost and its
  kernel, as the model lays them out), over their recorded durations.

A profiled graph starts its side branches late (docs/validation-h200.md, "A profiled graph's
late second branch"), so which kernels overlap there is not what overlapped in the unprofiled
graph; the classes' stretches are what this compares, not the steps.

With `--by-neighbour`, each class is split by what ran beside it: `big` where a GEMM or an
attention kernel of another lane overlapped it, `small` where only other kernels did; a
kernel counts as beside others only where they covered at least `--full` of its time (0.8),
so kernels a late branch overlapped in part are left out of both sides.

    python3 scripts/stretch_by_class.py --runs DIR [--runs DIR ...] --launch-econ BIN \\
        [--min-kernels 3] [--by-neighbour [--full 0.8]] [--out STRETCH.json]
"""
import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict

from replay_variants import plain, walks

CLASSES = ("gemm", "attention", "norm", "reduce", "element-wise", "other")


def load(path):
    with (gzip.open if path.endswith(".gz") else open)(path) as f:
        return json.load(f)


def kernel_class(name):
    n = name.lower()
    if "fmha" in n or "attention" in n or "sdpa" in n or "flash" in n:
        return "attention"
    if "nvjet" in n or "gemm" in n or "gemv" in n or ("cutlass" in n and "conv" not in n):
        return "gemm"
    if "norm" in n:
        return "norm"
    if "reduce" in n or "softmax" in n:
        return "reduce"
    if "elementwise" in n or "copy" in n:
        return "element-wise"
    return "other"


def beside(events, lane):
    """For each event, whether an event of another lane overlaps it."""
    spans = [(e["ts"], e["ts"] + e["dur"], lane(e)) for e in events]
    return [any(l2 != l and a2 < b and b2 > a for a2, b2, l2 in spans) for a, b, l in spans]


def neighbours(events, lane, full):
    """For each event: None where no event of another lane overlaps it, "big" where a GEMM or
    attention kernel of another lane does, else "small" — each only where other lanes' events
    cover at least `full` of its time; "partial" where they cover less."""
    spans = [(e["ts"], e["ts"] + e["dur"], lane(e), kernel_class(e["name"])) for e in events]
    out = []
    for a, b, l, _ in spans:
        cuts = sorted((max(a, a2), min(b, b2), c2) for a2, b2, l2, c2 in spans
                      if l2 != l and a2 < b and b2 > a)
        covered, reached = 0.0, a
        for x, y, _ in cuts:
            if y > max(x, reached):
                covered += y - max(x, reached)
                reached = y
        if not cuts:
            out.append(None)
        elif b > a and covered / (b - a) >= full:
            out.append("big" if {c for _, _, c in cuts} & {"gemm", "attention"} else "small")
        else:
            out.append("partial")
    return out


def graph_runs(runs):
    """(group, record, eager trace, graph trace) of each stored walk run once (by walk and graph
    step) whose graph ran the recorded walk and whose profiled graph trace is still there."""
    seen = set()
    for group, r, trace in walks(runs):
        graph = os.path.join(os.path.dirname(trace), os.path.basename(r.get("graph_trace", "")))
        key = (r["walk"], r.get("graph_step_ms"))
        if key in seen or not r.get("same_walk", True) or not os.path.isfile(graph):
            continue
        seen.add(key)
        yield group, r, trace, graph


def ratio(together, alone):
    if not together:
        return None
    return statistics.median(together) / (statistics.median(alone) if alone else 1.0)


def walk_stretches(launch_econ, eager_path, graph_path, tmp, full=None):
    """{class: (kernels beside others in the real graph, real stretch, model stretch)}; with
    `full`, {(class, neighbour): ...} by [`neighbours`]."""
    eager = [e for e in load(eager_path)["traceEvents"] if e.get("cat") == "kernel"]
    if len({e["args"].get("stream") for e in eager}) < 2:
        return None
    out = os.path.join(tmp, "model.json")
    p = subprocess.run([launch_econ, "replay", plain(eager_path, tmp), "--summary",
                        "--export-trace", out],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    nodes = [e for e in load(out)["traceEvents"] if e.get("pid") == 1 and e["ph"] == "X"]
    graph = [e for e in load(graph_path)["traceEvents"] if e.get("cat") == "kernel"]
    mean_eager = defaultdict(list)
    for e in eager:
        mean_eager[e["name"]].append(e["dur"])
    mean_eager = {k: statistics.mean(v) for k, v in mean_eager.items()}
    def sides(events, lane):
        if full is None:
            return [(None, 0 if t else 1) for t in beside(events, lane)]
        return [(k, 0) if k in ("big", "small") else (None, 1) if k is None else (None, None)
                for k in neighbours(events, lane, full)]

    # {class: {"real"/"model": ({neighbour: [beside]}, [alone])}}
    parts = defaultdict(lambda: {"real": (defaultdict(list), []),
                                 "model": (defaultdict(list), [])})

    def add(kind, e, side, x):
        together, alone = parts[kernel_class(e["name"])][kind]
        if side[1] == 0:
            together[side[0]].append(x)
        elif side[1] == 1:
            alone.append(x)
    for e, side in zip(nodes, sides(nodes, lambda e: e["tid"])):
        if e["args"]["recorded_dur_us"] > 0:
            add("model", e, side, e["dur"] / e["args"]["recorded_dur_us"])
    for e, side in zip(graph, sides(graph, lambda e: e["args"].get("stream"))):
        if mean_eager.get(e["name"], 0) > 0:
            add("real", e, side, e["dur"] / mean_eager[e["name"]])
    out = {}
    for c, v in parts.items():
        (real, real_alone), (model, model_alone) = v["real"], v["model"]
        for k in set(real) | set(model):
            key = c if full is None else (c, k)
            out[key] = (len(real[k]), ratio(real[k], real_alone), ratio(model[k], model_alone))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", action="append", required=True)
    ap.add_argument("--launch-econ", required=True)
    ap.add_argument("--min-kernels", type=int, default=3,
                    help="kernels of a class beside others in the real graph to count a walk")
    ap.add_argument("--by-neighbour", action="store_true",
                    help="split each class by what ran beside it (a GEMM or attention, or not)")
    ap.add_argument("--full", type=float, default=0.8,
                    help="with --by-neighbour: share of a kernel's time other lanes must cover")
    ap.add_argument("--out")
    args = ap.parse_args()
    if not 0.0 < args.full <= 1.0:
        ap.error(f"--full: {args.full} is not in (0, 1]")
    full = args.full if args.by_neighbour else None

    def label(key):
        return key if full is None else f"{key[0]} beside {key[1]}"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for group, r, trace, graph in graph_runs(args.runs):
            s = walk_stretches(args.launch_econ, trace, graph, tmp, full)
            if s is None:
                continue
            rows.append({"group": group, "walk": r["walk"], "classes": {
                label(c): {"kernels": n, "real": g, "model": m} for c, (n, g, m) in s.items()}})
            cells = [f"{label(c)} {n}: {g:.2f} / {m:.2f}" for c, (n, g, m) in sorted(s.items())
                     if n >= args.min_kernels and g is not None and m is not None]
            print(f"{r['walk'][:44]:44s} " + ", ".join(cells))
    print(f"\n{len(rows)} walks; per class, over the walks with at least {args.min_kernels} of "
          "its kernels beside others (real / model, medians):")
    for c in CLASSES if full is None else [f"{c} beside {k}" for c in CLASSES
                                           for k in ("big", "small")]:
        pairs = [(x["real"], x["model"]) for row in rows
                 for k, x in row["classes"].items()
                 if k == c and x["kernels"] >= args.min_kernels
                 and x["real"] is not None and x["model"] is not None]
        if pairs:
            real = statistics.median(p[0] for p in pairs)
            model = statistics.median(p[1] for p in pairs)
            higher = sum(p[0] > p[1] for p in pairs)
            print(f"  {c:20s} {len(pairs):3d} walks: real x{real:.2f}, model x{model:.2f}; "
                  f"real higher on {higher}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
