#!/usr/bin/env python3
"""What a kernel costs as a graph node beyond its profiled eager duration, kernel by kernel.

Short real kernels in recorded decode walks run ~0.1 µs longer inside a graph than in the eager
recording (torch.profiler on both), while spin stand-ins of the same eager duration do not.
This probe builds small patterns of kernels (raw CuPy kernels and real PyTorch ops), captures
each as a ~300-node graph, and reports per node:

* the graph's unprofiled step less the eager profiled kernel sum (what a stand-in must add),
  at the lower per-node level and after kernels on another stream (the upper level);
* each kernel's profiled duration in the graph against its eager profiled duration.

Unprofiled timings come before any profiler session in the process.

    python3 scripts/graph_kernel_probe.py OUT.json [NAME...]             # one process
    python3 scripts/graph_kernel_probe.py OUT.json --separate [NAME...]  # a process each
"""
import json
import statistics
import sys
import time

import cupy as cp
import torch

SRC = r'''
extern "C" __global__ void add1(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.f; }
extern "C" __global__ void mul2(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * 2.f; }
extern "C" __global__ void add1_smem(const float* x, float* y, int n) {
    extern __shared__ float s[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.f; __syncthreads();
    if (i < n) y[i] = s[threadIdx.x] + 1.f; }
extern "C" __global__ void sum_rd(const float* x, float* y, int n) {
    float s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += x[i];
    if (s == -1.f) y[0] = s; }
extern "C" __global__ void spin(const float* x, float* y, int n) {
    long long t0 = clock64(); while (clock64() - t0 < n) {} }
'''
# The same add1 body as 16 distinct functions, and with 64 / 256 extra float parameters.
SRC += "".join(f'''
extern "C" __global__ void add1_{i}(const float* x, float* y, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + {i + 1}.f; }}'''
               for i in range(16))
for P in (64, 256):
    SRC += (f'extern "C" __global__ void add1_p{P}(const float* x, float* y, int n, '
            + ", ".join(f"float p{j}" for j in range(P))
            + ") { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + p0 + p"
            + str(P - 1) + "; }\n")
BIG = 96 * 1024
mod = cp.RawModule(code=SRC)
F = {k: mod.get_function(k) for k in ("add1", "mul2", "add1_smem", "sum_rd", "spin",
                                      "add1_p64", "add1_p256")}
F.update({f"add1_{i}": mod.get_function(f"add1_{i}") for i in range(16)})
F["add1_smem"].max_dynamic_shared_size_bytes = BIG
N = 1 << 21
a, b, big = (cp.zeros(N, dtype=cp.float32) for _ in range(3))
# The engine's own stand-in, from its source (the plain build: no PDL).
ENGINE = cp.RawModule(code=open("crates/memra-engine/kernels/pdl.cuh").read()
                      + open("crates/memra-engine/kernels/spin.cu").read(),
                      options=("-std=c++17",))
spin_grid = ENGINE.get_function("spin_grid_ns")
slots = cp.zeros(4 * 64, dtype=cp.uint64)


def engine_spin(ns, grid=1, block=128):
    return lambda: spin_grid((grid,), (block,), (cp.uint64(ns), slots))
big_n = 1 << 21  # 8 MiB read


def k(name, grid=1, block=128, smem=0, src=None, dst=None, n=1024, extra=0):
    args = (src if src is not None else a, dst if dst is not None else b, cp.int32(n))
    args += tuple(cp.float32(0.5) for _ in range(extra))
    return lambda: F[name]((grid,), (block,), args, shared_mem=smem)


H = 2048
xt = torch.randn(1, H, device="cuda", dtype=torch.bfloat16)
wt = torch.randn(H, H, device="cuda", dtype=torch.bfloat16) / 64
gt = torch.ones(H, device="cuda", dtype=torch.bfloat16)


def rms(x):
    v = x.float().pow(2).mean(-1, keepdim=True)
    return (x.float() * torch.rsqrt(v + 1e-6)).to(x.dtype) * gt


def torch_norm_linear():
    global xt
    xt = torch.nn.functional.linear(rms(xt), wt) / 8


D = 1024
mlp_w = (torch.randn(4 * D, D, device="cuda", dtype=torch.float16) * 0.02,
         torch.randn(D, 4 * D, device="cuda", dtype=torch.float16) * 0.02,
         torch.ones(D, device="cuda", dtype=torch.float16))
xm = torch.randn(1, D, device="cuda", dtype=torch.float16)


def torch_mlp_layer():
    """One layer of validate.py's fp16 MLP walk (split-K GEMMs and their reduce kernels)."""
    global xm
    up, down, g = mlp_w
    F_ = torch.nn.functional
    xm = xm + F_.linear(F_.gelu(F_.linear(F_.layer_norm(xm, (D,), g), up)), down)


mlp_layers = [(torch.randn(4 * D, D, device="cuda", dtype=torch.float16) * 0.02,
               torch.randn(D, 4 * D, device="cuda", dtype=torch.float16) * 0.02,
               torch.ones(D, device="cuda", dtype=torch.float16)) for _ in range(24)]
mlp_next = [0]


def torch_mlp_distinct():
    """The same layer, but each unit with the next of 24 layers' weights (384 MiB in all)."""
    global xm
    up, down, g = mlp_layers[mlp_next[0] % 24]
    mlp_next[0] += 1
    F_ = torch.nn.functional
    xm = xm + F_.linear(F_.gelu(F_.linear(F_.layer_norm(xm, (D,), g), up)), down)


reads = [cp.zeros(1 << 21, dtype=cp.float32) for _ in range(24)]  # 24 x 8 MiB


def read_distinct():
    fns = [k("sum_rd", grid=132, block=512, src=r, n=1 << 21) for r in reads]
    return fns


PAGE = (2 << 20) // 4  # floats in 2 MiB
pages = cp.zeros(300 * PAGE, dtype=cp.float32)  # 600 MiB


def per_page(n):
    """add1 of n elements, one kernel per distinct 2 MiB page."""
    return [k("add1", src=pages[i * PAGE:], n=n) for i in range(300)]


def torch_norm_only():
    global xt
    xt = rms(xt) / 8


PATTERNS = {
    "spin 0, 1 block": [k("spin", n=0)],
    "add1, 1 block, independent": [k("add1")],
    "engine spin_grid 0 ns, 1 block": [engine_spin(0)],
    "engine spin_grid 2 us, 1 block": [engine_spin(2000)],
    "engine spin_grid 0 ns, 132 blocks": [engine_spin(0, grid=132)],
    "add1 1M elements (8192 blocks)": [k("add1", grid=8192, n=1 << 20)],
    "add1 2M elements, 2 buffers chained": [k("add1", grid=16384, n=N, src=a, dst=b),
                                            k("add1", grid=16384, n=N, src=b, dst=a)],
    "add1 chain (reads the previous output)": [k("add1", src=a, dst=b), k("add1", src=b, dst=a)],
    "add1 / mul2 (two functions)": [k("add1"), k("mul2")],
    "add1_smem 96 KiB only": [k("add1_smem", smem=BIG)],
    "add1 / add1_smem 96 KiB (carveout switch)": [k("add1"), k("add1_smem", smem=BIG)],
    "read 8 MiB (132 blocks) / add1": [k("sum_rd", grid=132, block=512, src=big, n=big_n), k("add1")],
    "spin ~5 us (132 blocks) / add1": [k("spin", grid=132, block=512, n=9000), k("add1")],
    "add1 x4 distinct functions": [k(f"add1_{i}") for i in range(4)],
    "add1 x16 distinct functions": [k(f"add1_{i}") for i in range(16)],
    "add1, 4 blocks": [k("add1", grid=4)],
    "add1 + 256 B of parameters": [k("add1_p64", extra=64)],
    "add1 + 1 KiB of parameters": [k("add1_p256", extra=256)],
    "add1 + 1 KiB / add1 (alternating)": [k("add1_p256", extra=256), k("add1")],
    "torch rmsnorm + linear 2048 bf16": [torch_norm_linear],
    "torch rmsnorm only": [torch_norm_only],
    "torch fp16 MLP layer": [torch_mlp_layer],
    "add1 128 elements, same page": [k("add1", n=128)],
    "add1 128 elements, 300 distinct 2 MiB pages": per_page(128),
    "add1 1 element, 300 distinct 2 MiB pages": per_page(1),
    "torch fp16 MLP, 24 distinct layers": [torch_mlp_distinct],
    "read 8 MiB (132 blocks), same buffer": [k("sum_rd", grid=132, block=512, src=big, n=big_n)],
    "read 8 MiB (132 blocks), 24 distinct buffers": read_distinct(),
}
NODES = 300
import os
INTERLEAVE_EAGER = os.environ.get("PROBE_INTERLEAVE_EAGER") == "1"
TORCH_UNITS = 24  # torch patterns launch ~6-10 kernels a unit


def unit(pat):
    for f in pat:
        f()


class Case:
    """One pattern: its stream and its graph of `units` repetitions."""

    def __init__(self, name, pat):
        self.name, self.pat = name, pat
        self.units = TORCH_UNITS if name.startswith("torch") else NODES // len(pat)
        self.stream = torch.cuda.Stream()
        with torch.cuda.stream(self.stream), cp.cuda.ExternalStream(self.stream.cuda_stream):
            for _ in range(3):
                unit(pat)
        torch.cuda.synchronize()
        self.g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.g, stream=self.stream):
            with cp.cuda.ExternalStream(self.stream.cuda_stream):
                for _ in range(self.units):
                    unit(self.pat)
        self.g.replay()
        torch.cuda.synchronize()

    def step_us(self, reps=20, batches=9):
        """Median unprofiled replay time per unit, µs."""
        out = []
        for _ in range(batches):
            if INTERLEAVE_EAGER:  # as validate.py times: eager steps on the default stream
                with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                    for _ in range(reps):
                        for _ in range(self.units):
                            unit(self.pat)
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(reps):
                self.g.replay()
            torch.cuda.synchronize()
            out.append((time.perf_counter() - t) * 1e6 / reps / self.units)
        return statistics.median(out)


def event_eager_us(case, units=40):
    """Median device-event time around one unit on an idle GPU, µs (unprofiled)."""
    out = []
    with torch.cuda.stream(case.stream), cp.cuda.ExternalStream(case.stream.cuda_stream):
        for _ in range(units):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            case.stream.synchronize()
            e0.record(case.stream)
            unit(case.pat)
            e1.record(case.stream)
            e1.synchronize()
            out.append(e0.elapsed_time(e1) * 1e3)
    return statistics.median(out)


def gpu_kernels(prof):
    ev = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    ev.sort(key=lambda e: e.time_range.start)
    return [(e.name, e.time_range.start, e.time_range.end) for e in ev]


def profile_eager(case, units=40):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        with torch.cuda.stream(case.stream), cp.cuda.ExternalStream(case.stream.cuda_stream):
            for _ in range(units):
                unit(case.pat)
                case.stream.synchronize()  # an idle GPU before every unit
        torch.cuda.synchronize()
    return gpu_kernels(prof)


def profile_graph(case, reps=3):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            case.g.replay()
            torch.cuda.synchronize()
    return gpu_kernels(prof)


def per_position(kernels, per_unit):
    """(name, median duration µs) at each position of the unit."""
    cols = [[] for _ in range(per_unit)]
    names = [None] * per_unit
    for i, (name, s, e) in enumerate(kernels):
        cols[i % per_unit].append(e - s)
        names[i % per_unit] = name
    return [(names[i], statistics.median(c)) for i, c in enumerate(cols)]


def activate_upper():
    """Kernels on a stream no graph uses: moves the process to the upper per-node level."""
    s = torch.cuda.Stream()
    with cp.cuda.ExternalStream(s.cuda_stream):
        for _ in range(32):
            F["spin"]((1,), (32,), (a, b, cp.int32(0)))
    s.synchronize()


def main(out):
    torch.cuda.init()
    only = sys.argv[2:]
    cases = [Case(name, pat) for name, pat in PATTERNS.items()
             if not only or any(o in name for o in only)]
    order = cases + cases[::-1]  # interleave: every case timed early and late
    lower = {c.name: [] for c in cases}
    for c in order:
        lower[c.name].append(c.step_us())
    events = {c.name: event_eager_us(c) for c in cases}
    activate_upper()
    upper = {c.name: [] for c in cases}
    for c in order:
        upper[c.name].append(c.step_us())
    result = {"device": torch.cuda.get_device_name(), "patterns": {}}
    for c in cases:
        eager = profile_eager(c)
        per_unit = len(eager) // 40
        graph = profile_graph(c)
        e_pos = per_position(eager, per_unit)
        g_pos = per_position(graph, per_unit)
        e_sum = sum(d for _, d in e_pos)
        g_sum = sum(d for _, d in g_pos)
        lo, up = statistics.median(lower[c.name]), statistics.median(upper[c.name])
        r = {
            "kernels_per_unit": per_unit,
            "graph_nodes": per_unit * c.units,
            "eager_profiled_us_per_node": e_sum / per_unit,
            "graph_profiled_us_per_node": g_sum / per_unit,
            "graph_lower_us_per_node": lo / per_unit,
            "graph_upper_us_per_node": up / per_unit,
            "lower_beyond_eager_us": (lo - e_sum) / per_unit,
            "event_eager_us_per_unit": events[c.name],
            "event_less_profiled_us": events[c.name] - e_sum,
            "upper_beyond_eager_us": (up - e_sum) / per_unit,
            "kernels": [{"name": n[:60], "eager_us": round(d, 3), "graph_us": round(gd, 3)}
                        for (n, d), (_, gd) in zip(e_pos, g_pos)],
        }
        result["patterns"][c.name] = r
        print(f"{c.name:45s} n/unit={per_unit:2d} eager={r['eager_profiled_us_per_node']:.3f} "
              f"graph-prof={r['graph_profiled_us_per_node']:.3f} lower={r['graph_lower_us_per_node']:.3f} "
              f"(+{r['lower_beyond_eager_us']:.3f}) upper={r['graph_upper_us_per_node']:.3f} "
              f"(+{r['upper_beyond_eager_us']:.3f}) events-eager={events[c.name]:.3f} "
              f"(events - profiled {r['event_less_profiled_us']:.3f})", flush=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)


def stacking(out, only):
    """Does the per-node level keep rising with each further stream that launches kernels?
    One process: the pattern's graph timed, then after 32 kernels on each of four new streams
    in turn (alternately raw CuPy launches and PyTorch ops), timed after each."""
    torch.cuda.init()
    cases = [Case(name, pat) for name, pat in PATTERNS.items()
             if not only or any(o in name for o in only)]
    steps = {c.name: [c.step_us()] for c in cases}
    streams = []
    for i in range(4):
        s = torch.cuda.Stream()
        streams.append(s)  # kept alive
        if i % 2 == 0:
            with cp.cuda.ExternalStream(s.cuda_stream):
                for _ in range(32):
                    F["spin"]((1,), (32,), (a, b, cp.int32(0)))
        else:
            z = torch.zeros(1, device="cuda")
            with torch.cuda.stream(s):
                for _ in range(32):
                    z.add_(1)
        s.synchronize()
        for c in cases:
            steps[c.name].append(c.step_us())
    # And back on the streams already used: does using them again change anything?
    for s in streams:
        with cp.cuda.ExternalStream(s.cuda_stream):
            for _ in range(32):
                F["spin"]((1,), (32,), (a, b, cp.int32(0)))
        s.synchronize()
    for c in cases:
        steps[c.name].append(c.step_us())
    res = {c.name: [round(x / (1 if c.name.startswith("torch") is False else 1), 4) for x in steps[c.name]]
           for c in cases}
    for c in cases:
        per_node = [x / (len(c.pat) if not c.name.startswith("torch") else 10) for x in steps[c.name]]
        print(f"{c.name:40s} " + " ".join(f"{x:.3f}" for x in per_node), flush=True)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


def separate(out, only):
    """Each pattern in a process of its own (a process's level depends on all its graphs)."""
    import subprocess
    import tempfile
    merged = {"patterns": {}}
    for name in PATTERNS:
        if only and not any(o in name for o in only):
            continue
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            subprocess.run([sys.executable, __file__, f.name, name], check=True)
            one = json.load(open(f.name))
        merged["device"] = one["device"]
        merged["patterns"].update(one["patterns"])
    with open(out, "w") as f:
        json.dump(merged, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--stacking":
        stacking(sys.argv[1], sys.argv[3:])
    elif len(sys.argv) > 2 and sys.argv[2] == "--separate":
        separate(sys.argv[1], sys.argv[3:])
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else "/dev/stdout")
