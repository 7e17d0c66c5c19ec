#!/usr/bin/env python3
"""Times a chain of GEMMs alone and two such chains forked onto two streams in one CUDA graph,
per element type and operand content, interleaved.

Asks why two TF32 branches of a prefill run slower side by side than `--summary` prices them
(docs/validation-h200.md, "Two TF32 branches side by side"): whether it is the power the
operands draw (then constant or zero operands would slow less) or something the GEMMs share
whatever they multiply. Each chain is `layers` × (tokens × d @ d × d, then ReLU), as the
`tf32_two_branches` walk's branches are; each chain has weights of its own.

    python3 scripts/gemm_pair_probe.py OUT_DIR [--tokens 256] [--d 2048] [--layers 3] \\
        [--f32-math tf32|ieee]

Writes OUT_DIR/gemm_pair_probe.json: per configuration the medians (ms per replay) of one
chain's graph and of the two-chain graph, their ratio, and every batch's figure.
"""
import argparse
import json
import os
import statistics

import torch

from tf32_walks import relu_chain
from validate import capture_torch
from walk_parts import fork_join

ROUNDS = 15
REPLAYS = 20
CONFIGS = [("float32", "random"), ("float32", "const"), ("float32", "zeros"),
           ("float16", "random"), ("float16", "zeros")]


def chain(dtype, fill, layers, tokens, d, seed):
    """A step of `layers` GEMMs with ReLUs over operands filled as `fill` says."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)

    def tensor(*shape):
        if fill == "random":
            return torch.randn(*shape, device="cuda", dtype=dtype, generator=gen) * 0.05
        if fill == "zeros":
            return torch.zeros(*shape, device="cuda", dtype=dtype)
        return torch.full(shape, 0.01, device="cuda", dtype=dtype)

    return relu_chain(tensor(tokens, d), [tensor(d, d) for _ in range(layers)])


def graphs(dtype, fill, args):
    """One chain's graph, the two-chain graph (each warmed up and captured on one stream, as
    `validate.py` captures a walk), and the chains, whose tensors the graphs read: they must
    stay alive while the graphs replay."""
    a = chain(dtype, fill, args.layers, args.tokens, args.d, 1)
    b = chain(dtype, fill, args.layers, args.tokens, args.d, 2)
    two = fork_join(a, b)
    capture = torch.cuda.Stream()
    return capture_torch(a, capture), capture_torch(two, capture), (a, b, two)


def per_replay_ms(graph):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(REPLAYS):
        graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / REPLAYS


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--d", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--f32-math", choices=("tf32", "ieee"), default="tf32",
                    help="how the float32 chains multiply: on TF32 tensor cores (the TF32 walks) "
                         "or in IEEE f32 on the FMA units (cuBLAS's SIMT `ffma` kernels)")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = args.f32_math == "tf32"
    built = {f"{dt}_{fill}": graphs(getattr(torch, dt), fill, args) for dt, fill in CONFIGS}
    samples = {k: ([], []) for k in built}
    for _ in range(ROUNDS):
        for k, (one_g, two_g, _) in built.items():
            samples[k][0].append(per_replay_ms(one_g))
            samples[k][1].append(per_replay_ms(two_g))
    result = {"device": torch.cuda.get_device_name(), "shape": vars(args) | {"out": None},
              "configs": {}}
    for k, (one, two) in samples.items():
        m1, m2 = statistics.median(one), statistics.median(two)
        result["configs"][k] = {"one_ms": m1, "two_ms": m2, "two_over_one": m2 / m1,
                                "one_samples_ms": one, "two_samples_ms": two}
        print(f"{k:15s} one chain {m1 * 1e3:7.1f} us  two side by side {m2 * 1e3:7.1f} us  "
              f"ratio {m2 / m1:.3f}")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "gemm_pair_probe.json"), "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
