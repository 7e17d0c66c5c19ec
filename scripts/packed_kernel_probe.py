#!/usr/bin/env python3
"""How a small kernel slows when another stream's fat blocks hold all SMs but a few.

A holder kernel of K blocks, each taking a whole SM (1024 threads keeping 60 values live fill
its register file; 200 KiB of dynamic shared memory), spins for 300 µs on one stream; 20 µs
after it starts, a small element-wise kernel (g blocks of 128 threads over 64 Ki floats) runs
ten times back to back on another stream. Each launch stamps its first block's start and its
last block's end (%globaltimer). Reported: per (K, g), the median duration and its ratio to
K = 0, the same kernel with every SM free. Results on the H200 and what they mean for the
offline model: docs/validation-h200.md, "Small kernels on the SMs fat blocks leave".

    python3 scripts/packed_kernel_probe.py [--out FILE.json]
"""
import argparse
import json
import statistics

import cupy as cp

SRC = r"""
extern "C" __device__ unsigned long long now() {
    unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t;
}
// 1024 threads keeping 60 values live across the spin fill an SM's register file (and its
// shared memory), so no other kernel's block fits beside one of these blocks.
extern "C" __global__ void __launch_bounds__(1024, 1)
hold(unsigned long long ns, unsigned long long* when) {
    extern __shared__ char s[];
    unsigned v[60];
#pragma unroll
    for (int j = 0; j < 60; j++) v[j] = threadIdx.x * (j + 1);
    unsigned long long t0 = now(), t;
    if (threadIdx.x == 0 && blockIdx.x == 0) when[0] = t0;
    do {
        t = now();
#pragma unroll
        for (int j = 0; j < 60; j++) v[j] = v[j] * 1664525u + (unsigned)t;
    } while (t - t0 < ns);
    unsigned acc = 0;
#pragma unroll
    for (int j = 0; j < 60; j++) acc ^= v[j];
    if (acc == 0x9e3779b9u) s[threadIdx.x] = 1;
    if (threadIdx.x == 0 && blockIdx.x == 0) when[1] = t;
}
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long t0 = now(), t;
    do { t = now(); } while (t - t0 < ns);
}
extern "C" __global__ void add(const float* a, float* b, int n, unsigned long long* st, int i) {
    if (threadIdx.x == 0) atomicMin(&st[2 * i], now());
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x)
        b[k] = a[k] + 1.f;
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(&st[2 * i + 1], now());
}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="packed_kernel_probe.json")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    mod = cp.RawModule(code=SRC)
    hold, spin, add = (mod.get_function(n) for n in ("hold", "spin", "add"))
    smem = 200 * 1024
    hold.max_dynamic_shared_size_bytes = smem
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    n = 64 * 128 * 8
    a = cp.ones(n, dtype=cp.float32)
    b = cp.zeros(n, dtype=cp.float32)
    runs = 10
    st = cp.zeros(2 * runs, dtype=cp.uint64)
    when = cp.zeros(2, dtype=cp.uint64)
    sa, sb = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    res = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "sms": sms,
           "n_floats": n, "holder_smem": smem, "holder_threads": 1024,
           "holder_regs": hold.num_regs, "add_regs": add.num_regs, "points": []}
    print(json.dumps({k: v for k, v in res.items() if k != "points"}))
    for k in [0, sms // 2, sms - 32, sms - 12, sms - 4, sms - 1]:
        for g in [16, 64, 256, 1024]:
            durs = []
            for _ in range(args.reps):
                st[0::2] = cp.iinfo(cp.uint64).max
                st[1::2] = 0
                cp.cuda.Device().synchronize()
                if k:
                    hold((k,), (1024,), (cp.uint64(300_000), when), stream=sa, shared_mem=smem)
                spin((1,), (1,), (cp.uint64(20_000),), stream=sb)
                for i in range(runs):
                    add((g,), (128,), (a, b, cp.int32(n), st, cp.int32(i)), stream=sb)
                cp.cuda.Device().synchronize()
                s = st.get()
                durs += [(int(s[2 * i + 1]) - int(s[2 * i])) / 1e3 for i in range(runs)]
            w = when.get()
            res["points"].append({"holder_blocks": k, "free_sms": sms - k, "grid": g,
                                  "median_us": statistics.median(durs),
                                  "holder_us": (int(w[1]) - int(w[0])) / 1e3 if k else None})
            print(json.dumps(res["points"][-1]))
    base = {p["grid"]: p["median_us"] for p in res["points"] if p["holder_blocks"] == 0}
    for p in res["points"]:
        p["slowdown"] = p["median_us"] / base[p["grid"]]
    json.dump(res, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
