#!/usr/bin/env python3
"""Keeps a `validate_all.py` run small enough to commit, so that later changes to the offline
model can be judged on its walks without a GPU (`reprice_summary.py --runs OUT`) and its table
made again (`validate_all.py --out COPY --table-only`).

    python3 scripts/store_run.py RUN_DIR OUT_DIR

For every group directory of RUN_DIR that holds a `validation.json`: the records without their
per-batch sample arrays (`*samples_ms`), each walk's eager trace gzipped beside them, and of
its profiled graph replay only the kernels (name, stream, start and duration, µs from the
first: `WALK.graph.kernels.json.gz`), which say where the real graph's kernels ran longer
than recorded and beside what (`graph_kernels_diff.py` sets them beside the offline model's).
The rest of the graph traces and the logs are left out: a run of ~90 walks keeps ~5 MB.
"""
import argparse
import gzip
import json
import os
import shutil
import sys


def graph_kernels(path):
    """The kernels of a profiled graph replay (a Kineto trace), in start order: their distinct
    names, and for each kernel [name index, stream, start µs from the first, duration µs]."""
    with open(path) as f:
        events = json.load(f).get("traceEvents", [])
    ks = sorted((e for e in events if e.get("cat") == "kernel" and e.get("ph") == "X"),
                key=lambda e: float(e["ts"]))
    names, index, rows = [], {}, []
    t0 = float(ks[0]["ts"]) if ks else 0.0
    for e in ks:
        i = index.setdefault(e["name"], len(names))
        if i == len(names):
            names.append(e["name"])
        rows.append([i, e.get("args", {}).get("stream"), round(float(e["ts"]) - t0, 3),
                     round(float(e.get("dur", 0)), 3)])
    return {"names": names, "kernels": rows}


def graph_kernels_name(graph_trace):
    """Where a walk's graph kernels are stored, beside its eager trace."""
    base = os.path.basename(graph_trace)
    return (base[:-len(".json")] if base.endswith(".json") else base) + ".kernels.json.gz"


def store(run, out):
    """Stores RUN's groups under OUT; returns how many eager traces it kept."""
    kept = 0
    groups = sorted(g for g in os.listdir(run)
                    if os.path.isfile(os.path.join(run, g, "validation.json")))
    if not groups:
        sys.exit(f"{run}: no group directory with a validation.json")
    for group in groups:
        src, dst = os.path.join(run, group), os.path.join(out, group)
        os.makedirs(dst, exist_ok=True)
        records = [{k: v for k, v in r.items() if not k.endswith("samples_ms")}
                   for r in json.load(open(os.path.join(src, "validation.json")))]
        for r in records:
            trace = os.path.join(src, os.path.basename(r.get("eager_trace") or ""))
            if r.get("eager_trace") and os.path.isfile(trace):
                with open(trace, "rb") as f, \
                        gzip.open(os.path.join(dst, os.path.basename(trace) + ".gz"), "wb", 9) as z:
                    shutil.copyfileobj(f, z)
                kept += 1
            graph = os.path.join(src, os.path.basename(r.get("graph_trace") or ""))
            if r.get("graph_trace") and os.path.isfile(graph):
                try:
                    kernels = graph_kernels(graph)
                except (ValueError, KeyError) as e:
                    print(f"{graph}: not kept ({e})", file=sys.stderr)
                else:
                    name = os.path.join(dst, graph_kernels_name(r["graph_trace"]))
                    with gzip.open(name, "wt", 9) as z:
                        json.dump(kernels, z, separators=(",", ":"))
        with open(os.path.join(dst, "validation.json"), "w") as f:
            json.dump(records, f, indent=1)
    return kept


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="a directory validate_all.py wrote (--out)")
    ap.add_argument("out", help="where to store it")
    args = ap.parse_args()
    if not os.path.isdir(args.run):
        ap.error(f"{args.run} is not a directory")
    print(f"{store(args.run, args.out)} eager traces stored in {args.out}")


if __name__ == "__main__":
    main()
