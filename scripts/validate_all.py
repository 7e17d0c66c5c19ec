"""Every walk of the repository through `scripts/validate.py`, group by group, and one table of
all of them with how many are within the targets (docs/validation-h200.md, "All 73 walks at
03cdeeb"; earlier runs ran the groups that existed then, and groups `later`, `fresh`, `l2` and
`untried` were first run on their own: "Walks written after the 890f16b run", "… after the
caee65a run", "Walks whose data fits the L2", "Walks of kinds not met before, after 03690f0").

    python3 scripts/validate_all.py --out DIR --launch-econ target/release/launch-econ
    python3 scripts/validate_all.py --out DIR --groups paced,bandwidth    # some groups
    python3 scripts/validate_all.py --out DIR --table-only                # table of DIR again
    python3 scripts/validate_all.py --out DIR --profile GPU.json          # on another GPU: its
                                                                          # own profile

Each group runs in DIR/<group> (one process per walk, as validate.py does); a group that
fails leaves its walks out of the table and says so. The table compares every price with the
real `CUDAGraph` replay at the upper level of graph node cost, unprofiled; the saving is the
measured eager step less that graph step. A walk whose graph ran other work than the
recording (validate.py's same-walk check: kernels, copies and memsets) is tabled, marked, and
not counted: a price of the recording does not describe that graph. DIR/all.json holds the groups' results (without
their sample arrays), DIR/all.md the table, DIR/spin_cupti.json the spin kernel's profiled
duration against its span on the machine (measured first, in a process of its own).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from trace_facts import same_walk, trace_events, work_of  # noqa: E402 - beside this script
from walk_groups import GROUPS  # noqa: E402 - (group, walk module, walks)

# Targets: the replayed graph step within 5%, the saving and the offline graph step within 10%.
REPLAY, SAVING, SUMMARY = 5.0, 10.0, 10.0


def run_group(out, launch_econ, group, module, walks, profile="", grid_nodes=""):
    cmd = [sys.executable, os.path.join(HERE, "validate.py"), "--out", os.path.join(out, group),
           "--launch-econ", launch_econ, "--walks", walks]
    if profile:
        cmd += ["--profile", profile]
    if grid_nodes:
        cmd += ["--also-grid-nodes", grid_nodes]
    if module:
        cmd += ["--walk-module", os.path.join(HERE, module)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(out, group + ".log"), "w") as f:
        f.write(p.stdout + p.stderr)
    print(f"{group}: {'done' if p.returncode == 0 else 'FAILED (see %s.log)' % group}",
          file=sys.stderr)


def spin_ramp(out):
    """The spin kernel's profiled duration against its own span on this machine
    (`scripts/spin_cupti.py`, DIR/spin_cupti.json): the replay plans every node with a ramp
    measured once on an H200 (`--spin-ramp-ns`), and a run whose replay moves against the
    real graphs can be checked against it."""
    p = subprocess.run([sys.executable, os.path.join(HERE, "spin_cupti.py"),
                        os.path.join(out, "spin_cupti.json")], capture_output=True, text=True)
    with open(os.path.join(out, "spin_cupti.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    print(f"spin ramp: {'done' if p.returncode == 0 else 'FAILED (see spin_cupti.log)'}",
          file=sys.stderr)


def ran_recorded_walk(r, group_dir):
    """Whether the walk's graph ran the recorded kernels, copies and memsets, from its two
    traces in `group_dir` where they are there (validate.py's check as it is now: runs before
    b0f9ffd stored a check of kernels alone), else as the run stored it."""
    traces = [os.path.join(group_dir, os.path.basename(r.get(k) or ""))
              for k in ("eager_trace", "graph_trace")]
    if all(os.path.isfile(t) for t in traces):
        return same_walk(*(work_of(trace_events(t)) for t in traces))
    return r.get("same_walk", True)


def record_errors(r):
    """A validate.py record's figures against its real steps: the real graph step (after the
    other-stream launches where timed), the real saving, and `replay`'s, the saving's and
    `--summary`'s errors, %, each None where that price is missing (a replay that failed) or
    the real saving is not positive; and the error of the mean of the two graph steps
    (`mean_step`), what `replay` prices where a profile describes the GPU."""
    real = r.get("graph_step_other_stream_ms", r["graph_step_ms"])
    saving = r["eager_step_ms"] - real
    replay, summary = r.get("replay") or {}, r.get("summary") or {}

    def err(got, want):
        return None if got is None else 100.0 * (got / want - 1.0)
    return {
        "real_graph_ms": real, "saving_ms": saving,
        "replay_err": err(replay.get("graph_step_ms"), real),
        "saving_err": err(replay.get("saving_ms"), saving) if saving > 0 else None,
        "summary_err": err(summary.get("graph_step_ms"), real),
        "mean_err": err(mean_step(replay, summary), real),
    }


def mean_step(replay, summary):
    """The mean of a record's replayed and offline graph steps, ms, as `replay` takes it
    (`StepPrice::with_model`): where the offline step is the floor of lanes past the L2
    (`graph_step_streamed_floor_ms`, in records from ea966fb on), the replayed half is held
    at that floor. None where either is missing."""
    replayed, model = replay.get("graph_step_ms"), summary.get("graph_step_ms")
    if replayed is None or model is None:
        return None
    floor = summary.get("graph_step_streamed_floor_ms")
    return ((replayed if floor is None else max(replayed, floor)) + model) / 2


def rows_of(out, groups):
    rows, results = [], {}
    for group, _, _ in groups:
        path = os.path.join(out, group, "validation.json")
        if not os.path.exists(path):
            print(f"{group}: no results in {path}, left out", file=sys.stderr)
            continue
        kept = []
        for r in json.load(open(path)):
            kept.append({k: v for k, v in r.items() if not k.endswith("samples_ms")})
            if "error" in r or "replay" not in r:
                print(f"{group}/{r['walk']}: failed, left out", file=sys.stderr)
                continue
            e = record_errors(r)
            eager = r["eager_step_ms"]
            rows.append({
                "group": group, "walk": r["walk"], "same_walk": ran_recorded_walk(r, os.path.join(out, group)),
                "kernels": r["walk_summary"]["kernels"],
                "streams": len(r["walk_summary"]["streams"]), "real_graph_ms": e["real_graph_ms"],
                "replay_ms": r["replay"]["graph_step_ms"], "replay_err": e["replay_err"],
                "summary_ms": r["summary"]["graph_step_ms"], "summary_err": e["summary_err"],
                "saving_ms": e["saving_ms"], "replay_saving_ms": r["replay"]["saving_ms"],
                "saving_err": e["saving_err"],
                "trace_eager_ms": r["trace_only"]["eager_step_ms"],
                "trace_eager_err": 100.0 * (r["trace_only"]["eager_step_ms"] / eager - 1.0),
            })
        results[group] = kept
    return rows, results


def table(rows):
    def cell(v, e, limit):
        if e is None:
            return f"{v:.3f}"
        pct = f"{e:+.1f}%"
        return f"{v:.3f} ({'**%s**' % pct if limit and abs(e) > limit else pct})"
    out = ["| group | walk | kernels | streams | real graph ms | `replay` graph ms (err) | "
           "`--summary` ms (err) | real saving ms | `replay` saving ms (err) | "
           "trace-only eager ms (err) |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        walk = r["walk"] if r.get("same_walk", True) else f"{r['walk']} (graph ran another walk)"
        out.append(f"| {r['group']} | {walk} | {r['kernels']} | {r['streams']} | "
                   f"{r['real_graph_ms']:.3f} | {cell(r['replay_ms'], r['replay_err'], REPLAY)} | "
                   f"{cell(r['summary_ms'], r['summary_err'], SUMMARY)} | {r['saving_ms']:.3f} | "
                   f"{cell(r['replay_saving_ms'], r['saving_err'], SAVING)} | "
                   f"{cell(r['trace_eager_ms'], r['trace_eager_err'], None)} |")
    other = [r["walk"] for r in rows if not r.get("same_walk", True)]
    rows = [r for r in rows if r.get("same_walk", True)]
    out += ["", "| | within target | range | median \\|error\\| |", "|---|---:|---|---:|"]
    for name, key, limit in [("`replay` graph step", "replay_err", REPLAY),
                             ("saving with `--eager-step-ms`", "saving_err", SAVING),
                             ("`--summary` graph step", "summary_err", SUMMARY)]:
        errs = [r[key] for r in rows if r[key] is not None]
        if not errs:
            continue
        within = sum(abs(e) <= limit for e in errs)
        out.append(f"| {name} ({limit:.0f}%) | {within} of {len(errs)} | "
                   f"{min(errs):+.1f}% … {max(errs):+.1f}% | "
                   f"{statistics.median(abs(e) for e in errs):.1f}% |")
    if other:
        out += ["", f"Not counted: {len(other)} walk(s) whose graph ran another walk than the "
                    f"recording, which a price of the recording does not describe: "
                    f"{', '.join(other)}."]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--launch-econ", default="launch-econ")
    ap.add_argument("--profile", default="",
                    help="a device profile for every price (validate.py --profile): on a GPU other "
                         "than the H200, this GPU's")
    ap.add_argument("--also-grid-nodes", default="",
                    help="a grid table to price every walk with again (validate.py "
                         "--also-grid-nodes), e.g. docs/grid-nodes-h100.json on an H100")
    ap.add_argument("--groups", default="",
                    help="comma-separated; default: " + ",".join(g for g, _, _ in GROUPS))
    ap.add_argument("--table-only", action="store_true",
                    help="make the table from the groups already in --out")
    args = ap.parse_args()
    if args.also_grid_nodes and not os.path.isfile(args.also_grid_nodes):
        ap.error(f"--also-grid-nodes {args.also_grid_nodes}: no such file")
    names = [g for g in args.groups.split(",") if g]
    unknown = set(names) - {g for g, _, _ in GROUPS}
    if unknown:
        ap.error(f"unknown groups: {', '.join(sorted(unknown))}")
    groups = [g for g in GROUPS if not names or g[0] in names]
    os.makedirs(args.out, exist_ok=True)
    if not args.table_only:
        spin_ramp(args.out)
        for group, module, walks in groups:
            run_group(args.out, args.launch_econ, group, module, walks, args.profile,
                      args.also_grid_nodes)
    rows, results = rows_of(args.out, groups)
    with open(os.path.join(args.out, "all.json"), "w") as f:
        json.dump(results, f, indent=1)
    text = table(rows)
    with open(os.path.join(args.out, "all.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
