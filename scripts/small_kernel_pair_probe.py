#!/usr/bin/env python3
"""Two chains of one small PyTorch kernel forked in one CUDA graph against one chain, and the
two one after the other: what nodes of two streams cost each other, by kernel and size.

Each chain is 200 launches of one kernel on buffers of its own (kept alive for the graphs'
whole life): a fill, an add, an RMS norm, or an 8-token GEMV over a square weight. The graphs
are replayed unprofiled and interleaved (15 trials of 30 replays, medians);
`extra_per_node_two_us` is what the two chains side by side take beyond one, per node of a
chain. Where the two chains' buffers together outgrow the L2 cache (adds of 4 Mi elements,
GEMVs of 4096 square) side by side runs slower than one after the other: each chain alone
keeps its buffers in L2.

    python3 scripts/small_kernel_pair_probe.py OUT.json

Needs a CUDA device and PyTorch (docs/validation-h200.md, "What a decoder beside a decoder
misses").
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import replay_ms  # noqa: E402

NODES = 200
CASES = [("fill", 1024), ("add", 1024), ("add", 65536), ("add", 1 << 20), ("add", 1 << 22),
         ("rms", 4096), ("gemv", 1024), ("gemv", 4096)]


def chain(torch, kind, elems, keep):
    """A function that issues NODES launches of `kind` over buffers of its own."""
    dev = torch.device("cuda")
    a, b, c = (torch.randn(elems, device=dev).to(torch.bfloat16) for _ in range(3))
    keep.append((a, b, c))
    if kind == "fill":
        return lambda: [c.fill_(1.0) for _ in range(NODES)]
    if kind == "add":
        return lambda: [torch.add(a, b, out=c) for _ in range(NODES)]
    if kind == "rms":
        w, x = torch.randn(elems, device=dev).to(torch.bfloat16), a.view(1, -1)
        keep.append(w)
        return lambda: [torch.nn.functional.rms_norm(x, (elems,), w) for _ in range(NODES)]
    w = torch.randn(elems, elems, device=dev, dtype=torch.bfloat16)
    x = torch.randn(8, elems, device=dev, dtype=torch.bfloat16)
    keep.append((w, x))
    return lambda: [torch.matmul(x, w.t()) for _ in range(NODES)]


def capture(torch, fns):
    """One graph: fns[0] on the capture stream, each other one forked onto a stream of its own."""
    others = [torch.cuda.Stream() for _ in fns[1:]]
    for f in fns:
        f()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=torch.cuda.Stream()):
        fork = torch.cuda.Event()
        fork.record()
        for s, f in zip(others, fns[1:]):
            s.wait_event(fork)
            with torch.cuda.stream(s):
                f()
        fns[0]()
        for s in others:
            join = torch.cuda.Event()
            join.record(s)
            torch.cuda.current_stream().wait_event(join)
    return g


def timed(torch, graphs, reps=30, trials=15):
    """Median µs of one replay of each graph, the graphs interleaved."""
    times = replay_ms(torch, graphs, reps, trials)
    return {k: statistics.median(v) * 1000 for k, v in times.items()}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    import torch
    keep, out = [], []
    for kind, elems in CASES:
        c1, c2 = chain(torch, kind, elems, keep), chain(torch, kind, elems, keep)
        graphs = {"one": capture(torch, [chain(torch, kind, elems, keep)]),
                  "two": capture(torch, [c1, c2]),
                  "serial": capture(torch, [lambda: (c1(), c2())])}
        t = timed(torch, graphs)
        r = {"kind": kind, "elems": elems, "one_us": t["one"], "two_us": t["two"],
             "serial_us": t["serial"], "per_node_one_us": t["one"] / NODES,
             "extra_per_node_two_us": (t["two"] - t["one"]) / NODES,
             "two_over_one": t["two"] / t["one"], "two_over_serial": t["two"] / t["serial"]}
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}),
              flush=True)
        out.append(r)
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
