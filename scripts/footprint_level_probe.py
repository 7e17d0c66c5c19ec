#!/usr/bin/env python3
"""What sets the size of the step between the two levels of per-node graph cost?

Every node of a graph steps by 0.17-0.19 us when the process moves to the upper level
(`scripts/graph_level_probe.py`), but real decode walks, which read a different layer's
weights at every GEMM, step by ~0.35 us a node, and so do the replay's streaming stand-ins.
Here, in one process, graphs of 256 one-block kernels, K of them replaced by kernels that
read (or write) B bytes each, timed unprofiled at the level the process starts at and again
after kernels on another stream. A read is *fresh* when every replay reads memory no replay
read recently (a device cursor walks a 4 GiB arena), *resident* when every kernel of every
replay reads the same B bytes. The step a node is (upper - lower) / nodes.

It separates: the memory a replay touches (K x B against the L2) from the traffic (resident
reads); the share of nodes that read (the same footprint in 8, 32 or 128 kernels: if only
reading nodes stepped more, the step would grow with K); and copies of host memory.

    python3 scripts/footprint_level_probe.py [--out FILE]
"""
import argparse
import json
import os
import sys

import cupy as cp
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import launch_on_other_stream, replay_ms  # noqa: E402

NODES = 256
MIB = 1 << 20
ARENA_WORDS = (4 << 30) // 16  # int4 words
SRC = r'''
extern "C" __global__ void tiny(int* x) { if (threadIdx.x == 100000) x[0] = 1; }
extern "C" __global__ void touch(int4* arena, unsigned long long words,
                                 unsigned long long arena_words,
                                 const unsigned long long* cursor, unsigned long long offset,
                                 int write, int* sink) {
    unsigned long long base = (cursor[0] + offset) % arena_words;
    int acc = 0;
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < words;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned long long j = base + i;
        if (j >= arena_words) j -= arena_words;
        if (write) { arena[j] = make_int4(1, 2, 3, (int)i); }
        else { int4 v = arena[j]; acc ^= v.x ^ v.y ^ v.z ^ v.w; }
    }
    if (acc == 0x7fffffff) sink[0] = acc;
}
extern "C" __global__ void advance(unsigned long long* cursor, unsigned long long by) {
    cursor[0] += by;
}
'''
# name: (K touching nodes, bytes each, mode[, streams]); mode fresh | resident | write | h2d
# | d2d. With several streams the graph forks at its start and joins at its end, its nodes
# dealt out to the streams in turn, a touching node first on the first stream.
CONFIGS = {
    "tiny only": (0, 0, "fresh"),
    "32 x 256 KiB fresh (8 MiB)": (32, MIB // 4, "fresh"),
    "32 x 512 KiB fresh (16 MiB)": (32, MIB // 2, "fresh"),
    "32 x 1 MiB fresh (32 MiB)": (32, MIB, "fresh"),
    "32 x 1.5 MiB fresh (48 MiB)": (32, 3 * MIB // 2, "fresh"),
    "32 x 2 MiB fresh (64 MiB)": (32, 2 * MIB, "fresh"),
    "32 x 3 MiB fresh (96 MiB)": (32, 3 * MIB, "fresh"),
    "32 x 4 MiB fresh (128 MiB)": (32, 4 * MIB, "fresh"),
    "32 x 16 MiB fresh (512 MiB)": (32, 16 * MIB, "fresh"),
    "8 x 16 MiB fresh (128 MiB)": (8, 16 * MIB, "fresh"),
    "128 x 1 MiB fresh (128 MiB)": (128, MIB, "fresh"),
    "256 x 512 KiB fresh (128 MiB)": (256, MIB // 2, "fresh"),
    "1 x 128 MiB fresh (128 MiB)": (1, 128 * MIB, "fresh"),
    "32 x 4 MiB resident (4 MiB)": (32, 4 * MIB, "resident"),
    "32 x 32 MiB resident (32 MiB)": (32, 32 * MIB, "resident"),
    "32 x 4 MiB writes fresh (128 MiB)": (32, 4 * MIB, "write"),
    "32 x 256 KiB writes fresh (8 MiB)": (32, MIB // 4, "write"),
    "32 x 4 MiB host-to-device copies": (32, 4 * MIB, "h2d"),
    "32 x 256 KiB host-to-device copies": (32, MIB // 4, "h2d"),
    "32 x 4 MiB device-to-device copies": (32, 4 * MIB, "d2d"),
    "2 streams, tiny only": (0, 0, "fresh", 2),
    "2 streams, 1 x 128 MiB fresh": (1, 128 * MIB, "fresh", 2),
    "4 streams, tiny only": (0, 0, "fresh", 4),
    "4 streams, 1 x 128 MiB fresh": (1, 128 * MIB, "fresh", 4),
}


def build(mod, cs, arena, k, nbytes, mode, pinned, dev_src, streams=1):
    tiny, touch, advance = (mod.get_function(f) for f in ("tiny", "touch", "advance"))
    x = cp.zeros(132, dtype=cp.int32)
    sink = cp.zeros(1, dtype=cp.int32)
    cursor = cp.zeros(1, dtype=cp.uint64)
    words = nbytes // 16
    at = set(int(i * NODES / k) for i in range(k)) if k else set()
    with cs:
        # Many kernels on the graph's stream before capture: with them, kernels on another
        # stream move the process to the upper level (scripts/graph_level_probe.py).
        for _ in range(1000):
            tiny((1,), (32,), (x,))
        cs.synchronize()
        cs.begin_capture()
        side = [cp.cuda.Stream(non_blocking=True) for _ in range(streams - 1)]
        fork = cp.cuda.Event()
        fork.record(cs)
        for st in side:
            st.wait_event(fork)
        n = 0
        for i in range(NODES):
            if i not in at:
                on = ([cs] + side)[i % streams]
                with on:
                    tiny((1,), (32,), (x,))
            elif mode in ("fresh", "resident", "write"):
                off = 0 if mode == "resident" else n * words
                touch((528,), (256,), (arena, cp.uint64(words), cp.uint64(ARENA_WORDS), cursor,
                                       cp.uint64(off), cp.int32(mode == "write"), sink))
                n += 1
            else:
                dst = arena.data.ptr + n * nbytes
                if mode == "h2d":
                    cp.cuda.runtime.memcpyAsync(dst, pinned.ptr + n * nbytes, nbytes, 1, cs.ptr)
                else:
                    cp.cuda.runtime.memcpyAsync(dst, dev_src.data.ptr + n * nbytes, nbytes, 3,
                                                cs.ptr)
                n += 1
        for st in side:
            join = cp.cuda.Event()
            join.record(st)
            cs.wait_event(join)
        if mode in ("fresh", "write"):
            advance((1,), (1,), (cursor, cp.uint64(n * words)))
        g = cs.end_capture()
    g.upload(cs)
    nodes = NODES + (1 if mode in ("fresh", "write") else 0)
    return (lambda: g.launch(cs)), nodes, (g, x, sink, cursor)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    torch.zeros(1, device="cuda")
    mod = cp.RawModule(code=SRC)
    arena = cp.zeros(ARENA_WORDS * 4, dtype=cp.int32)
    pinned = cp.cuda.alloc_pinned_memory(32 * 4 * MIB)
    np.frombuffer(pinned, dtype=np.uint8, count=32 * 4 * MIB)[:] = 1
    dev_src = cp.ones(32 * 4 * MIB, dtype=cp.uint8)
    cs = cp.cuda.Stream(non_blocking=True)
    graphs, keep = {}, []
    for name, (k, nbytes, mode, *streams) in CONFIGS.items():
        fn, nodes, held = build(mod, cs, arena, k, nbytes, mode, pinned, dev_src, *streams)
        graphs[name] = (fn, nodes)
        keep.append(held)
    for fn, _ in graphs.values():
        fn()
    cs.synchronize()

    def all_ms():
        # torch.cuda.synchronize waits for the whole device, the CuPy stream's graphs too.
        return {k: replay_ms(fn) for k, (fn, _) in graphs.items()}

    lower = all_ms()
    launch_on_other_stream("torch")
    other = all_ms()
    # A graph uploaded and destroyed unlaunched holds the process at the upper level
    # (scripts/grid_level_probe.py).
    tiny = mod.get_function("tiny")
    z = cp.zeros(1, dtype=cp.int32)
    with cs:
        cs.begin_capture()
        for _ in range(4):
            tiny((1,), (32,), (z,))
        pend = cs.end_capture()
    pend.upload(cs)
    cs.synchronize()
    del pend
    upper = all_ms()
    rows = {}
    print(f"{'graph':38s} {'nodes':>5s} {'start us':>9s} {'other us':>9s} {'upper us':>9s}"
          f" {'step/node':>9s}")
    for k, (_, nodes) in graphs.items():
        step = (upper[k] - lower[k]) * 1e3 / nodes
        rows[k] = {"nodes": nodes, "start_ms": lower[k], "after_other_stream_ms": other[k],
                   "after_pending_graph_ms": upper[k], "step_us_per_node": step}
        print(f"{k:38s} {nodes:5d} {lower[k] * 1e3:9.2f} {other[k] * 1e3:9.2f}"
              f" {upper[k] * 1e3:9.2f} {step:9.3f}")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(), "nodes": NODES,
                       "l2_bytes": cp.cuda.Device().attributes["L2CacheSize"],
                       "graphs": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
