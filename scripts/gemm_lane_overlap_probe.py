#!/usr/bin/env python3
"""Lanes of decode GEMMs with a small element-wise kernel after each, one to three side by
side, by GEMM size, as CUDA graphs replayed unprofiled and interleaved: how much of a second
and third lane a graph hides, and how that depends on the GEMMs' width.

Each lane runs eight layers of a d-square fp16 GEMM over 8 tokens followed by a tanh of its
result (the shape of `three_streams`, whose lanes are 1536-square), on weights of its own; the
lanes fork off the capture stream and join back. For each d: one lane, two and three side by
side, and the three one after another on one stream (`serial`). `hidden` is how much of the
extra lanes' time the graph hid: (serial - side by side) / (serial - one lane), 1 a perfect
overlap. One profiled replay of each size afterwards records the GEMM kernel's grid.

    python3 scripts/gemm_lane_overlap_probe.py --out gemm_lane_overlap.json

Needs a CUDA device and PyTorch (docs/validation-h200.md, "Where `--summary` is off, by the
widest GEMM").
"""
import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture, gemm_kernels, replay_ms, side_by_side  # noqa: E402

TOKENS = 8
LAYERS = 8
SIZES = [512, 1024, 1536, 2048, 3072, 4096]


def lane(d):
    """Launch functions of one lane: LAYERS x (GEMM, tanh) on weights of its own."""
    ws = [torch.randn(d, d, dtype=torch.float16, device="cuda") / d ** 0.5 for _ in range(LAYERS)]
    x = torch.randn(TOKENS, d, dtype=torch.float16, device="cuda")
    ys = [torch.empty(TOKENS, d, dtype=torch.float16, device="cuda") for _ in range(2)]

    def run():
        h = x
        for k, w in enumerate(ws):
            torch.mm(h, w, out=ys[k % 2])
            h = torch.tanh_(ys[k % 2])
    return run


def graph(lanes, forked=True):
    """A graph of `lanes` (functions), each forked onto a stream of its own, or all on the
    capture stream one after another."""
    def serial():
        for f in lanes:
            f()
    return capture(side_by_side(lanes) if forked else serial, warmups=1)[0]


def times(graphs, trials):
    """Median µs of one replay of each graph, interleaved ([`walk_parts.replay_ms`])."""
    return {k: statistics.median(v) * 1e3
            for k, v in replay_ms(torch, graphs, 20, trials).items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--trials", type=int, default=11)
    args = ap.parse_args()
    torch.manual_seed(0)
    rows = []
    for d in SIZES:
        lanes = [lane(d) for _ in range(3)]
        graphs = {"one": graph(lanes[:1]), "two": graph(lanes[:2]), "three": graph(lanes),
                  "serial": graph(lanes, forked=False)}
        t = times(graphs, args.trials)
        extra = t["serial"] - t["one"]
        row = {"d": d, **{f"{k}_us": v for k, v in t.items()},
               "hidden_two": (2 * t["one"] - t["two"]) / t["one"],
               "hidden_three": (t["serial"] - t["three"]) / extra if extra > 0 else None}
        rows.append(row)
        print(row, flush=True)
    kernels = {}
    for d in SIZES:
        kernels[d] = gemm_kernels(d, TOKENS)
        print(d, kernels[d], flush=True)
    with open(args.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "tokens": TOKENS, "layers": LAYERS,
                   "rows": rows, "kernels": kernels}, f, indent=1)


if __name__ == "__main__":
    main()
