#!/usr/bin/env python3
"""Measures, with the profiler's own clock (CUPTI through torch.profiler), how long the engine's
spin_grid_ns kernel runs compared with the span it measures itself, for several grid shapes and
requested durations. This is how far a replayed kernel's profiled duration sits from its span.
Launches the kernel from the engine's own .cu source through CuPy.

    python3 scripts/spin_cupti.py OUT.json
"""
import json
import os
import statistics
import sys

import cupy as cp
import numpy as np
import torch

KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates",
                       "memra-engine", "kernels")
# The engine compiles every kernel after its shared prelude (pdl.cuh).
SRC = "".join(open(os.path.join(KERNELS, f)).read() for f in ("pdl.cuh", "spin.cu"))
mod = cp.RawModule(code=SRC, options=("-std=c++17",))
spin = mod.get_function("spin_grid_ns")
shapes = [((1, 1, 1), (128, 1, 1)), ((4, 1, 1), (128, 1, 1)), ((4, 24, 1), (384, 1, 1)),
          ((132, 1, 1), (256, 1, 1)), ((1056, 1, 1), (256, 1, 1)), ((20000, 1, 1), (256, 1, 1))]
nss = [0, 1000, 2000, 5000, 20000]
reps = 5
plan = [(g, b, ns) for g, b in shapes for ns in nss for _ in range(reps)]
slots = cp.zeros(4 * len(plan), dtype=cp.uint64)
torch.cuda.init()
cp.cuda.runtime.deviceSynchronize()
# warm
for i, (g, b, ns) in enumerate(plan[:10]):
    spin(g, b, (np.uint64(ns), slots[4 * i:]))
cp.cuda.runtime.deviceSynchronize()
slots.fill(0)
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
    for i, (g, b, ns) in enumerate(plan):
        spin(g, b, (np.uint64(ns), slots[4 * i:]))
    cp.cuda.runtime.deviceSynchronize()
spans = cp.asnumpy(slots).reshape(-1, 4)[:, 2]
evs = [e for e in prof.events() if e.name == "spin_grid_ns" and e.device_type == torch.autograd.DeviceType.CUDA]
evs.sort(key=lambda e: e.time_range.start)
assert len(evs) == len(plan), (len(evs), len(plan))
rows = {}
for (g, b, ns), e, span in zip(plan, evs, spans):
    dur_ns = (e.time_range.end - e.time_range.start) * 1e3
    rows.setdefault(f"{g}x{b}", {}).setdefault(ns, []).append((dur_ns, float(span)))
out = {k: {ns: {"cupti_ns": statistics.median(d for d, _ in v), "span_ns": statistics.median(s for _, s in v)}
           for ns, v in d.items()} for k, d in rows.items()}
json.dump(out, open(sys.argv[1], "w"), indent=1)
for k, d in out.items():
    print(k, " ".join(f"{ns}:{v['cupti_ns']:.0f}/{v['span_ns']:.0f}" for ns, v in d.items()))
