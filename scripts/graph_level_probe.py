#!/usr/bin/env python3
"""The two per-node cost levels of CUDA graphs on one GPU, and what moves a process between them.

Raw CuPy kernels, unprofiled, 300-node graphs on one stream. Three experiments:

1. uploads: a graph that is uploaded (cuGraphUpload) and not launched moves every graph of
   the process to the upper level until its first launch — for good if it is destroyed first;
2. other stream: a graph whose stream launched many kernels before it was built, timed before
   and after one / ten kernels on another stream;
3. kernel kinds at both levels: the difference does not depend on what the kernel does.

See `crates/launch-econ/src/other_stream.rs`.

    python3 scripts/graph_level_probe.py
"""
import json
import time

import cupy as cp

SRC = r'''
extern "C" __global__ void empty(float* x, int n) { if (threadIdx.x == 100000) x[0] = 1; }
extern "C" __global__ void write(float* x, int n) { x[blockIdx.x * blockDim.x + threadIdx.x] = n; }
extern "C" __global__ void rd(float* x, int n) {
    float s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += x[i];
    if (s == -1.0f) x[0] = s;
}
extern "C" __global__ void spin(float* x, int n) { long long t0 = clock64(); while (clock64() - t0 < n) {} }
'''
NODES = 300
KINDS = {"empty, 1 block": ("empty", 1, 0), "write, 1 block": ("write", 1, 0),
         "write, 132 blocks": ("write", 132, 0), "read 1 MiB, 132 blocks": ("rd", 132, 1 << 18),
         "spin ~2 us, 1 block": ("spin", 1, 4000), "spin ~2 us, 132 blocks": ("spin", 132, 4000)}


def main():
    mod = cp.RawModule(code=SRC)
    fns = {k: mod.get_function(k) for k in ("empty", "write", "rd", "spin")}
    x = cp.zeros(1 << 22, dtype=cp.float32)
    s1 = cp.cuda.Stream(non_blocking=True)

    def launch(name, grid, arg, block=128):
        fns[name]((grid,), (block,), (x, cp.int32(arg)))

    def capture(kind="empty, 1 block", upload=True):
        with s1:
            s1.begin_capture()
            for _ in range(NODES):
                launch(*KINDS[kind])
            g = s1.end_capture()
        if upload:
            g.upload(s1)
        s1.synchronize()
        return g

    def us(g, reps=10, batches=5):
        g.launch(s1)
        s1.synchronize()
        out = []
        for _ in range(batches):
            t = time.perf_counter()
            for _ in range(reps):
                g.launch(s1)
            s1.synchronize()
            out.append((time.perf_counter() - t) * 1e6 / reps / NODES)
        return round(sorted(out)[batches // 2], 4)

    def on_other_stream(n):
        s2 = cp.cuda.Stream(non_blocking=True)
        with s2:
            for _ in range(n):
                launch("empty", 1, 0, block=1)
        s2.synchronize()

    out = {}
    # 1. Uploads.
    g1 = capture()
    up = {"alone": us(g1)}
    g2 = capture()
    up["another graph uploaded, not launched"] = us(g1)
    g2.launch(s1)
    s1.synchronize()
    up["after its first launch"] = us(g1)
    g3 = capture(upload=False)
    up["another graph instantiated, not uploaded"] = us(g1)
    del g3
    g4 = capture()
    del g4
    up["another graph uploaded, destroyed unlaunched"] = us(g1)
    out["1 uploads: per node us of one graph"] = up
    print(json.dumps(out, indent=1), flush=True)
    # The destroyed graph keeps this process at the upper level: 2 and 3 run in their own.


def other_stream():
    """Experiment 2 in its own process (CuPy keeps one context per device)."""
    mod = cp.RawModule(code=SRC)
    f = mod.get_function("empty")
    x = cp.zeros(4, dtype=cp.float32)
    s1 = cp.cuda.Stream(non_blocking=True)
    with s1:
        for _ in range(900):
            f((1,), (128,), (x, cp.int32(0)))
        s1.synchronize()
        s1.begin_capture()
        for _ in range(NODES):
            f((1,), (128,), (x, cp.int32(0)))
        g = s1.end_capture()
    g.upload(s1)

    def us(reps=10, batches=5):
        g.launch(s1)
        s1.synchronize()
        out = []
        for _ in range(batches):
            t = time.perf_counter()
            for _ in range(reps):
                g.launch(s1)
            s1.synchronize()
            out.append((time.perf_counter() - t) * 1e6 / reps / NODES)
        return round(sorted(out)[batches // 2], 4)
    r = {"900 kernels on its stream before capture": us()}
    s2 = cp.cuda.Stream(non_blocking=True)
    for n, label in ((1, "after 1 kernel on another stream"), (10, "after 10 more")):
        with s2:
            for _ in range(n):
                f((1,), (1,), (x, cp.int32(0)))
        s2.synchronize()
        r[label] = us()
    return r


def kinds():
    """Experiment 3 in its own process: every kind quiet, then at the upper level."""
    mod = cp.RawModule(code=SRC)
    fns = {k: mod.get_function(k) for k in ("empty", "write", "rd", "spin")}
    x = cp.zeros(1 << 22, dtype=cp.float32)
    s1 = cp.cuda.Stream(non_blocking=True)

    def capture(kind, upload=True):
        name, grid, arg = KINDS[kind]
        with s1:
            s1.begin_capture()
            for _ in range(NODES):
                fns[name]((grid,), (128,), (x, cp.int32(arg)))
            g = s1.end_capture()
        if upload:
            g.upload(s1)
        s1.synchronize()
        return g

    def us(g, reps=10, batches=5):
        g.launch(s1)
        s1.synchronize()
        out = []
        for _ in range(batches):
            t = time.perf_counter()
            for _ in range(reps):
                g.launch(s1)
            s1.synchronize()
            out.append((time.perf_counter() - t) * 1e6 / reps / NODES)
        return sorted(out)[batches // 2]
    graphs = {k: capture(k) for k in KINDS}
    for g in graphs.values():  # every graph launched once: nothing uploaded is pending
        g.launch(s1)
    s1.synchronize()
    lower = {k: us(g) for k, g in graphs.items()}
    pending = capture("empty, 1 block")  # uploaded, never launched, then destroyed
    del pending
    upper = {k: us(g) for k, g in graphs.items()}
    return {k: {"lower_us": round(lower[k], 4), "upper_us": round(upper[k], 4),
                "difference_us": round(upper[k] - lower[k], 4)} for k in KINDS}


if __name__ == "__main__":
    import sys
    if len(sys.argv) > 1 and sys.argv[1] == "--other-stream":
        print(json.dumps({"2 other stream: per node us": other_stream()}, indent=1))
    elif len(sys.argv) > 1 and sys.argv[1] == "--kinds":
        print(json.dumps({"3 kinds": kinds()}, indent=1))
    else:
        main()
        import subprocess
        for arg in ("--other-stream", "--kinds"):
            subprocess.run([sys.executable, __file__, arg], check=True)
