"""Which stand-in makes a small kernel beside another stream's GEMMs cost what the real one
does?

The walk of `unseen_walks.py two_streams_experts` (two fp16 gated-MLP experts on two streams,
hidden 1536 -> 4096 -> 1536, batch 8): in its real graph the element-wise kernels between the
GEMMs run 1.7x and the residual adds 3x their eager durations, and `launch-econ replay`
(real GEMMs, the rest spinning) comes out 10% under the real graph. Here the same graph is
built four times, GEMMs real each time, the element-wise kernels

  real   as the walk runs them;
  spin   a clock spin of the recorded grid and block (what `replay` runs);
  touch  the same grid spinning, then every thread loading one 16-byte word and storing one
         (the kernel ends once its memory round trip does: beside a GEMM that keeps the memory
         system busy, it takes as long as that round trip takes there);
  touch2 as touch, with two dependent round trips;
  touch8 as touch, each thread loading 4 + 4 halves and storing 4 as the real kernels do;
  ptouchW as touch, with W 8-byte kernel parameters (W = 8, 32, 96) every thread reads;
  pspinW the spin reading W parameters, no memory load;
  chase  dependent loads through a 128 KiB ring (L2) for as much of the time as whole loads
         fill, the rest spun; chaseh the same through a 256 MiB ring (device memory);
  chasew as chase, coalesced: each warp reads one 128-byte line a step (every thread its own
         word of it), as an element-wise kernel reads;
  cspin  a spin on the SM clock (cycles) instead of the global timer: it stretches where the
         SMs' clock drops, as real work does.

Each stand-in is first sized alone (`ns` below is cycles for cspin): a 100-node graph of it on one stream costs the recorded
duration + 0.19 us (the front-end gap) a node. All four graphs are captured before any is
timed, then timed interleaved (unprofiled). Prints JSON.

    python3 scripts/touch_stand_in_probe.py [--out FILE]
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import capture_torch, replay_ms  # noqa: E402
from walk_parts import fork_join  # noqa: E402

SRC = r"""
#include <cuda_fp16.h>
__device__ __forceinline__ unsigned long long gt() {
    unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t;
}
extern "C" __global__ void spin(unsigned long long ns, float4* dst) {
    unsigned long long s = gt(), now = s;
    while (now - s < ns) now = gt();
    if (now == 1ull) dst[0] = make_float4(0.f, 0.f, 0.f, 0.f);
}
extern "C" __global__ void cspin(unsigned long long cycles, float4* dst) {
    long long s = clock64(), now = s;
    while ((unsigned long long)(now - s) < cycles) now = clock64();
    if (now == 1ll) dst[0] = make_float4(0.f, 0.f, 0.f, 0.f);
}
extern "C" __global__ void touch8(unsigned long long ns, const __half* __restrict__ src,
                                  __half* __restrict__ dst) {
    unsigned long long s = gt(), now = s;
    while (now - s < ns) now = gt();
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x * 4 + threadIdx.x;
    __half a[4], b[4];
    for (int k = 0; k < 4; ++k) { a[k] = src[i + k * blockDim.x]; b[k] = src[(1 << 20) + i + k * blockDim.x]; }
    for (int k = 0; k < 4; ++k) dst[i + k * blockDim.x] = __hmul(a[k], b[k]);
}
extern "C" __global__ void chase(unsigned long long ns, const unsigned* __restrict__ ring,
                                 unsigned ring_len, int loads, unsigned* __restrict__ out) {
    unsigned idx = (blockIdx.x * blockDim.x + threadIdx.x) % ring_len;
    for (int k = 0; k < loads; ++k) idx = ring[idx];
    unsigned long long s = gt(), now = s;
    while (now - s < ns) now = gt();
    out[blockIdx.x * blockDim.x + threadIdx.x] = idx;
}
extern "C" __global__ void chasew(unsigned long long ns, const unsigned* __restrict__ ring,
                                  unsigned lines, int loads, unsigned* __restrict__ out) {
    // Coalesced: a warp reads one 128-byte line a step, every word of which names the next.
    unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    unsigned line = warp % lines;
    for (int k = 0; k < loads; ++k) line = ring[line * 32 + lane];
    unsigned long long s = gt(), now = s;
    while (now - s < ns) now = gt();
    out[blockIdx.x * blockDim.x + threadIdx.x] = line;
}
extern "C" __global__ void touch(unsigned long long ns, const float4* __restrict__ src,
                                 float4* __restrict__ dst, int trips) {
    unsigned long long s = gt(), now = s;
    while (now - s < ns) now = gt();
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = src[i];
    for (int t = 1; t < trips; ++t) {
        v = src[(i + (unsigned long long)(v.x == 1234.5f)) ^ 1ull];
    }
    dst[i] = v;
}
"""


PARAM_WORDS = (8, 32, 96)  # 64, 256 and 768 bytes of parameters


def param_kernels(words):
    """ptouchW (touch reading W 8-byte parameter words in every thread) and pspinW (the spin
    reading them, no load)."""
    params = ", ".join(f"unsigned long long p{i}" for i in range(words))
    total = " + ".join(f"p{i}" for i in range(words))
    return f"""
extern "C" __global__ void ptouch{words}(unsigned long long ns, const float4* __restrict__ src,
                                  float4* __restrict__ dst, {params}) {{
    unsigned long long s = gt(), now = s;
    unsigned long long acc = {total};
    while (now - s < ns) now = gt();
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = src[i];
    if (acc == 1ull) v.x += 1.f;
    dst[i] = v;
}}
extern "C" __global__ void pspin{words}(unsigned long long ns, const float4* __restrict__ src,
                                 float4* __restrict__ dst, {params}) {{
    unsigned long long s = gt(), now = s;
    unsigned long long acc = {total};
    while (now - s < ns) now = gt();
    if (acc == 1ull) dst[0] = src[0];
}}
"""


SRC = SRC + "".join(param_kernels(w) for w in PARAM_WORDS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--batches", type=int, default=15)
    args = ap.parse_args()
    import cupy as cp
    import torch
    f = torch.nn.functional
    torch.manual_seed(3)
    mod = cp.RawModule(code=SRC)
    k_spin, k_touch = mod.get_function("spin"), mod.get_function("touch")
    k_cspin, k_touch8 = mod.get_function("cspin"), mod.get_function("touch8")
    k_chase = mod.get_function("chase")
    rings = {"chase": torch.randperm(1 << 15, device="cuda", dtype=torch.int32),
             "chaseh": torch.randperm(1 << 26, device="cuda", dtype=torch.int32),
             # 1024 lines of 32 words (128 KiB), each line's words all naming the next line.
             "chasew": torch.randperm(1 << 10, device="cuda", dtype=torch.int32)
             .repeat_interleave(32).contiguous()}
    k_chasew = mod.get_function("chasew")
    k_param = {f"{k}{w}": (mod.get_function(f"{k}{w}"), w)
               for k in ("ptouch", "pspin") for w in PARAM_WORDS}
    d, h, layers = 1536, 4096, 6
    with torch.device("cuda"):
        experts = [[(torch.randn(2 * h, d, dtype=torch.float16) * 0.02,
                     torch.randn(d, h, dtype=torch.float16) * 0.02) for _ in range(layers)]
                   for _ in range(2)]
        x = torch.randn(8, d, dtype=torch.float16)
        mid = torch.randn(8, h, dtype=torch.float16)  # the down GEMM's input when stood in
        src = torch.randn(1 << 22, dtype=torch.float32)   # 16 MiB of operands
        dst = torch.empty(1 << 22, dtype=torch.float32)
    # (grid, block, recorded us) of the walk's element-wise kernels: silu, mul, residual add.
    shapes = {"silu": (64, 128, 2.46), "mul": (64, 128, 2.37), "add": (12, 128, 1.05)}

    def launch(kind, shape, ns):
        grid, block, _ = shapes[shape]
        stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        with stream:
            if kind == "spin":
                k_spin((grid,), (block,), (cp.uint64(ns), dst.data_ptr()))
            elif kind == "cspin":
                k_cspin((grid,), (block,), (cp.uint64(ns), dst.data_ptr()))
            elif kind in rings:
                # ns: thousandths of a load; whole loads chase, the rest spins (1 ns a unit).
                loads, rest = divmod(int(ns), 1000)
                ring = rings[kind]
                if kind == "chasew":
                    k_chasew((grid,), (block,), (cp.uint64(rest), ring.data_ptr(),
                                                cp.uint32(ring.numel() // 32), cp.int32(loads),
                                                dst.data_ptr()))
                else:
                    k_chase((grid,), (block,), (cp.uint64(rest), ring.data_ptr(),
                                               cp.uint32(ring.numel()), cp.int32(loads),
                                               dst.data_ptr()))
            elif kind in k_param:
                fn, w = k_param[kind]
                fn((grid,), (block,), (cp.uint64(ns), src.data_ptr(), dst.data_ptr())
                   + tuple(cp.uint64(i + 2) for i in range(w)))
            elif kind == "touch8":
                k_touch8((grid,), (block,), (cp.uint64(ns), src.data_ptr(), dst.data_ptr()))
            else:
                trips = 2 if kind == "touch2" else 1
                k_touch((grid,), (block,), (cp.uint64(ns), src.data_ptr(), dst.data_ptr(),
                                             cp.int32(trips)))

    def graph_of(fn):
        return capture_torch(fn, torch.cuda.Stream())

    def timed(g, reps=20, batches=5):
        """Median µs of one replay (unprofiled)."""
        return replay_ms(g.replay, reps, batches) * 1e3

    # Size each stand-in alone: node time of a 100-node graph at ns = 0 and 2000, linear.
    gap_us = 0.19
    sized = {}
    param_kinds = [f"{k}{w}" for k in ("ptouch", "pspin") for w in PARAM_WORDS]
    for kind in ["spin", "cspin", "touch", "touch2", "touch8", "chase", "chaseh", "chasew"] + param_kinds:
        for shape, (_, _, rec) in shapes.items():
            pts = []
            hi = 8000 if kind in rings else 2000
            for ns in (0, hi):
                g = graph_of(lambda: [launch(kind, shape, ns) for _ in range(100)])
                pts.append(timed(g) / 100)
            slope = (pts[1] - pts[0]) / (hi / 1000)
            ns = max(0.0, (rec + gap_us - pts[0]) / slope * 1e3)
            if kind in rings:
                # Whole loads at the measured µs a load, the remainder as a spin.
                per_load_us = slope
                loads = int((rec + gap_us - pts[0]) / per_load_us) if per_load_us > 0 else 0
                left_ns = max(0.0, (rec + gap_us - pts[0] - loads * per_load_us) * 1e3)
                ns = max(0, loads) * 1000 + min(int(left_ns), 999)
            sized[(kind, shape)] = {"ns": ns, "node_us_at_0": pts[0], "slope": slope}

    def expert(ws, kind):
        def run():
            y = x
            for up, down in ws:
                if kind == "real":
                    a, b = f.linear(y, up).chunk(2, dim=-1)
                    y = y + f.linear(f.silu(a) * b, down)
                else:
                    f.linear(y, up)
                    launch(kind, "silu", sized[(kind, "silu")]["ns"])
                    launch(kind, "mul", sized[(kind, "mul")]["ns"])
                    o = f.linear(mid, down)
                    launch(kind, "add", sized[(kind, "add")]["ns"])
                    y = o
            return y
        return run

    def step_of(kind):
        return fork_join(expert(experts[0], kind), expert(experts[1], kind))

    kinds = ["real", "spin", "cspin", "touch", "touch2", "touch8", "chase", "chaseh", "chasew"] + param_kinds
    graphs = {k: graph_of(step_of(k)) for k in kinds}
    samples = {k: [] for k in kinds}
    for i in range(args.batches):
        order = kinds if i % 2 == 0 else kinds[::-1]
        for k in order:
            samples[k].append(timed(graphs[k], args.reps, 1))
    res = {
        "what": "two-expert walk, real GEMMs, element-wise kernels real or stood in; graph us",
        "graph_us": {k: statistics.median(v) for k, v in samples.items()},
        "spread_us": {k: [min(v), max(v)] for k, v in samples.items()},
        "sized": {f"{k}/{s}": v for (k, s), v in sized.items()},
    }
    real = res["graph_us"]["real"]
    res["error_pct"] = {k: 100 * (v / real - 1) for k, v in res["graph_us"].items()}
    text = json.dumps(res, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
