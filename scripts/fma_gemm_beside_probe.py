#!/usr/bin/env python3
"""What an f32 MLP (cuBLAS's FMA GEMMs: 256 blocks of 64 threads) costs beside other kinds of
kernel on another stream: each lane captured alone and forked with the MLP, unprofiled
(replays between events, medians). Held-out batch 29's embedding bags beside such an MLP ran
longer forked than the two one after the other; the lanes here tell whether that is the
lookups' scattered reads, any kernel that streams device memory, or any kernel that keeps
many warps on the SMs, and whether a bf16 MLP (tensor-core GEMMs) minds the same lanes. Three
lanes of twelve 2 us clock spins (CuPy, read nothing) tell what about a kernel beside does it:
one block each (one SM busy), 4 blocks of 256 threads an SM (half of an SM's threads: the
GEMMs' 64-thread blocks fit beside them) and 8 such an SM (every thread slot held while a spin
runs: a GEMM block waits for an SM to empty).

    python3 scripts/fma_gemm_beside_probe.py --out fma_gemm_beside.json [--trials 15]

Needs a CUDA device and PyTorch.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import (capture, corner, cupy_spin_module, fork_join, fork_lanes,  # noqa: E402
                        graph_times, probe_args)


def main():
    args = probe_args(__doc__, 15)
    import torch
    f = torch.nn.functional
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(129_30)

    with torch.device("cuda"):
        tables = [torch.nn.EmbeddingBag(1_000_000, 64, mode="sum") for _ in range(4)]
        idx = [torch.randint(0, 1_000_000, (512 * 20,)) for _ in range(4)]
        offsets = torch.arange(0, 512 * 20, 20)
        table = torch.randn(1_000_000, 64)
        rows = torch.randint(0, 1_000_000, (512 * 20,))
        streamed = torch.randn(8 * 1024 * 1024)
        resident = torch.randn(256 * 1024)
        dense = torch.randn(512, 256)
        mlp = [torch.nn.Linear(256, 512), torch.nn.Linear(512, 512), torch.nn.Linear(512, 256)]
        dense16 = dense.bfloat16()
        mlp16 = [torch.nn.Linear(m.in_features, m.out_features).bfloat16() for m in mlp]

    def mlp_of(x, layers):
        def run():
            with torch.no_grad():
                y = x
                for layer in layers:
                    y = f.relu(layer(y))
                return y
        return run

    def lookups():
        with torch.no_grad():
            return torch.cat([t(i, offsets) for t, i in zip(tables, idx)], dim=1)

    def gathers():
        # The lookups' scattered rows without the bags' sums: index_select's own kernel.
        return torch.cat([table.index_select(0, rows) for _ in range(2)], dim=1)

    def stream():
        # Device memory streamed by element-wise kernels of many blocks (32 MiB each way).
        y = streamed
        for _ in range(2):
            y = y * 1.0001
        return y

    def math_in_l2():
        # Many warps of arithmetic on data the L2 holds: a chain of short element-wise kernels.
        y = resident
        for _ in range(12):
            y = torch.sin(y)
        return y

    import cupy as cp
    _mod, spin = cupy_spin_module()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    sink = cp.zeros(1, dtype=cp.float32)

    def spins(blocks, threads):
        def run():
            with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                for _ in range(12):
                    spin((blocks,), (threads,), (cp.uint64(2000), sink),
                         shared_mem=threads * 4)
            return torch.zeros(1, device="cuda")
        return run

    lanes = {"lookups": lookups, "gathers": gathers, "stream": stream, "math_in_l2": math_in_l2,
             "spins_1_block": spins(1, 256), "spins_4_blocks_an_sm": spins(4 * sms, 256),
             "spins_8_blocks_an_sm": spins(8 * sms, 256)}
    mlps = {"mlp_f32": mlp_of(dense, mlp), "mlp_bf16": mlp_of(dense16, mlp16)}
    graphs = {}
    for name, run in {**lanes, **mlps}.items():
        graphs[f"{name}_alone"] = capture(fork_lanes([run]))
    for m, mrun in mlps.items():
        for name, run in lanes.items():
            graphs[f"{name}+{m}"] = capture(
                fork_join(lambda r=run: corner(r()), lambda r=mrun: corner(r())))
    out = graph_times(torch, graphs, args.trials)
    us = out["us"]
    out["forked_over_serial"] = {}
    for m in mlps:
        for name in lanes:
            a, b, both = us[f"{name}_alone"], us[f"{m}_alone"], us[f"{name}+{m}"]
            out["forked_over_serial"][f"{name}+{m}"] = both / (a + b)
            print(f"{name} + {m}: forked {both:.1f} us, serial {a + b:.1f}, longer lane "
                  f"{max(a, b):.1f}: forked / serial {both / (a + b):.2f}", flush=True)
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
