#!/usr/bin/env python3
"""Which level of per-node graph cost (docs/validation-h200.md, "Two levels") is a walk's
process at? A marker graph of 300 one-element PyTorch adds, timed in the walk's process beside
the walk's own graph, says so: its µs per node is the process's level, whatever the walk's
kernels do.

One process per walk (`validate.py`'s walks, or `--walk-module`'s; `none` / `none_cupy`: the
marker alone, PyTorch's or CuPy's). The walk is built, warmed up and captured on a new stream
as `validate.py` does, its graph timed as first replayed ("as captured"), then the marker (in
the walk's framework) captured on the same stream and both timed, then both again after 32
kernels on a new stream. Unprofiled; median ms per replay of 9 batches of 20.

    python3 scripts/level_marker_probe.py --walks none,cuda_cpp,gpt2_small_decode_b8 \
        --walk-module scripts/more_walks.py --out /tmp/marker.json
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import build_from, capture_torch, launch_on_other_stream, replay_ms  # noqa: E402

MARKER_NODES = 300


def capture_cupy(step, stream):
    """Warms `step` up on the CuPy stream `stream`, captures it there and uploads the graph."""
    with stream:
        for _ in range(5):
            step()
    stream.synchronize()
    with stream:
        stream.begin_capture()
        step()
        graph = stream.end_capture()
    graph.upload(stream)
    return lambda: graph.launch(stream)


def child(name, walk_module, framework):
    """Times, in this process, the walk's graph and a marker graph, both captured on one stream
    (a new stream of their own would itself move the process)."""
    import torch
    res = {"walk": name}
    if name not in ("none", "none_cupy"):
        step, framework = build_from(walk_module, name)
    if framework == "cupy":
        import cupy as cp
        stream = cp.cuda.Stream(non_blocking=True)
        capture = capture_cupy
        z = cp.zeros(1, dtype=cp.float32)

        def marker_step():
            for _ in range(MARKER_NODES):
                cp.add(z, 1, out=z)
    else:
        stream = torch.cuda.Stream()

        def capture(step, stream):
            return capture_torch(step, stream).replay
        z = torch.zeros(1, device="cuda")

        def marker_step():
            for _ in range(MARKER_NODES):
                z.add_(1)
    res["framework"] = framework
    replays = {}
    if name not in ("none", "none_cupy"):
        replays["walk"] = capture(step, stream)
        for _ in range(5):
            replays["walk"]()
        res["walk_as_captured_ms"] = replay_ms(replays["walk"], batches=9)
    replays["marker"] = capture(marker_step, stream)
    for _ in range(5):
        replays["marker"]()

    def time_all(label):
        for g, replay in replays.items():
            ms = replay_ms(replay, batches=9)
            res[f"{g}_{label}_ms"] = ms
            if g == "marker":
                res[f"marker_{label}_us_per_node"] = ms * 1e3 / MARKER_NODES

    time_all("beside_marker")
    launch_on_other_stream(framework)
    time_all("after_other_stream")
    print(json.dumps(res))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--walks", required=True)
    ap.add_argument("--walk-module", default="")
    ap.add_argument("--out", required=True)
    ap.add_argument("--child", default="")
    a = ap.parse_args()
    if a.child:
        child(a.child, a.walk_module, "cupy" if a.child == "none_cupy" else "torch")
        return
    runs = []
    for name in a.walks.split(","):
        p = subprocess.run([sys.executable, __file__, "--child", name, "--walks", name,
                            "--walk-module", a.walk_module, "--out", a.out],
                           capture_output=True, text=True)
        if p.returncode != 0:
            runs.append({"walk": name, "error": p.stderr[-2000:]})
        else:
            runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
        print(json.dumps(runs[-1]), flush=True)
    import torch
    with open(a.out, "w") as f:
        json.dump({"what": "scripts/level_marker_probe.py, median ms per graph replay "
                           "(9 batches of 20, unprofiled)",
                   "device": torch.cuda.get_device_name(0), "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
