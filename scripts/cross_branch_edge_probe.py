#!/usr/bin/env python3
"""What does a graph edge between branches cost beside one along a branch? Batch 58's two
chains that take turns through events (25 sub-floor kernels, each waiting on the other
stream's last) ran in a real graph at 0.30 µs a node beyond their recorded kernels, where the
device profile's node gap (from chains on one stream) is 0.07 µs, and the replay came 15%
short. This captures chains of N in-place adds (a 128-block kernel over 16 × 8192 bf16, as
there, and a one-block kernel) three ways: all on one side stream; alternating between two
side streams, each kernel waiting on the other stream's last (every edge crosses branches);
and as two independent chains of N/2 on two streams. Each is replayed unprofiled (interleaved
trials of 20 replays); the per-node figure is the slope over N. With `--traces DIR`, after all
timing, one eager step of each 32-add layout is recorded with the profiler (cuda_sync events,
as `validate.py` records) into DIR/KERNEL_LAYOUT.eager.json, for `launch-econ replay --summary`
to price against the timed graphs.

    python3 scripts/cross_branch_edge_probe.py --out FILE.json [--trials N] [--traces DIR]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture, graph_times, probe_args, record_steps  # noqa: E402


def chain_step(torch, x, n, layout):
    """A step of `n` adds on `x` laid out as `layout`: `one` (one side stream), `turns` (two
    side streams, each add waiting on the other's last) or `apart` (two independent halves)."""
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    halves = [x, x.clone()]

    def step():
        main = torch.cuda.current_stream()
        s1.wait_stream(main)
        s2.wait_stream(main)
        for i in range(n):
            if layout == "one":
                s = s1
            elif layout == "turns":
                s = (s1, s2)[i % 2]
                if i:
                    s.wait_stream((s2, s1)[i % 2])
            else:
                s = (s1, s2)[i % 2]
            with torch.cuda.stream(s):
                (halves[i % 2] if layout == "apart" else x).add_(1.0)
        main.wait_stream(s1)
        main.wait_stream(s2)
    return step


def main():
    import json

    import torch
    args = probe_args(__doc__, 9, traces=True)
    out = {"device": torch.cuda.get_device_name(), "kernels": {}}
    steps = []
    for kind, shape in (("128_blocks", (16, 8192)), ("one_block", (256,))):
        x = torch.zeros(*shape, dtype=torch.bfloat16, device="cuda")
        graphs = {}
        for layout in ("one", "turns", "apart"):
            for n in (8, 32):
                step = chain_step(torch, x, n, layout)
                graphs[f"{layout}_{n}"] = capture(step)
                if n == 32:
                    steps.append((f"{kind}_{layout}", step))
        print(kind, flush=True)
        times = graph_times(torch, graphs, args.trials)
        slopes = {layout: (times["us"][f"{layout}_32"] - times["us"][f"{layout}_8"]) / 24
                  for layout in ("one", "turns", "apart")}
        for layout, v in slopes.items():
            print(f"  {layout}: {v:.3f} us a node", flush=True)
        out["kernels"][kind] = {**times, "us_per_node": slopes}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    if args.traces:
        record_steps(torch, steps, args.traces)


if __name__ == "__main__":
    main()
