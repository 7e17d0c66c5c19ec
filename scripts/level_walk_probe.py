#!/usr/bin/env python3
"""Where a real walk's graph sits between the per-node cost levels, step by step: one of
validate.py's walks is built and captured as validate.py does, and its graph timed (unprofiled)
first, after eager steps, then after 1 and 10 small kernels on a new stream, and after 32 on a
second new stream; at each stage also the GPU time of summing 512 MiB (HBM) and 8 MiB (L2).

    python3 scripts/level_walk_probe.py WALK
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate  # noqa: E402

import torch  # noqa: E402


def main(name):
    step, kind = validate.build(name)
    assert kind == "torch", "torch walks only"
    graph = validate.capture_torch(step, torch.cuda.Stream())
    graph.replay()
    torch.cuda.synchronize()

    big = torch.empty(1 << 28, device="cuda", dtype=torch.float16)  # 512 MiB, beyond any cache
    small = torch.empty(1 << 22, device="cuda", dtype=torch.float16)  # 8 MiB, L2-resident

    def read_us(t, reps=15):
        """Median GPU time of summing `t` (events), µs: HBM (big) or L2 (small) bandwidth."""
        out = []
        for _ in range(reps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            t.sum()
            b.record()
            b.synchronize()
            out.append(a.elapsed_time(b) * 1e3)
        return round(statistics.median(out), 2)

    def stage(label):
        r[label] = {"graph_ms": round(validate.replay_ms(graph.replay), 4),
                    "sum_512MiB_us": read_us(big),
                    "sum_8MiB_us": read_us(small)}

    def on_new_stream(n, s=None):
        s = s or torch.cuda.Stream()
        z = torch.zeros(1, device="cuda")
        with torch.cuda.stream(s):
            for _ in range(n):
                z.add_(1)
        s.synchronize()
        return s

    r = {"walk": name}
    stage("first")
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    stage("after 20 eager steps")
    s1 = on_new_stream(1)
    stage("after 1 kernel on a new stream")
    on_new_stream(10, s1)
    stage("after 10 more there")
    on_new_stream(32)
    stage("after 32 on a second new stream")
    print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
