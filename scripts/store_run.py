#!/usr/bin/env python3
"""Keeps a `validate_all.py` run small enough to commit, so that later changes to the offline
model can be judged on its walks without a GPU (`reprice_summary.py --runs OUT`) and its table
made again (`validate_all.py --out COPY --table-only`).

    python3 scripts/store_run.py RUN_DIR OUT_DIR

For every group directory of RUN_DIR that holds a `validation.json`: the records without their
per-batch sample arrays (`*samples_ms`), and each walk's eager trace gzipped beside them. The
graph traces (needed only to check again that a graph ran the recorded walk; the records keep
that check's result) and the logs are left out: a run of ~90 walks keeps ~5 MB.
"""
import argparse
import gzip
import json
import os
import shutil
import sys


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
