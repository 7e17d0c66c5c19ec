"""Does a graph of GEMMs on two streams run longer when every GEMM reads and writes memory of
its own? Times, unprofiled, PyTorch graphs of held-out batch 15's batched-matmul pair (two
branches of three bmm(bmm(q, k), q) each, forked and joined) with its operands as the walk
has them (each branch reuses its q and k; activations recycled by the caching allocator)
and with fresh operands for every GEMM (each reads an A and B and writes a C no other GEMM
touches, as a replay's real GEMMs do), each with both branches and with one branch alone.
Interleaved rounds; medians.

    python3 scripts/operand_reuse_probe.py --out probe.json [--dtype bfloat16]
"""
import argparse
import json
import statistics

import torch

from validate import capture_torch


def build(dtype, fresh, branches):
    """A step function over pre-made tensors: `branches` branches of three bmm pairs."""
    def t(*shape):
        return torch.randn(*shape, device="cuda", dtype=dtype) * 0.1

    sides = []
    for _ in range(branches):
        if fresh:
            ops = [(t(16, 256, 128), t(16, 128, 256), t(16, 256, 256), t(16, 256, 128))
                   for _ in range(3)]
        else:
            q, k = t(16, 256, 128), t(16, 128, 256)
            ops = [(q, k, None, q) for _ in range(3)]
        sides.append(ops)
    outs = [[[torch.empty(16, 256, 256, device="cuda", dtype=dtype),
              torch.empty(16, 256, 128, device="cuda", dtype=dtype)] for _ in range(3)]
            for _ in range(branches)] if fresh else None
    streams = [torch.cuda.Stream() for _ in range(branches)]

    def side(j):
        y = None
        for i, (a, b, a2, b2) in enumerate(sides[j]):
            if fresh:
                torch.bmm(a, b, out=outs[j][i][0])
                torch.bmm(a2, b2, out=outs[j][i][1])
                y = outs[j][i][1]
            else:
                y = torch.bmm(torch.bmm(a if y is None else y, b), b2)
        return y

    def step():
        main = torch.cuda.current_stream()
        for s in streams:
            s.wait_stream(main)
        ys = []
        for j, s in enumerate(streams):
            with torch.cuda.stream(s):
                ys.append(side(j)[:1, :1, :1].float())
        for s in streams:
            main.wait_stream(s)
        return sum(ys)
    return step


def time_us(g, n):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(n):
        g.replay()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e3 / n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--replays", type=int, default=300)
    args = p.parse_args()
    dtype = getattr(torch, args.dtype)
    variants = {f"{'fresh' if fresh else 'shared'}_{n}":
                capture_torch(build(dtype, fresh, n), torch.cuda.Stream())
                for fresh in (False, True) for n in (1, 2)}
    for g in variants.values():
        time_us(g, 50)
    times = {k: [] for k in variants}
    for _ in range(args.rounds):
        for k, g in variants.items():
            times[k].append(time_us(g, args.replays))
    props = torch.cuda.get_device_properties(0)
    result = {
        "device": props.name, "l2_bytes": getattr(props, "L2_cache_size", None),
        "dtype": args.dtype, "rounds": args.rounds, "replays": args.replays,
        "median_us": {k: statistics.median(v) for k, v in times.items()},
        "runs_us": times,
    }
    print(json.dumps(result["median_us"], indent=1), "L2", result["l2_bytes"])
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
