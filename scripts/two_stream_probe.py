#!/usr/bin/env python3
"""Where does the two-stream validation walk's graph time go: one chain, two chains side by
side, or the same two chains one after the other?

The walk (`scripts/validate.py`, `two_streams`): two chains of 16 × (fp16 8 × 1024 @ 1024 ×
1024, then relu / tanh), forked from the main stream and joined back, then one add. Each
variant is captured with `torch.cuda.CUDAGraph` and replayed unprofiled, interleaved (medians
of batches), at the level the process starts at and again after kernels on another stream
(the upper level of per-node graph cost, see `crates/launch-econ/src/other_stream.rs`):

* `one chain`: chain A alone on a side stream;
* `two chains side by side`: the walk as validated;
* `two chains one after the other`: both chains on one side stream.

Compare with `launch-econ replay TRACE --stream S` (one recorded chain) and the full replay.

    python3 scripts/two_stream_probe.py [--out FILE.json]
"""
import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import capture_torch, launch_on_other_stream, replay_ms  # noqa: E402

D, LAYERS = 1024, 16


def variants():
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    wa = [torch.randn(D, D, device="cuda", dtype=torch.float16) * 0.03 for _ in range(LAYERS)]
    wb = [torch.randn(D, D, device="cuda", dtype=torch.float16) * 0.03 for _ in range(LAYERS)]
    x = torch.randn(8, D, device="cuda", dtype=torch.float16)

    def chain(ws, act):
        y = x
        for w in ws:
            y = act(y @ w)
        return y

    def fork(work):
        main = torch.cuda.current_stream()
        for s in (s1, s2):
            s.wait_stream(main)
        out = work()
        for s in (s1, s2):
            main.wait_stream(s)
        return out

    def one():
        def work():
            with torch.cuda.stream(s1):
                return chain(wa, torch.relu)
        return fork(work)

    def both():
        def work():
            with torch.cuda.stream(s1):
                a = chain(wa, torch.relu)
            with torch.cuda.stream(s2):
                b = chain(wb, torch.tanh)
            return a, b
        a, b = fork(work)
        return a + b

    def serial():
        def work():
            with torch.cuda.stream(s1):
                return chain(wa, torch.relu) + chain(wb, torch.tanh)
        return fork(work)

    return {"one chain": one, "two chains side by side": both,
            "two chains one after the other": serial}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    args = ap.parse_args()
    stream = torch.cuda.Stream()
    graphs = {}
    for name, step in variants().items():
        for _ in range(3):
            step()
        torch.cuda.synchronize()
        graphs[name] = capture_torch(step, stream)
    res = {}
    for level in ("first", "upper"):
        if level == "upper":
            launch_on_other_stream("torch")
        samples = {k: [] for k in graphs}
        for _ in range(5):
            for k, g in graphs.items():
                samples[k].append(replay_ms(g.replay, reps=20, batches=3))
        for k, v in samples.items():
            res.setdefault(k, {})[level + "_ms"] = statistics.median(v)
    for k, v in res.items():
        print(f"{k:>32}: first {v['first_ms']:.4f} ms, upper {v['upper_ms']:.4f} ms")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "variants": res}, f, indent=1)


if __name__ == "__main__":
    main()
