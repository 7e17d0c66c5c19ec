#!/usr/bin/env python3
"""Where a real walk's graph sits between the per-node cost levels, step by step: one of
validate.py's walks is built and captured as validate.py does, and its graph timed (unprofiled)
first, after eager steps, then after 1, 10 and 32 small kernels on a new stream, and after 32
on a second new stream.

    python3 scripts/level_walk_probe.py WALK
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate  # noqa: E402

import torch  # noqa: E402


def main(name):
    step, kind = validate.build(name)
    assert kind == "torch", "torch walks only"
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(5):
            step()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        step()
    torch.cuda.synchronize()
    graph.replay()
    torch.cuda.synchronize()

    def timed(reps=20, batches=7):
        out = []
        for _ in range(batches):
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(reps):
                graph.replay()
            torch.cuda.synchronize()
            out.append((time.perf_counter() - t) * 1e3 / reps)
        return round(statistics.median(out), 4)

    def on_new_stream(n, s=None):
        s = s or torch.cuda.Stream()
        z = torch.zeros(1, device="cuda")
        with torch.cuda.stream(s):
            for _ in range(n):
                z.add_(1)
        s.synchronize()
        return s

    r = {"walk": name, "first": timed()}
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    r["after 20 eager steps"] = timed()
    s1 = on_new_stream(1)
    r["after 1 kernel on a new stream"] = timed()
    on_new_stream(10, s1)
    r["after 10 more there"] = timed()
    on_new_stream(32, s1)
    r["after 32 more there"] = timed()
    on_new_stream(32)
    r["after 32 on a second new stream"] = timed()
    print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
