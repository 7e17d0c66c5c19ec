#!/usr/bin/env python3
"""Whether a kernel that names one tensor as both its inputs reads it once: `y != y` (the
kernel PyTorch runs for `torch.isnan(y)`) against `y != z` over two tensors, and `y.abs()`
(one read, a result as large written), each as a graph of one lane and of three lanes side by
side, over tensors within the L2 and past it. Where `y != y` runs faster than `y != z`, about
as a kernel reading one tensor would, its second input is not read from device memory again
(`trace::inputs::repeats`, which counts such an input once).

    python3 scripts/self_compare_probe.py OUT.json [--elems N ...] [--dtype float32]

Needs a CUDA device and PyTorch. Prints each graph's median µs and writes them with the bytes
each kernel names, reads once and writes.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from small_kernel_pair_probe import capture, timed  # noqa: E402

OPS = 8
LANES = (1, 3)
KINDS = ("ne_self", "ne_two", "abs")


def lane(torch, kind, y, z, out):
    """One lane: OPS kernels of `kind` into `out` (reused, so nothing is allocated)."""
    def run():
        for _ in range(OPS):
            if kind == "ne_self":
                torch.ne(y, y, out=out["b"])
            elif kind == "ne_two":
                torch.ne(y, z, out=out["b"])
            else:
                torch.abs(y, out=out["f"])
    return run


def parse_args(argv=None):
    """The probe's arguments, checked before any GPU work: a bad one exits with status 2."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--elems", type=int, nargs="+", default=[1 << 21, 1 << 23])
    ap.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    ap.add_argument("--trials", type=int, default=9)
    args = ap.parse_args(argv)
    if any(n <= 0 for n in args.elems) or args.trials <= 0:
        ap.error("--elems and --trials must be positive")
    return args


def main():
    args = parse_args()
    import torch
    dtype = getattr(torch, args.dtype)
    size = torch.tensor([], dtype=dtype).element_size()
    result = {"device": torch.cuda.get_device_name(), "dtype": args.dtype, "ops": OPS,
              "l2_bytes": torch.cuda.get_device_properties(0).L2_cache_size, "cases": {}}
    for n in args.elems:
        graphs, keep = {}, []
        for lanes in LANES:
            for kind in KINDS:
                fns = []
                for _ in range(lanes):
                    y = torch.randn(n, device="cuda", dtype=dtype)
                    z = torch.randn(n, device="cuda", dtype=dtype)
                    out = {"b": torch.empty(n, device="cuda", dtype=torch.bool),
                           "f": torch.empty(n, device="cuda", dtype=dtype)}
                    keep.append((y, z, out))
                    fns.append(lane(torch, kind, y, z, out))
                graphs[f"{lanes}_lanes_{kind}"] = capture(torch, fns)
        us = timed(torch, graphs, reps=20, trials=args.trials)
        result["cases"][str(n)] = {"us": us, "bytes": {
            "ne_self": {"named": 2 * n * size, "read_once": n * size, "written": n},
            "ne_two": {"named": 2 * n * size, "read_once": 2 * n * size, "written": n},
            "abs": {"named": n * size, "read_once": n * size, "written": n * size}}}
        for k, v in us.items():
            print(f"{n} {k}: {v:.1f} us")
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
