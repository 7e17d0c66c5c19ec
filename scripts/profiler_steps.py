#!/usr/bin/env python3
"""Records a decode-like step the way most users profile: several steps under a
`torch.profiler.schedule`, marked with `prof.step()` (Kineto writes a `ProfilerStep#N`
annotation around each), and the same step recorded alone. `launch-econ replay` prices one
step of the first trace; both should price alike and match the step's real graph, timed
here first, unprofiled.

Writes into --out: steps.json (the multi-step trace), one_step.json (one step),
steps_results.json (the unprofiled eager and graph step, ms).
"""
import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_decode import build, model_args, wall_ms  # noqa: E402
from walk_parts import sync_events_config  # noqa: E402


def profiler_kwargs():
    kw = dict(
        activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
        record_shapes=True,
    )
    kw.update(sync_events_config(torch))  # the cross-stream waits, where supported
    return kw


def main():
    ap = model_args(argparse.ArgumentParser())
    ap.add_argument("--active", type=int, default=3, help="profiled steps")
    ap.add_argument("--no-timing", action="store_true", help="record the traces only")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    step = build(a.layers, a.d, a.heads, a.ctx)
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    res = dict(torch=torch.__version__, device=torch.cuda.get_device_name(0), config=vars(a))
    if not a.no_timing:
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            step()
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            step()
        for _ in range(5):
            g.replay()
        eager, graph = [], []
        for _ in range(9):  # interleaved
            eager.append(wall_ms(step, 1, 20)[0])
            graph.append(wall_ms(g.replay, 1, 20)[0])
        res.update(eager_ms=statistics.median(eager), graph_ms=statistics.median(graph))
    sched = torch.profiler.schedule(wait=1, warmup=1, active=a.active, repeat=1)
    with torch.profiler.profile(schedule=sched, **profiler_kwargs()) as prof:
        for _ in range(2 + a.active):
            step()
            torch.cuda.synchronize()
            prof.step()
    prof.export_chrome_trace(f"{a.out}/steps.json")
    with torch.profiler.profile(**profiler_kwargs()) as prof:
        step()
        torch.cuda.synchronize()
    prof.export_chrome_trace(f"{a.out}/one_step.json")
    with open(f"{a.out}/steps_results.json", "w") as f:
        json.dump(res, f, indent=2)
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
