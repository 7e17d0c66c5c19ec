#!/usr/bin/env python3
"""Replays stored validation traces again, under several settings of `launch-econ replay`,
interleaved walk by walk, and prices each against the real graph that run measured.

A change to the replay can be tried on every stored walk in one device call of a few
minutes (a replay takes 1–5 s; recording and timing the walks again takes ~20 minutes),
against a baseline in the same process tree and on the same instance. The real graphs are the
stored run's, timed on the instance that recorded them: compare the variants with each other
first, and with the real graphs only as far as the instances agree (their replays differed
by a median 0.4–0.9 points in docs/validation-h200.md).

    python3 scripts/replay_variants.py --runs OUT_OF_VALIDATE_ALL --launch-econ BIN \\
        --variant base= --variant fit="--spin-fit graph" --out variants.json

`--runs` is a directory `validate_all.py` wrote (or several: the option repeats), whose
group directories hold `validation.json` and the walks' eager traces (`.json` or `.json.gz`).
A variant that is another build rather than other options names its binary with
`--binary NAME=PATH` (A/B of a code change, e.g. `--variant head= --variant new=
--binary new=./launch-econ-new`).
"""
import argparse
import gzip
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile


def walks(runs):
    """(group, record, trace path) for every stored walk with a replayable trace: the groups
    of a `validate_all.py` directory, or a `kernel_pair_walks.py` directory's pairs.jsonl."""
    for root in runs:
        pairs = os.path.join(root, "pairs.jsonl")
        if os.path.isfile(pairs):
            for line in open(pairs):
                r = json.loads(line)
                if "eager_trace" not in r or "eager_step_ms" not in r:
                    continue
                base = os.path.join(root, os.path.basename(r["eager_trace"]))
                for t in (base, base + ".gz"):
                    if os.path.exists(t):
                        yield "pairs", r, t
                        break
        for group in sorted(os.listdir(root)):
            vj = os.path.join(root, group, "validation.json")
            if not os.path.isfile(vj):
                continue
            for r in json.load(open(vj)):
                if "eager_trace" not in r or "eager_step_ms" not in r:
                    continue
                base = os.path.join(root, group, os.path.basename(r["eager_trace"]))
                for t in (base, base + ".gz"):
                    if os.path.exists(t):
                        yield group, r, t
                        break


def plain(trace, tmp):
    """The trace as a plain JSON file (launch-econ reads uncompressed traces)."""
    if not trace.endswith(".gz"):
        return trace
    out = os.path.join(tmp, os.path.basename(trace)[:-3])
    with gzip.open(trace, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def replay(binary, trace, eager_ms, extra):
    # The replayed graph alone (not its mean with the offline model): variants of the replay.
    cmd = [binary, "replay", trace, "--graph-step", "replay", "--eager-step-ms",
           f"{eager_ms:.6f}", "--export-json", "-", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": p.stderr[-2000:]}
    doc = json.loads(p.stdout)
    # (`--summary` runs have no replay section: no planned nodes.)
    rep = doc["result"].get("replay") or {}
    return {"prediction": doc["result"]["prediction"],
            "planned_nodes_ms": rep.get("planned_nodes_ms"),
            "fidelity": rep.get("fidelity"),
            "warnings": doc.get("warnings", [])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", action="append", required=True)
    ap.add_argument("--launch-econ", required=True)
    ap.add_argument("--variant", action="append", required=True,
                    help='NAME=ARGS, e.g. base= or fit="--spin-fit graph"')
    ap.add_argument("--binary", action="append", default=[],
                    help="NAME=PATH: the launch-econ binary variant NAME runs (default: --launch-econ)")
    ap.add_argument("--walks", default="", help="comma-separated walk names (default: all)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    variants = []
    for v in args.variant:
        name, _, extra = v.partition("=")
        variants.append((name, shlex.split(extra)))
    binaries = dict(b.partition("=")[::2] for b in args.binary)
    unknown = set(binaries) - {n for n, _ in variants}
    if unknown:
        ap.error(f"--binary names no variant: {', '.join(sorted(unknown))}")
    wanted = set(args.walks.split(",")) if args.walks else None
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (group, r, trace) in enumerate(walks(args.runs)):
            if wanted and r["walk"] not in wanted:
                continue
            t = plain(trace, tmp)
            real = r.get("graph_step_other_stream_ms", r["graph_step_ms"])
            row = {"group": group, "walk": r["walk"], "real_graph_ms": real, "variants": {}}
            # Interleaved: the variants' order turns walk by walk.
            order = variants[i % len(variants):] + variants[:i % len(variants)]
            for name, extra in order:
                got = replay(binaries.get(name, args.launch_econ), t, r["eager_step_ms"], extra)
                if "prediction" in got:
                    g = got["prediction"]["graph_step_ms"]
                    got["error_pct"] = (g / real - 1) * 100
                row["variants"][name] = got
            if t != trace:
                os.remove(t)
            rows.append(row)
            cells = "  ".join(
                f"{n} {row['variants'][n].get('error_pct', float('nan')):+6.1f}%"
                for n, _ in variants)
            print(f"{group:10s} {r['walk']:28s} {cells}", flush=True)
            # Written after every walk: a run cut short keeps what it replayed.
            json.dump({"variants": {n: e for n, e in variants}, "binaries": binaries,
                       "walks": rows},
                      open(args.out, "w"), indent=1)
    for name, _ in variants:
        errs = [w["variants"][name]["error_pct"] for w in rows
                if "error_pct" in w["variants"].get(name, {})]
        if not errs:
            print(f"{name}: no replay succeeded", file=sys.stderr)
            continue
        within = sum(abs(e) <= 5 for e in errs)
        print(f"{name}: within 5% on {within} of {len(errs)}, median |error| "
              f"{statistics.median(abs(e) for e in errs):.1f}%, "
              f"{min(errs):+.1f}% … {max(errs):+.1f}%")


if __name__ == "__main__":
    main()
