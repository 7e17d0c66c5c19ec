#!/usr/bin/env python3
"""How many graph nodes a second the GPU runs over all lanes, by the number of lanes side by
side: the question behind the small-kernel lanes that `--summary` priced high once given a
stretch by the count of lanes (docs/validation-h200.md, "Held-out batch 27 … small kernels
beside two and three lanes, tried").

Each graph forks 1, 2, 4 or 8 lanes off the capture stream (`walk_parts.fork_lanes`), every
lane a chain of the same kernel: an empty CuPy kernel of one block, the default run's f32 add
over 16 Ki elements, and a decoder's small kernels at batch 1 (RMSNorm as transformers
computes it, SiLU times up, a residual add; hidden 2048). Unprofiled replays, interleaved;
it reports each graph's step, its ratio to one lane's, and the step over all lanes' kernels
(µs a node over all: where more lanes no longer lower it, the GPU runs no more nodes a second).

    python3 scripts/lane_throughput_probe.py --out lane_throughput.json [--nodes 256] [--trials 15]

Needs a CUDA device, PyTorch and CuPy.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture, fork_lanes, replay_ms  # noqa: E402

EMPTY_SRC = r'''
extern "C" __global__ void empty(int n){ }
'''
LANES = (1, 2, 4, 8)


def per_lane_us(result, lanes=4):
    """What each other lane costs a graph node, µs, from a result of this probe: the empty
    kernels' step at `lanes` lanes less one lane's, over a lane's nodes and the other lanes —
    the figure the default run measures the same way (`launch-econ`'s `front_end`), which the
    shipped H200 profile holds from this probe's `docs/lane-throughput-h200.json`."""
    empty = result["kinds"]["empty"]
    extra = empty[str(lanes)]["step_us"] - empty["1"]["step_us"]
    return extra / (result["nodes_a_lane"] * (lanes - 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--nodes", type=int, default=256, help="kernels a lane, about")
    ap.add_argument("--trials", type=int, default=15)
    args = ap.parse_args()
    import cupy as cp
    import torch
    empty = cp.RawKernel(EMPTY_SRC, "empty")

    def empty_lane():
        stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        with stream:
            for _ in range(args.nodes):
                empty((1,), (32,), (cp.int32(0),))
        return torch.zeros(1, device="cuda")

    def adds_lane():
        a, b = torch.randn(16 * 1024, device="cuda"), torch.randn(16 * 1024, device="cuda")

        def run():
            y = a
            for _ in range(args.nodes):
                y = y + b
            return y
        return run

    def decoder_lane():
        d = 2048
        h = torch.randn(1, d, dtype=torch.bfloat16, device="cuda")
        w = torch.randn(d, dtype=torch.bfloat16, device="cuda")
        up = torch.randn(1, d, dtype=torch.bfloat16, device="cuda")

        def run():
            y = h
            # Eleven kernels a layer: cast, pow, mean, add, rsqrt, mul, cast, mul, silu,
            # mul, add.
            for _ in range(max(1, args.nodes // 11)):
                v = y.float()
                v = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + 1e-6)
                n = w * v.to(torch.bfloat16)
                y = y + torch.nn.functional.silu(n) * up
            return y
        return run

    kinds = {"empty": lambda: empty_lane, "adds": adds_lane, "decoder_small": decoder_lane}
    # Kernels a lane issues (besides fork_lanes' few to add the lanes' corners).
    per_lane = {"empty": args.nodes, "adds": args.nodes,
                "decoder_small": 11 * max(1, args.nodes // 11)}
    out = {"device": torch.cuda.get_device_name(), "nodes_a_lane": args.nodes, "kinds": {}}
    for kind, make in kinds.items():
        graphs, kept = {}, []
        for lanes in LANES:
            g, k = capture(fork_lanes([make() for _ in range(lanes)]))
            graphs[lanes] = g
            kept.append(k)
        times = replay_ms(torch, graphs, 10, args.trials)
        res = {}
        for lanes in LANES:
            ms = statistics.median(times[lanes])
            res[lanes] = {"step_us": ms * 1e3,
                          "spread_us": [min(times[lanes]) * 1e3, max(times[lanes]) * 1e3]}
        one = res[1]["step_us"]
        for lanes in LANES:
            r = res[lanes]
            r["over_one_lane"] = r["step_us"] / one
            r["us_a_node_over_all"] = r["step_us"] / (lanes * per_lane[kind])
        print(kind, " ".join(f"{n}: {r['step_us']:.1f} us (x{r['over_one_lane']:.2f}, "
                             f"{r['us_a_node_over_all']:.3f} us a node)"
                             for n, r in res.items()), flush=True)
        out["kinds"][kind] = {str(n): r for n, r in res.items()}
        del graphs, kept
        torch.cuda.empty_cache()
    print(f"each other lane costs a node {per_lane_us(out):.4f} us (4 lanes of empty kernels)")
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
