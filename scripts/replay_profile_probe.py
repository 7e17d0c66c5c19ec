#!/usr/bin/env python3
"""Profiles, in one process and one CUPTI session (torch.profiler), a walk's real
torch.cuda.CUDAGraph beside `launch-econ replay` of the walk's recorded trace (run through the
launch_econ package in the same process): which kernel each real node ran and how long, and
which kernels the replay ran (cuBLAS's choice for the GEMMs it runs for real) and how long.

    PYTHONPATH=DIR_WITH_launch_econ python3 scripts/replay_profile_probe.py \
        --walks two_streams_attention,three_streams [--walk-module scripts/stream_walks.py] \
        --out DIR

Each walk runs in a child process: the real graph is timed unprofiled first (after a kernel on
another stream: the level the validation times), then the eager step is recorded (with the
cross-stream waits), then the replay prices it unprofiled, then one profiler session holds
three real graph launches, a short replay and three more real launches. DIR/WALK.probe.json
holds the real launches (kernels in start order: name, stream, start offset, duration) and,
per kernel name, grid and block, the count and median duration of the real graph's kernels
and of the replay's; DIR/WALK.trace.json.gz the whole session. The replay here runs in a
process whose streams have already run the walk, which moves a graph with branches (see
scripts/stream_history_probe.py): its price is not the CLI's.
"""
import argparse
import collections
import gzip
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import sync_events_config  # noqa: E402


def kernels_by_source(trace):
    """The session's kernels in two sets: `real`, those of the torch graph's launches (their
    correlation is a `cudaGraphLaunch`), each launch's span and kernels in start order; and
    per kernel name, grid and block, the count and median duration (µs) of the real graph's
    kernels and of everything else (the replay's: its calibration, eager walks and graphs;
    the driver-API `cuGraphLaunch` of the engine leaves no record to tell them apart)."""
    calls = {}
    for e in trace["traceEvents"]:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            calls[e["args"]["correlation"]] = e["name"]
    launches = collections.defaultdict(list)
    by_name = collections.defaultdict(list)
    for e in trace["traceEvents"]:
        if e.get("cat") != "kernel":
            continue
        corr = e["args"].get("correlation")
        real = calls.get(corr) == "cudaGraphLaunch"
        if real:
            launches[corr].append(e)
        by_name[("real" if real else "other", e["name"][:80], str(e["args"].get("grid")),
                 str(e["args"].get("block")))].append(e["dur"])
    real = []
    for ks in sorted(launches.values(), key=lambda ks: min(k["ts"] for k in ks)):
        ks.sort(key=lambda k: k["ts"])
        t0 = ks[0]["ts"]
        real.append({"span_us": max(k["ts"] + k["dur"] for k in ks) - t0,
                     "kernels": [[k["name"][:80], k["args"].get("stream"), round(k["ts"] - t0, 3),
                                  k["dur"]] for k in ks]})
    names = [{"source": src, "name": n, "grid": g, "block": b, "count": len(d),
              "median_us": statistics.median(d)} for (src, n, g, b), d in sorted(by_name.items())]
    return real, names


def child(name, module, out):
    import torch
    import validate
    from launch_econ import _native
    step, kind = validate.build_from(module, name)
    stream = torch.cuda.Stream()
    graph = validate.capture_torch(step, stream)
    for _ in range(5):
        step()
        graph.replay()
    torch.cuda.synchronize()
    validate.launch_on_other_stream(kind)
    real_ms = validate.replay_ms(graph.replay)
    eager_ms = validate.replay_ms(step)
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    extra = sync_events_config(torch)  # the cross-stream waits, as validate.py records them
    with profile(activities=acts, record_shapes=True, **extra) as prof:
        step()
        torch.cuda.synchronize()
    eager_path = os.path.join(out, f"{name}.eager.json")
    prof.export_chrome_trace(eager_path)
    doc = json.loads(_native.price_trace(eager_path, eager_ms, True, 0, None, 3.0, None, False,
                                         "join", "auto", "last"))
    # The replayed graph alone, where the price is its mean with the offline model.
    prediction = doc["result"]["prediction"]
    replay_ms = prediction.get("graph_step_replayed_ms", prediction["graph_step_ms"])
    with profile(activities=acts) as prof:
        for _ in range(3):
            graph.replay()
        torch.cuda.synchronize()
        _native.price_trace(eager_path, eager_ms, True, 0, None, None, 2, False, "join", "auto",
                            "last")
        for _ in range(3):
            graph.replay()
        torch.cuda.synchronize()
    path = os.path.join(out, f"{name}.trace.json")
    prof.export_chrome_trace(path)
    trace = json.load(open(path))
    with gzip.open(path + ".gz", "wt") as f:
        json.dump(trace, f)
    os.remove(path)
    real_launches, names = kernels_by_source(trace)
    res = {"walk": name, "real_graph_ms": real_ms, "eager_ms": eager_ms,
           "replay_graph_ms": replay_ms, "replay_warnings": doc.get("warnings"),
           "replay_result": {k: v for k, v in doc["result"].items() if k != "replay"},
           "real_launches": real_launches, "kernels": names}
    json.dump(res, open(os.path.join(out, f"{name}.probe.json"), "w"))
    spans = [g["span_us"] for g in real_launches]
    print(json.dumps({"walk": name, "real_graph_ms": real_ms, "replay_graph_ms": replay_ms,
                      "real_profiled_span_us": statistics.median(spans) if spans else None}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--walks", required=True)
    ap.add_argument("--walk-module", default="")
    ap.add_argument("--out", required=True)
    ap.add_argument("--child", default="")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.child:
        child(a.child, a.walk_module, a.out)
        return
    for w in a.walks.split(","):
        r = subprocess.run([sys.executable, __file__, "--walks", w, "--walk-module",
                            a.walk_module, "--out", a.out, "--child", w])
        if r.returncode:
            print(f"{w}: child failed ({r.returncode})", file=sys.stderr)


if __name__ == "__main__":
    main()
