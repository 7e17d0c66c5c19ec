#!/usr/bin/env python3
"""Does a CUDA graph's second (third, fourth) branch start late?

Profiled graph replays (CUPTI) of the multi-stream validation walks show each further branch's
first kernel starting 12-90 us after the first branch's; `replay --summary` prices no such
start. This times, unprofiled, graphs of K branches forked from the capture stream and joined
back (K = 1..4), each branch a chain of N small kernels (an in-place add on 1024 floats), and
the same K chains on one stream one after another. With branches that start together the
K-branch graph costs what one branch does; a late start adds to it branch by branch.

    python3 scripts/branch_start_probe.py [--out FILE.json] [--chain N]
"""
import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import capture_torch, launch_on_other_stream, replay_ms  # noqa: E402


def step_of(k, n, side_by_side):
    """A step of `k` chains of `n` adds: on `k` side streams forked and joined, or all on one
    side stream one after another."""
    xs = [torch.zeros(1024, device="cuda") for _ in range(k)]
    streams = [torch.cuda.Stream() for _ in range(k if side_by_side else 1)]

    def step():
        main = torch.cuda.current_stream()
        for i, x in enumerate(xs):
            s = streams[i if side_by_side else 0]
            s.wait_stream(main)
            with torch.cuda.stream(s):
                for _ in range(n):
                    x.add_(1.0)
        for s in streams:
            main.wait_stream(s)
    return step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="")
    ap.add_argument("--chain", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    launch_on_other_stream("torch")  # the upper level of per-node cost, as the walks
    graphs = {}
    for k in (1, 2, 3, 4):
        for side in (True, False):
            if k == 1 and not side:
                continue
            g = capture_torch(step_of(k, args.chain, side), torch.cuda.Stream())
            graphs[(k, side)] = g
    samples = {key: [] for key in graphs}
    for _ in range(args.rounds):  # interleaved
        for key, g in graphs.items():
            samples[key].append(replay_ms(g.replay, reps=50, batches=1) * 1e3)
    res = []
    one = statistics.median(samples[(1, True)])
    for (k, side), v in samples.items():
        med = statistics.median(v)
        res.append({"branches": k, "side_by_side": side, "chain": args.chain,
                    "graph_us": med, "min_us": min(v), "max_us": max(v),
                    "over_one_branch_us": med - one})
        print(f"{k} chains {'side by side' if side else 'one after another':17s} "
              f"{med:7.2f} us  (+{med - one:6.2f} over one branch)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "results": res}, f, indent=1)


if __name__ == "__main__":
    main()
