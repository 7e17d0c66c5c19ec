#!/usr/bin/env python3
"""How much longer a small kernel runs beside one GEMM or attention kernel of another lane, by
how many SMs that kernel's blocks hold, in the profiled real graphs of `validate_all.py` runs.

A small kernel here is an element-wise, normalisation or reduction kernel of at most half the
H200's SMs in blocks; it counts where exactly one kernel of another lane overlapped it, a GEMM
or an attention kernel, for at least `--full` of its time. Its stretch is its graph duration
over its kernel's mean eager duration, over the median of the same for the walk's small
kernels that nothing overlapped (so the profiler's cost on a graph's kernels cancels). The big
kernel holds its blocks' SMs, one an SM, where a block's registers or shared memory take half
an SM or more (`fat`); otherwise the row says `None`. The runs must keep their graph traces
(a `validate_all.py --out` directory, not a stored run).

    python3 scripts/stretch_by_held_sms.py --runs DIR [--runs DIR ...] [--full 0.8] [--out F]
"""
import argparse
import json
import statistics
import sys
from collections import defaultdict

from stretch_by_class import graph_runs, kernel_class, load

SMS = 132
# Registers (65536 an SM) and shared memory (228 KiB an SM) of an H200's SM, halved.
HALF_SM_REGISTERS = 32768
HALF_SM_SHARED = 114 * 1024
SMALL = ("element-wise", "norm", "reduce")


def blocks(args):
    g = args["grid"]
    return g[0] * g[1] * g[2]


def held_sms(args):
    """SMs a kernel's blocks hold one an SM where each takes half an SM or more, else None."""
    threads = args["block"][0] * args["block"][1] * args["block"][2]
    fat = (args.get("registers per thread", 0) * threads >= HALF_SM_REGISTERS
           or args.get("shared memory", 0) >= HALF_SM_SHARED)
    return min(blocks(args), SMS) if fat else None


def walk_rows(eager, graph, full):
    """(stretch, SMs held, big kernel's blocks, its name, its duration) of each small kernel
    wholly beside one big kernel of another lane; [] without small kernels that ran alone."""
    mean = defaultdict(list)
    for e in eager:
        mean[e["name"]].append(e["dur"])
    mean = {k: statistics.mean(v) for k, v in mean.items()}
    spans = [(e["ts"], e["ts"] + e["dur"], e["args"].get("stream"), e) for e in graph]
    alone, beside = [], []
    for a, b, lane, e in spans:
        if kernel_class(e["name"]) not in SMALL or mean.get(e["name"], 0) <= 0:
            continue
        if blocks(e["args"]) > SMS // 2:
            continue
        ratio = e["dur"] / mean[e["name"]]
        others = [(max(a, a2), min(b, b2), e2) for a2, b2, l2, e2 in spans
                  if l2 != lane and a2 < b and b2 > a]
        if not others:
            alone.append(ratio)
        elif len(others) == 1 and kernel_class(others[0][2]["name"]) in ("gemm", "attention"):
            x, y, big = others[0]
            if y - x >= full * (b - a):
                beside.append((ratio, held_sms(big["args"]), blocks(big["args"]),
                               big["name"], big["dur"]))
    if not alone:
        return []
    base = statistics.median(alone)
    return [(r / base, *rest) for r, *rest in beside]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", action="append", required=True)
    ap.add_argument("--full", type=float, default=0.8,
                    help="share of a small kernel's time the big kernel must cover")
    ap.add_argument("--out")
    args = ap.parse_args()
    if not 0.0 < args.full <= 1.0:
        ap.error(f"--full: {args.full} is not in (0, 1]")
    rows = []
    for _, r, trace, graph in graph_runs(args.runs):
        eager = [e for e in load(trace)["traceEvents"] if e.get("cat") == "kernel"]
        if len({e["args"].get("stream") for e in eager}) < 2:
            continue
        g = [e for e in load(graph)["traceEvents"] if e.get("cat") == "kernel"]
        for stretch, held, n, name, dur in walk_rows(eager, g, args.full):
            rows.append({"walk": r["walk"], "stretch": stretch, "held_sms": held,
                         "big_blocks": n, "big_kernel": name, "big_us": dur})
    by = defaultdict(list)
    for row in rows:
        by[row["held_sms"]].append(row)
    print("SMs held by the big kernel | kernels | walks | stretch median (p25, p75)")
    for held in sorted(by, key=lambda h: (h is None, h or 0)):
        s = [x["stretch"] for x in by[held]]
        q = statistics.quantiles(s, n=4) if len(s) > 1 else [s[0]] * 3
        print(f"{str(held):>6} | {len(s):4d} | {len({x['walk'] for x in by[held]}):3d} | "
              f"x{statistics.median(s):.2f} ({q[0]:.2f}, {q[2]:.2f})")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
