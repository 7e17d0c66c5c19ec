#!/usr/bin/env python3
"""Does a graph node's upper-level cost depend on the kernel, or only on the process?

`scripts/graph_level_probe.py` found the two per-node levels the same for every kernel it
tried (at most 132 blocks). Real chains of element-wise kernels over a few MB (1024 blocks,
operands in the L2) replayed at the lower level in validation processes where one-block
chains ran at the upper one. Here, in one process: PyTorch chains of `y = y + 1` over several
sizes and raw kernels of 1 and 1024 blocks (empty, a clock spin), all timed unprofiled at
the level the process starts at, after kernels on another stream, and after a graph was
uploaded and destroyed unlaunched (which holds the process at the upper level).

    python3 scripts/grid_level_probe.py [--out FILE]
"""
import argparse
import json
import os
import sys

import cupy as cp
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import launch_on_other_stream, replay_ms  # noqa: E402

NODES = 128
SIZES = {"add 768": 768, "add 64Ki": 1 << 16, "add 256Ki": 1 << 18, "add 1Mi": 1 << 20,
         "add 4Mi": 1 << 22}
SRC = r'''
extern "C" __global__ void empty(float* x, int n) { if (threadIdx.x == 100000) x[0] = 1; }
extern "C" __global__ void spin(float* x, int n) {
    long long t0 = clock64(); while (clock64() - t0 < n) {}
}
extern "C" __global__ void add(const __half* a, __half* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = a[i] + __half(1.0f);
}
'''
RAW = {"empty 1x128": ("empty", 1, 0), "empty 1024x128": ("empty", 1024, 0),
       "spin 1024x128 ~1.5us": ("spin", 1024, 2400), "spin 1x128 ~1.5us": ("spin", 1, 2400),
       "raw add 1Mi 8192x128": ("add", 8192, 1 << 20)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    stream = torch.cuda.Stream()
    graphs = {}
    for name, n in SIZES.items():
        x = torch.zeros(n, dtype=torch.float16, device="cuda")

        def step(x=x):
            y = x
            for _ in range(NODES):
                y = y + 1
            return y
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                step()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=stream):
            step()
        graphs[name] = g.replay
    mod = cp.RawModule(code='#include <cuda_fp16.h>\n' + SRC)
    buf = cp.zeros(1 << 22, dtype=cp.float32)
    h = cp.zeros(2 << 20, dtype=cp.float16)
    cs = cp.cuda.Stream(non_blocking=True)
    for name, (fn, grid, arg) in RAW.items():
        f = mod.get_function(fn)
        with cs:
            cs.begin_capture()
            for i in range(NODES):
                if fn == "add":
                    a, b = (h[:1 << 20], h[1 << 20:]) if i % 2 == 0 else (h[1 << 20:], h[:1 << 20])
                    f((grid,), (128,), (a, b, cp.int32(arg)))
                else:
                    f((grid,), (128,), (buf, cp.int32(arg)))
            cg = cs.end_capture()
        cg.upload(cs)
        graphs[name] = lambda cg=cg: cg.launch(cs)
    for fn in graphs.values():
        fn()
    torch.cuda.synchronize()

    def all_us():
        """Each graph's unprofiled time per node, us (torch.cuda.synchronize waits for the
        CuPy stream's graphs too: it waits for the whole device)."""
        return {k: round(replay_ms(fn) * 1e3 / NODES, 4) for k, fn in graphs.items()}

    res = {"start": all_us()}
    launch_on_other_stream("torch")
    res["after 32 kernels on another stream"] = all_us()
    f = mod.get_function("empty")
    with cs:
        cs.begin_capture()
        for _ in range(4):
            f((1,), (128,), (buf, cp.int32(0)))
        pend = cs.end_capture()
    pend.upload(cs)
    cs.synchronize()
    del pend
    res["after a graph uploaded and destroyed unlaunched"] = all_us()
    res["again"] = all_us()
    states = list(res)
    print(f"{'graph':26s}" + "".join(f"{s[:22]:>24s}" for s in states))
    for k in graphs:
        print(f"{k:26s}" + "".join(f"{res[s][k]:24.4f}" for s in states))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(), "nodes": NODES,
                       "per_node_us": res}, fh, indent=1)


if __name__ == "__main__":
    main()
