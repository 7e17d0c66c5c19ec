#!/usr/bin/env python3
"""Prices a lanes probe's recorded steps with `launch-econ replay --summary` and sets each
beside the real graph the probe timed, so that what a probe's JSON says `--summary` gave can
be made again from its traces (no GPU). Three probes record traces this reads:

* `elementwise_lanes_probe.py OUT --traces DIR`: rows of `buffer_bytes` x `lanes`, traces
  `add_{BYTES}_x{LANES}.eager.json[.gz]`; stretches are over the one-lane row of each size;
* `gemm_lanes_l2_probe.py --out OUT --traces DIR`: `sizes` -> d -> `us` (`beyond_N`,
  `within_N`), traces `d{D}_{beyond|within}_{N}.eager.json[.gz]`;
* `ring_lanes_probe.py --out OUT --traces DIR`: `us` (`LAYOUT_ROUNDS`), traces of the last
  round count, `{LAYOUT}.eager.json[.gz]`;
* `graph_lane_memory_probe.py --out OUT --traces DIR`: `graphs` -> `us` (`{N}_lanes_{CHAIN}`),
  traces `{N}_lanes_{CHAIN}.eager.json[.gz]`.

For each layout it prints the real graph µs, `--summary`'s µs and error and, with
`--baseline`, the second binary's beside it; `--out` writes them as JSON.

    python3 scripts/price_probe_traces.py PROBE.json TRACES_DIR --launch-econ BIN
        [--profile PROFILE.json] [--baseline BIN] [--out FILE.json]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from reprice_summary import price  # noqa: E402


def layouts(probe):
    """(name, trace stem, real graph µs) of every layout of `probe` that recorded a trace."""
    if "rows" in probe:
        for r in probe["rows"]:
            b, n = r["buffer_bytes"], r["lanes"]
            yield f"{b}x{n}", f"add_{b}_x{n}", r["step_us"]
    elif "sizes" in probe:
        for d, v in probe["sizes"].items():
            for key, us in v["us"].items():
                yield f"d{d}_{key}", f"d{d}_{key}", us
    elif "us" in probe and "rounds" in probe:
        last = max(probe["rounds"])
        for key, us in probe["us"].items():
            layout, _, rounds = key.rpartition("_")
            if rounds == str(last):
                yield layout, layout, us
    elif "graphs" in probe and "us" in probe["graphs"]:
        for key, us in probe["graphs"]["us"].items():
            yield key, key, us
    else:
        raise ValueError("not a lanes probe's JSON (no rows, sizes, rounds or graphs)")


def find_trace(folder, stem):
    """The trace of `stem` in `folder`, gzipped or not; None where there is none."""
    for name in (f"{stem}.eager.json.gz", f"{stem}.eager.json"):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("probe")
    ap.add_argument("traces")
    ap.add_argument("--launch-econ", required=True)
    ap.add_argument("--profile", default="")
    ap.add_argument("--baseline", default="")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    with open(args.probe) as f:
        probe = json.load(f)
    try:
        found = list(layouts(probe))
    except ValueError as e:
        sys.exit(f"{args.probe}: {e}")
    binaries = [("new", args.launch_econ)] + ([("base", args.baseline)] if args.baseline else [])
    rows, missing = [], []
    for name, stem, real in found:
        trace = find_trace(args.traces, stem)
        if trace is None:
            missing.append(stem)
            continue
        row = {"layout": name, "real_us": real}
        for label, binary in binaries:
            ms, error = price(binary, trace, None, args.profile)
            if error:
                sys.exit(f"{trace}: launch-econ failed: {' '.join(error)}")
            us = ms * 1e3
            row[f"{label}_us"] = us
            row[f"{label}_err_pct"] = (us / real - 1) * 100
        rows.append(row)
    if not rows:
        sys.exit(f"{args.traces}: no trace of the probe's layouts")
    for r in rows:
        line = f"{r['layout']:>16}: real {r['real_us']:9.1f} us, --summary {r['new_us']:9.1f} " \
               f"({r['new_err_pct']:+.1f}%)"
        if "base_us" in r:
            line += f", baseline {r['base_us']:9.1f} ({r['base_err_pct']:+.1f}%)"
        print(line)
    if missing:
        print(f"no trace for {len(missing)} layout(s): {', '.join(missing)}", file=sys.stderr)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"probe": args.probe, "profile": args.profile or "shipped", "rows": rows},
                      f, indent=1)


if __name__ == "__main__":
    main()
