#!/usr/bin/env python3
"""Lanes of element-wise adds side by side in one CUDA graph, on buffers the L2 holds and on
buffers it does not: how much longer a lane of adds takes beside one and three more lanes of
the same adds than alone, by buffer size. `replay --summary` slows a small kernel by a
stretch summed over the kernels beside it, each read at its load on a curve measured beside
decode-GEMM lanes (whose load is device-memory traffic); held-out batch 66's ring of four
lanes of 1 MiB f32 element-wise kernels ran 1.3x its recorded kernels in the real graph where
the model gave 4x (docs/validation-h200.md, "Held-out batches 65 and 66 on an H100").

Each lane is a chain of NODES `torch.add(a, b, out=c)` over f32 buffers of its own; the
graphs (1, 2 and 4 lanes, forked from the capture stream) are replayed unprofiled and
interleaved (15 trials of 30 replays, medians). `stretch` is the graph's step over the one-lane
graph's, less one; `lane_gb_s` one lane's load alone (two inputs read, one result written,
over an add's time in the one-lane graph), as the offline model reckons a recorded kernel's.
`--elems` and `--lanes` choose other buffer sizes (f32 elements) and lane counts; with
`--traces DIR`, after all timing, one eager step of each graph's layout is recorded with the
profiler (shapes and cuda_sync events, as `validate.py` records) into
DIR/add_{BYTES}_x{LANES}.eager.json, for `launch-econ replay --summary` to price against the
timed graphs.

    python3 scripts/elementwise_lanes_probe.py OUT.json [--elems 65536,262144] [--lanes 1,2,4]
        [--traces DIR]

Needs a CUDA device and PyTorch.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from small_kernel_pair_probe import capture  # noqa: E402
from walk_parts import record_steps, replay_ms, whole_numbers  # noqa: E402

NODES = 64
LANES = (1, 2, 4)
# f32 elements a buffer: 256 KiB, 1 MiB and 4 MiB (three buffers a lane, four lanes: within
# an H100's or H200's L2), and 32 MiB (beyond it).
ELEMS = (1 << 16, 1 << 18, 1 << 20, 1 << 23)


def adds(torch, elems, keep):
    """A function that issues NODES adds over three f32 buffers of its own."""
    a, b, c = (torch.randn(elems, device="cuda") for _ in range(3))
    keep.append((a, b, c))
    return lambda: [torch.add(a, b, out=c) for _ in range(NODES)]


def eager(torch, fns):
    """The step [`capture`] captures, run eagerly: fns[0] on the current stream, each other
    one forked onto a stream of its own and joined back."""
    others = [torch.cuda.Stream() for _ in fns[1:]]

    def step():
        main = torch.cuda.current_stream()
        for s in others:
            s.wait_stream(main)
        for s, f in zip(others, fns[1:]):
            with torch.cuda.stream(s):
                f()
        fns[0]()
        for s in others:
            main.wait_stream(s)
    return step


def parse_args(argv=None):
    """The probe's arguments, bad values refused before any GPU work."""
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--elems", type=whole_numbers, default=list(ELEMS))
    ap.add_argument("--lanes", type=whole_numbers, default=list(LANES))
    ap.add_argument("--traces", default="")
    args = ap.parse_args(argv)
    if min(args.elems) < 1 or args.lanes[0] != 1 or min(args.lanes) < 1:
        ap.error("--elems: at least 1; --lanes: lane counts of at least 1, starting with 1 "
                 "(the stretch is over one lane)")
    return args


def main():
    args = parse_args()
    import torch
    keep, graphs, steps = [], {}, {}
    for elems in args.elems:
        for lanes in args.lanes:
            fns = [adds(torch, elems, keep) for _ in range(lanes)]
            graphs[(elems, lanes)] = capture(torch, fns)
            steps[(elems, lanes)] = eager(torch, fns)
    times = replay_ms(torch, {f"{e}x{n}": g for (e, n), g in graphs.items()}, 30, 15)
    step_us = {k: statistics.median(v) * 1000 for k, v in times.items()}
    rows = []
    for elems in args.elems:
        alone = step_us[f"{elems}x1"]
        per_add_us = alone / NODES
        lane_gb_s = 3 * 4 * elems / per_add_us / 1e3
        for lanes in args.lanes:
            step = step_us[f"{elems}x{lanes}"]
            rows.append({
                "buffer_bytes": 4 * elems,
                "lanes": lanes,
                "step_us": step,
                "per_add_us_alone": per_add_us,
                "lane_gb_s": lane_gb_s,
                "stretch": step / alone - 1.0,
            })
            print(f"{4 * elems >> 10:6d} KiB x{lanes}: {step:8.1f} us, stretch {step / alone - 1:+.2f}"
                  f" (a lane alone {lane_gb_s:.0f} GB/s, {per_add_us:.2f} us an add)")
    out = {
        "device": torch.cuda.get_device_name(),
        "script": "scripts/elementwise_lanes_probe.py",
        "nodes_a_lane": NODES,
        "rows": rows,
    }
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    if args.traces:
        record_steps(torch, [(f"add_{4 * e}_x{n}", step) for (e, n), step in steps.items()],
                     args.traces)


if __name__ == "__main__":
    main()
