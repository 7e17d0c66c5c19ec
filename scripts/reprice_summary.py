#!/usr/bin/env python3
"""Prices stored validation walks again with `launch-econ replay --summary` (no GPU) and
reports, per stored run, how many come within 10% of the real graphs that run measured.

A change to the offline model can be judged on every walk ever recorded in seconds, on the
machine without a GPU: each stored run's eager traces are priced by the new binary (and, with
`--baseline`, by another, side by side), against the real graph steps the run timed.

    python3 scripts/reprice_summary.py --runs DIR [--runs DIR ...] --launch-econ BIN \\
        [--baseline OLD_BIN] [--profile PROFILE.json | --profile-beside NAME] [--show 8]
        [--out ERRORS.json] [--trace-eager | --without-waits upper|lower | --without-shapes]

`--profile-beside NAME` prices each run with the device profile of its own GPU stored beside
it: the file NAME in the run's directory, else in its parent (a run on another GPU than the
H200 stores the profile of its instance there: `docs/cross-device/*/profile-h100.json`), so
that every stored H100 batch is priced as it ran (`--runs` once a batch, e.g. the directories
`scripts/h100_graph_step_choice.py` lists).

`--runs` is a directory `validate_all.py` wrote (group directories holding `validation.json`
and the walks' eager traces, `.json` or `.json.gz`; `store_run.py` keeps one small enough to
commit, as docs/stored/all-93-5687dc7), or one holding a `pairs.jsonl` of
validation records beside their traces (the kernel-pair probes). `--show P` lists the walks whose error
moved by more than P points between the binaries (or, without a baseline, whose error is
beyond P%). `--trace-eager` judges the eager step estimated from the trace alone (priced
without `--eager-step-ms`) against the unprofiled eager step each run measured, within 25%,
instead of the graph step. `--without-waits` prices each multi-stream walk with the
cross-stream waits taken out of its trace (its `cuda_sync` events), as a trace recorded without
them would be: `upper` judges the step so priced (the streams one after another), `lower` the
bound printed beside it (the streams never waiting on each other). `--without-shapes` prices
each walk whose trace recorded shapes with them taken out (its operators' `Input Dims`, `Input
type`, `Input Strides` and `Concrete Inputs`), as `record_shapes=False` would have recorded it.
The totals over all runs
are given again for the walks on one stream and for those on several, as their records say.
"""
import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from replay_variants import walks


def stored_walks(root, trace_eager=False):
    """(walk, trace, eager step ms, the figure judged: the real graph ms, or with `trace_eager`
    the real eager ms, and how many streams the walk ran on, None where the record does not
    say) for every walk of a stored run. A walk whose graph ran another walk than its
    recording (`same_walk` false) has no real graph step that a price of the recording
    describes: it is judged on its eager step only."""
    for _, r, trace in walks([root]):
        if not trace_eager and r.get("same_walk") is False:
            continue
        real = r["eager_step_ms"] if trace_eager else r.get(
            "graph_step_other_stream_ms", r["graph_step_ms"])
        recorded = r.get("walk_summary", {}).get("streams")
        streams = len(recorded) if recorded is not None else None
        yield r["walk"], trace, r["eager_step_ms"], real, streams


def summary_line(errors, target):
    """`N of M within target%` (and within 5% where the target is wider), the median |error|
    and the signed median, of `errors` (%)."""
    within5 = "" if target <= 5 else f", {sum(abs(x) <= 5 for x in errors)} within 5%"
    return (f"{sum(abs(x) <= target for x in errors)} of {len(errors)} within {target}%{within5}, "
            f"median |error| {statistics.median(abs(x) for x in errors):.1f}%, "
            f"median {statistics.median(errors):+.1f}%")


SHAPE_ARGS = ("Input Dims", "Input type", "Input Strides", "Concrete Inputs")


def rewritten(trace, keep):
    """A temporary copy of the Kineto trace `trace` holding the events `keep` returns (each
    event in turn, which it may change; None drops it); the caller removes it."""
    opener = gzip.open if trace.endswith(".gz") else open
    with opener(trace, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    kept = [k for k in map(keep, events) if k is not None]
    if isinstance(doc, dict):
        doc["traceEvents"] = kept
    else:
        doc = kept
    fd, path = tempfile.mkstemp(suffix=".json", prefix="reprice_")
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f)
    return path


def without_waits(trace):
    """A temporary copy of `trace` without its cross-stream waits (its `cuda_sync` events)."""
    return rewritten(trace, lambda e: None if str(e.get("cat", "")).lower() == "cuda_sync" else e)


def drop_shapes(event):
    """`event` without the shapes `record_shapes=True` adds to an operator's args."""
    args = event.get("args")
    if isinstance(args, dict):
        for key in SHAPE_ARGS:
            args.pop(key, None)
    return event


def has_shapes(trace):
    """Whether any event of the Kineto trace `trace` holds recorded shapes."""
    opener = gzip.open if trace.endswith(".gz") else open
    with opener(trace, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return any(isinstance(e.get("args"), dict) and any(k in e["args"] for k in SHAPE_ARGS)
               for e in events)


def price(binary, trace, eager_ms, profile, trace_eager=False, bound=None, shapes=True):
    """The offline graph step, ms (with `trace_eager`: the eager step from the trace alone;
    with `bound`, `upper` or `lower`: that bound of the walk priced without its waits; without
    `shapes`: the step of the trace without its shapes), or the error launch-econ gave.
    `eager_ms` None: no `--eager-step-ms` (the graph step does not depend on it)."""
    stripped = (without_waits(trace) if bound
                else None if shapes else rewritten(trace, drop_shapes))
    cmd = [binary, "replay", stripped or trace, "--summary", "--export-json", "-"]
    if not trace_eager and eager_ms is not None:
        cmd += ["--eager-step-ms", f"{eager_ms:.6f}"]
    if profile:
        cmd += ["--profile", profile]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True)
    finally:
        if stripped:
            os.unlink(stripped)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1:] or ["failed"]
    figure = {"upper": "graph_step_ms", "lower": "graph_step_independent_ms"}.get(
        bound, "eager_step_ms" if trace_eager else "graph_step_ms")
    got = json.loads(p.stdout)["result"]["prediction"].get(figure)
    return (got, None) if got is not None else (None, [f"no {figure} in the price"])


def profile_beside(root, name):
    """The device profile `name` stored with the run `root`: in it, else in its parent; an
    error naming both places where neither holds it."""
    for d in (root, os.path.dirname(os.path.normpath(root))):
        path = os.path.join(d, name)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"{name} is neither in {root} nor in its parent")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", action="append", required=True,
                    help="a stored validation run (or a folder of pairs.jsonl); repeat for more")
    ap.add_argument("--launch-econ", required=True, help="the launch-econ binary to price with")
    ap.add_argument("--baseline", help="a second binary, priced beside it")
    profiles = ap.add_mutually_exclusive_group()
    profiles.add_argument("--profile", help="a device profile instead of the shipped one")
    profiles.add_argument("--profile-beside", metavar="NAME",
                          help="each run priced with the profile NAME stored in it or its parent")
    ap.add_argument("--show", type=float, default=None,
                    help="list the walks whose error moved more than this many points between the binaries "
                         "(without --baseline: whose error is beyond this many %%)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--out", help="also write every walk's errors, %%, as JSON here")
    ap.add_argument("--trace-eager", action="store_true",
                    help="judge the eager step from the trace alone against the measured one (within 25%%)")
    ap.add_argument("--without-waits", choices=["upper", "lower"],
                    help="price each multi-stream walk with its trace's waits taken out and judge "
                         "that bound of it")
    ap.add_argument("--without-shapes", action="store_true",
                    help="price each walk whose trace recorded shapes with them taken out")
    args = ap.parse_args()
    if sum(map(bool, (args.trace_eager, args.without_waits, args.without_shapes))) > 1:
        ap.error("--trace-eager, --without-waits and --without-shapes judge different figures: "
                 "give one")
    target = 25 if args.trace_eager else 10
    binaries = [("new", args.launch_econ)] + ([("base", args.baseline)] if args.baseline else [])
    jobs = [(root, *w) for root in args.runs for w in stored_walks(root, args.trace_eager)
            if (not args.without_waits or (w[4] or 1) > 1)
            and (not args.without_shapes or has_shapes(w[1]))]
    if not jobs:
        sys.exit("no stored walks with traces under --runs")
    try:
        run_profile = {root: (profile_beside(root, args.profile_beside) if args.profile_beside
                              else args.profile) for root in args.runs}
    except FileNotFoundError as e:
        sys.exit(f"--profile-beside: {e}")

    def run(job):
        root, walk, trace, eager, real, streams = job
        errs = {}
        for name, binary in binaries:
            got, err = price(binary, trace, eager, run_profile[root], args.trace_eager,
                             args.without_waits, not args.without_shapes)
            errs[name] = (got / real - 1) * 100 if got is not None else None
            if err:
                print(f"{root} {walk} ({name}): {err[0]}", file=sys.stderr)
        return root, walk, errs, streams

    with ThreadPoolExecutor(args.jobs) as ex:
        rows = list(ex.map(run, jobs))
    if args.out:
        with open(args.out, "w") as f:
            json.dump([{"run": root, "walk": walk, "streams": streams, "error_pct": errs}
                       for root, walk, errs, streams in rows], f, indent=1)
    for root in args.runs:
        cells = []
        for name, _ in binaries:
            e = [r[2][name] for r in rows if r[0] == root and r[2][name] is not None]
            if e:
                cells.append(f"{name}: {sum(abs(x) <= target for x in e)} of {len(e)} within {target}%, "
                             f"median |error| {statistics.median(abs(x) for x in e):.1f}%, "
                             f"{min(e):+.1f}% … {max(e):+.1f}%")
        print(f"{root}: " + "; ".join(cells))
    for label, keep in (("all runs", lambda n: True), ("one stream", lambda n: n == 1),
                        ("several streams", lambda n: n is not None and n > 1)):
        for name, _ in binaries:
            e = [r[2][name] for r in rows if r[2][name] is not None and keep(r[3])]
            if e:
                print(f"{label}, {name}: {summary_line(e, target)}")
    if args.show is not None:
        for root, walk, errs, _ in rows:
            new, base = errs.get("new"), errs.get("base")
            if new is None:
                continue
            moved = base is not None and abs(new - base) > args.show
            if moved or (base is None and abs(new) > args.show):
                was = f"  (baseline {base:+.1f}%)" if base is not None else ""
                print(f"  {root} {walk}: {new:+.1f}%{was}")


if __name__ == "__main__":
    main()
