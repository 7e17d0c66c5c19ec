#!/usr/bin/env python3
"""Whether kernels beside another stream's GEMMs slow them less when their operands stay in the
L2 than when they come from device memory, unprofiled.

Stream 1 runs five bf16 GEMMs (64 x 4096 against 4096 x 4096 weights of their own: 160 MiB
of weights, streamed from device memory). Stream 2 runs eight f32 passes over 4096 x 2048
(32 MiB, mean over rows then subtract, max-abs over columns then divide) in one of two ways:
`chained`, each pass reading what the pass before wrote (one 32 MiB working set, which an
H200's 50 MiB L2 can hold), or `fresh`, each pass reading a tensor of its own (eight, 256 MiB,
from device memory). Each side alone and both forked from and joined to a main stream are
captured as CUDA graphs and replayed in interleaved batches (CUDA events, medians); the
report gives each pair's time over the longer side alone.

    python3 scripts/l2_reuse_probe.py --out DIR
"""
import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture  # noqa: E402

PASSES = 8


def build():
    torch.manual_seed(5)
    x = torch.randn(64, 4096, device="cuda", dtype=torch.bfloat16)
    ws = [torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) * 0.01 for _ in range(5)]
    start = torch.randn(4096, 2048, device="cuda")
    fresh_in = [torch.randn(4096, 2048, device="cuda") for _ in range(PASSES)]

    def gemms():
        y = x
        for w in ws:
            y = y @ w
        return y

    def one_pass(y):
        y = y - y.mean(dim=1, keepdim=True)
        return y / (y.abs().amax(dim=0, keepdim=True) + 1.0)

    def chained():
        y = start
        for _ in range(PASSES):
            y = one_pass(y)
        return y

    def fresh():
        out = None
        for t in fresh_in:
            out = one_pass(t)
        return out
    return gemms, {"chained": chained, "fresh": fresh}


def capture_lanes(parts):
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()

    def step():
        main = torch.cuda.current_stream()
        outs = []
        for s, part in zip((s1, s2), parts):
            s.wait_stream(main)
            with torch.cuda.stream(s):
                outs.append(part())
        for s in (s1, s2)[:len(parts)]:
            main.wait_stream(s)
        return outs
    g, _ = capture(step)
    g.replay()
    torch.cuda.synchronize()
    return g


def time_ms(g, reps=50):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(reps):
        g.replay()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / reps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--batches", type=int, default=15)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    gemms, sides = build()
    graphs = {"gemms": capture_lanes([gemms])}
    for name, side in sides.items():
        graphs[name] = capture_lanes([side])
        graphs[f"gemms+{name}"] = capture_lanes([gemms, side])
    samples = {k: [] for k in graphs}
    for i in range(args.batches):
        order = list(graphs) if i % 2 == 0 else list(reversed(graphs))
        for k in order:
            samples[k].append(time_ms(graphs[k]))
    med = {k: statistics.median(v) for k, v in samples.items()}
    res = {"device": torch.cuda.get_device_name(), "median_ms": med, "samples_ms": samples}
    for name in sides:
        longer = max(med["gemms"], med[name])
        res[f"{name}_pair_over_longer_ms"] = med[f"gemms+{name}"] - longer
        res[f"{name}_pair_over_longer_pct"] = 100 * (med[f"gemms+{name}"] / longer - 1)
        res[f"{name}_pair_over_sum_pct"] = 100 * (med[f"gemms+{name}"] /
                                                  (med["gemms"] + med[name]) - 1)
    with open(os.path.join(args.out, "l2-reuse-probe.json"), "w") as f:
        json.dump(res, f, indent=1)
    for k, v in med.items():
        print(f"{k:16s} {v:.4f} ms")
    for name in sides:
        print(f"{name}: pair {res[f'{name}_pair_over_longer_pct']:+.1f}% over the longer side "
              f"alone, {res[f'{name}_pair_over_sum_pct']:+.1f}% over both in series")


if __name__ == "__main__":
    main()
