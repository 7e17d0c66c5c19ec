#!/usr/bin/env python3
"""Which graph step a replay on an H100 with a device profile of its own should quote: the
replayed graph alone, `--summary`'s offline model, or the mean of the two (what a replay on
an H200 quotes over the shipped profile). Tallies every held-out batch's first run on an H100
stored under docs/cross-device (each walk's real graph, replay and `--summary` graph steps in
its batch's validation.json, each run with `--profile` of an H100 instance; the real graph as
validate_all.py prices against it).

    python3 scripts/h100_graph_step_choice.py            # the table
    python3 scripts/h100_graph_step_choice.py --json     # a row a walk

Needs neither a GPU nor PyTorch.
"""

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from validate_all import mean_step  # noqa: E402

# Each batch's first run (later runs of a batch, e.g. h100-again-60-64-e4b7f2a and
# h100-heldout-65-66-f8eb1ba, are left out: a walk counts once, as first run).
FIRST_RUNS = [
    ("60-63", "h100-heldout-60-63-04bd7e0"),
    ("64", "h100-heldout-64-2d72d47"),
    ("65", "h100-heldout-65-9e94781"),
    ("66", "h100-heldout-66-98f3f97"),
    ("67", "h100-heldout-67-98f3f97"),
    ("68", "h100-heldout-68-de89203"),
    ("69", "h100-heldout-69-de89203"),
    ("70", "h100-heldout-70-a34fed3"),
    ("71-72", "h100-heldout-71-72-4b0611e"),
    ("73", "h100-heldout-73-4af6252-per-block"),
    ("74", "h100-heldout-74-da66077/first-run"),
    ("75", "h100-heldout-75-91f2d0c"),
    ("76", "h100-heldout-76-1a04d50"),
    ("77", "h100-heldout-77-dd2dfd5"),
    ("78", "h100-heldout-78-e58026f"),
    ("79", "h100-heldout-79-41834e9"),
    ("80", "h100-heldout-80-88a4401"),
    ("81", "h100-heldout-81-920a18a"),
    ("82", "h100-heldout-82-fabd72a"),
    ("83", "h100-heldout-83-5b33a31"),
    ("84", "h100-heldout-84-e45146a"),
    ("85", "h100-heldout-85-181b85f"),
    ("86", "h100-heldout-86-e440c6f"),
    ("87", "h100-heldout-87-b730813"),
    ("88", "h100-heldout-88-13277ed"),
    ("89", "h100-heldout-89-0e1bb3c"),
    ("90", "h100-heldout-90-bc82c33"),
    ("91", "h100-heldout-91-6f77764"),
    ("92", "h100-heldout-92-aed19d5"),
    ("93", "h100-heldout-93-751a07a"),
    ("94", "h100-heldout-94-751a07a"),
    ("95", "h100-heldout-95-3800c86"),
    ("96", "h100-heldout-96-b107be0"),
    ("97", "h100-heldout-97-b107be0"),
    ("98", "h100-heldout-98-351bc80"),
    ("99", "h100-heldout-99-5f389d7"),
    ("100", "h100-heldout-100-8506f8a"),
    ("101", "h100-heldout-101-c9d5f89"),
    ("102", "h100-heldout-102-c9d5f89"),
    ("103", "h100-heldout-103-495cf49"),
    ("104", "h100-heldout-104-112b527"),
    ("105", "h100-heldout-105-6a09473"),
    ("106", "h100-heldout-106-3348f1a"),
]


def rows(root, first_runs=FIRST_RUNS):
    """A row a walk: batch, walk, and the replay's, --summary's and their mean's error, %."""
    out = []
    for batch, sub in first_runs:
        base = os.path.join(root, "docs", "cross-device", sub)
        groups = sorted(g for g in os.listdir(base)
                        if os.path.isfile(os.path.join(base, g, "validation.json")))
        if not groups:
            raise ValueError(f"{base}: no group directory with a validation.json")
        for g in groups:
            for r in json.load(open(os.path.join(base, g, "validation.json"))):
                # The real graph as the validation prices against it: after the other-stream
                # launches where that was timed (validate_all.record_errors).
                real = r.get("graph_step_other_stream_ms", r.get("graph_step_ms"))
                replay = (r.get("replay") or {}).get("graph_step_ms")
                summary = (r.get("summary") or {}).get("graph_step_ms")
                if not real or replay is None or summary is None or not r.get("same_walk", True):
                    continue
                err = lambda ms: 100.0 * (ms / real - 1.0)  # noqa: E731
                mean = mean_step(r["replay"], r["summary"])
                out.append({"batch": batch, "walk": r["walk"], "replay": err(replay),
                            "summary": err(summary), "mean": err(mean)})
    return out


def tally(rs, key, within):
    return sum(abs(r[key]) <= within for r in rs)


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def table(rs):
    lines = ["| batches | walks | replay within 5% | mean within 5% | replay within 10% | "
             "mean within 10% | `--summary` within 10% |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    batches = []
    for b, _ in FIRST_RUNS:
        if b not in batches:
            batches.append(b)
    for b in batches + ["all"]:
        sel = rs if b == "all" else [r for r in rs if r["batch"] == b]
        if not sel:
            continue
        lines.append(f"| {b} | {len(sel)} | {tally(sel, 'replay', 5)} | {tally(sel, 'mean', 5)} | "
                     f"{tally(sel, 'replay', 10)} | {tally(sel, 'mean', 10)} | "
                     f"{tally(sel, 'summary', 10)} |")
    lines.append("")
    for k in ("replay", "summary", "mean"):
        lines.append(f"{k}: median |error| {median([abs(r[k]) for r in rs]):.1f}%, "
                     f"median error {median([r[k] for r in rs]):+.1f}%")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=ROOT, help="the repository (its docs/ is read)")
    ap.add_argument("--json", action="store_true", help="a row a walk")
    args = ap.parse_args(argv)
    try:
        rs = rows(args.root)
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"h100_graph_step_choice.py: {e}")
    if args.json:
        json.dump(rs, sys.stdout, indent=1)
        print()
    else:
        print(table(rs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
