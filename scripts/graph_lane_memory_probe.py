#!/usr/bin/env python3
"""How much memory do the lanes of a captured PyTorch graph touch, against the same step run
eagerly? Held-out batch 94's four lanes of f32 clamps and square roots over 512 Ki elements
ran in their real graph at about device memory's pace (3.3 TB/s for the bytes they move, on
an H100) though each lane's tensors, as the eager step reuses them, fit the L2 many times
over; the offline model, pricing them within the L2, came 29% low. If the capture gives a
side stream's chain a fresh block for every result instead of reusing the one just freed,
the graph's lanes read and write far more memory than the eager step did.

For each case (lanes of a chain of element-wise ops over a tensor of its own, forked from the
current stream as the held-out walks fork them): the distinct result addresses each lane
used, and the bytes they span, eagerly (one step after warm-up) and inside the capture; and
the unprofiled graph's time beside the same lanes written to two buffers a lane
(`out=`, ping-pong), which keeps each lane's footprint at two tensors whatever the capture
does, and beside lanes of as many adds of two buffers into a third (`out=`, three buffers a
lane), the kernel the default run's L2 figure is timed with: whether four lanes of unary
kernels slow each other more than four lanes of as many adds over tensors of the same size.

`--dtype float16` keeps PyTorch's grid (1024 elements a block of 128 threads for f32 and for
16-bit types alike) and halves the bytes: if four lanes take as long in f16 as in f32, what
slows them is the kernels or their blocks, not the bytes they move. Found on two H100s
(docs/graph-lane-memory-dtypes-h100.json): neither; within the L2 a round of the lanes' kernels
takes as long for the same bytes written whatever they read (adds as unary kernels, f16 lanes
of 512 Ki as f32 lanes of 256 Ki), which `replay --summary` now prices
(`l2_lanes::WRITTEN_PART`). On the H200 (docs/graph-lane-memory-h200.json) the capture reused
each lane's result blocks exactly as the eager step did. `--lanes 1 2` at a quarter, half
and one round of blocks, in f16 and in f32 at the same bytes
(docs/graph-lane-memory-fill-h100.json): two lanes cost what they write, not the SMs their blocks fill (one full round of f16 blocks
1.54 times one lane, the same bytes in half a round of f32 1.76 times), so `replay --summary`
gives PyTorch's contiguous element-wise kernels within the L2 no share of the SMs.

`--broadcast` adds lanes of row-broadcast adds (PyTorch's strided `elementwise_kernel`), of
scalar adds moving the same bytes through the contiguous kernel, and from two lanes up half
of each: within the L2 two lanes of row adds took 1.32-1.58 times one lane on an H100, where
`replay --summary` holds each by its share of the SMs (two lanes twice one) and by its bytes
would price them 8-47% low; the mixed layout says which hold a strided kernel keeps beside a
contiguous one.

`--transposed SIDE` adds lanes of adds of a SIDE x SIDE matrix and its transpose (the strided
kernel reading one operand across its rows: a 32-byte sector for each element of it) and lanes
of adds of two such matrices (the same bytes, every read along the rows): whether reads across
rows, which move many times their bytes through the L2, slow lanes side by side by more than
their bytes say.

`--traces DIR`, after all timing, records one eager step of each graph's layout
(`DIR/{LAYOUT}.eager.json`), so that `scripts/price_probe_traces.py` sets `replay --summary`'s
price of each beside the graph timed here (no GPU).

    python3 scripts/graph_lane_memory_probe.py --out FILE.json [--trials N] [--elems N]
        [--lanes 1 4] [--dtype float32|float16|bfloat16] [--broadcast] [--transposed SIDE]
        [--traces DIR]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture, graph_times, record_steps  # noqa: E402


def chain_fresh(torch, ops, seen):
    """Batch 94's clamp-sqrt chain, each result a new tensor; its results' addresses into
    `seen` (a list)."""
    def run(y):
        for k in range(ops):
            y = torch.clamp(y, -4.0, 4.0) if k % 2 == 0 else torch.sqrt(y.abs() + 1.0)
            seen.append((y.data_ptr(), y.numel() * y.element_size()))
        return y
    return run


def chain_two_buffers(torch, ops, bufs):
    """The same kernels, every result written into one of `bufs` in turn (`out=`)."""
    def run(y):
        for k in range(ops):
            a, b = bufs[k % 2], bufs[(k + 1) % 2]
            if k % 2 == 0:
                torch.clamp(y, -4.0, 4.0, out=a)
            else:
                torch.abs(y, out=b)
                torch.add(b, 1.0, out=b)
                torch.sqrt(b, out=a)
            y = a
        return y
    return run


def chain_adds(torch, kernels, bufs):
    """`kernels` adds of two of `bufs` into the third (`out=`), the kind of kernel whose lanes
    the default run's L2 figure times: two inputs read and a result written each."""
    def run(y):
        a, b, c = bufs
        for k in range(kernels):
            torch.add(a, b, out=c)
            a, b, c = b, c, a
        return a
    return run


def chain_row_adds(torch, kernels, bufs, row):
    """`kernels` adds of a row broadcast over a matrix (`out=`, two buffers in turn): PyTorch's
    strided `elementwise_kernel`, which computes every element's offsets, where the other
    chains run its contiguous (vectorised) kernels."""
    def run(y):
        a, b = bufs
        for _ in range(kernels):
            torch.add(a, row, out=b)
            a, b = b, a
        return a
    return run


def chain_scalar_adds(torch, kernels, bufs):
    """`kernels` adds of a scalar to a matrix (`out=`, two buffers in turn): the bytes of a row
    add (the matrix read, one as large written) through PyTorch's contiguous kernel."""
    def run(y):
        a, b = bufs
        for _ in range(kernels):
            torch.add(a, 1e-3, out=b)
            a, b = b, a
        return a
    return run


def broadcast_layouts(torch, lanes, kernels, mats, rows):
    """With `--broadcast`, each layout of `lanes` lanes over the matrices `mats` (two a lane)
    and `rows`: every lane row adds (the strided kernel), every lane scalar adds (the same
    bytes, contiguous), and from two lanes up half of each, the strided lanes first: whether a
    strided kernel beside a contiguous one is held by its bytes, as the contiguous pair is, or
    by its share of the SMs, as the model holds it."""
    def lane(chain, m, r):
        return lambda: chain(m, r)(None).reshape(-1)

    def row(m, r):
        return chain_row_adds(torch, kernels, m, r)

    def scalar(m, r):
        return chain_scalar_adds(torch, kernels, m)
    out = {f"{lanes}_lanes_row_adds": lanes_step(torch, [
               lane(row, m, r) for m, r in zip(mats, rows)]),
           f"{lanes}_lanes_scalar_adds": lanes_step(torch, [
               lane(scalar, m, r) for m, r in zip(mats, rows)])}
    if lanes >= 2:
        half = lanes // 2
        out[f"{lanes}_lanes_row_beside_scalar_adds"] = lanes_step(torch, [
            lane(row if i < half else scalar, m, r)
            for i, (m, r) in enumerate(zip(mats, rows))])
    return out


def chain_transposed_adds(torch, kernels, bufs):
    """`kernels` adds of a square matrix and its transpose (`out=`, two buffers in turn): the
    strided kernel reading one operand across its rows, a 32-byte sector an element."""
    def run(y):
        a, b = bufs
        for _ in range(kernels):
            torch.add(a, a.T, out=b)
            a, b = b, a
        return a
    return run


def transposed_layouts(torch, lanes, kernels, squares):
    """With `--transposed`, each layout of `lanes` lanes over `squares` (three square matrices
    a lane): every lane adds a matrix to its transpose, every lane adds two matrices
    (`chain_adds`: the same bytes, read along the rows). Whether lanes whose reads cross rows slow each other more than
    their bytes say: batch 100's four lanes of `(y + y.T) * 0.5` ran 1.7 times `--summary`'s
    price on an H100."""
    def lane(chain, sq):
        return lambda: chain(torch, kernels, sq)(None).reshape(-1)
    return {f"{lanes}_lanes_transposed_adds": lanes_step(torch, [
                lane(chain_transposed_adds, sq[:2]) for sq in squares]),
            f"{lanes}_lanes_square_adds": lanes_step(torch, [
                lane(chain_adds, sq) for sq in squares])}


def lanes_step(torch, parts):
    """Each of `parts` (a function of nothing) on a stream of its own, forked from the current
    stream and joined back, their results' first elements summed."""
    streams = [torch.cuda.Stream() for _ in parts]

    def step():
        main = torch.cuda.current_stream()
        outs = []
        with torch.no_grad():
            for s, f in zip(streams, parts):
                s.wait_stream(main)
                with torch.cuda.stream(s):
                    outs.append(f()[:1])
            for s in streams:
                main.wait_stream(s)
            return sum(outs)
    return step


def footprint(seen):
    """Distinct addresses and the bytes they span (distinct blocks' sizes summed)."""
    blocks = dict(seen)
    return {"distinct_results": len(blocks), "mib": sum(blocks.values()) / 2**20}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--trials", type=int, default=9)
    p.add_argument("--elems", type=int, default=1 << 19)
    p.add_argument("--ops", type=int, default=12)
    p.add_argument("--lanes", type=int, nargs="+", default=[1, 4])
    p.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    p.add_argument("--broadcast", action="store_true",
                   help="also time lanes of row-broadcast adds (PyTorch's strided kernel), of "
                        "scalar adds of the same bytes (contiguous) and of half of each")
    p.add_argument("--transposed", type=int, default=0, metavar="SIDE",
                   help="also time lanes of adds of a SIDE x SIDE matrix and its transpose, and "
                        "of adds of two such matrices (the same bytes, read along the rows)")
    p.add_argument("--traces", default="",
                   help="record one eager step of each layout here, after all timing")
    a = p.parse_args(argv)
    import torch
    dtype = getattr(torch, a.dtype)
    out = {"device": torch.cuda.get_device_name(), "elems": a.elems, "ops": a.ops,
           "dtype": a.dtype, "cases": {}}
    graphs = {}
    steps = {}  # layout -> its eager step, recorded with --traces once all timing is done
    # Every case's tensors live as long as its graphs, which read and write them on replay.
    keep = []
    for lanes in a.lanes:
        with torch.device("cuda"):
            xs = [torch.randn(a.elems, dtype=dtype) for _ in range(lanes)]
            bufs = [[torch.empty(a.elems, dtype=dtype) for _ in range(2)] for _ in range(lanes)]
        seen = [[] for _ in range(lanes)]
        fresh = lanes_step(torch, [
            (lambda x=x, s=s: chain_fresh(torch, a.ops, s)(x)) for x, s in zip(xs, seen)])
        for s in seen:
            s.clear()
        fresh()
        torch.cuda.synchronize()
        eager = [footprint(s) for s in seen]
        for s in seen:
            s.clear()
        steps[f"{lanes}_lanes_fresh"] = fresh
        graphs[f"{lanes}_lanes_fresh"] = capture(fresh)
        captured = [footprint(s[-a.ops:]) for s in seen]
        two = lanes_step(torch, [
            (lambda x=x, b=b: chain_two_buffers(torch, a.ops, b)(x)) for x, b in zip(xs, bufs)])
        steps[f"{lanes}_lanes_two_buffers"] = two
        graphs[f"{lanes}_lanes_two_buffers"] = capture(two)
        with torch.device("cuda"):
            trios = [[torch.randn(a.elems, dtype=dtype) for _ in range(3)] for _ in range(lanes)]
        keep.append((xs, bufs, trios))
        kernels = 2 * a.ops  # the clamp-sqrt chain's kernels: a clamp, then abs, add and sqrt
        adds = lanes_step(torch, [
            (lambda t=t: chain_adds(torch, kernels, t)(None)) for t in trios])
        steps[f"{lanes}_lanes_adds"] = adds
        graphs[f"{lanes}_lanes_adds"] = capture(adds)
        if a.broadcast:
            cols = 1024
            with torch.device("cuda"):
                mats = [[torch.randn(a.elems // cols, cols, dtype=dtype) for _ in range(2)]
                        for _ in range(lanes)]
                rows = [torch.randn(1, cols, dtype=dtype) for _ in range(lanes)]
            keep.append((mats, rows))
            for name, step in broadcast_layouts(torch, lanes, kernels, mats, rows).items():
                steps[name] = step
                graphs[name] = capture(step)
        if a.transposed:
            with torch.device("cuda"):
                squares = [[torch.randn(a.transposed, a.transposed, dtype=dtype)
                            for _ in range(3)] for _ in range(lanes)]
            keep.append(squares)
            for name, step in transposed_layouts(torch, lanes, kernels, squares).items():
                steps[name] = step
                graphs[name] = capture(step)
        out["cases"][f"{lanes}_lanes"] = {"eager_per_lane": eager,
                                          "captured_per_lane": captured}
        print(f"{lanes} lane(s): eager {eager[0]}, captured {captured}", flush=True)
    out["graphs"] = graph_times(torch, graphs, a.trials)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    if a.traces:
        record_steps(torch, list(steps.items()), a.traces)


if __name__ == "__main__":
    main()
