#!/usr/bin/env python3
"""Writes a held-out batch's raw-numbers document (docs/validation-heldout-N-h200.json) from
the run `validate_all.py` made of it: one row per walk that ran, with the real graph and eager
steps, `replay`'s and `--summary`'s graph steps and the replayed saving against them, the
trace-only eager step, how many kernels stood in which way, and the replay with every
stand-in a spin; with where and how the batch ran.

    python3 scripts/heldout_json.py --run DIR --group heldout53 --gpu GPU-... \\
        --build "BUILD" --script "scripts/heldout_53_walks.py (written at ..., before any run)" \\
        --run-note "the first run of the batch, after the GPU tests passed (...)" \\
        --out docs/validation-heldout-53-h200.json

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
    """The batch's rows, one per walk that ran (those that failed are left out and named on
    stderr): `validate_all.rows_of`'s figures under the document's names, with the real graph
    step before the other-stream launches, the stand-in counts and the spins-only replay."""
    from validate_all import rows_of
    table, results = rows_of(run_dir, [(group, None, None)])
    records = {r["walk"]: r for r in results.get(group, [])}
    out = []
    for t in table:
        r = records[t["walk"]]
        row = {k: t[k] for k in ("group", "walk", "same_walk", "kernels", "streams",
                                 "real_graph_ms")}
        row.update({
            "real_graph_ms_before_other_stream": r["graph_step_ms"],
            "real_eager_ms": r["eager_step_ms"],
        })
        row.update({k: t[k] for k in ("replay_ms", "replay_err", "summary_ms", "summary_err")})
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
        out.append(row)
    return out


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


if __name__ == "__main__":
    main()
