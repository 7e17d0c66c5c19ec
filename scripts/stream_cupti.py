#!/usr/bin/env python3
"""Measures, with the profiler's own clock (CUPTI through torch.profiler), how long the engine's
streaming stand-in (stream_grid) runs compared with the spans it measures itself (to its
highest-index block's end, and to the end of the block that ended last), by grid shape
and bytes read, each launch alone on an idle GPU (as an eager step's kernels are recorded) and
each from its own place in a 1 GiB buffer. The spin kernel is measured beside it for reference.

    python3 scripts/stream_cupti.py OUT.json
"""
import json
import statistics
import sys

import cupy as cp
import numpy as np
import torch

PRELUDE = open("crates/memra-engine/kernels/pdl.cuh").read()
SRC = PRELUDE + open("crates/memra-engine/kernels/spin.cu").read()
mod = cp.RawModule(code=SRC, options=("-std=c++17",))
stream = mod.get_function("stream_grid")
spin = mod.get_function("spin_grid_ns")
shapes = [((1, 1, 1), (128, 1, 1)), ((4, 16, 1), (384, 1, 1)), ((132, 1, 1), (128, 1, 1)),
          ((1024, 1, 1), (256, 1, 1)), ((8192, 1, 1), (256, 1, 1))]
sizes = [0, 64 << 10, 1 << 20, 4 << 20, 16 << 20]
reps = 5
arena = cp.zeros(1 << 28, dtype=cp.float32)
plan = [(g, b, kind, v) for g, b in shapes for kind, vs in (("stream", sizes), ("spin", [0, 3000]))
        for v in vs for _ in range(reps)]
slots = cp.zeros(4 * len(plan), dtype=cp.uint64)


def launch(i, g, b, kind, v, offset):
    if kind == "stream":
        stream(g, b, (arena.data.ptr + offset, np.uint64(v // 16), slots.data.ptr + 32 * i))
    else:
        spin(g, b, (np.uint64(v), slots.data.ptr + 32 * i))


def run():
    offset = 0
    for i, (g, b, kind, v) in enumerate(plan):
        if offset + v > arena.nbytes:
            offset = 0
        launch(i, g, b, kind, v, offset)
        offset += (v + 255) // 256 * 256
        cp.cuda.runtime.deviceSynchronize()


torch.cuda.init()
run()  # warm
slots.fill(0)
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
    run()
words = cp.asnumpy(slots).reshape(-1, 4).astype(np.int64)
spans = words[:, 2]
# To the block that ended last (stream_grid raises word 1 to each block's end); spins: as is.
last = np.where(words[:, 1] > 0, words[:, 1] - (words[:, 3] - words[:, 2]), words[:, 2])
evs = [e for e in prof.events() if e.name in ("stream_grid", "spin_grid_ns")
       and e.device_type == torch.autograd.DeviceType.CUDA]
evs.sort(key=lambda e: e.time_range.start)
assert len(evs) == len(plan), (len(evs), len(plan))
rows = {}
for (g, b, kind, v), e, span, to_last in zip(plan, evs, spans, last):
    dur_ns = (e.time_range.end - e.time_range.start) * 1e3
    rows.setdefault(f"{g}x{b}", {}).setdefault(f"{kind} {v}", []).append(
        (dur_ns, float(span), float(to_last)))
out = {k: {x: {"cupti_ns": statistics.median(t[0] for t in r),
               "span_ns": statistics.median(t[1] for t in r),
               "span_to_last_ns": statistics.median(t[2] for t in r)} for x, r in d.items()}
       for k, d in rows.items()}
json.dump(out, open(sys.argv[1], "w"), indent=1)
for k, d in out.items():
    print(k)
    for x, v in d.items():
        print(f"   {x:>16}: cupti {v['cupti_ns']:8.0f}  span {v['span_ns']:8.0f}  "
              f"cupti-span {v['cupti_ns'] - v['span_ns']:6.0f}  "
              f"cupti-span to last {v['cupti_ns'] - v['span_to_last_ns']:6.0f}")
