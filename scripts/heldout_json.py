#!/usr/bin/env python3
"""Writes a held-out batch's raw-numbers document (docs/validation-heldout-N-h200.json) from
the run `validate_all.py` made of it: one row per walk that ran, with the real graph and eager
steps, `replay`'s and `--summary`'s graph steps and the replayed saving against them, the
trace-only eager step, how many kernels stood in which way, and the replay with every
stand-in a spin; with where and how the batch ran.

    python3 scripts/heldout_json.py --run DIR --group heldout53 --gpu GPU-... \\
        --build "BUILD" --script "scripts/heldout_53_walks.py (written at ..., before any run)" \\
        --run-note "the first run of the batch, after the GPU tests passed (...)" \\
        --out docs/validation-heldout-53-h200.json [--markdown]

With `--markdown` it also prints the batch's table as docs/validation-h200.md sets it out
(figures outside the targets in bold: `replay` beyond 5%, `--summary` and the saving beyond
10%), the line that counts them and the replay's errors with every stand-in a spin.

DIR is `validate_all.py --out DIR` (or a stored run, docs/stored/NAME): it holds GROUP/validation.json.
Needs neither a GPU nor PyTorch.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

DEVICE = "NVIDIA H200, driver 580.159.04, CUDA 13.0, PyTorch 2.11"

# Stand-in counts validate.py records beside each replay.
STAND_INS = ("paced_stand_ins", "real_gemm_kernels", "chase_stand_ins", "streaming_stand_ins",
             "block_spin_stand_ins")


def err(got, want):
    """`got` against `want`, %."""
    return 100.0 * (got / want - 1.0)


def rows(run_dir, group):
    """The batch's rows, one per walk in the run's order: for a walk that ran,
    `validate_all.rows_of`'s figures under the document's names, with the real graph step
    before the other-stream launches, the stand-in counts and the spins-only replay; for one
    that failed, what it has (`failed_row`), so that the held-out record counts it."""
    from validate_all import record_errors, rows_of
    table, results = rows_of(run_dir, [(group, None, None)])
    ran = {t["walk"]: t for t in table}
    out = []
    for r in results.get(group, []):
        t = ran.get(r["walk"])
        if t is None:
            out.append(failed_row(group, r))
            continue
        row = {k: t[k] for k in ("group", "walk", "same_walk", "kernels", "streams",
                                 "real_graph_ms")}
        row.update({
            "real_graph_ms_before_other_stream": r["graph_step_ms"],
            "real_eager_ms": r["eager_step_ms"],
        })
        row.update({k: t[k] for k in ("replay_ms", "replay_err", "summary_ms", "summary_err")})
        floor = (r.get("summary") or {}).get("graph_step_streamed_floor_ms")
        if floor is not None:
            # The mean as `replay` takes it: the replayed half held at the model's floor.
            row["summary_streamed_floor_ms"] = floor
            row["mean_err"] = record_errors(r)["mean_err"]
        row.update({
            "real_saving_ms": t["saving_ms"],
            "replay_saving_ms": t["replay_saving_ms"],
            "saving_err": t["saving_err"],
            "trace_only_eager_ms": t["trace_eager_ms"],
            "trace_only_eager_err": t["trace_eager_err"],
        })
        row.update({k: r.get(k, 0) for k in STAND_INS})
        spins = r.get("replay_spins_only")
        if spins:
            row["replay_spins_only_ms"] = spins["graph_step_ms"]
            row["replay_spins_only_err"] = err(spins["graph_step_ms"], t["real_graph_ms"])
        grid = r.get("with_grid_nodes")
        if grid and "error" not in grid:
            # validate.py --also-grid-nodes: the walk priced again with a grid table.
            row["grid_table"] = grid["table"]
            for key in ("replay", "summary"):
                ms = grid[key]["graph_step_ms"]
                row[f"{key}_with_table_ms"] = ms
                row[f"{key}_with_table_err"] = err(ms, t["real_graph_ms"])
            if grid["summary"].get("graph_step_streamed_floor_ms") is not None:
                # The mean with the table as `replay` takes it, held at the model's floor.
                from validate_all import mean_step
                row["mean_with_table_err"] = err(mean_step(grid["replay"], grid["summary"]),
                                                 t["real_graph_ms"])
        out.append(row)
    return out


def failed_row(group, r):
    """A walk the table leaves out. Where its steps were timed and the replay failed: the real
    steps, the offline price where it was made, and the replay's error (`replay_failed`; a
    replay whose later steps failed, the spins-only one say, counts as failed too: a miss, not
    a figure); where nothing was timed: the error (`failed`)."""
    why = (r.get("error") or "no replay").strip()[-300:]
    if "graph_step_ms" not in r:
        return {"group": group, "walk": r["walk"], "failed": why}
    from validate_all import record_errors
    e = record_errors(r)
    streams = r.get("walk_summary", {}).get("streams")
    return {
        "group": group, "walk": r["walk"], "same_walk": r.get("same_walk", True),
        "streams": len(streams) if streams is not None else None,
        "real_graph_ms": e["real_graph_ms"], "real_eager_ms": r["eager_step_ms"],
        "replay_ms": None, "replay_err": None, "saving_err": None,
        "summary_ms": (r.get("summary") or {}).get("graph_step_ms"),
        "summary_err": e["summary_err"], "replay_failed": why,
    }


# The targets a figure is bolded beyond, % (README, "How accurate the prices are").
TARGETS = {"replay_err": 5.0, "summary_err": 10.0, "saving_err": 10.0}


def signed(v):
    """`v` % with a sign, one decimal, a true minus sign (as the document writes it)."""
    return f"{v:+.1f}%".replace("-", "\u2212")


def cell(ms, e, target=None):
    """`ms (err)`, the error in bold where it is beyond `target`; `ms` alone where there is no
    error (a saving where the real graph saved nothing)."""
    if e is None:
        return f"{ms:.3f}"
    text = signed(e)
    if target is not None and abs(e) > target:
        text = f"**{text}**"
    return f"{ms:.3f} ({text})"


def markdown(rows):
    """The batch's table and the line counting what came within the targets."""
    out = ["| walk | kernels | streams | real graph ms | `replay` ms (err) | `--summary` ms (err) "
           "| real saving ms | `replay` saving (err) | trace-only eager (err) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if "replay_ms" not in r or r["replay_ms"] is None:
            out.append(failed_line(r))
            continue
        out.append(" | ".join([
            f"| {r['walk']}", str(r["kernels"]), str(r["streams"]), f"{r['real_graph_ms']:.3f}",
            cell(r["replay_ms"], r["replay_err"], TARGETS["replay_err"]),
            cell(r["summary_ms"], r["summary_err"], TARGETS["summary_err"]),
            f"{r['real_saving_ms']:.3f}",
            cell(r["replay_saving_ms"], r["saving_err"], TARGETS["saving_err"]),
            cell(r["trace_only_eager_ms"], r["trace_only_eager_err"]),
        ]) + " |")
    n = len(rows)
    within = {k: sum(r.get(k) is not None and abs(r[k]) <= t for r in rows)
              for k, t in TARGETS.items()}
    # A replayed saving has no error where the real graph saved nothing: left out of the count.
    savings = n - sum(r.get("replay_ms") is not None and r.get("saving_err") is None
                      for r in rows)
    out.append("")
    out.append(f"`replay` {within['replay_err']} of {n} within 5%, savings "
               f"{within['saving_err']} of {savings}, `--summary` {within['summary_err']} of {n}.")
    means = [r.get("mean_err", (r["replay_err"] + r["summary_err"]) / 2) for r in rows
             if r.get("replay_err") is not None and r.get("summary_err") is not None]
    out.append(f"The mean of the two graph steps (what `replay` prices where a profile describes "
               f"the GPU): {sum(abs(m) <= 5 for m in means)} of {n} within 5%.")
    grid = [r for r in rows if "replay_with_table_err" in r]
    if grid:
        mean = [r.get("mean_with_table_err",
                      (r["replay_with_table_err"] + r["summary_with_table_err"]) / 2)
                for r in grid]
        out.append(f"With the grid table {grid[0]['grid_table']}: `replay` "
                   f"{sum(abs(r['replay_with_table_err']) <= 5 for r in grid)} of {len(grid)} "
                   f"within 5%, `--summary` "
                   f"{sum(abs(r['summary_with_table_err']) <= 10 for r in grid)} within 10%, "
                   f"their mean {sum(abs(m) <= 5 for m in mean)} within 5%.")
    spins = [signed(r["replay_spins_only_err"]).rstrip("%") for r in rows
             if "replay_spins_only_err" in r]
    if spins:
        listed = spins[0] if len(spins) == 1 else ", ".join(spins[:-1]) + " and " + spins[-1]
        out.append(f"With every stand-in a spin: {listed}%.")
    return "\n".join(out)


def failed_line(r):
    """A failed walk's row of the table: what was measured, `failed` where the rest would be."""
    if "failed" in r:
        return f"| {r['walk']} | — | — | — | failed | | | | |"
    summary = cell(r["summary_ms"], r["summary_err"], TARGETS["summary_err"]) \
        if r.get("summary_ms") else "—"
    return (f"| {r['walk']} | — | {r['streams'] if r['streams'] is not None else '—'} | "
            f"{r['real_graph_ms']:.3f} | replay failed | {summary} | | | |")


def document(run_dir, group, gpu, build, script, run_note, device=DEVICE):
    """The batch's document: the device, and under the group's name where and how it ran and
    its rows."""
    return {
        "device": device,
        group: {
            "gpu": gpu, "build": build, "script": script, "run": run_note,
            "rows": rows(run_dir, group),
        },
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True, help="validate_all.py's --out directory, or a stored run")
    ap.add_argument("--group", required=True, help="the batch's group (heldout53, ...)")
    ap.add_argument("--gpu", required=True, help="the GPU's UUID, as nvidia-smi -L gives it")
    ap.add_argument("--build", required=True, help="which build priced the walks")
    ap.add_argument("--script", required=True, help="the walk module, and when it was written")
    ap.add_argument("--run-note", required=True, help="how the run went (first run, tests, ...)")
    ap.add_argument("--device", default=DEVICE)
    ap.add_argument("--out", required=True)
    ap.add_argument("--markdown", action="store_true",
                    help="also print the batch's table as docs/validation-h200.md sets it out")
    a = ap.parse_args()
    results = os.path.join(a.run, a.group, "validation.json")
    if not os.path.isfile(results):
        sys.exit(f"heldout_json.py: no {results}: --run is validate_all.py's --out directory "
                 f"(or a stored run) holding the group {a.group}")
    doc = document(a.run, a.group, a.gpu, a.build, a.script, a.run_note, a.device)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{a.out}: {len(doc[a.group]['rows'])} walks of {a.group}")
    if a.markdown:
        print()
        print(markdown(doc[a.group]["rows"]))


if __name__ == "__main__":
    main()
