#!/usr/bin/env python3
"""How two lanes share the GPU when one runs kernels whose blocks all fit at once (decode
GEMVs: one round of fat blocks, resident for the kernel's whole time) and the other runs
kernels of many rounds of blocks (RMSNorms and scales over a wide activation): each lane's
own span alone and beside the other, unprofiled. `--summary` slows every kernel running at
one moment alike; the profiled graph of held-out batch 26's RMSNorms beside GEMVs had the
GEMVs barely slower and the norms x2.2-2.4 (docs/validation-h200.md, "Held-out batch 26").

Each graph forks lanes off the capture stream (`walk_parts.fork_lanes`); one-block CuPy
kernels stamp %globaltimer before a lane's first kernel and after its last, so both lanes'
spans are read in every graph. The GEMV lane: ten bf16 GEMVs of 3072 x 3072 with a GELU
after each (as the walk); the norm lane: ten RMSNorm + scale pairs over R x 2048 bf16, for
R in 512, 2048 and 8192 rows.

    python3 scripts/resident_beside_probe.py --out resident_beside.json [--replays 31]

Needs a CUDA device, PyTorch and CuPy.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture, fork_lanes, lane_stamps  # noqa: E402

ROWS = (512, 2048, 8192)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--replays", type=int, default=31)
    args = ap.parse_args()
    import torch
    f = torch.nn.functional
    mark, rec = lane_stamps()

    with torch.device("cuda"):
        layers = [torch.nn.Linear(3072, 3072, bias=False).bfloat16() for _ in range(10)]
        v = torch.randn(1, 3072, dtype=torch.bfloat16)
        w = torch.randn(2048, dtype=torch.bfloat16)
        xs = {r: torch.randn(r, 2048, dtype=torch.bfloat16) for r in ROWS}

    def gemvs():
        mark(0)
        y = v
        with torch.no_grad():
            for layer in layers:
                y = f.gelu(layer(y))
        mark(1)
        return y

    def norms(rows):
        def run():
            mark(2)
            y = xs[rows]
            for _ in range(10):
                y = f.rms_norm(y, (2048,), w) * 1.01
            mark(3)
            return y
        return run

    def spans(graph, slots):
        out = {s: [] for s in slots}
        for _ in range(args.replays):
            graph.replay()
            torch.cuda.synchronize()
            r = rec.get()
            for s in slots:
                out[s].append((int(r[2 * s + 1]) - int(r[2 * s])) / 1e3)
        return {s: statistics.median(x) for s, x in out.items()}

    res = {"device": torch.cuda.get_device_name(), "gemv_lane": "10 x (bf16 1x3072 @ 3072x3072, GELU)",
           "norm_lane": "10 x (RMSNorm over R x 2048 bf16, x 1.01)", "rows": {}}
    g_alone, _k0 = capture(fork_lanes([gemvs]))
    for rows in ROWS:
        n_alone, _k1 = capture(fork_lanes([norms(rows)]))
        both, _k2 = capture(fork_lanes([gemvs, norms(rows)]))
        # Interleaved: each graph once a round.
        a, b, c = {0: [], 1: []}, {0: [], 1: []}, {0: [], 1: []}
        for _ in range(3):
            for graph, slots, acc in ((g_alone, (0,), a), (n_alone, (1,), b), (both, (0, 1), c)):
                for s, val in spans(graph, slots).items():
                    acc[s].append(val)
        gemv_alone = statistics.median(a[0])
        norm_alone = statistics.median(b[1])
        gemv_beside = statistics.median(c[0])
        norm_beside = statistics.median(c[1])
        r = {"gemv_lane_alone_us": gemv_alone, "norm_lane_alone_us": norm_alone,
             "gemv_lane_beside_us": gemv_beside, "norm_lane_beside_us": norm_beside,
             "gemv_stretch": gemv_beside / gemv_alone - 1,
             "norm_stretch": norm_beside / norm_alone - 1,
             # Each norm and each scale reads the activation and writes one as large.
             "norm_gb_s_alone": 10 * 4 * rows * 2048 * 2 / (norm_alone * 1e3)}
        print(rows, " ".join(f"{k} {x:.3f}" for k, x in r.items()), flush=True)
        res["rows"][str(rows)] = r
    with open(args.out, "w") as fh:
        json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()
