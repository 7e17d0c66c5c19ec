#!/usr/bin/env python3
"""Replays stored multi-stream traces (through the launch_econ package, `gpu=True`) in fresh
processes that did different work first, to see what in a process's history moves a graph
with branches. Each (condition, walk) runs in a process of its own: the condition's work,
then the walk replayed `--times` times in a row (each replay a new engine), each priced
against the real graph the stored run timed (its upper level).

    PYTHONPATH=DIR_WITH_launch_econ python3 scripts/stream_history_probe.py \
        --runs OUT_OF_VALIDATE_ALL --walks val/two_streams,stream/three_streams \
        --conditions none,k_4,n_8,e_8,m_64 [--times 2] [--out FILE.json]

Conditions (CuPy, before the replay's engine exists):
  none      nothing
  ctx       CuPy's context and one kernel on its default stream
  k_N       N new streams, each running cp.ones(16).sum(), dropped
  kkeep_N   the same, kept alive through the replay
  n_N       N new streams, each running one empty kernel, kept
  l_N       one new stream running N empty kernels, kept (launches without more streams)
  e_N       N new streams created, nothing run on them
  ekeep_N   the same, kept
  m_N       8 device buffers of N MiB allocated and kept, no new streams
  replay_W  a replay of the stored walk W (group/walk) first
  g_N       a CuPy graph of N branches on N streams (two small kernels each, forked and
            joined), launched 10 times and kept
  torch     the walk itself (from --walk-module) run as validate.py runs it: 5 eager steps,
            its CUDAGraph captured and replayed 20 times, kept; the real graph is timed in
            this process before the replay (`real_before_ms`) and after it (`real_here_ms`),
            each after a kernel on another stream
  eager     the walk run eagerly 25 times, no graph
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def trace_of(runs, gw):
    group, walk = gw.split("/")
    real = [r for r in json.load(open(os.path.join(runs, group, "validation.json")))
            if r["walk"] == walk][0]
    stored = os.path.join(runs, group, walk + ".eager.json")
    if os.path.exists(stored):
        return stored, real
    path = os.path.join(tempfile.mkdtemp(), walk + ".json")
    with gzip.open(stored + ".gz") as f, open(path, "wb") as o:
        shutil.copyfileobj(f, o)
    return path, real


def torch_walk(module, walk, graph):
    """Runs `walk` as validate.py does (with its graph captured and replayed when `graph`);
    returns the graph's replay, or None."""
    import torch
    import validate
    step, kind = validate.build_from(module, walk)
    if not graph:
        for _ in range(25):
            step()
        torch.cuda.synchronize()
        return None
    g = validate.capture_torch(step, torch.cuda.Stream())
    for _ in range(20):
        g.replay()
    torch.cuda.synchronize()
    return g


def branches_graph(n):
    """A CuPy graph of `n` branches, forked from and joined on a capture stream, launched 10
    times; returned to be kept."""
    import cupy as cp
    main = cp.cuda.Stream(non_blocking=True)
    sides = [cp.cuda.Stream(non_blocking=True) for _ in range(n)]
    bufs = [cp.zeros(256, dtype=cp.float32) for _ in range(n)]
    main.begin_capture()
    fork = main.record()
    for s, b in zip(sides, bufs):
        s.wait_event(fork)
        with s:
            b += 1
            b *= 2
        main.wait_event(s.record())
    graph = main.end_capture()
    for _ in range(10):
        graph.launch(main)
    main.synchronize()
    return [graph, main, sides, bufs]


def before(cond, runs, module, walk):
    """Runs `cond`'s work; returns what must stay alive through the replay."""
    if cond == "none":
        return None
    if cond in ("torch", "eager"):
        return torch_walk(module, walk, cond == "torch")
    if cond.startswith("replay_"):
        from launch_econ import _native
        path, real = trace_of(runs, cond[len("replay_"):])
        _native.price_trace(path, real["eager_step_ms"], True, 0, None, None, 3, False, "join",
                            "auto", "last")
        return None
    import cupy as cp
    cp.zeros(1).sum()
    cp.cuda.Device().synchronize()
    kind, _, n = cond.partition("_")
    n = int(n or 0)
    keep = []
    if kind == "m":
        keep = [cp.empty(n << 20, dtype=cp.uint8) for _ in range(8)]
    elif kind in ("n", "l"):
        noop = cp.RawKernel(r'extern "C" __global__ void noop() {}', "noop")
        one = cp.cuda.Stream(non_blocking=True)
        for _ in range(n):
            s = cp.cuda.Stream(non_blocking=True) if kind == "n" else one
            noop((1,), (1,), (), stream=s)
            s.synchronize()
            keep.append(s)
    elif kind in ("k", "kkeep", "e", "ekeep"):
        for _ in range(n):
            s = cp.cuda.Stream(non_blocking=True)
            if kind.startswith("k"):
                with s:
                    cp.ones(16).sum()
                s.synchronize()
            if kind.endswith("keep"):
                keep.append(s)
    elif kind == "g":
        keep = branches_graph(n)
    elif kind != "ctx":
        raise SystemExit(f"unknown condition {cond!r}")
    cp.cuda.Device().synchronize()
    return keep


def child(cond, gw, runs, times, module):
    kept = before(cond, runs, module, gw.split("/")[1])
    real_before = None
    if cond == "torch":
        import validate
        validate.launch_on_other_stream("torch")
        real_before = validate.replay_ms(kept.replay)
    from launch_econ import _native
    path, real = trace_of(runs, gw)
    errs, replayed, quiet = [], [], []
    for _ in range(times):
        doc = json.loads(_native.price_trace(path, real["eager_step_ms"], True, 0, None, None,
                                             None, False, "join", "auto", "last"))
        ms = doc["result"]["prediction"]["graph_step_ms"]
        replayed.append(ms)
        quiet.append(doc["result"]["prediction"].get("graph_step_quiet_ms"))
        errs.append(round(100 * (ms / real["graph_step_other_stream_ms"] - 1), 1))
    row = {"condition": cond, "walk": gw, "error_pct": errs, "replay_ms": replayed,
           "replay_quiet_ms": quiet}
    if cond == "torch":
        import validate
        validate.launch_on_other_stream("torch")
        row["real_before_ms"] = real_before
        row["real_here_ms"] = validate.replay_ms(kept.replay)
        row["error_here_pct"] = [round(100 * (ms / row["real_here_ms"] - 1), 1)
                                 for ms in replayed]
    del kept
    print(json.dumps(row))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", required=True)
    ap.add_argument("--walks", required=True)
    ap.add_argument("--conditions", default="none")
    ap.add_argument("--times", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--walk-module", default="",
                    help="the walks' module (conditions torch and eager), as validate.py takes")
    ap.add_argument("--child", nargs=2, metavar=("CONDITION", "WALK"))
    a = ap.parse_args()
    if a.child:
        child(a.child[0], a.child[1], a.runs, a.times, a.walk_module)
        return
    rows = []
    for cond in a.conditions.split(","):
        for gw in a.walks.split(","):
            p = subprocess.run([sys.executable, __file__, "--runs", a.runs, "--walks", gw,
                                "--times", str(a.times), "--walk-module", a.walk_module,
                                "--child", cond, gw],
                               capture_output=True, text=True)
            line = p.stdout.strip().splitlines()[-1:] if p.returncode == 0 else []
            row = json.loads(line[0]) if line else {"condition": cond, "walk": gw,
                                                    "error": p.stderr[-1000:]}
            print(json.dumps(row), flush=True)
            rows.append(row)
    if a.out:
        json.dump(rows, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
