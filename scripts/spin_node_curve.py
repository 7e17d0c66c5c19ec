#!/usr/bin/env python3
"""How a spin stand-in's graph node time grows with the time it is asked for, near zero.

The replay plans each short kernel's spin by interpolating, per grid shape, between the node
time of a spin asked for nothing and one asked for 2 µs (crates/launch-econ/src/stand_in.rs).
That is exact only if the node time is a straight line over the requests a short kernel
needs (0–500 ns). This measures the line point by point, unprofiled, for a few shapes — graphs
of 80 and of 40 launches, the difference over 40 — at the lower level of per-node cost and
again at the upper (kernels on another stream first; crates/launch-econ/src/other_stream.rs),
beside the node time of a real one-block kernel (torch `add_` on 768 fp16 values, as the
short-kernel walks record). Then how often %globaltimer moves (a single thread reading it back
to back), unprofiled and inside a profiler session, and the spins' CUPTI durations.

    python3 scripts/spin_node_curve.py OUT.json
"""
import json
import os
import statistics
import sys

import cupy as cp
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grid_node_probe import node_us  # noqa: E402
from validate import launch_on_other_stream  # noqa: E402

KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates",
                       "memra-engine", "kernels")
SRC = "".join(open(os.path.join(KERNELS, f)).read() for f in ("pdl.cuh", "spin.cu"))
TIMER_SRC = r"""
extern "C" __global__ void read_timer(unsigned long long* out, int n) {
    for (int i = 0; i < n; ++i) {
        unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); out[i] = t;
    }
}
"""
SHAPES = [(1, 128), (2, 128), (132, 256), (2048, 128)]
NS = [0, 32, 64, 128, 192, 256, 384, 512, 768, 1024, 1500, 2000, 3000]
TIMER_READS = 4096


def on_torch_stream(fn):
    def one(i):
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            fn(i)
    return one


def cupy_graph_of(fn, n):
    """`n` launches of `fn` captured by CuPy on a stream of its own (not torch's capture)."""
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        for i in range(n):
            fn(i)
        s.synchronize()
        s.begin_capture()
        for i in range(n):
            fn(i)
        g = s.end_capture()
    g.upload(s)
    s.synchronize()

    class Replay:
        def replay(self):
            g.launch(s)
    return Replay()


def timer_deltas(read, buf):
    """Distinct steps of %globaltimer seen by one thread reading it back to back, ns."""
    read((1,), (1,), (buf, np.int32(TIMER_READS)))
    cp.cuda.runtime.deviceSynchronize()
    v = cp.asnumpy(buf).astype(np.int64)
    d = np.diff(v)
    steps = d[d > 0]
    return {"median_step_ns": float(np.median(steps)) if len(steps) else None,
            "min_step_ns": int(steps.min()) if len(steps) else None,
            "distinct_values": int(len(np.unique(v))),
            "reads_ns": int(v[-1] - v[0])}


def main():
    spin = cp.RawModule(code=SRC, options=("-std=c++17",)).get_function("spin_grid_ns")
    read = cp.RawModule(code=TIMER_SRC).get_function("read_timer")
    tbuf = cp.zeros(TIMER_READS, dtype=cp.uint64)
    slots = cp.zeros(4, dtype=cp.uint64)
    y = torch.zeros(768, dtype=torch.float16, device="cuda")
    res = {"device": torch.cuda.get_device_name(0), "timer_unprofiled": timer_deltas(read, tbuf)}

    def spin_fn(shape, ns):
        return on_torch_stream(lambda i: spin((shape[0],), (shape[1],), (np.uint64(ns), slots)))

    def cupy_spin(shape, ns):
        return lambda i: spin((shape[0],), (shape[1],), (np.uint64(ns), slots))

    def curve():
        out = {f"{b}x{t}": {ns: node_us(spin_fn((b, t), ns)) for ns in NS} for b, t in SHAPES}
        out["torch add_ 768 fp16"] = node_us(lambda i: y.add_(1))
        # The same spins captured by CuPy into a graph of its own, on its own stream.
        out["cupy graph 1x128"] = {ns: node_us(cupy_spin((1, 128), ns), cupy_graph_of)
                                   for ns in (0, 256, 512, 2000)}
        return out

    res["lower"] = curve()
    launch_on_other_stream("torch")
    res["upper"] = curve()
    from torch.profiler import ProfilerActivity, profile
    plan = [(s, ns) for s in SHAPES for ns in NS for _ in range(5)]
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        res["timer_profiled"] = timer_deltas(read, tbuf)
        for i in range(5):
            y.add_(1)
            torch.cuda.synchronize()
        spans = []
        for s, ns in plan:
            spin_fn(s, ns)(0)
            torch.cuda.synchronize()
            spans.append(int(cp.asnumpy(slots)[2]))
    ev = sorted((e for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA
                 and (e.name == "spin_grid_ns" or "elementwise" in e.name.lower())),
                key=lambda e: e.time_range.start)
    durs = [(e.name, (e.time_range.end - e.time_range.start) * 1e3) for e in ev]
    adds = [d for n, d in durs if n != "spin_grid_ns"]
    spins = [d for n, d in durs if n == "spin_grid_ns"]
    res["torch add_ 768 fp16 profiled_ns"] = statistics.median(adds) if adds else None
    prof = {}
    if len(spins) == len(plan):
        for (s, ns), d, sp in zip(plan, spins, spans):
            prof.setdefault(f"{s[0]}x{s[1]}", {}).setdefault(ns, []).append((d, sp))
        res["profiled"] = {k: {ns: {"cupti_ns": statistics.median(a for a, _ in v),
                                    "span_ns": statistics.median(b for _, b in v)}
                               for ns, v in d.items()} for k, d in prof.items()}
    else:
        res["profiled_error"] = f"{len(spins)} spins profiled for {len(plan)} launches"
    with open(sys.argv[1], "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps({k: res[k] for k in ("timer_unprofiled", "timer_profiled")}))
    for level in ("lower", "upper"):
        for k, v in res[level].items():
            if isinstance(v, dict):
                print(level, k, " ".join(f"{ns}:{u:.3f}" for ns, u in v.items()))
            else:
                print(level, k, f"{v:.3f}")
    for k, d in res.get("profiled", {}).items():
        print("cupti", k, " ".join(f"{ns}:{v['cupti_ns']:.0f}/{v['span_ns']:.0f}"
                                   for ns, v in d.items()))
    print("add_ profiled ns", res["torch add_ 768 fp16 profiled_ns"])


if __name__ == "__main__":
    main()
