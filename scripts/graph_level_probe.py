#!/usr/bin/env python3
"""The two per-node cost levels of CUDA graphs on one GPU, and what moves a process between them.

Raw CuPy kernels, unprofiled, 300-node graphs on one stream, each experiment in a process of
its own (a graph destroyed unlaunched keeps its process at the upper level for good):

1. uploads: a graph that is uploaded (cuGraphUpload) and not launched moves every graph of
   the process to the upper level until its first launch — for good if it is destroyed first;
2. other stream: a graph whose stream launched many kernels before it was built, timed before
   and after one / ten kernels on another stream;
3. kernel kinds at both levels: the difference does not depend on what the kernel does.

See `crates/launch-econ/src/other_stream.rs`.

    python3 scripts/graph_level_probe.py
"""
import json
import subprocess
import sys
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


class Rig:
    """The kernels, a buffer and the graphs' stream."""

    def __init__(self):
        mod = cp.RawModule(code=SRC)
        self.fns = {k: mod.get_function(k) for k in ("empty", "write", "rd", "spin")}
        self.x = cp.zeros(1 << 22, dtype=cp.float32)
        self.stream = cp.cuda.Stream(non_blocking=True)

    def launch(self, kind="empty, 1 block", block=128):
        name, grid, arg = KINDS[kind]
        self.fns[name]((grid,), (block,), (self.x, cp.int32(arg)))

    def eager(self, n, stream=None):
        """n empty kernels on `stream` (default: the graphs' stream), waited for."""
        s = stream or self.stream
        with s:
            for _ in range(n):
                self.launch(block=1 if stream else 128)
        s.synchronize()

    def capture(self, kind="empty, 1 block", upload=True):
        with self.stream:
            self.stream.begin_capture()
            for _ in range(NODES):
                self.launch(kind)
            g = self.stream.end_capture()
        if upload:
            g.upload(self.stream)
        self.stream.synchronize()
        return g

    def us(self, g, reps=10, batches=5):
        """Median replay time per node, µs."""
        g.launch(self.stream)
        self.stream.synchronize()
        out = []
        for _ in range(batches):
            t = time.perf_counter()
            for _ in range(reps):
                g.launch(self.stream)
            self.stream.synchronize()
            out.append((time.perf_counter() - t) * 1e6 / reps / NODES)
        return round(sorted(out)[batches // 2], 4)


def uploads():
    rig = Rig()
    g1 = rig.capture()
    r = {"alone": rig.us(g1)}
    g2 = rig.capture()
    r["another graph uploaded, not launched"] = rig.us(g1)
    g2.launch(rig.stream)
    rig.stream.synchronize()
    r["after its first launch"] = rig.us(g1)
    g3 = rig.capture(upload=False)
    r["another graph instantiated, not uploaded"] = rig.us(g1)
    del g3
    g4 = rig.capture()
    del g4
    r["another graph uploaded, destroyed unlaunched"] = rig.us(g1)
    return r


def other_stream():
    rig = Rig()
    rig.eager(900)
    g = rig.capture()
    r = {"900 kernels on its stream before capture": rig.us(g)}
    s2 = cp.cuda.Stream(non_blocking=True)
    rig.eager(1, s2)
    r["after 1 kernel on another stream"] = rig.us(g)
    rig.eager(10, s2)
    r["after 10 more"] = rig.us(g)
    return r


def kinds():
    rig = Rig()
    graphs = {k: rig.capture(k) for k in KINDS}
    for g in graphs.values():  # every graph launched once: nothing uploaded is pending
        g.launch(rig.stream)
    rig.stream.synchronize()
    lower = {k: rig.us(g) for k, g in graphs.items()}
    pending = rig.capture()  # uploaded, never launched, then destroyed
    del pending
    upper = {k: rig.us(g) for k, g in graphs.items()}
    return {k: {"lower_us": lower[k], "upper_us": upper[k],
                "difference_us": round(upper[k] - lower[k], 4)} for k in KINDS}


EXPERIMENTS = {"uploads": uploads, "other-stream": other_stream, "kinds": kinds}

if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(json.dumps({sys.argv[1]: EXPERIMENTS[sys.argv[1]]()}, indent=1), flush=True)
    else:
        for name in EXPERIMENTS:
            subprocess.run([sys.executable, __file__, name], check=True)
