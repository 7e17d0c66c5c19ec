"""What a host-to-device copy adds to a graph when it follows another copy on its stream,
against when it sits between kernels, as the device profile measures it
(`crates/launch-econ/src/copy_nodes.rs`: graphs of (empty kernel, copy) pairs less graphs of
the empty kernels alone). The offline model prices every host copy at the profile's line, so
a chain of copies pays the kernel-to-copy hand-over once a copy; the untried walk of eight
8 MiB copies back to back came out +8.1% (docs/validation-h200.md, "Walks of kinds not met
before, after 03690f0").

For each size, graphs captured with PyTorch from page-locked host memory, each replayed in
interleaved batches (medians of per-replay wall time):
  chain N   N copies back to back on one stream;
  pairs N   N times (one tiny kernel, one copy);
  kernels N the N tiny kernels alone.
Per copy in a chain: (chain 8 - chain 1) / 7; between kernels: (pairs 8 - kernels 8) / 8.

    python3 scripts/copy_chain_probe.py OUT.json

On the H200 (one run): a copy in a chain 3.8, 12.2, 78.5, 154.4 us at 64 KiB, 512 KiB,
4 MiB, 8 MiB; between kernels 6.8, 19.6, 87.1, 162.6 us: a chained copy pays its transfer and
about 2.6 us, one between kernels about 5-11 us more. The device profile now measures the
chained line itself (`crates/launch-econ/src/copy_nodes.rs`).
"""
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import capture_torch  # noqa: E402

SIZES = [64 << 10, 512 << 10, 4 << 20, 8 << 20]
N = 8


def graph_of(fn):
    """`fn` warmed up and captured on a side stream (validate.py's way)."""
    return capture_torch(fn, torch.cuda.Stream())


def per_replay_us(g, reps=50):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        g.replay()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e6 / reps


def main(out):
    flag = torch.zeros(1, device="cuda")
    res = {"device": torch.cuda.get_device_name(), "sizes": {}}
    for size in SIZES:
        host = [torch.empty(size // 4, dtype=torch.float32).pin_memory() for _ in range(N)]
        dev = [torch.empty(size // 4, dtype=torch.float32, device="cuda") for _ in range(N)]

        def walk(n, kernels=False, copies=True):
            def f():
                for i in range(n):
                    if kernels:
                        flag.add_(1)
                    if copies:
                        dev[i].copy_(host[i], non_blocking=True)
            return f

        graphs = {"chain1": graph_of(walk(1)), "chain8": graph_of(walk(N)),
                  "pairs8": graph_of(walk(N, kernels=True)),
                  "kernels8": graph_of(walk(N, kernels=True, copies=False))}
        times = {k: [] for k in graphs}
        for _ in range(3):
            for g in graphs.values():
                per_replay_us(g, 5)
        for b in range(15):
            order = list(graphs) if b % 2 == 0 else list(reversed(list(graphs)))
            for k in order:
                times[k].append(per_replay_us(graphs[k]))
        med = {k: statistics.median(v) for k, v in times.items()}
        res["sizes"][str(size)] = {
            "median_us": med,
            "spread_us": {k: [min(v), max(v)] for k, v in times.items()},
            "per_copy_in_chain_us": (med["chain8"] - med["chain1"]) / (N - 1),
            "per_copy_between_kernels_us": (med["pairs8"] - med["kernels8"]) / N,
        }
        r = res["sizes"][str(size)]
        print(f"{size >> 10:6d} KiB: chain {r['per_copy_in_chain_us']:.2f} us a copy, "
              f"between kernels {r['per_copy_between_kernels_us']:.2f} us", flush=True)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
