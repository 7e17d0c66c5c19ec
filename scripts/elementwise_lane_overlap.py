#!/usr/bin/env python3
"""How far between overlap and series the real graphs of stored walks of element-wise lanes
ran, by the size of their kernels' grids (offline, from `docs/stored` and the stored H100 runs).

For every stored multi-stream walk whose kernels are all element-wise, reductions, norms,
softmaxes, copies, fills, concatenations or gathers (no GEMM): each stream's recorded kernel
time (each kernel at least 1.4 µs, about a graph node's floor), the longest stream's
(`overlap`) and their sum (`serial`), and where the real graph lies between them,
`position = (real − overlap) / (serial − overlap)`: 0 where the lanes ran wholly side by side
at their recorded pace, 1 where they ran one after another. Walks are split at a median
kernel of `--threads` threads (a quarter of an H100's or H200's 132 × 2048 thread slots by
default), and each row carries `replay`'s and `--summary`'s error from its run.

    python3 scripts/elementwise_lane_overlap.py [--threads N] [--json OUT]
"""
import argparse
import collections
import glob
import gzip
import json
import os
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL_KINDS = ("elementwise", "reduce_kernel", "norm", "softmax", "cat", "copy", "fill", "index",
               "gather", "scatter", "unrolled")
GEMM_KINDS = ("gemm", "gemv", "nvjet")
NODE_FLOOR_US = 1.4


def load(path):
    with (gzip.open(path) if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def threads(e):
    g, b = e["args"]["grid"], e["args"]["block"]
    return g[0] * g[1] * g[2] * b[0] * b[1] * b[2]


def lane_walk(kernels):
    """The walk's kernels by stream, where every kernel is of the small kinds, else None."""
    names = [k["name"].lower() for k in kernels]
    if any(g in n for n in names for g in GEMM_KINDS):
        return None
    if not all(any(s in n for s in SMALL_KINDS) for n in names):
        return None
    streams = collections.defaultdict(list)
    for k in kernels:
        streams[k["args"].get("stream")].append(k)
    return streams if len(streams) > 1 else None


def rows(root=ROOT):
    out = []
    runs = glob.glob(os.path.join(root, "docs", "stored", "*", "*", "validation.json"))
    runs += glob.glob(os.path.join(root, "docs", "cross-device", "h100-*", "*", "validation.json"))
    for vj in sorted(runs):
        folder = os.path.dirname(vj)
        device = "H100" if os.sep + "cross-device" + os.sep in vj else "H200"
        for r in load(vj):
            real = r.get("graph_step_other_stream_ms", r.get("graph_step_ms"))
            trace = os.path.join(folder, r["walk"] + ".eager.json.gz")
            if not real or not r.get("same_walk", True) or not os.path.exists(trace):
                continue
            kernels = [e for e in load(trace).get("traceEvents", [])
                       if e.get("cat") == "kernel" and e.get("ph") == "X"]
            streams = lane_walk(kernels)
            if streams is None:
                continue
            lanes = [sum(max(k["dur"], NODE_FLOOR_US) for k in ks) / 1e3 for ks in streams.values()]
            overlap, serial = max(lanes), sum(lanes)
            err = lambda price: (None if price is None  # noqa: E731
                                 else round(100.0 * (price / real - 1.0), 1))
            out.append({
                "device": device, "run": os.path.relpath(folder, root), "walk": r["walk"],
                "streams": len(streams),
                "median_threads": int(statistics.median(threads(k) for k in kernels)),
                "median_kernel_us": round(statistics.median(k["dur"] for k in kernels), 2),
                "real_ms": real, "overlap_ms": overlap, "serial_ms": serial,
                "position": (real - overlap) / (serial - overlap) if serial > overlap else None,
                "replay_err": err((r.get("replay") or {}).get("graph_step_ms")),
                "summary_err": err((r.get("summary") or {}).get("graph_step_ms")),
            })
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=65536)
    p.add_argument("--json")
    a = p.parse_args(argv)
    rs = [r for r in rows() if r["position"] is not None]
    rs.sort(key=lambda r: (r["median_threads"] >= a.threads, r["position"]))
    print("| device | walk | streams | median threads | real ms | overlap ms | serial ms "
          "| position | `replay` | `--summary` |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rs:
        print(f"| {r['device']} | {r['walk']} | {r['streams']} | {r['median_threads']} "
              f"| {r['real_ms']:.4f} | {r['overlap_ms']:.4f} | {r['serial_ms']:.4f} "
              f"| {r['position']:.2f} | {r['replay_err']} | {r['summary_err']} |")
    for big in (False, True):
        part = [r for r in rs if (r["median_threads"] >= a.threads) == big]
        if not part:
            continue
        pos = [r["position"] for r in part]
        low = [r["replay_err"] for r in part if r["replay_err"] is not None]
        print(f"\nmedian kernel {'>=' if big else '<'} {a.threads} threads: {len(part)} walk runs, "
              f"position median {statistics.median(pos):.2f} ({min(pos):.2f} … {max(pos):.2f}), "
              f"{sum(x >= 0.4 for x in pos)} at 0.4 or more; replay below the real graph on "
              f"{sum(x < 0 for x in low)} of {len(low)}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rs, f, indent=1)


if __name__ == "__main__":
    main()
