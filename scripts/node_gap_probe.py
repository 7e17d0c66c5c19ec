#!/usr/bin/env python3
"""Which kernel properties lengthen the gap between consecutive CUDA-graph nodes?

Builds graphs of N timed kernels (CuPy RawModule, stream capture) that differ in one property
at a time — dynamic shared memory (same / alternating carve-out), distinct modules, memory read
and written per node, grid size — and measures, without a profiler:
  * each node's start and end, stamped by the kernel itself from %globaltimer (first block in,
    last block out), so the gap between nodes and each node's own span come from one clock;
  * the whole replay with CUDA events.

    python3 scripts/node_gap_probe.py [--nodes 400] [--ns 2000] [--json OUT]
"""
import argparse
import json
import statistics

import cupy as cp

SRC = r"""
extern "C" __device__ __forceinline__ unsigned long long now() {
    unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t;
}
extern "C" __global__ void timed(unsigned long long* st, int node, long long ns,
                                 float* out, const float* in, long long nrd, long long nwr,
                                 int use_smem) {
    extern __shared__ float sm[];
    unsigned long long t0 = now();
    if (threadIdx.x == 0) atomicMin(&st[2 * node], t0);
    float acc = 0.f;
    long long stride = (long long)gridDim.x * blockDim.x;
    long long i0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (long long i = i0; i < nrd; i += stride) acc += in[i];
    for (long long i = i0; i < nwr; i += stride) out[i] = acc + (float)i;
    if (use_smem) {
        sm[threadIdx.x] = acc;
        __syncthreads();
        acc += sm[(threadIdx.x + 1) % blockDim.x];
    }
    while (now() < t0 + (unsigned long long)ns) { }
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(&st[2 * node + 1], now());
    if (acc == 1234.5f) out[0] = acc;
}
"""


def module(tag):
    # A distinct name per module: the same code loaded as separate functions.
    return cp.RawModule(code=SRC + f"\n// {tag}\n", options=("-std=c++17",))


def run_variant(name, nodes, ns, cfg, big_in, out_buf, reps=20):
    """cfg(i) -> (kernel, grid, smem_bytes, in_ptr_offset_floats, nrd, nwr)."""
    stream = cp.cuda.Stream(non_blocking=True)
    st = cp.zeros(2 * nodes, dtype=cp.uint64)

    def issue():
        for i in range(nodes):
            k, grid, smem, off, nrd, nwr = cfg(i)
            k((grid,), (128,), (st, cp.int32(i), cp.int64(ns), out_buf, big_in[off:],
                                 cp.int64(nrd), cp.int64(nwr), cp.int32(1 if smem else 0)),
              shared_mem=smem, stream=stream)

    with stream:
        issue()
        stream.synchronize()
        stream.begin_capture()
        issue()
        g = stream.end_capture()
    g.upload(stream)
    for _ in range(3):
        g.launch(stream)
    stream.synchronize()
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    per_node = []
    gaps, spans = [], []
    for _ in range(reps):
        st.fill(0)
        st[0::2] = cp.uint64(2**64 - 1)
        stream.synchronize()
        e0.record(stream)
        g.launch(stream)
        e1.record(stream)
        e1.synchronize()
        per_node.append(cp.cuda.get_elapsed_time(e0, e1) * 1e3 / nodes)
        s = cp.asnumpy(st).astype("int64")
        starts, ends = s[0::2], s[1::2]
        gaps.extend((starts[1:] - ends[:-1]).tolist())
        spans.extend((ends - starts).tolist())
    med_span = statistics.median(spans)
    res = {
        "variant": name,
        "graph_us_per_node": statistics.median(per_node),
        "node_span_us": med_span / 1e3,
        "gap_median_us": statistics.median(gaps) / 1e3,
        "gap_mean_us": statistics.fmean(gaps) / 1e3,
    }
    res["overhead_us_per_node"] = res["graph_us_per_node"] - med_span / 1e3
    print(f"{name:34s} graph {res['graph_us_per_node']:7.3f} us/node  span {res['node_span_us']:7.3f}"
          f"  gap med {res['gap_median_us']:6.3f} mean {res['gap_mean_us']:6.3f}"
          f"  graph-span {res['overhead_us_per_node']:6.3f}", flush=True)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=400)
    ap.add_argument("--ns", type=int, default=2000)
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    n, ns = a.nodes, a.ns
    ka = module("a").get_function("timed")
    kb = module("b").get_function("timed")
    kc = module("c").get_function("timed")
    for k in (ka, kb, kc):
        k.max_dynamic_shared_size_bytes = 200 * 1024
    per_node_rd = 2 * 1024 * 1024  # floats: 8 MiB per node
    big_in = cp.ones(per_node_rd * n + 1, dtype=cp.float32)
    out_buf = cp.zeros(1 << 20, dtype=cp.float32)
    G = 264
    variants = [
        ("base (264 blocks, no smem)", lambda i: (ka, G, 0, 0, 0, 0)),
        ("smem 64 KiB every node", lambda i: (ka, G, 64 << 10, 0, 0, 0)),
        ("smem alternating 0 / 64 KiB", lambda i: (ka, G, (64 << 10) * (i % 2), 0, 0, 0)),
        ("smem alternating 0 / 200 KiB", lambda i: (ka, G, (200 << 10) * (i % 2), 0, 0, 0)),
        ("three modules in turn", lambda i: ((ka, kb, kc)[i % 3], G, 0, 0, 0, 0)),
        ("reads 8 MiB, new buffer each node", lambda i: (ka, G, 0, i * per_node_rd, per_node_rd, 0)),
        ("reads 8 MiB, same buffer", lambda i: (ka, G, 0, 0, per_node_rd, 0)),
        ("writes 4 MiB per node", lambda i: (ka, G, 0, 0, 0, 1 << 20)),
        ("reads 8 MiB new + writes 4 MiB", lambda i: (ka, G, 0, i * per_node_rd, per_node_rd, 1 << 20)),
        ("1 block", lambda i: (ka, 1, 0, 0, 0, 0)),
        ("4096 blocks (two waves)", lambda i: (ka, 4096, 0, 0, 0, 0)),
        ("base again", lambda i: (ka, G, 0, 0, 0, 0)),
    ]
    dev = cp.cuda.Device(0)
    print(f"device: {cp.cuda.runtime.getDeviceProperties(dev.id)['name'].decode()}, nodes {n}, "
          f"timed span {ns} ns, 128 threads/block")
    out = [run_variant(name, n, ns, cfg, big_in, out_buf) for name, cfg in variants]
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"nodes": n, "ns": ns, "variants": out}, f, indent=1)


if __name__ == "__main__":
    main()
