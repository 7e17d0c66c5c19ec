"""Does a kernel's shared memory change what its graph node costs?

Real decode walks alternate GEMMs that take ~160 KiB of dynamic shared memory per block with
element-wise kernels that take none. On an SM the L1 / shared-memory split is set per kernel
(the carveout), so a kernel that needs a different split than its predecessor may wait for
the SM to be reconfigured. This probe captures graphs of N pairs of spin kernels (a "long"
one spinning LONG_NS, a "short" one spinning SHORT_NS, recorded-walk shapes) with chosen
dynamic shared memory per kernel, and prints the GPU time per pair (CUDA events, median of
batches) for each combination, interleaved, plus each pair's spans from globaltimer stamps.

    python3 scripts/carveout_probe.py [--out FILE.json]
"""
import argparse
import json
import statistics

import cupy as cp

SRC = r"""
extern "C" __global__ void spin(unsigned long long ns, unsigned long long* out) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
    if (threadIdx.x == 0 && blockIdx.x == 0 && out) out[0] = now - start;
}
"""

PAIRS = 64
LONG_NS, SHORT_NS = 3000, 300
LONG_SHAPE, SHORT_SHAPE = ((16,), (384,)), ((8,), (128,))
KIB = 1024
CASES = {
    "none/none": (0, 0),
    "164K/none": (164 * KIB, 0),
    "none/164K": (0, 164 * KIB),
    "164K/164K": (164 * KIB, 164 * KIB),
    "48K/none": (48 * KIB, 0),
    "100K/none": (100 * KIB, 0),
    "200K/none": (200 * KIB, 0),
}


def build(kernel, smem_long, smem_short, sink):
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        for _ in range(PAIRS):
            kernel(LONG_SHAPE[0], LONG_SHAPE[1], (cp.uint64(LONG_NS), sink), shared_mem=smem_long)
            kernel(SHORT_SHAPE[0], SHORT_SHAPE[1], (cp.uint64(SHORT_NS), sink), shared_mem=smem_short)
        g = s.end_capture()
    g.upload(s)
    return g, s


def time_us(g, s, reps=20):
    a, b = cp.cuda.Event(), cp.cuda.Event()
    g.launch(s)
    s.synchronize()
    a.record(s)
    for _ in range(reps):
        g.launch(s)
    b.record(s)
    b.synchronize()
    return cp.cuda.get_elapsed_time(a, b) * 1e3 / reps / PAIRS


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--batches", type=int, default=15)
    args = ap.parse_args()
    mod = cp.RawModule(code=SRC)
    k = mod.get_function("spin")
    k.max_dynamic_shared_size_bytes = 227 * KIB
    sink = cp.zeros(1, dtype=cp.uint64)
    graphs = {name: build(k, a, b, sink) for name, (a, b) in CASES.items()}
    samples = {name: [] for name in CASES}
    for _ in range(args.batches):
        for name, (g, s) in graphs.items():
            samples[name].append(time_us(g, s))
    base = statistics.median(samples["none/none"])
    res = {}
    for name, v in samples.items():
        m = statistics.median(v)
        res[name] = {"us_per_pair": m, "min": min(v), "max": max(v), "extra_us": m - base}
        print(f"{name:>10}: {m:7.3f} us per pair (min {min(v):.3f}, max {max(v):.3f}); "
              f"{m - base:+.3f} vs none/none")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                       "pairs": PAIRS, "long_ns": LONG_NS, "short_ns": SHORT_NS,
                       "cases": res}, f, indent=1)


if __name__ == "__main__":
    main()
