#!/usr/bin/env python3
"""Which level of per-node graph cost (docs/validation-h200.md, "Two levels") is a walk's
process at? A marker graph of 300 one-element PyTorch adds, timed in the walk's process beside
the walk's own graph, says so: its µs per node is the process's level, whatever the walk's
kernels do.

One process per walk (`validate.py`'s walks, or `--walk-module`'s; `none`: the marker alone).
The walk is built, warmed up and captured as `validate.py` does, its graph timed as first
replayed ("as captured"), then the marker captured and both timed, then both again after 32
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


def child(name, walk_module):
    import torch
    res = {"walk": name}
    graphs = {}
    if name != "none":
        step, kind = build_from(walk_module, name)
        if kind != "torch":
            raise SystemExit(f"{name}: only PyTorch-driven walks ({kind})")
        graphs["walk"] = capture_torch(step, torch.cuda.Stream())
        for _ in range(5):
            graphs["walk"].replay()
        res["walk_as_captured_ms"] = replay_ms(graphs["walk"].replay, batches=9)
    z = torch.zeros(1, device="cuda")

    def marker_step():
        for _ in range(MARKER_NODES):
            z.add_(1)

    graphs["marker"] = capture_torch(marker_step, torch.cuda.Stream())
    for _ in range(5):
        graphs["marker"].replay()

    def time_all(label):
        for g, graph in graphs.items():
            ms = replay_ms(graph.replay, batches=9)
            res[f"{g}_{label}_ms"] = ms
            if g == "marker":
                res[f"marker_{label}_us_per_node"] = ms * 1e3 / MARKER_NODES

    time_all("beside_marker")
    launch_on_other_stream("torch")
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
        child(a.child, a.walk_module)
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
