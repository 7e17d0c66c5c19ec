#!/usr/bin/env python3
"""Lanes of adds over buffers the L2 holds, side by side in one CUDA graph, by three kernels:
PyTorch's own `torch.add`, a one-float-a-thread add (as the engine's `add`) and a
four-floats-a-thread add through 16-byte accesses (as the engine's `add_x4`), both as CuPy raw
kernels on PyTorch's stream. What the lanes move together (two inputs read, one result
written, an add) over the graph's step, for one, two and four lanes and four buffer sizes: the
default run measures the L2's bandwidth with `add_x4` because the one-float add moves little
more than half of what PyTorch's adds do there (`crate::l2_lanes`).

    python3 scripts/l2_add_kernels_probe.py OUT.json

Needs a CUDA device, PyTorch and CuPy.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from small_kernel_pair_probe import capture  # noqa: E402
from walk_parts import replay_ms  # noqa: E402

SRC = r'''
extern "C" __global__ void add1(const float* a, const float* b, float* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a[i] + b[i]; }
extern "C" __global__ void add4(const float4* a, const float4* b, float4* y, unsigned n4) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) { float4 p = a[i], q = b[i];
                y[i] = make_float4(p.x + q.x, p.y + q.y, p.z + q.z, p.w + q.w); } }
'''
NODES = 64
# f32 elements a buffer: 1 MiB, 2 MiB, the default run's share of an H100's L2 (half of 50 MiB
# over four lanes of three buffers, rounded to whole fours) and 4 MiB.
ELEMS = (1 << 18, 1 << 19, 545259 // 4 * 4, 1 << 20)
LANES = (1, 2, 4)
KINDS = ("torch", "add1", "add4")


def lane(torch, cupy, kernels, kind, elems, keep):
    """A function that issues NODES adds of `kind` over three f32 buffers of its own."""
    a, b, c = (torch.randn(elems, device="cuda") for _ in range(3))
    keep.append((a, b, c))
    k1, k4 = kernels

    def issue():
        if kind == "torch":
            for _ in range(NODES):
                torch.add(a, b, out=c)
            return
        with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            for _ in range(NODES):
                if kind == "add1":
                    k1(((elems + 255) // 256,), (256,),
                       (a.data_ptr(), b.data_ptr(), c.data_ptr(), cupy.uint32(elems)))
                else:
                    n4 = elems // 4
                    k4(((n4 + 255) // 256,), (256,),
                       (a.data_ptr(), b.data_ptr(), c.data_ptr(), cupy.uint32(n4)))
    return issue


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    import cupy
    import torch
    mod = cupy.RawModule(code=SRC)
    kernels = (mod.get_function("add1"), mod.get_function("add4"))
    keep, graphs = [], {}
    for kind in KINDS:
        for elems in ELEMS:
            for lanes in LANES:
                fns = [lane(torch, cupy, kernels, kind, elems, keep) for _ in range(lanes)]
                graphs[f"{kind}|{elems}|{lanes}"] = capture(torch, fns)
    times = replay_ms(torch, graphs, 20, 11)
    rows = []
    for key, v in times.items():
        kind, elems, lanes = key.split("|")
        elems, lanes = int(elems), int(lanes)
        us = statistics.median(v) * 1000
        gb_s = lanes * NODES * 12 * elems / us / 1e3
        rows.append(dict(kind=kind, buffer_bytes=4 * elems, lanes=lanes, step_us=us,
                         together_gb_s=gb_s))
        print(f"{kind:6s} {elems * 4 / 1048576:6.2f} MiB x{lanes}: {us:8.1f} us "
              f"{gb_s:7.0f} GB/s together")
    doc = {"device": torch.cuda.get_device_name(), "script": "scripts/l2_add_kernels_probe.py",
           "nodes_a_lane": NODES, "rows": rows}
    with open(sys.argv[1], "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
