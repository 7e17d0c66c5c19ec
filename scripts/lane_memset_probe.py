#!/usr/bin/env python3
"""Whether memset nodes make lanes of small kernels cost each other more in a CUDA graph.

Held-out batch 30's sampling lanes (softmax and top-k: 27 small kernels and two memsets of
2 KiB and 392 bytes a lane) ran 0.079 ms alone and 0.092 ms two side by side in real graphs,
where `replay` gave the second lane almost nothing (0.078 and 0.080 ms). The lanes here are
24 element-wise kernels over 64 Ki floats, with and without two such memsets
(`cudaMemsetAsync`, which a graph keeps as memset nodes) in the middle, and the sampling lane
itself; each captured as one lane and as two and three side by side, replayed unprofiled
(replays between events, medians, interleaved).

    python3 scripts/lane_memset_probe.py --out lane_memset.json [--trials 21]

Needs a CUDA device, PyTorch and CuPy.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lane_count_walks import small_adds_lane  # noqa: E402
from walk_parts import capture, fork_lanes, graph_times, probe_args  # noqa: E402


def main():
    args = probe_args(__doc__, 21)
    import torch
    torch.manual_seed(130_31)

    def sampling():
        with torch.device("cuda"):
            logits = torch.randn(2, 50000)

        def run():
            p = (logits / 0.8).softmax(-1)
            top, idx = torch.topk(p, 50, dim=-1)
            return (top / top.sum(-1, keepdim=True)) * idx.float()
        return run

    kinds = {"adds": lambda: small_adds_lane(False),
             "adds_with_memsets": lambda: small_adds_lane(True),
             "sampling": sampling}
    graphs = {}
    for name, make in kinds.items():
        for n in (1, 2, 3):
            graphs[f"{name}_x{n}"] = capture(fork_lanes([make() for _ in range(n)]))
    out = graph_times(torch, graphs, args.trials)
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
