#!/usr/bin/env python3
"""What does reading memory add to a graph node beyond the node's own duration?

Graphs of 128 nodes of one kernel that reads `B` bytes (each node its own region of a 1 GiB
buffer, so every replay reads from HBM; or, for contrast, every node the same 2 MiB, which
stays in L2) and then spins until 4 µs after its block started, so that every node lasts
about as long whatever it read (unless the read itself takes longer). Per-node replay time
for each `B` and two shapes (16 × 384, the two-stream validation walk's GEMMs; 132 × 256),
timed, then timed again after 32 kernels on another stream (which moves a process whose
graph stream had launched many kernels before capture to the upper level of per-node cost;
see `crates/launch-econ/src/other_stream.rs`).

H200 (`docs/hbm-touch-h200.json`): the second timing did not move (steps within ±0.02 µs;
the graphs' stream launched nothing before capture), so the process stayed at one level; at
it, a node that read 16 KiB cost 0.15–0.17 µs more than one that read nothing, about the same
up to 2 MiB (while the read hid inside the 4 µs), and 2 MiB read again from L2 by 132 blocks
0.18 µs more. Whether a profiler counts that in the reading kernel's duration (which spin
stand-ins are matched to) is not measured here.

    python3 scripts/hbm_touch_probe.py [--out FILE.json]
"""
import argparse
import json
import time

import cupy as cp

SRC = r"""
extern "C" __global__ void touch_spin(const float4* __restrict__ src, unsigned long long n16,
                                      unsigned long long ns, float* sink) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    unsigned long long blocks = gridDim.x, b = blockIdx.x;
    unsigned long long end = n16 * (b + 1) / blocks;
    float acc = 0.f;
    for (unsigned long long i = n16 * b / blocks + threadIdx.x; i < end; i += blockDim.x) {
        float4 v = src[i];
        acc += v.x + v.y + v.z + v.w;
    }
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
    if (acc == -1.5f) sink[0] = acc;
}
"""
NODES = 128
SPIN_NS = 4000
ARENA = 1 << 30
SIZES = [0, 16 << 10, 256 << 10, 2 << 20, 8 << 20]
SHAPES = {"16x384": (16, 384), "132x256": (132, 256)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    args = ap.parse_args()
    fn = cp.RawModule(code=SRC).get_function("touch_spin")
    arena = cp.zeros(ARENA // 4, dtype=cp.float32)
    sink = cp.zeros(1, dtype=cp.float32)
    stream = cp.cuda.Stream(non_blocking=True)

    def capture(shape, b, fresh=True):
        grid, block = SHAPES[shape]
        with stream:
            stream.begin_capture()
            for i in range(NODES):
                off = (i * b) % ARENA if fresh else 0
                ptr = arena.data.ptr + off
                fn((grid,), (block,), (cp.uint64(ptr), cp.uint64(b // 16), cp.uint64(SPIN_NS), sink))
            g = stream.end_capture()
        g.upload(stream)
        g.launch(stream)  # launched at once: nothing uploaded stays pending
        stream.synchronize()
        return g

    def us(g, reps=10, batches=7):
        g.launch(stream)
        stream.synchronize()
        out = []
        for _ in range(batches):
            t = time.perf_counter()
            for _ in range(reps):
                g.launch(stream)
            stream.synchronize()
            out.append((time.perf_counter() - t) * 1e6 / reps / NODES)
        return sorted(out)[batches // 2]

    cases = {}
    for shape in SHAPES:
        for b in SIZES:
            cases[f"{shape}, {b >> 10} KiB fresh"] = capture(shape, b)
        cases[f"{shape}, 2048 KiB same region"] = capture(shape, 2 << 20, fresh=False)
    lower = {k: us(g) for k, g in cases.items()}
    # The graphs' stream launched many kernels (the replays); kernels on a new stream now move
    # the process to the upper level (as launch-econ's other_stream::activate does).
    other = cp.cuda.Stream(non_blocking=True)
    with other:
        for _ in range(32):
            fn((1,), (32,), (cp.uint64(arena.data.ptr), cp.uint64(0), cp.uint64(0), sink))
    other.synchronize()
    upper = {k: us(g) for k, g in cases.items()}
    res = {}
    for k in cases:
        res[k] = {"lower_us": lower[k], "upper_us": upper[k], "step_us": upper[k] - lower[k]}
        print(f"{k:>32}: lower {lower[k]:7.3f}  upper {upper[k]:7.3f}  step {upper[k] - lower[k]:+.3f} us/node")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                       "nodes": NODES, "spin_ns": SPIN_NS, "cases": res}, f, indent=1)


if __name__ == "__main__":
    main()
