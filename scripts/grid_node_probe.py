#!/usr/bin/env python3
"""What a graph node costs beyond its kernel's profiled duration, by grid size.

A memory kernel (y = 1.0001 x + 0.5, one float per thread) at 8 … 16896 blocks of 128, 256
and 512 threads: its graph node time, unprofiled (graphs of 80 and of 40 launches, the
difference over 40, at the upper level of per-node cost: kernels on another stream first,
see crates/launch-econ/src/other_stream.rs), against its duration profiled by CUPTI
(torch.profiler) in eager launches one at a time, as a recording sees it. The replay and the
offline model plan every node at its profiled duration + one gap measured with one-block
kernels; this shows how far that holds as grids grow.

The same at the same grids for PyTorch's own element-wise add (`torch.add(x, y, out=z)` in
float32 and bfloat16: its vectorized kernel, 128 threads, 1024 elements a block), the kernel
framework walks hold most of at wide grids: written as `cases` of family `element_wise`,
which launch-econ prices element-wise kernels by (`crates/launch-econ/src/wide_grids.rs`).
And for the memory kernel moving 2, 4 and 8 floats a thread (`work`: more work a block at
the same grid), to show whether a block's work alone moves the figure.

Then, at two wide grids (2048 blocks of 128 threads, as CuPy launches 256 Ki floats; 8192, as
it launches 1 Mi), the same comparison for kernels that differ from the memory kernel in one
way each: 128 bytes more of parameters, a 64-bit grid-stride loop (as CuPy's element-wise
kernels index), CuPy's own `multiply` and an `ElementwiseKernel`, and the memory kernel
reading a different 4 MiB array every launch (inputs from device memory, not the L2) — which
property makes a wide kernel cost a graph more than its profile says.

    python3 scripts/grid_node_probe.py OUT.json
"""
import json
import os
import statistics
import sys

import cupy as cp
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import launch_on_other_stream, replay_ms  # noqa: E402
SRC = r"""
extern "C" __global__ void mem(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 1.0001f + 0.5f;
}
extern "C" __global__ void mem_k(const float* x, float* y, long long n, int k) {
    long long first = (long long)blockIdx.x * blockDim.x * k + threadIdx.x;
    for (int j = 0; j < k; ++j) {
        long long i = first + (long long)j * blockDim.x;
        if (i < n) y[i] = x[i] * 1.0001f + 0.5f;
    }
}
"""
VARIANT_SRC = r"""
extern "C" __global__ void mem_params(const float* x, float* y, int n,
    float p0, float p1, float p2, float p3, float p4, float p5, float p6, float p7,
    float p8, float p9, float p10, float p11, float p12, float p13, float p14, float p15,
    float p16, float p17, float p18, float p19, float p20, float p21, float p22, float p23,
    float p24, float p25, float p26, float p27, float p28, float p29, float p30, float p31) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 1.0001f + 0.5f;
}
extern "C" __global__ void mem_stride(const float* x, float* y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x) {
        y[i] = x[i] * 1.0001f + 0.5f;
    }
}
"""
GRIDS = [8, 66, 132, 264, 528, 1056, 2112, 4224, 8448, 16896]
# Elements per variant launch: CuPy launches these as 2048 and 8192 blocks of 128 threads.
VARIANT_ELEMENTS = [1 << 18, 1 << 20]
THREADS = [128, 256, 512]
# Floats each thread of the memory kernel moves: 1 is the lightest kernel a grid can hold
# (its time is the grid's dispatch); more work a block makes a kernel of the same grid longer.
WORK = [1, 2, 4, 8]


def launcher(kernels, bufs, threads, blocks, work):
    """Launch i of the memory kernel (`work` floats a thread) on torch's current stream
    (ping-pong between buffers)."""
    one_float, k_floats = kernels

    def one(i):
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            x, y = bufs[i % 2], bufs[1 - i % 2]
            if work == 1:
                one_float((blocks,), (threads,), (x, y, cp.int32(blocks * threads)))
            else:
                k_floats((blocks,), (threads,),
                         (x, y, cp.int64(blocks * threads * work), cp.int32(work)))
    return one


def variant_launchers(bufs):
    """(name, elements) -> launch i, for the kernel variants at CuPy's grids."""
    mod = cp.RawModule(code=VARIANT_SRC)
    params, stride = mod.get_function("mem_params"), mod.get_function("mem_stride")
    scale = cp.ElementwiseKernel("float32 x", "float32 y", "y = tanhf(x * 1.0001f) + 0.5f",
                                 "probe_scale")
    out = {}
    for n in VARIANT_ELEMENTS:
        blocks = n // 128
        views = [b[:n] for b in bufs]

        def on_stream(fn, views=views):
            def one(i):
                with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                    fn(views[i % 2], views[1 - i % 2])
            return one
        out[("params +128 B", n)] = on_stream(lambda x, y, b=blocks, n=n: params(
            (b,), (128,), (x, y, cp.int32(n), *[cp.float32(0)] * 32)))
        out[("64-bit stride loop", n)] = on_stream(lambda x, y, b=blocks, n=n: stride(
            (b,), (128,), (x, y, cp.int64(n))))
        out[("cupy multiply", n)] = on_stream(lambda x, y: cp.multiply(x, 0.5, out=y))
        out[("cupy ElementwiseKernel", n)] = on_stream(lambda x, y: scale(x, y))
    # The memory kernel reading a different array every launch, 80 of them (320 MiB, far past
    # the L2): its input comes from device memory, as a CuPy walk's weights do.
    n = VARIANT_ELEMENTS[-1]
    arena = [cp.ones(n, dtype=cp.float32) for _ in range(80)]
    raw = cp.RawKernel(SRC, "mem")

    def fresh(i):
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            raw((n // 128,), (128,), (arena[i % 80], bufs[i % 2][:n], cp.int32(n)))
    out[("input fresh from memory", n)] = fresh
    return out


def torch_launchers():
    """(name, elements) -> launch i, for PyTorch's own element-wise add (`torch.add(x, y,
    out=z)`, its vectorized kernel: 128 threads, 1024 elements a block in float32 and
    bfloat16) at the memory kernel's block counts."""
    out = {}
    for dtype, name in ((torch.float32, "torch add f32"), (torch.bfloat16, "torch add bf16")):
        for blocks in GRIDS:
            n = blocks * 1024
            x, y = (torch.ones(n, device="cuda", dtype=dtype) for _ in range(2))
            z = [torch.empty_like(x) for _ in range(2)]

            def one(i, x=x, y=y, z=z):
                torch.add(x, y, out=z[i % 2])
            out[(name, n)] = one
    return out


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


def node_us(fn, of=graph_of):
    """Unprofiled graph node time of `fn`'s launch, us: graphs of 80 and 40 (built by `of`),
    difference / 40."""
    g40, g80 = of(fn, 40), of(fn, 80)
    for _ in range(2):
        g40.replay()
        g80.replay()
    return (replay_ms(g80.replay) - replay_ms(g40.replay)) * 1e3 / 40


def event_us(fn, n=12):
    """Median event-timed duration of `fn`'s launch alone on an idle GPU, us (events recorded
    just before and after it on its stream): what an engine without a profiler can measure
    of an eager launch."""
    s = torch.cuda.current_stream()
    out = []
    for i in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        a.record(s)
        fn(i)
        b.record(s)
        b.synchronize()
        out.append(a.elapsed_time(b) * 1e3)
    return statistics.median(out[2:])


def profiled_us(launchers):
    """Median CUPTI duration of each launcher's kernel, launched eagerly one at a time (one
    profiler session for all, after every unprofiled timing)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for c, fn in launchers.items():
            for i in range(10):
                fn(i)
                torch.cuda.synchronize()
    path = "/tmp/grid_node_probe.json"
    p.export_chrome_trace(path)
    with open(path) as f:
        ev = sorted((e for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel"),
                    key=lambda e: e["ts"])
    # Kernels in launch order: ten per launcher, in the launchers' order.
    durs = [e["dur"] for e in ev]
    if len(durs) != 10 * len(launchers):
        sys.exit(f"expected one kernel per launch, profiled {len(durs)} for {10 * len(launchers)}")
    out, shapes = {}, {}
    for k, c in enumerate(launchers):
        out[c] = statistics.median(durs[10 * k + 2:10 * k + 10])
        shapes[c] = (ev[10 * k]["args"].get("grid"), ev[10 * k]["args"].get("block"))
    return out, shapes


def main():
    mod = cp.RawModule(code=SRC)
    kernels = (mod.get_function("mem"), mod.get_function("mem_k"))
    bufs = [cp.zeros(max(GRIDS) * max(THREADS) * max(WORK), dtype=cp.float32)
            for _ in range(2)]
    launch_on_other_stream("torch")  # the upper level, where framework processes run
    cases = [(t, b, k) for k in WORK for t in THREADS for b in GRIDS]
    launchers = {c: launcher(kernels, bufs, *c) for c in cases}
    variants = variant_launchers(bufs)
    adds = torch_launchers()
    every = {**launchers, **variants, **adds}
    node = {c: node_us(fn) for c, fn in every.items()}
    event = {c: event_us(fn) for c, fn in every.items()}
    # Only now the profiler (it slows launches for the rest of the process).
    prof, shapes = profiled_us(every)
    def row(c, what, **keys):
        print(f"{what}: node {node[c]:7.3f} us, eager profiled {prof[c]:7.3f} us, "
              f"node - profiled {node[c] - prof[c]:+.3f} us, eager events {event[c]:7.3f} us, "
              f"node - events {node[c] - event[c]:+.3f} us")
        return {**keys, "graph_node_unprofiled_us": node[c], "eager_profiled_us": prof[c],
                "node_minus_profiled_us": node[c] - prof[c], "eager_events_us": event[c],
                "node_minus_events_us": node[c] - event[c]}
    res = [row(c, f"{c[0]:5d} threads {c[1]:6d} blocks", threads=c[0], blocks=c[1],
               family="memory", kernel="memory kernel")
           for c in cases if c[2] == 1]
    # The add's grid and block as the profiler recorded them.
    res += [row(c, f"{c[0]:>16} {shapes[c][0][0]:6d} blocks", family="element_wise",
                kernel=c[0], element_bytes=4 if c[0].endswith("f32") else 2,
                threads=shapes[c][1][0], blocks=shapes[c][0][0])
            for c in adds]
    work = [row(c, f"{c[0]:5d} threads {c[1]:6d} blocks {c[2]} floats", threads=c[0],
                blocks=c[1], floats_per_thread=c[2])
            for c in cases if c[2] > 1]
    var = [row(c, f"{c[0]:>24} {c[1]:8d} elements", kernel=c[0], elements=c[1])
           for c in variants]
    with open(sys.argv[1], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(0), "cases": res, "work": work,
                   "variants": var}, f, indent=1)


if __name__ == "__main__":
    main()
