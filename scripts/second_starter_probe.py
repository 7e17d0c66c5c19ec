#!/usr/bin/env python3
"""Which of two GEMM chains side by side in a CUDA graph pays, unprofiled.

The profiled graph replays of the multi-stream walks (`scripts/graph_overlap_stats.py`) show a
kernel that starts while another stream's kernel runs taking ~1.4x its time and the one already
running ~1.05x, but a profiler staggers a graph's branches and lengthens its kernels. Here two
chains of GEMMs are forked onto two streams in one `torch.cuda.CUDAGraph`, with a one-thread
kernel writing `%globaltimer` before and after every GEMM (no profiler), in three variants:
one chain alone, two started together, the second started after a spin of about half a
GEMM, and three started together. Each GEMM's time is its two stamps apart, the median over the replays.

    python3 scripts/second_starter_probe.py [--out FILE.json] [--replays 40]

Configurations: `tf32` (256 x 2048 @ 2048 x 2048, f32 on TF32 tensor cores, three a chain, as
the `tf32_two_branches` walk) and `fp16_small` (8 x 1536 @ 1536 x 1536 fp16, eight a chain, as
`three_streams`).
"""
import argparse
import json
import os
import statistics
import sys

import warnings

import cupy as cp
import torch

warnings.filterwarnings("ignore", message="ExternalStream is deprecated")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import capture_torch, replay_ms  # noqa: E402

STAMP = cp.RawKernel(r"""
extern "C" __global__ void stamp(unsigned long long* out, int i) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    out[i] = t;
}
""", "stamp")
SPIN = cp.RawKernel(r"""
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
""", "spin")

CONFIGS = {
    "tf32": dict(tokens=256, d=2048, layers=3, dtype=torch.float32, delay_ns=8000),
    "fp16_small": dict(tokens=8, d=1536, layers=8, dtype=torch.float16, delay_ns=2000),
}


def on_current_stream():
    return cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)


def stamp(buf, i):
    STAMP((1,), (1,), (buf, cp.int32(i)), stream=on_current_stream())


def chain(x, ws, buf, base):
    """GEMMs through `ws`, each between two stamps at `base + 2j` and `base + 2j + 1`."""
    def run():
        y = x
        for j, w in enumerate(ws):
            stamp(buf, base + 2 * j)
            y = torch.relu(y @ w)
            stamp(buf, base + 2 * j + 1)
        return y
    return run


VARIANTS = {"alone": 1, "together": 2, "second_late": 2, "three_together": 3}


def step_of(variant, lanes, delay_ns):
    """One chain alone, two or three together, or the second after a spin of `delay_ns`."""
    streams = [torch.cuda.Stream() for _ in lanes]

    def step():
        main = torch.cuda.current_stream()
        outs = []
        for i, (s, run) in enumerate(zip(streams, lanes)):
            if i >= VARIANTS[variant]:
                break
            s.wait_stream(main)
            with torch.cuda.stream(s):
                if variant == "second_late" and i == 1:
                    SPIN((1,), (1,), (cp.uint64(delay_ns),), stream=on_current_stream())
                outs.append(run())
        for s in streams[: len(outs)]:
            main.wait_stream(s)
        return sum(o.sum() for o in outs)
    return step


def measure(config, variant, replays):
    c = CONFIGS[config]
    torch.backends.cuda.matmul.allow_tf32 = config == "tf32"
    n = c["layers"]
    buf = cp.zeros(6 * n, dtype=cp.uint64)
    lanes = []
    for lane in range(3):
        x = torch.randn(c["tokens"], c["d"], device="cuda", dtype=c["dtype"])
        ws = [torch.randn(c["d"], c["d"], device="cuda", dtype=c["dtype"]) * 0.02
              for _ in range(n)]
        lanes.append(chain(x, ws, buf, lane * 2 * n))
    graph = capture_torch(step_of(variant, lanes, c["delay_ns"]), torch.cuda.Stream())
    step_ms = replay_ms(graph.replay)
    per_gemm = [[] for _ in range(3 * n)]
    start_gap = []
    for _ in range(replays):
        buf.fill(0)
        graph.replay()
        torch.cuda.synchronize()
        t = buf.get().astype("int64")
        for lane in range(VARIANTS[variant]):
            for j in range(n):
                k = lane * 2 * n + 2 * j
                per_gemm[lane * n + j].append((t[k + 1] - t[k]) / 1e3)
        if VARIANTS[variant] > 1:
            start_gap.append((int(t[2 * n]) - int(t[0])) / 1e3)
    med = [statistics.median(v) if v else None for v in per_gemm]
    return {
        "graph_ms": step_ms,
        "first_lane_gemm_us": med[:n],
        "second_lane_gemm_us": med[n:2 * n],
        "third_lane_gemm_us": med[2 * n:],
        "second_lane_start_after_first_us": statistics.median(start_gap) if start_gap else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--replays", type=int, default=40)
    args = ap.parse_args()
    results = {}
    for config in CONFIGS:
        for variant in VARIANTS:
            r = measure(config, variant, args.replays)
            results[f"{config}/{variant}"] = r
            fmt = lambda v: " ".join("-" if x is None else f"{x:5.1f}" for x in v)  # noqa: E731
            print(f"{config:10s} {variant:11s} graph {r['graph_ms'] * 1e3:7.1f} us | first lane "
                  f"{fmt(r['first_lane_gemm_us'])} | second lane {fmt(r['second_lane_gemm_us'])}"
                  f" | third lane {fmt(r['third_lane_gemm_us'])}"
                  f" | second starts {r['second_lane_start_after_first_us']} us later", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
