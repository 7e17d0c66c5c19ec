#!/usr/bin/env python3
"""What do joins between lanes that run side by side cost a graph? Held-out batch 66's ring
(four streams of 1 MiB f32 element-wise kernels, each round's kernels on a stream waiting on
the previous stream's event of the round before) ran its real graph at 26 µs on an H100, where
its kernels one chain after another at their recorded durations come to 16 µs and `--summary`
priced 19.7 µs (−25%); its profiled replay ran the lanes apart, so it says nothing of them.
This captures four lanes of R rounds of that walk's pair of kernels (`x * 0.5 + y` over 256 Ki
floats: a multiply and an add, 256 blocks each) four ways: `ring` (as the walk: each lane's
round waits on the lane before's previous round, through events recorded at the round's
start), `apart` (the same lanes, no waits between them), `one` (one lane alone) and `serial`
(the four lanes' work on one stream). Each is replayed unprofiled (interleaved trials of 20
replays); the per-round figure is the slope over R. `ring` against `apart` is what the joins
cost; `apart` against `one` what four such lanes cost each other. With `--traces DIR`, after
all timing, one eager step of each 6-round layout is recorded with the profiler (cuda_sync
events, as `validate.py` records) into DIR/LAYOUT.eager.json, for `launch-econ replay
--summary` to price against the timed graphs.

    python3 scripts/ring_lanes_probe.py --out FILE.json [--trials N] [--traces DIR]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture, graph_times, probe_args, record_steps  # noqa: E402

LANES = 4
ROUNDS = (2, 6)
LAYOUTS = ("ring", "apart", "one", "serial")


def ring_step(torch, chunks, rounds, layout):
    """A step of `rounds` rounds of `x * 0.5 + y` on each lane's chunk, laid out as `layout`
    (see the module's text)."""
    lanes = 1 if layout == "one" else LANES
    streams = [torch.cuda.Stream() for _ in range(lanes)]

    def step():
        main = torch.cuda.current_stream()
        for s in streams:
            s.wait_stream(main)
        cur = list(chunks[:lanes])
        for _ in range(rounds):
            events = []
            for s in streams:
                e = torch.cuda.Event()
                e.record(s)
                events.append(e)
            nxt = []
            for i in range(lanes):
                s = streams[0] if layout == "serial" else streams[i]
                prev = (i - 1) % lanes
                if layout == "ring":
                    s.wait_event(events[prev])
                with torch.cuda.stream(s):
                    nxt.append(cur[i] * 0.5 + cur[prev])
            cur = nxt
        for s in streams:
            main.wait_stream(s)
        return torch.stack(cur)
    return step


def main():
    import json

    import torch
    args = probe_args(__doc__, 9, traces=True)
    chunks = [torch.randn(256 * 1024, device="cuda") for _ in range(LANES)]
    graphs, steps = {}, []
    with torch.no_grad():
        for layout in LAYOUTS:
            for n in ROUNDS:
                step = ring_step(torch, chunks, n, layout)
                graphs[f"{layout}_{n}"] = capture(step)
                if n == ROUNDS[-1]:
                    steps.append((layout, step))
        times = graph_times(torch, graphs, args.trials)
    span = ROUNDS[-1] - ROUNDS[0]
    slopes = {layout: (times["us"][f"{layout}_{ROUNDS[-1]}"] - times["us"][f"{layout}_{ROUNDS[0]}"])
              / span for layout in LAYOUTS}
    for layout, v in slopes.items():
        print(f"{layout}: {v:.3f} us a round", flush=True)
    out = {"device": torch.cuda.get_device_name(), "rounds": list(ROUNDS), **times,
           "us_per_round": slopes}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    if args.traces:
        record_steps(torch, steps, args.traces)


if __name__ == "__main__":
    main()
