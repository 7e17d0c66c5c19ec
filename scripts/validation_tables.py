#!/usr/bin/env python3
"""The README's two validation tables from their raw numbers: the latest full run's (one
document of every walk's errors, e.g. docs/validation-93-walks-5687dc7-h200.json) and the
held-out record, every held-out walk's first run, read from the batches' documents
(docs/validation-heldout-*-h200.json).

The held-out documents were written batch by batch in the formats of their day; this reads them all:
rows of errors (`summary_err_pct` / `summary_err`, `replay_…`, `…saving_err…`; a replay that
failed has none), rows that are
validate.py's own records (errors computed as validate_all.py computes them), rows of walks that
failed, and the failure lists of batches whose failed walks have no row. A walk whose graph ran
another walk than its recording (`same_walk` false) is not counted; a walk that failed before
anything was timed counts in its column's walks but in no target. Where a row gives no stream
count it is taken from the walk's stored record (docs/stored) or from its batch's table in
docs/validation-h200.md.

    python3 scripts/validation_tables.py                       # the held-out table
    python3 scripts/validation_tables.py --full-run FILE.json  # and the full run's
    python3 scripts/validation_tables.py --json                # every held-out first run

Needs neither a GPU nor PyTorch; the scripts' tests check the README's tables against it.
"""
import argparse
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Batches whose walk failed on its first run (an import error in the walk module) and ran
# again, with the version of that batch's day, under a group of its own: that run is its first.
RERUN_OF = {"heldout19_phi3": "heldout19"}

# Top-level `failed` entries of the first documents that are not held-out walks that failed:
# a walk refused at capture before its batch's section counted ten walks (batch 4), a walk
# the module's bug kept from running (batch 6), and the same two kinds again: batch 90's CuPy
# GEMM chain (CuPy refuses cuBLAS calls during stream capture, so no real graph exists to
# price against) and batch 93's Phi-3 decode (a config whose padding token lies outside its
# vocabulary: the model was never built). Batches 11 and 15 name walks whose rows exist.
NOT_COUNTED_FAILURES = {"hd_falcon_decode_b2", "hf_big_gemm_beside_adds",
                        "lp_cupy_gemm_bias_relu_chain_f32", "ls_phi3_static_cache_decode_b4_bf16"}

# Walks whose records give no stream count (those that failed before anything was timed, and
# batch 19's Phi-3 rerun, whose records are validate.py's of that day): transformers decoders
# on one stream, each its module's `_decoder(...)` or one stream in its batch's table.
DECODERS_ON_ONE_STREAM = {"hq_bloom_decode_b4", "hr_gpt2_f32_decode_b8", "hp_bloom_decode_b8",
                          "hx_opt_decode_b4", "ig_falcon_mqa_decode_b16", "iq_glm_decode_b4",
                          "hu_phi3_decode_b2"}

WORDS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve"]


def streams_of(value):
    """A stream count from a row's `streams`: a count or the list of streams."""
    return len(value) if isinstance(value, list) else value


def first_run(batch, row):
    """One walk's first run: its errors (None where not measured) and stream count, or a
    failure (`failed` true)."""
    walk = row["walk"]
    base = {"batch": batch, "walk": walk, "same_walk": row.get("same_walk", True) is not False}
    if "summary_err_pct" in row or "summary_err" in row:
        pct = "_pct" if "summary_err_pct" in row else ""
        saving = row.get("replay_saving_err_pct") if pct else row.get("saving_err")
        return dict(base, failed=False, streams=streams_of(row.get("streams")),
                    replay=row.get(f"replay_err{pct}"), saving=saving,
                    summary=row.get(f"summary_err{pct}"), mean=row.get("mean_err"))
    if "eager_step_ms" in row and "graph_step_ms" in row:
        from validate_all import record_errors
        e = record_errors(row)
        return dict(base, failed=False,
                    streams=streams_of(row.get("walk_summary", {}).get("streams")),
                    replay=e["replay_err"], saving=e["saving_err"], summary=e["summary_err"],
                    mean=e["mean_err"])
    if "error" in row or "failed" in row:
        return dict(base, failed=True, streams=None, replay=None, saving=None, summary=None)
    raise ValueError(f"{batch}/{walk}: a row of no known form ({', '.join(sorted(row))})")


def batches(docs):
    """(batch, rows, names of walks that failed without a row) of every held-out document."""
    for path in sorted(glob.glob(os.path.join(docs, "validation-heldout-*-h200.json"))):
        with open(path) as f:
            doc = json.load(f)
        name = os.path.basename(path)[len("validation-"):-len("-h200.json")]
        if "rows" in doc:
            yield name, doc["rows"], []
        for batch, part in sorted(doc.get("batches", {}).items()):
            if isinstance(part, dict) and "rows" in part:
                yield batch, part["rows"], list(part.get("failed") or [])
        for batch, part in sorted(doc.items()):
            if re.fullmatch(r"heldout\d+", batch) and isinstance(part, dict) and "rows" in part:
                yield batch, part["rows"], []


def stored_streams(root):
    """Stream counts of the walks in the stored runs' records."""
    out = {}
    for path in glob.glob(os.path.join(root, "docs", "stored", "*", "*", "validation.json")):
        with open(path) as f:
            for r in json.load(f):
                streams = r.get("walk_summary", {}).get("streams")
                if streams is not None:
                    out[r["walk"]] = len(streams)
    return out


def table_head(line):
    """Whether `line` heads a batch's table in the validation log."""
    return line.startswith("| walk") or line.startswith("| group")


def table_streams(log_lines, walk):
    """The walk's stream count from its batch's table in the validation log, or None."""
    for i, line in enumerate(log_lines):
        if not (line.startswith(f"| {walk} |") or line.startswith(f"| {walk} (")):
            continue
        j = i
        while j > 0 and not table_head(log_lines[j]):
            j -= 1
        head = [c.strip() for c in log_lines[j].split("|")]
        cells = [c.strip() for c in line.split("|")]
        if "streams" in head and head.index("streams") < len(cells):
            value = cells[head.index("streams")]
            if value.isdigit():
                return int(value)
    return None


def first_runs(root=ROOT):
    """Every held-out walk's first run."""
    docs = os.path.join(root, "docs")
    runs, rerun = [], {}
    for batch, rows, failed in batches(docs):
        for row in rows:
            run = first_run(batch, row)
            if batch in RERUN_OF:
                rerun[run["walk"]] = run
            else:
                runs.append(run)
        named = {r["walk"] for r in rows}
        runs += [dict(batch=batch, walk=w, same_walk=True, failed=True, streams=None,
                      replay=None, saving=None, summary=None) for w in failed if w not in named]
    runs = [rerun.get(r["walk"], r) if r["failed"] else r for r in runs]
    runs = [r for r in runs if r["walk"] not in NOT_COUNTED_FAILURES]
    known = stored_streams(root)
    with open(os.path.join(docs, "validation-h200.md"), encoding="utf-8") as f:
        log = f.read().split("\n")
    for r in runs:
        if r["streams"] is None:
            r["streams"] = (known.get(r["walk"]) or table_streams(log, r["walk"])
                            or (1 if r["walk"] in DECODERS_ON_ONE_STREAM else None))
        if r["streams"] is None:
            raise ValueError(f"{r['batch']}/{r['walk']}: no stream count anywhere: give its row "
                             f"one (`\"streams\": N`, from its walk module)")
    return runs


def pct(x):
    """A bound as the table writes it: one decimal, whole from 100 up, a true minus."""
    text = f"{x:+.0f}" if abs(x) >= 100 else f"{x:+.1f}"
    return text.replace("-", "\u2212")


def mean_of_both(run):
    """The error of the mean of a run's `replay` and `--summary` graph steps, %, where both
    ran (both errors are against the same real graph, so the mean of the errors; where the
    row holds the mean as `replay` takes it, its replayed half held at the model's floor of
    lanes past the L2, that)."""
    if run["replay"] is None or run["summary"] is None:
        return None
    if run.get("mean") is not None:
        return run["mean"]
    return (run["replay"] + run["summary"]) / 2


def far_apart(runs, share=0.2):
    """(walks, within 5%) of the mean of the two prices, for the held-out walks whose replay
    and `--summary` graph steps lay `share` of their mean or more apart, and for the others
    (what `replay`'s prediction quotes where its two figures lie that far apart)."""
    both = [r for r in runs if r["same_walk"] and not r["failed"] and mean_of_both(r) is not None]

    def apart(r):
        return abs(r["replay"] - r["summary"]) / (100 + mean_of_both(r)) >= share

    def count(rs):
        return len(rs), sum(abs(mean_of_both(r)) <= 5 for r in rs)
    return count([r for r in both if apart(r)]), count([r for r in both if not apart(r)])


def column(runs):
    """One column's cells: (header, replay, saving, summary, mean of replay and summary)."""
    counted = [r for r in runs if r["same_walk"]]
    ran = [r for r in counted if not r["failed"]]
    failed_walks = len(counted) - len(ran)
    failed_replays = sum(r["replay"] is None for r in ran)

    def cell(key, target, note=""):
        errors = [r[key] if isinstance(key, str) else key(r) for r in ran]
        errors = [e for e in errors if e is not None]
        within = sum(abs(e) <= target for e in errors)
        return f"{within} ({pct(min(errors))} … {pct(max(errors))}%{note})"

    notes = []
    if failed_walks:
        notes.append(f"{WORDS[failed_walks]} walk{'s' * (failed_walks > 1)} failed to run")
    if failed_replays:
        notes.append(f"{WORDS[failed_replays]} replay{'s' * (failed_replays > 1)} failed")
    left_out = len(runs) - len(counted)
    header = f"{len(runs)}" + (f"; {WORDS[left_out]} whose graph ran another walk not counted"
                               if left_out else "")
    return (header, cell("replay", 5.0, "".join(f"; {n}" for n in notes)),
            cell("saving", 10.0), cell("summary", 10.0), cell(mean_of_both, 5.0))


def held_out_table(runs):
    """The README's held-out table."""
    one = column([r for r in runs if r["streams"] == 1])
    several = column([r for r in runs if r["streams"] > 1])
    return "\n".join([
        f"| | target | one stream ({one[0]}) | several streams ({several[0]}) |",
        "|---|---|---:|---:|",
        f"| graph step, `replay` | within 5% | {one[1]} | {several[1]} |",
        f"| saving, `replay --eager-step-ms` | within 10% | {one[2]} | {several[2]} |",
        f"| graph step, `replay --summary` | within 10% | {one[3]} | {several[3]} |",
        f"| graph step, the mean of `replay` and `--summary` | within 5% | {one[4]} | "
        f"{several[4]} |",
    ])


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def full_run_table(path):
    """The README's table of a full run, from its document (`walks`: one row of errors a
    walk), without the bold marks the README sets on its headline counts."""
    with open(path) as f:
        walks = [w for w in json.load(f)["walks"] if w.get("same_walk", True) is not False]
    one = [w for w in walks if w["streams"] == 1]
    several = [w for w in walks if w["streams"] > 1]

    def row(label, target, key, limit):
        errors = [w[key] for w in walks if w[key] is not None]
        within = [sum(w[key] is not None and abs(w[key]) <= limit for w in ws)
                  for ws in (one, several, walks)]
        return (f"| {label} | {target} | {within[0]} | {within[1]} | {within[2]}: "
                f"{pct(min(errors))}% … {pct(max(errors))}%, "
                f"{median([abs(e) for e in errors]):.1f}% |")

    eager = [w["trace_eager_err"] for w in walks if w["trace_eager_err"] is not None]
    return "\n".join([
        f"| | target | one stream ({len(one)}) | several streams ({len(several)}) | all "
        f"{len(walks)}: range, median \\|error\\| |",
        "|---|---|---:|---:|---|",
        row("graph step, `replay`", "within 5%", "replay_err", 5.0),
        row("saving, `replay --eager-step-ms`", "within 10%", "saving_err", 10.0),
        row("graph step, `replay --summary` (offline)", "within 10%", "summary_err", 10.0),
        f"| eager step from the trace alone | reported | | | {pct(min(eager))}% … "
        f"{pct(max(eager))}%, median {pct(median(eager))}%, "
        f"{sum(abs(e) <= 25 for e in eager)} within 25% |",
    ])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=ROOT, help="the repository (its docs/ is read)")
    ap.add_argument("--full-run", metavar="FILE.json",
                    help="also the table of a full run's document")
    ap.add_argument("--json", action="store_true",
                    help="every held-out first run, one object a walk")
    args = ap.parse_args(argv)
    try:
        runs = first_runs(args.root)
        full = full_run_table(args.full_run) if args.full_run else None
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"validation_tables.py: {e}")
    if args.json:
        json.dump(runs, sys.stdout, indent=1)
        print()
        return 0
    if full:
        print(full)
        print()
    print(f"{len(runs)} held-out walks")
    print(held_out_table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
