#!/usr/bin/env python3
"""How much do lanes of decode GEMMs slow each other where the L2 holds their weights? The
device profile's GEMM pair (`launch-econ`'s default run) is two chains of decode GEMMs that
stream 256 MiB of weights each from device memory. Held-out batch 72 (GEMM lanes over weights
the L2 holds, H100) came out low once `--summary` stopped stretching such GEMMs at each
other's loads (526df8c), and its batches 60-70 high before: how much they cost each other
there was never measured. This captures, for d-square fp16 GEMMs over 16 tokens, a chain of
N GEMMs alone and `--lanes` such chains side by side (each on a stream of its own, forked and
joined), two ways: `beyond` (every GEMM of a chain with weights of its own, 256 MiB a chain)
and `within` (each chain cycling through 8 MiB of weight matrices of its own, which the L2
holds from one GEMM to the next: four lanes' 32 MiB within two thirds of a 50 MiB L2). Each graph is replayed unprofiled (interleaved trials of 20
replays); `stretch` is the lanes' graph time over one chain's, less 1: 0 where lanes overlap
perfectly, lanes - 1 where they run one after another. With `--traces DIR`, after all timing,
one eager step of each layout is recorded with the profiler (cuda_sync events, as
`validate.py` records) into DIR/d{SIZE}_{beyond|within}_{LANES}.eager.json, for `launch-econ
replay --summary` to price against the timed graphs.

    python3 scripts/gemm_lanes_l2_probe.py --out FILE.json [--sizes 1024,2048] [--lanes 2,4]
        [--traces DIR]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import (  # noqa: E402
    capture, graph_times, no_grad_step, record_steps, side_by_side, whole_numbers)

TOKENS = 16
CHAIN_BYTES = 256 << 20
WITHIN_BYTES = 8 << 20


def chain(torch, d, layers, distinct):
    """A lane of `layers` GEMMs of a `d`-square fp16 weight over `TOKENS` rows, cycling through
    `distinct` weights of its own (each GEMM on the same input, as the profile's chains)."""
    with torch.device("cuda"):
        ws = [torch.randn(d, d, dtype=torch.float16) * 0.01 for _ in range(distinct)]
        x = torch.randn(TOKENS, d, dtype=torch.float16)

    def run():
        y = None
        for i in range(layers):
            y = torch.nn.functional.linear(x, ws[i % distinct])
        return y
    return run


def parse_args(argv=None):
    """The probe's arguments, bad values refused before any GPU work."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--trials", type=int, default=9)
    ap.add_argument("--sizes", type=whole_numbers, default=[1024, 2048])
    ap.add_argument("--lanes", type=whole_numbers, default=[2, 4])
    ap.add_argument("--traces", default="")
    args = ap.parse_args(argv)
    if min(args.sizes) < 64 or min(args.lanes) < 2:
        ap.error("--sizes: GEMM sizes of at least 64; --lanes: lane counts of at least 2")
    return args


def main():
    import json

    args = parse_args()
    import torch
    sizes, lane_counts = args.sizes, args.lanes
    out = {"device": torch.cuda.get_device_name(), "tokens": TOKENS, "sizes": {}}
    to_record = []
    for d in sizes:
        layers = CHAIN_BYTES // (2 * d * d)
        graphs = {}
        # The captured graphs read the chains' weights and inputs: they live as long as
        # the graphs do (the graph does not keep them alive).
        alive = []
        within = max(1, WITHIN_BYTES // (2 * d * d))
        for where, distinct in (("beyond", layers), ("within", within)):
            for n in [1] + lane_counts:
                parts = [chain(torch, d, layers, distinct) for _ in range(n)]
                step = no_grad_step(side_by_side(parts))
                alive.append((parts, step))
                graphs[f"{where}_{n}"] = capture(step)
        print(f"d={d}: {layers} GEMMs a chain", flush=True)
        times = graph_times(torch, graphs, args.trials)
        us = times["us"]
        stretch = {f"{where}_{n}": us[f"{where}_{n}"] / us[f"{where}_1"] - 1
                   for where in ("beyond", "within") for n in lane_counts}
        for k, v in stretch.items():
            print(f"  {k}: {v * 100:+.1f}%", flush=True)
        out["sizes"][d] = {**times, "gemms_a_chain": layers,
                           "gemm_us_alone": {w: us[f"{w}_1"] / layers
                                             for w in ("beyond", "within")},
                           "stretch": stretch}
        if args.traces:
            # Recorded once every size is timed: a profiler session slows later launches.
            to_record += [(f"d{d}_{key}", step) for key, (_, step) in zip(graphs, alive)]
        del graphs
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    if args.traces:
        record_steps(torch, to_record, args.traces)


if __name__ == "__main__":
    main()
