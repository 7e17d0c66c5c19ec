#!/usr/bin/env python3
"""What a CUDA graph node costs before and after another stream launches kernels (CuPy).

Builds 300-node graphs of raw kernels of several kinds on one stream that has already
launched kernels, times them (unprofiled), then launches kernels on a second stream and
times fresh captures of the same graphs. Also checks the conditions: a graph captured before
its stream launched anything, and one kernel on the other stream instead of ten or more.
See `crates/launch-econ/src/other_stream.rs`.

    python3 scripts/other_stream_probe.py
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
CASES = {"empty, 1 block": ("empty", 1, 0), "write, 1 block": ("write", 1, 0),
         "write, 132 blocks": ("write", 132, 0), "read 1 MiB, 132 blocks": ("rd", 132, 1 << 18),
         "spin ~2 us, 1 block": ("spin", 1, 4000), "spin ~2 us, 132 blocks": ("spin", 132, 4000)}


def main():
    mod = cp.RawModule(code=SRC)
    fns = {k: mod.get_function(k) for k in ("empty", "write", "rd", "spin")}
    x = cp.zeros(1 << 22, dtype=cp.float32)
    s1 = cp.cuda.Stream(non_blocking=True)

    def launch(name, grid, arg, block=128):
        fns[name]((grid,), (block,), (x, cp.int32(arg)))

    def capture(case):
        with s1:
            s1.begin_capture()
            for _ in range(NODES):
                launch(*CASES[case])
            g = s1.end_capture()
        g.upload(s1)
        return g

    def per_node_us(g, reps=20, batches=7):
        for _ in range(3):
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

    def on_other_stream(launches):
        s2 = cp.cuda.Stream(non_blocking=True)
        with s2:
            for _ in range(launches):
                launch("empty", 1, 0, block=1)
        s2.synchronize()

    # Captured before its stream launched anything: not affected afterwards.
    early = capture("empty, 1 block")
    with s1:
        for _ in range(200):
            launch("empty", 1, 0)
    s1.synchronize()
    quiet = {c: per_node_us(capture(c)) for c in CASES}
    early_quiet = per_node_us(early)
    one = capture("empty, 1 block")
    on_other_stream(1)
    after_one = per_node_us(one)
    on_other_stream(32)
    active = {c: per_node_us(capture(c)) for c in CASES}
    rows = {c: {"quiet_us": round(quiet[c], 4), "other_stream_active_us": round(active[c], 4),
                "extra_us": round(active[c] - quiet[c], 4)} for c in CASES}
    rows["captured before its stream launched anything"] = {
        "quiet_us": round(early_quiet, 4), "after_32_on_other_stream_us": round(per_node_us(early), 4)}
    rows["after one kernel on the other stream"] = {
        "quiet_us": round(quiet["empty, 1 block"], 4), "after_one_us": round(after_one, 4)}
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
