#!/usr/bin/env python3
"""Small adds beside a chain of decode GEMMs, measured two ways that disagree: the device
profile's small points (`launch-econ`'s own add kernel, 64 blocks of 256 threads, forked off
the stream that runs the GEMMs: +17% at 1024-square GEMMs) and
`scripts/small_beside_lanes_probe.py` (PyTorch's vectorised add, 32 blocks of 128 threads,
every chain forked onto a side stream: +70%). This probe changes one thing at a time, in one
process: the add kernel (PyTorch's, or the engine's source launched through CuPy on PyTorch's
stream), where the GEMMs run (a side stream of their own, or the capture stream itself), and
which lane is issued first (the profile issues the GEMMs first, the other probe the adds).

With `--stamped`, the stretch is also read inside one graph: clock stamps (a one-block CuPy
kernel that writes the GPU's globaltimer) every `--stamp-every` adds and around the GEMMs, the
adds' time per node while the GEMMs ran against after they ended, in the same replay, free of
the per-node level that a difference of two graphs' times moves with; `--lanes 1,2,4` puts
that many GEMM chains beside the adds, each on a stream of its own.

For each GEMM size and variant: the GEMMs alone (a 256 MiB chain of d-square fp16 GEMMs over
16 tokens), 1024 adds over 16 × 1024 floats alone, and the two side by side, as CUDA graphs
replayed unprofiled and interleaved; `stretch` is how much longer an add ran while the GEMMs
ran, p / (b - p), with b the GEMMs' time and p what the adds' chain lost (as the profile
reckons it).

    python3 scripts/small_kernel_kind_probe.py --out small_kernel_kind.json
    python3 scripts/small_kernel_kind_probe.py --stamped-only --sizes 1024 --lanes 1,2,4 \
        --adds 1920 --out stamped.json

`--beside stream` and `--beside spins` (with `--stamped-only`, `--sizes` then block counts)
part what a GEMM lane does to the adds into its two causes: a lane of streaming reads in that
many blocks of 512 threads (a load on device memory without holding SMs) and a lane of clock
spins in that many blocks that each take a whole SM (SMs held without a load).

    python3 scripts/small_kernel_kind_probe.py --stamped-only --beside stream \
        --sizes 16,33,66,132,264 --adds 4096 --stamp-every 16 --out stream.json

`--add-elems` sizes the stamped adds (PyTorch's f32 add of that many elements; its grid and
block, as one profiled add records them after every timing, are in the output's
`add_kernels`; `--small-kernel layernorm` stamps LayerNorms over rows of 1024 instead): beside
spins of nearly every SM (`--sizes 120,124,128,130`), an add of more
blocks than the SMs the spins leave hold at once crowds onto those few SMs, as small kernels
do beside a 128-block GEMM of whole-SM blocks.

    python3 scripts/small_kernel_kind_probe.py --stamped-only --beside spins \
        --sizes 66,120,124,128,130 --add-elems 4096,16384,65536,262144 --adds 4096 \
        --stamp-every 16 --out crowding.json

Needs a CUDA device, PyTorch and CuPy.
"""
import argparse
import json
import os
import statistics
import sys

try:
    import torch
except ImportError:  # the arguments are checked without it; main() then says it is needed
    torch = None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture, gemm_kernels, kernels_of, replay_ms  # noqa: E402

TOKENS = 16
CHAIN_BYTES = 256 << 20
ELEMS = TOKENS * 1024
# The engine's add kernel (crates/memra-engine/src/kernels/add.cu without its PDL hook), one
# element a thread in blocks of 256 as the engine launches it.
ENGINE_ADD = r"""
extern "C" __global__ void add_f32(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ y, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a[i] + b[i];
}
"""


def gemm_chain(d, zeros=False):
    """A 256 MiB chain of fp16 GEMMs over TOKENS rows: `d`-square weights, or `KxN` (a
    string) for K inputs and N outputs."""
    k, n = (int(v) for v in (str(d).split("x") * 2)[:2])
    layers = max(1, CHAIN_BYTES // (2 * k * n))
    make = torch.zeros if zeros else torch.randn
    ws = [make(k, n, dtype=torch.float16, device="cuda") for _ in range(layers)]
    x = torch.randn(TOKENS, k, dtype=torch.float16, device="cuda")
    y = torch.empty(TOKENS, n, dtype=torch.float16, device="cuda")

    def run():
        for w in ws:
            torch.mm(x, w, out=y)
    run.layers = layers
    run.bytes = 2 * k * n + 2 * TOKENS * (k + n)
    return run


def torch_adds(count):
    """Launch function of a lane of `count` PyTorch adds on buffers of its own."""
    a, b = (torch.randn(ELEMS, device="cuda") for _ in range(2))
    y = torch.empty_like(a)

    def run():
        for _ in range(count):
            torch.add(a, b, out=y)
    return run


def engine_adds(count):
    import cupy as cp
    kernel = cp.RawKernel(ENGINE_ADD, "add_f32")
    a, b = (cp.random.standard_normal(ELEMS, dtype=cp.float32) for _ in range(2))
    y = cp.empty_like(a)
    n = cp.uint32(ELEMS)
    grid = ((ELEMS + 255) // 256,)

    def run():
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            for _ in range(count):
                kernel(grid, (256,), (a, b, y, n))
    return run


STAMP = r"""
extern "C" __global__ void stamp(unsigned long long* t, int i) {
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (threadIdx.x == 0) t[i] = now;
}
"""


# A streaming read: each thread sums float4s of its slice, grid-stride; `blocks` of 512
# threads take a quarter of an SM's threads each, so small kernels still fit beside them.
STREAM_READ = r"""
extern "C" __global__ void stream_read(const float4* __restrict__ x, unsigned long long n4,
                                       float* out) {
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        float4 v = x[i];
        acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
    }
    if (acc.x + acc.y + acc.z + acc.w == 1234.5f) out[0] = 1.f;
}
"""
STREAM_BYTES = 1 << 30
STREAM_CALLS = 128
SPIN_NS = 5000
SPIN_CALLS = 100


def stream_lane(blocks):
    """A lane of STREAM_CALLS streaming reads over 1 GiB (a slice each, past any L2) in
    `blocks` blocks of 512 threads: memory load without holding the SMs."""
    import cupy as cp
    kernel = cp.RawKernel(STREAM_READ, "stream_read")
    x = cp.zeros(STREAM_BYTES // 4, dtype=cp.float32)
    out = cp.zeros(1, dtype=cp.float32)
    n4 = STREAM_BYTES // 16 // STREAM_CALLS

    def run():
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            for c in range(STREAM_CALLS):
                kernel((blocks,), (512,), (x[c * n4 * 4:(c + 1) * n4 * 4], cp.uint64(n4), out))
    run.bytes = STREAM_BYTES // STREAM_CALLS  # a call's, as a GEMM chain's is a layer's
    run.layers = STREAM_CALLS
    return run


def spin_lane(blocks):
    """A lane of SPIN_CALLS clock spins of SPIN_NS, `blocks` blocks each asking all of an SM's
    shared memory: SMs held without a memory load."""
    import cupy as cp
    from walk_parts import cupy_spin_module
    _, spin = cupy_spin_module()
    smem = cp.cuda.Device().attributes.get("MaxSharedMemoryPerBlockOptin", 213268)
    spin.max_dynamic_shared_size_bytes = smem
    out = cp.zeros(1, dtype=cp.float32)

    def run():
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            for _ in range(SPIN_CALLS):
                spin((blocks,), (256,), (cp.uint64(SPIN_NS), out), shared_mem=smem)
    run.bytes = 0
    run.layers = SPIN_CALLS
    return run


def stamp_marker():
    """`mark(t, i)`: a one-block kernel on PyTorch's current stream that writes the GPU clock
    into `t[i]` (a CuPy array of uint64)."""
    import cupy as cp
    kernel = cp.RawKernel(STAMP, "stamp")

    def mark(t, i):
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            kernel((1,), (32,), (t, cp.int32(i)))
    return mark


def stamped_step(others, stamped_round, rounds, at, gt):
    """A step that forks each of `others` (a function issuing one lane's work) onto a stream
    of its own, stamped into `gt` at its start (2k) and end (2k + 1), and beside them
    `stamped_round(r)` for each of `rounds` rounds on one more stream, stamped into `at` before
    the first round and after each; all joined back."""
    mark = stamp_marker()

    def step():
        main = torch.cuda.current_stream()
        sides = [torch.cuda.Stream() for _ in range(len(others) + 1)]
        for s in sides:
            s.wait_stream(main)
        for k, other in enumerate(others):
            with torch.cuda.stream(sides[k + 1]):
                mark(gt, 2 * k)
                other()
                mark(gt, 2 * k + 1)
        with torch.cuda.stream(sides[0]):
            mark(at, 0)
            for r in range(rounds):
                stamped_round(r)
                mark(at, r + 1)
        for s in sides:
            main.wait_stream(s)
    return step


def replayed_split(replayed, at, gt, every, trials):
    """Medians over `trials` replays of `replayed` of the stamped lane's µs an op while every
    other lane ran and after they ended: `at` holds the lane's stamps (`every` ops apart), `gt`
    each other lane's start and end stamps in turn. None if no replay had rounds on both
    sides."""
    during, after = [], []
    rounds = len(at) - 1
    for _ in range(trials):
        replayed.replay()
        torch.cuda.synchronize()
        t, g = at.get().astype("int64"), gt.get().astype("int64")
        g0, g1 = max(g[0::2]), min(g[1::2])
        inside = [t[k + 1] - t[k] for k in range(rounds) if t[k] >= g0 and t[k + 1] <= g1]
        later = [t[k + 1] - t[k] for k in range(rounds) if t[k] >= g1]
        if inside and later:
            during.append(sum(inside) / 1e3 / (len(inside) * every))
            after.append(sum(later) / 1e3 / (len(later) * every))
    if not during:
        return None
    return statistics.median(during), statistics.median(after)


def small_op(kind, elems):
    """The stamped small kernel's launch function over `elems` f32 elements: PyTorch's add
    into a buffer of its own, or a LayerNorm over rows of 1024 (a block a row: a
    normalisation's reductions and barriers instead of an add's lone loads)."""
    a, b = (torch.randn(elems, device="cuda") for _ in range(2))
    if kind == "layernorm":
        x = a.view(-1, 1024)
        return lambda: torch.nn.functional.layer_norm(x, (1024,))
    y = torch.empty_like(a)
    return lambda: torch.add(a, b, out=y)


def stamped(d, count, zero_weights, trials, lanes=1, every=64, beside="gemms", elems=ELEMS,
            kind="add"):
    """Per-add node µs while the GEMMs ran and after they ended, read from clock stamps in
    one graph (`lanes` GEMM chains, each on a side stream of its own and issued first,
    PyTorch's adds (or LayerNorms, `kind`) of `elems` floats on another; "while" is while
    every lane ran), medians over `trials` replays."""
    import cupy as cp
    rounds = count // every
    at = cp.zeros(rounds + 1, dtype=cp.uint64)
    gt = cp.zeros(2 * lanes, dtype=cp.uint64)
    make = {"gemms": lambda: gemm_chain(d, zero_weights), "adds": lambda: torch_adds(count // 2),
            "stream": lambda: stream_lane(int(d)), "spins": lambda: spin_lane(int(d))}[beside]
    chains = [make() for _ in range(lanes)]
    small = small_op(kind, elems)

    def adds_round(_):
        for _ in range(every):
            small()
    step = stamped_step(chains, adds_round, rounds, at, gt)
    split = replayed_split(capture(step, warmups=1)[0], at, gt, every, trials)
    if split is None:
        return None
    dm, am = split
    gemm = {}
    if beside in ("gemms", "stream", "spins"):
        g = gt.get().astype("int64")
        node_us = (min(g[1::2]) - max(g[0::2])) / 1e3 / chains[0].layers
        gemm = {"gemm_node_us_beside": node_us,  # the other lane's kernel node, µs
                "load_gb_s_one_lane": chains[0].bytes / node_us / 1e3}
    return {"d": d, "beside": beside, "lanes": lanes, "adds": count, "add_elems": elems,
            "small_kernel": kind, **gemm,
            "add_node_us_during": dm, "add_node_us_after": am,
            "stretch": dm / am - 1}


def stamped_gemm_lanes(d, trials, lanes, every, tokens=TOKENS, add_kernel="torch"):
    """The GEMMs' own stretch beside other lanes like them, read by clock stamps: a lane of
    d-square fp16 GEMMs over `tokens`, each followed by a small add (the profile's pair
    chains), twice as long as each of `lanes` others like it beside it, stamped every `every`
    layers; per-layer µs while every other lane ran against after they ended (medians over
    `trials` replays). Weights of 256 MiB a lane of the others (512 MiB the stamped one).
    `add_kernel`: PyTorch's add, the engine's (64 blocks of 256 threads, one element each), or
    none (the layers are GEMMs alone)."""
    import cupy as cp
    engine_add = cp.RawKernel(ENGINE_ADD, "add_f32")
    layers = max(2, (CHAIN_BYTES // (2 * d * d)))

    def lane(n):
        ws = [torch.randn(d, d, dtype=torch.float16, device="cuda") for _ in range(n)]
        x = torch.randn(tokens, d, dtype=torch.float16, device="cuda")
        y = torch.empty(tokens, d, dtype=torch.float16, device="cuda")
        a, b = (torch.randn(ELEMS, device="cuda") for _ in range(2))
        z = torch.empty_like(a)

        def add():
            if add_kernel == "none":
                return
            if add_kernel == "torch":
                torch.add(a, b, out=z)
                return
            with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                engine_add(((ELEMS + 255) // 256,), (256,),
                           (cp.uint64(a.data_ptr()), cp.uint64(b.data_ptr()),
                            cp.uint64(z.data_ptr()), cp.uint32(ELEMS)))

        def layer(k):
            torch.mm(x, ws[k], out=y)
            add()
        return layer

    main_layer = lane(2 * layers)
    others = [lane(layers) for _ in range(lanes)]
    rounds = 2 * layers // every
    at = cp.zeros(rounds + 1, dtype=cp.uint64)
    gt = cp.zeros(2 * max(lanes, 1), dtype=cp.uint64)

    def other_lane(other):
        def run():
            for j in range(layers):
                other(j)
        return run

    def main_round(r):
        for j in range(every):
            main_layer(r * every + j)
    step = stamped_step([other_lane(o) for o in others], main_round, rounds, at, gt)
    split = replayed_split(capture(step, warmups=1)[0], at, gt, every, trials)
    if split is None:
        return None
    dm, am = split
    return {"d": d, "tokens": tokens, "add_kernel": add_kernel, "gemm_lanes_beside": lanes,
            "layer_us_during": dm,
            "layer_us_after": am, "stretch": dm / am - 1}


def graph(adds, gemms, gemms_forked, gemms_first):
    """A graph of the adds on a side stream and, if given, the GEMMs on another side stream
    (`gemms_forked`) or on the capture stream itself, the GEMMs issued first or last."""
    def step():
        main = torch.cuda.current_stream()
        sides = [torch.cuda.Stream(), torch.cuda.Stream()]
        for s in sides:
            s.wait_stream(main)

        def issue_adds():
            if adds:
                with torch.cuda.stream(sides[0]):
                    adds()

        def issue_gemms():
            if gemms:
                if gemms_forked:
                    with torch.cuda.stream(sides[1]):
                        gemms()
                else:
                    gemms()
        for f in ((issue_gemms, issue_adds) if gemms_first else (issue_adds, issue_gemms)):
            f()
        for s in sides:
            main.wait_stream(s)
    return capture(step, warmups=1)[0]


def parse_args(argv):
    """The probe's arguments, checked before any GPU work: an error names the bad one and
    exits with status 2."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--trials", type=int, default=9)
    ap.add_argument("--sizes", default="1024,2048",
                    help="GEMM sizes, comma-separated: D for D-square weights, or (with "
                         "--stamped-only) KxN")
    ap.add_argument("--stamped-only", action="store_true",
                    help="skip the variants timed as differences of graphs")
    ap.add_argument("--adds", type=int, default=1024, help="adds in the adds' chain")
    ap.add_argument("--reps", type=int, default=10,
                    help="replays between two events a sample (1: one launch, as the profile times)")
    ap.add_argument("--stamped", action="store_true",
                    help="also read the stretch from clock stamps inside one graph")
    ap.add_argument("--stamp-every", type=int, default=64,
                    help="with --stamped: adds between two stamps (fewer for short GEMM chains)")
    ap.add_argument("--gemm-lanes", action="store_true",
                    help="with --stamped: stamp a lane of GEMMs and adds (the profile's pair "
                         "chains) beside --lanes others like it, instead of small adds")
    ap.add_argument("--tokens", type=int, default=TOKENS, help="with --gemm-lanes: GEMM tokens")
    ap.add_argument("--add-kernel", choices=["torch", "engine", "none"], default="torch",
                    help="with --gemm-lanes: the add after each GEMM (none: GEMMs alone, their "
                         "own stretch beside their twins)")
    ap.add_argument("--beside", choices=["gemms", "adds", "stream", "spins"], default="gemms",
                    help="with --stamped: the lanes beside the stamped adds are GEMM chains, "
                         "chains of half as many adds, streaming reads of 1 GiB in --sizes "
                         "blocks of 512 threads (a load without the SMs), or clock spins in "
                         "--sizes blocks that each take a whole SM (the SMs without a load)")
    ap.add_argument("--lanes", default="1",
                    help="with --stamped: GEMM lanes beside the adds, comma-separated counts")
    ap.add_argument("--zero-weights", action="store_true",
                    help="GEMM weights of zeros, as the profile's chains have")
    ap.add_argument("--add-elems", default=str(ELEMS),
                    help="with --stamped: f32 elements of each stamped add, comma-separated "
                         "(a size a run; more elements, more blocks)")
    ap.add_argument("--small-kernel", choices=["add", "layernorm"], default="add",
                    help="with --stamped: the stamped kernel, PyTorch's add or a LayerNorm "
                         "over rows of 1024 (--add-elems a multiple of 1024)")
    args = ap.parse_args(argv)
    if not all(v.isdigit() and int(v) > 0 for v in args.add_elems.split(",")):
        ap.error(f"--add-elems: {args.add_elems!r} is not positive whole numbers, "
                 "comma-separated")
    add_elems = [int(v) for v in args.add_elems.split(",")]
    if args.small_kernel == "layernorm" and any(e % 1024 for e in add_elems):
        ap.error("--small-kernel layernorm: --add-elems must be multiples of 1024 (rows of 1024)")
    if args.beside in ("stream", "spins") and not args.stamped_only:
        ap.error(f"--beside {args.beside} reads --sizes as block counts: it needs --stamped-only")
    for spec in args.sizes.split(","):
        dims = spec.split("x")
        if not all(v.isdigit() and int(v) > 0 for v in dims) or len(dims) > 2 or (
                len(dims) == 2 and not args.stamped_only):
            ap.error(f"--sizes: {spec!r} is not D or (with --stamped-only) KxN of positive "
                     "whole numbers")
    return args, add_elems


def main():
    args, add_elems = parse_args(sys.argv[1:])
    if torch is None:
        sys.exit("small_kernel_kind_probe.py: needs PyTorch (and CuPy) on a CUDA device")
    torch.manual_seed(0)
    rows = []
    for d in [] if args.stamped_only else [int(s) for s in args.sizes.split(",")]:
        gemms = gemm_chain(d, args.zero_weights)
        for kind, make in (("torch_add", torch_adds), ("engine_add", engine_adds)):
            adds = make(args.adds)
            for forked, first in ((True, False), (False, False), (True, True), (False, True)):
                graphs = {"gemms": graph(None, gemms, forked, first),
                          "adds": graph(adds, None, forked, first),
                          "both": graph(adds, gemms, forked, first)}
                t = {k: statistics.median(v) * 1e3
                     for k, v in replay_ms(torch, graphs, args.reps, args.trials).items()}
                b, p = t["gemms"], t["both"] - t["adds"]
                rows.append({"d": d, "adds": kind, "gemms_forked": forked, "gemms_first": first,
                             **{f"{k}_us": v for k, v in t.items()},
                             "stretch": max(p, 0.0) / (b - p) if p < b else None,
                             "adds_outlast": t["adds"] > b})
                print(json.dumps(rows[-1]), flush=True)
                del graphs
        del gemms
        torch.cuda.empty_cache()
    stamps = []
    if args.stamped or args.stamped_only:
        for d in [s if "x" in s else int(s) for s in args.sizes.split(",")]:
            for n in [int(s) for s in args.lanes.split(",")]:
                if args.gemm_lanes:
                    stamps.append(stamped_gemm_lanes(d, args.trials, n, args.stamp_every,
                                                     args.tokens, args.add_kernel))
                    print(json.dumps(stamps[-1]), flush=True)
                    torch.cuda.empty_cache()
                    continue
                for elems in add_elems:
                    stamps.append(stamped(d, args.adds, args.zero_weights, args.trials, n,
                                          args.stamp_every, args.beside, elems,
                                          args.small_kernel))
                    print(json.dumps(stamps[-1]), flush=True)
                    torch.cuda.empty_cache()
    # The GEMM kernels of each stamped size, profiled after every unprofiled timing.
    grids = {}
    if args.stamped_only and not args.gemm_lanes and args.beside == "gemms":
        for spec in args.sizes.split(","):
            k, n = (int(v) for v in (spec.split("x") * 2)[:2])
            grids[spec] = gemm_kernels(k, TOKENS, n)
            print(spec, json.dumps(grids[spec]), flush=True)
    # The stamped adds' kernels, profiled last for the same reason.
    add_kernels = {}
    if args.stamped or args.stamped_only:
        for elems in add_elems:
            add_kernels[elems] = kernels_of(small_op(args.small_kernel, elems))
            print(elems, json.dumps(add_kernels[elems]), flush=True)
    with open(args.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "tokens": TOKENS, "adds": args.adds, "reps": args.reps,
                   "zero_weights": args.zero_weights, "stamped": stamps, "kernels": grids,
                   "add_kernels": add_kernels, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
