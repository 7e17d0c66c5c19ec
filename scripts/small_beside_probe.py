#!/usr/bin/env python3
"""How much longer a decoder's small kernels run beside another stream's decode GEMVs, and
beside a twin of themselves, against the f32 adds the default run measures for the offline
model's small-kernel curve (`crate::beside`): the measurement `replay --summary` lacks for
decoders side by side (docs/validation-h200.md, "Which kernels the offline model slows beside
other streams": element-wise kernels there ran x1.43 beside other streams, the model x1.24).

Each graph forks lanes off the capture stream (`walk_parts.fork_lanes`): the small lane alone,
beside a chain of GEMVs (bf16, 1 x 4096 @ 4096 x 4096, weights that stream from device memory
and outlast the small lane), and beside a twin of itself. One-block CuPy kernels on the small
lane stamp %globaltimer before its first kernel and after its last, so its own span is read in
every graph, whatever the other lane does. Two small lanes: `decoder`, a Llama layer's small
kernels at batch 1 (RMSNorm as transformers computes it, residual adds, SiLU times the up
projection's stand-in), and `adds`, f32 adds of 16 Ki elements as the default run issues them.

    python3 scripts/small_beside_probe.py --out small_beside.json [--layers 24] [--replays 41]

Needs a CUDA device, PyTorch and CuPy.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture, fork_lanes, lane_stamps, replay_ms  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=24, help="layers of small kernels a lane")
    ap.add_argument("--gemvs", type=int, default=64, help="GEMVs of the other lane")
    ap.add_argument("--replays", type=int, default=41)
    args = ap.parse_args()
    import torch
    mark, rec = lane_stamps()

    d = 2048
    with torch.device("cuda"):
        hidden = torch.randn(1, d, dtype=torch.bfloat16)
        norm_w = torch.randn(d, dtype=torch.bfloat16)
        up = torch.randn(1, d, dtype=torch.bfloat16)
        a32, b32 = torch.randn(1024 * 16), torch.randn(1024 * 16)
        weights = [torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01
                   for _ in range(args.gemvs)]
        x = torch.randn(1, 4096, dtype=torch.bfloat16)

    def decoder_small():
        y = hidden
        for _ in range(args.layers):
            v = y.float()
            v = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + 1e-6)
            n = norm_w * v.to(torch.bfloat16)
            y = y + torch.nn.functional.silu(n) * up
        return y

    def adds():
        y = a32
        for _ in range(args.layers * 6):
            y = y + b32
        return y

    def gemvs():
        y = x
        for w in weights:
            y = y @ w
        return y

    def stamped(small, first):
        def run():
            mark(first)
            out = small()
            mark(first + 1)
            return out
        return run

    out = {"device": torch.cuda.get_device_name(), "layers": args.layers,
           "gemvs": args.gemvs, "lanes": {}}
    for name, small in [("decoder", decoder_small), ("adds", adds)]:
        graphs = {
            "alone": capture(fork_lanes([stamped(small, 0)])),
            "beside_gemvs": capture(fork_lanes([stamped(small, 0), gemvs])),
            "beside_twin": capture(fork_lanes([stamped(small, 0), stamped(small, 2)])),
            "gemvs_alone": capture(fork_lanes([gemvs])),
        }
        spans = {k: [] for k in graphs}
        for _ in range(args.replays):
            for k, (g, _) in graphs.items():
                g.replay()
                torch.cuda.synchronize()
                r = rec.get()
                if k == "gemvs_alone":
                    continue
                spans[k].append((int(r[1]) - int(r[0])) / 1e3)
        # The GEMV lane's own time, for its load: one replay between events, median.
        times = replay_ms(torch, {"gemvs": graphs["gemvs_alone"][0]}, 1, args.replays)
        gemv_us = statistics.median(times["gemvs"]) * 1e3
        r = {k: statistics.median(v) for k, v in spans.items() if v}
        r["spread_us"] = {k: [min(v), max(v)] for k, v in spans.items() if v}
        r["stretch_beside_gemvs"] = r["beside_gemvs"] / r["alone"] - 1
        r["stretch_beside_twin"] = r["beside_twin"] / r["alone"] - 1
        r["gemv_lane_us"] = gemv_us
        r["gemv_load_gb_s"] = args.gemvs * 4096 * 4096 * 2 / (gemv_us * 1e3)
        print(name, " ".join(f"{k} {v:.3f}" for k, v in r.items() if not isinstance(v, dict)),
              flush=True)
        out["lanes"][name] = r
        del graphs
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
