#!/usr/bin/env python3
"""What a byte memset costs a CUDA graph, by its size and alignment, unprofiled.

A captured `cudaMemsetAsync` becomes a graph memset node; the driver runs some as kernels
(`memset32`, `memset8`) and keeps others as memset nodes ("Memset (Unknown)" in a profiled
replay). Here one to twenty memsets of SIZE bytes at byte offset OFF of a device buffer, each
after a small element-wise kernel, are captured with CuPy and replayed 200 times a batch
(medians of 7 batches, CUDA events); each memset's cost is the graph's time less that of the
same kernels alone, over the memsets. One replay of each single-memset graph is then profiled
to show which memsets ran as kernels.

    python3 scripts/memset_node_probe.py --out DIR
"""
import argparse
import json
import os
import statistics

import cupy as cp

SIZES = (100, 3328, 4096, 65536)
OFFSETS = (0, 1, 2, 4, 8, 16, 256)


def capture(x, buf, kernel, size, off, n):
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        y = x
        s.begin_capture()
        for _ in range(n):
            y = kernel(y)
            if size:
                cp.cuda.runtime.memsetAsync(buf.data.ptr + off, 0, size, s.ptr)
        g = s.end_capture()
    g.upload(s)
    s.synchronize()
    return g, s


def timed(g, s, reps=200):
    ts = []
    for _ in range(7):
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record(s)
        for _ in range(reps):
            g.launch(s)
        e1.record(s)
        e1.synchronize()
        ts.append(cp.cuda.get_elapsed_time(e0, e1) / reps * 1e3)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    buf = cp.zeros(1 << 22, dtype=cp.uint8)
    x = cp.random.random(4096, dtype=cp.float32)
    kernel = cp.ElementwiseKernel("float32 a", "float32 b", "b = a * 1.0001f", "scale")
    graphs = {}
    for n in (1, 20):
        graphs[(0, 0, n)] = capture(x, buf, kernel, 0, 0, n)
        for size in SIZES:
            for off in OFFSETS:
                graphs[(size, off, n)] = capture(x, buf, kernel, size, off, n)
    base = {n: timed(*graphs[(0, 0, n)]) for n in (1, 20)}
    rows = []
    for (size, off, n), (g, s) in graphs.items():
        if size:
            t = timed(g, s)
            rows.append(dict(size=size, offset=off, memsets=n, graph_us=t, base_us=base[n],
                             per_memset_us=(t - base[n]) / n))
            print(rows[-1], flush=True)
    # Which ran as kernels: one profiled replay of each single-memset graph, in order.
    import torch
    from torch.profiler import profile, ProfilerActivity
    order = [k for k in graphs if k[2] == 1 and k[0]]
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for k in order:
            g, s = graphs[k]
            g.launch(s)
            s.synchronize()
        torch.cuda.synchronize()
    trace = os.path.join(args.out, "memset_node_trace.json")
    p.export_chrome_trace(trace)
    ev = sorted((e for e in json.load(open(trace))["traceEvents"]
                 if e.get("cat") in ("kernel", "gpu_memset") and e["name"] != "scale"),
                key=lambda e: e["ts"])
    ran_as = {f"{k[0]}@{k[1]}": e["name"] for k, e in zip(order, ev)}
    json.dump(dict(device=cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                   base_us=base, rows=rows, ran_as=ran_as),
              open(os.path.join(args.out, "memset-nodes.json"), "w"), indent=1)
    print(ran_as)


if __name__ == "__main__":
    main()
