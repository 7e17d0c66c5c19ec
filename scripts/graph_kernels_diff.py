#!/usr/bin/env python3
"""Sets each kernel of a stored walk beside itself three times: as recorded eagerly, as the
offline model (`replay --summary`) runs it in the graph step, and as the real graph's profiled
replay ran it (kept by `store_run.py` as WALK.graph.kernels.json.gz). Where the model's price
of a walk is off, this says which kernels it stretches too little or too much beside the
others, without a GPU.

    python3 scripts/graph_kernels_diff.py --runs DIR [--runs DIR ...] --launch-econ BIN
        [--walk NAME ...] [--top 12]

`--by-length` prints instead, over the walks on several streams, how much the model and the
real graph stretch the kernels that are not GEMMs, by their recorded length: where a device's
small kernels beside other lanes run longer or shorter than the model says, whatever the walk.

Kernels are grouped by name (a walk's lanes often run the same kernels). The model's time of
a kernel is its recorded time plus what the model adds beside other lanes (its node's span
less its time alone, `alone_us` in the exported trace); the graph's is the profiled replay's
kernel duration (a profiled replay runs kernels ~3% longer than an unprofiled one).

A profiled replay of lanes of short kernels may run them further apart than the unprofiled
graph does: of the stored multi-stream replays, 28 of 62 on an H100 (batches 60-70) and 4 of
35 on the H200 (batches 53-59) spanned more than 1.25 times the unprofiled graph step (up to
3.4 and 1.65 times; lanes of 1-2 us element-wise kernels one after another), where one-stream
replays spanned 1.01 to 1.10 times theirs. There the profiled kernels ran mostly alone, not
beside each other. Each walk's line gives the profiled replay's span against the
real graph step and says so beyond `--apart` (1.25); `--by-length` leaves such walks out.
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

from replay_variants import walks


def open_json(path):
    """A JSON file, gzipped or not."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def eager_kernels(trace):
    """(name, recorded µs) of every kernel of an eager trace."""
    return [(e["name"], float(e.get("dur", 0))) for e in trace.get("traceEvents", [])
            if e.get("cat") == "kernel" and e.get("ph") == "X"]


def model_kernels(timeline):
    """(name, µs the model runs it) of every kernel node of a `--summary --export-trace`
    trace: its recorded time plus what the model adds beside other lanes."""
    out = []
    for e in timeline.get("traceEvents", []):
        a = e.get("args", {})
        if e.get("pid") == 1 and e.get("ph") == "X" and "alone_us" in a:
            out.append((e["name"], a["recorded_dur_us"] + max(0.0, e["dur"] - a["alone_us"])))
    return out


def graph_kernels(stored):
    """(name, µs) of every kernel of a stored graph replay (store_run.py's form)."""
    return [(stored["names"][k[0]], k[3]) for k in stored["kernels"]]


def profiled_span_us(stored):
    """The span of a stored graph replay's kernels, first start to last end, µs (0 without
    kernels)."""
    kernels = stored["kernels"]
    if not kernels:
        return 0.0
    return max(k[2] + k[3] for k in kernels) - min(k[2] for k in kernels)


def by_name(eager, model, graph):
    """Rows per kernel name: name, kernels recorded, their recorded, model and graph sums
    (µs), longest gap between model and graph first."""
    sums = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for i, kernels in enumerate((eager, model, graph)):
        for name, us in kernels:
            s = sums[name]
            if i == 0:
                s[0] += 1
            s[i + 1] += us
    rows = [(name, *s) for name, s in sums.items()]
    return sorted(rows, key=lambda r: -abs(r[3] - r[4]))


# Lowercase name parts of a GEMM's kernel, as the trace reader's `is_blas_kernel` has them.
BLAS_NAMES = ("gemm", "gemv", "nvjet", "cutlass", "xmma", "splitk", "cublas")
# Upper bounds of the recorded lengths --by-length groups kernels by, µs.
LENGTHS = (1.5, 3.0, 6.0, float("inf"))


def length_buckets(rows):
    """Per length class of `rows` ((name, kernels, recorded, model, graph) µs sums, as `by_name`
    gives them, pooled over walks), GEMMs left out: (upper bound µs, name groups, kernels, the
    median of the model's stretch over the recorded time, the median of the real graph's), or
    None for a class without kernels."""
    out = []
    lower = 0.0
    for upper in LENGTHS:
        picked = [r for r in rows if r[1] > 0 and r[2] > 0
                  and not any(k in r[0].lower() for k in BLAS_NAMES)
                  and lower <= r[2] / r[1] < upper]
        lower = upper
        if not picked:
            out.append(None)
            continue
        out.append((upper, len(picked), sum(r[1] for r in picked),
                    statistics.median(r[3] / r[2] - 1 for r in picked),
                    statistics.median(r[4] / r[2] - 1 for r in picked)))
    return out


def priced_timeline(binary, trace, eager_ms, profile=None):
    """The offline model's exported trace of `trace`, or None where launch-econ failed."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "model.json")
        extra = ["--profile", profile] if profile else []
        p = subprocess.run([binary, "replay", trace, "--summary", "--eager-step-ms",
                            f"{eager_ms:.6f}", "--export-trace", out] + extra,
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"{trace}: {p.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return None
        return open_json(out)


def short(name, width=70):
    return name if len(name) <= width else name[:width - 1] + "…"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", action="append", required=True, help="a stored run (store_run.py)")
    ap.add_argument("--launch-econ", required=True, help="the launch-econ binary to price with")
    ap.add_argument("--walk", action="append", help="only these walks (default: all kept)")
    ap.add_argument("--top", type=int, default=12, help="kernel names shown a walk")
    ap.add_argument("--profile", help="a device profile instead of the shipped one (a run on "
                                      "another GPU: its profile-*.json)")
    ap.add_argument("--by-length", action="store_true",
                    help="the stretch of kernels that are not GEMMs, model and real graph, by "
                         "recorded length, over the walks on several streams")
    ap.add_argument("--apart", type=float, default=1.25,
                    help="a profiled replay spanning more than this many times the unprofiled "
                         "graph step ran its lanes apart: said per walk, left out of --by-length")
    args = ap.parse_args()
    shown = 0
    pooled = []
    apart = []
    for group, r, trace in walks(args.runs):
        if args.walk and r["walk"] not in args.walk:
            continue
        base = os.path.basename(r.get("graph_trace") or "")
        kept = os.path.join(os.path.dirname(trace),
                            (base[:-5] if base.endswith(".json") else base) + ".kernels.json.gz")
        if not base or not os.path.isfile(kept):
            continue
        timeline = priced_timeline(args.launch_econ, trace, r["eager_step_ms"], args.profile)
        if timeline is None:
            continue
        eager, model = eager_kernels(open_json(trace)), model_kernels(timeline)
        stored = open_json(kept)
        graph = graph_kernels(stored)
        real = r.get("graph_step_other_stream_ms", r["graph_step_ms"])
        ratio = profiled_span_us(stored) / (real * 1e3) if real > 0 else 0.0
        if args.by_length:
            streams = (r.get("walk_summary") or {}).get("streams") or []
            if len(streams) > 1 and len(graph) == len(eager):
                if ratio > args.apart:
                    apart.append(r["walk"])
                else:
                    pooled += by_name(eager, model, graph)
                    shown += 1
            continue
        total = [sum(us for _, us in k) for k in (eager, model, graph)]
        print(f"\n{group}/{r['walk']}: real graph {real * 1e3:.1f} us; kernels recorded "
              f"{total[0]:.1f} us, model {total[1]:.1f}, real graph (profiled) {total[2]:.1f}"
              + ("" if len(graph) == len(eager) else
                 f"; {len(graph)} graph kernels against {len(eager)} recorded")
              + f"; the profiled replay spans {ratio:.2f}x the real graph step")
        if ratio > args.apart:
            print("  (its lanes ran further apart than in the unprofiled graph: its kernels' "
                  "times are not those beside each other)")
        print(f"  {'kernel':70} {'n':>4} {'recorded':>9} {'model':>9} {'graph':>9}")
        for name, n, rec, mod, gr in by_name(eager, model, graph)[:args.top]:
            print(f"  {short(name):70} {n:4d} {rec:9.1f} {mod:9.1f} {gr:9.1f}")
        shown += 1
    if args.by_length and apart:
        print(f"{len(apart)} walks left out: their profiled replays spanned more than "
              f"{args.apart:g}x the real graph step")
    if args.by_length and shown:
        print(f"{shown} walks on several streams; kernels that are not GEMMs, by recorded length:")
        print(f"  {'length':>12} {'names':>6} {'kernels':>8} {'model':>8} {'graph':>8}")
        lower = 0.0
        for bucket, upper in zip(length_buckets(pooled), LENGTHS):
            span = f"{lower:g}-{upper:g} us" if upper != float("inf") else f">= {lower:g} us"
            lower = upper
            if bucket:
                _, names, kernels, model, real = bucket
                print(f"  {span:>12} {names:6d} {kernels:8d} {model * 100:+7.1f}% {real * 100:+7.1f}%")
    if not shown:
        sys.exit("no stored walk with its graph kernels kept under --runs (store_run.py keeps "
                 "them from runs stored after it did)")


if __name__ == "__main__":
    main()
