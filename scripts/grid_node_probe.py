#!/usr/bin/env python3
"""What a graph node costs beyond its kernel's profiled duration, by grid size.

A memory kernel (y = 1.0001 x + 0.5, one float per thread) at 8 … 16896 blocks of 128, 256
and 512 threads: its graph node time, unprofiled (graphs of 80 and of 40 launches, the
difference over 40, at the upper level of per-node cost: kernels on another stream first,
see crates/launch-econ/src/other_stream.rs), against its duration profiled by CUPTI
(torch.profiler) in eager launches one at a time, as a recording sees it. The replay and the
offline model plan every node at its profiled duration + one gap measured with one-block
kernels; this shows how far that holds as grids grow.

    python3 scripts/grid_node_probe.py OUT.json
"""
import json
import os
import statistics
import sys
import time

import cupy as cp
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import launch_on_other_stream  # noqa: E402
SRC = r"""
extern "C" __global__ void mem(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 1.0001f + 0.5f;
}
"""
GRIDS = [8, 66, 132, 264, 528, 1056, 2112, 4224, 8448, 16896]
THREADS = [128, 256, 512]


def launcher(kernel, bufs, threads, blocks):
    """Launch i of the memory kernel on torch's current stream (ping-pong between buffers)."""
    def one(i):
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            kernel((blocks,), (threads,),
                   (bufs[i % 2], bufs[1 - i % 2], cp.int32(blocks * threads)))
    return one


def graph_of(fn, n):
    """`n` launches of `fn`, warmed up and captured as a torch.cuda.CUDAGraph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(n):
            fn(i)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        for i in range(n):
            fn(i)
    torch.cuda.synchronize()
    return g


def wall_us(g, reps=20, batches=7):
    """Median wall time of one replay, us."""
    out = []
    for _ in range(batches):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(reps):
            g.replay()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t) * 1e6 / reps)
    return statistics.median(out)


def profiled_us(cases, launchers):
    """Median CUPTI duration of each case's kernel, launched eagerly one at a time."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for c in cases:
            for i in range(10):
                launchers[c](i)
                torch.cuda.synchronize()
    path = "/tmp/grid_node_probe.json"
    p.export_chrome_trace(path)
    with open(path) as f:
        ev = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel"]
    return {c: statistics.median([e["dur"] for e in ev if e["args"]["block"][0] == c[0]
                                  and e["args"]["grid"][0] == c[1]][2:]) for c in cases}


def main():
    kernel = cp.RawKernel(SRC, "mem")
    bufs = [cp.zeros(max(GRIDS) * max(THREADS), dtype=cp.float32) for _ in range(2)]
    launch_on_other_stream("torch")  # the upper level, where framework processes run
    cases = [(t, b) for t in THREADS for b in GRIDS]
    launchers = {c: launcher(kernel, bufs, *c) for c in cases}
    node = {}
    for c in cases:
        g40, g80 = graph_of(launchers[c], 40), graph_of(launchers[c], 80)
        for _ in range(2):
            g40.replay()
            g80.replay()
        node[c] = (wall_us(g80) - wall_us(g40)) / 40
    # Only now the profiler (it slows launches for the rest of the process).
    prof = profiled_us(cases, launchers)
    res = []
    for c in cases:
        t, b = c
        res.append({"threads": t, "blocks": b, "graph_node_unprofiled_us": node[c],
                    "eager_profiled_us": prof[c], "node_minus_profiled_us": node[c] - prof[c]})
        print(f"{t:5d} threads {b:6d} blocks: node {node[c]:7.3f} us, eager profiled "
              f"{prof[c]:7.3f} us, node - profiled {node[c] - prof[c]:+.3f} us")
    with open(sys.argv[1], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(0), "cases": res}, f, indent=1)


if __name__ == "__main__":
    main()
