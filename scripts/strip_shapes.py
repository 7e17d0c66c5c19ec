#!/usr/bin/env python3
"""Copies a stored validation run with the operators' shapes removed from its eager traces,
as if they had been recorded without `record_shapes=True`.

A user's trace may lack shapes; this prices the repository's walks that way. The copy keeps
each group's `validation.json` (the real graphs and eager steps), so `replay_variants.py` and
`reprice_summary.py` run on it as on the original:

    python3 scripts/strip_shapes.py --runs OUT_OF_VALIDATE_ALL --out NO_SHAPES
    python3 scripts/replay_variants.py --runs NO_SHAPES --launch-econ BIN --variant ns= --out ns.json
    python3 scripts/reprice_summary.py --runs NO_SHAPES --launch-econ BIN
"""
import argparse
import glob
import gzip
import json
import os
import shutil

# What PyTorch's profiler writes into an operator's args with record_shapes=True.
SHAPE_KEYS = ("Input Dims", "Input type", "Input Strides", "Concrete Inputs")


def strip(src, dst):
    """Writes trace `src` (.json or .json.gz) to `dst` (.json.gz) without shape args; returns
    how many events lost any."""
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    touched = 0
    for e in events:
        args = e.get("args")
        if isinstance(args, dict) and any(k in args for k in SHAPE_KEYS):
            for k in SHAPE_KEYS:
                args.pop(k, None)
            touched += 1
    with gzip.open(dst, "wt") as f:
        json.dump(doc, f)
    return touched


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", required=True, help="a directory validate_all.py wrote")
    ap.add_argument("--out", required=True, help="where the copy goes (must not exist)")
    args = ap.parse_args()
    if os.path.exists(args.out):
        ap.error(f"{args.out} exists")
    traces = events = 0
    for vj in sorted(glob.glob(os.path.join(args.runs, "*", "validation.json"))):
        group = os.path.basename(os.path.dirname(vj))
        out = os.path.join(args.out, group)
        os.makedirs(out)
        shutil.copy(vj, out)
        for t in sorted(glob.glob(os.path.join(os.path.dirname(vj), "*.eager.json*"))):
            name = os.path.basename(t)
            name = name if name.endswith(".gz") else name + ".gz"
            events += strip(t, os.path.join(out, name))
            traces += 1
    print(f"{traces} eager traces copied to {args.out}, shapes removed from {events} events")


if __name__ == "__main__":
    main()
