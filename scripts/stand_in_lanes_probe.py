#!/usr/bin/env python3
"""Which stand-in slows as the real kernels do when lanes of short element-wise kernels over
data the L2 holds run side by side? `replay` prices such lanes low on an H100 (validation
doc, "Lanes of element-wise kernels within the L2"): the real lanes take 1.25-1.70 times one
lane's step side by side, while the replay's stand-ins below the floor (the empty kernel, a
one-read chase) do not slow each other. This rebuilds recorded walks from their eager traces,
each kernel as a stand-in of its recorded grid and block on its recorded stream (lanes forked
from the first stream and joined back, as the walks fork them), and times, interleaved in one
process with no profiler, the real walk's graph beside graphs of:

- `empty`: the empty kernel of each shape;
- `touch`: each kernel reading the bytes its operator's inputs hold and writing its result's
  (as large as its largest input) from buffers of its lane that the L2 keeps, as fast as its
  grid can, with no bookkeeping: the work an element-wise kernel does, without its math.
- `ew`: each kernel an element-wise sum of as many inputs as its input bytes hold results'
  worth into its result: the same bytes, read as an element-wise kernel reads them (`ewNN`:
  over NN% of them, a stand-in trimmed towards the kernel's node);
- `ewu`: `ew` with each thread's loads for up to four results issued before any sum or
  store, as a vectorised element-wise kernel issues them (`ewuNN` likewise);
- `torch`: each kernel as PyTorch's own f32 add (where it read more than it wrote) or
  multiplication by a scalar over its result's bytes, on tensors of its lane: the framework's
  element-wise kernels (their grids PyTorch's) on other memory than the walk's.

Each layout of a walk's lanes is timed: side by side (as recorded), one after another on one
stream, and the first lane alone; for the stamps probe's element-wise cases the real kernels
are timed in all three layouts too.

    python3 scripts/stand_in_lanes_probe.py --out FILE.json [--trials N] [--kinds empty,touch,ew]
        --walk GROUP:NAME:TRACE [--walk ...] [--case NAME:TRACE ...]

`--walk` names a walk of a `validate_all.py` group and its recorded eager trace; `--case`
names one of `lane_overlap_stamps_probe.py --cases elementwise` and its side-by-side trace.
"""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture, graph_times, probe_args  # noqa: E402

STAND_IN_SRC = r'''
extern "C" __global__ void empty_kernel() {}

extern "C" __global__ void touch(const float4* __restrict__ src, float4* __restrict__ dst,
                                 unsigned long long n_in, unsigned long long n_out) {
  const unsigned long long width = (unsigned long long)blockDim.x * blockDim.y * blockDim.z;
  const unsigned long long block = blockIdx.x + (unsigned long long)gridDim.x *
      (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
  const unsigned long long stride = width * gridDim.x * gridDim.y * gridDim.z;
  const unsigned long long t = block * width + threadIdx.x +
      (unsigned long long)blockDim.x * (threadIdx.y + (unsigned long long)blockDim.y * threadIdx.z);
  float acc = 0.f;
#pragma unroll 4
  for (unsigned long long i = t; i < n_in; i += stride) {
    float4 v = src[i];
    acc += v.x + v.y + v.z + v.w;
  }
  for (unsigned long long i = t; i < n_out; i += stride) {
    dst[i] = make_float4(acc, acc, acc, acc);
  }
}

// An element-wise kernel over the same bytes: each result word the sum of the k input words
// at its index in each of the k inputs (reads of n_out * k words, writes of n_out).
extern "C" __global__ void ew(const float4* __restrict__ src, float4* __restrict__ dst,
                              unsigned int n_out, unsigned int k) {
  const unsigned int width = blockDim.x * blockDim.y * blockDim.z;
  const unsigned int stride = width * gridDim.x * gridDim.y * gridDim.z;
  const unsigned int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned int t = block * width + threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  for (unsigned int i = t; i < n_out; i += stride) {
    float4 v = src[i];
    for (unsigned int j = 1; j < k; ++j) {
      const float4 w = src[i + j * n_out];
      v.x += w.x; v.y += w.y; v.z += w.z; v.w += w.w;
    }
    dst[i] = v;
  }
}

// ew with each thread's loads of up to four results' inputs issued before any sum or store,
// as a vectorised element-wise kernel issues its loads: one round trip a round, not one a result.
extern "C" __global__ void ewu(const float4* __restrict__ src, float4* __restrict__ dst,
                               unsigned int n_out, unsigned int k) {
  const unsigned int width = blockDim.x * blockDim.y * blockDim.z;
  const unsigned int stride = width * gridDim.x * gridDim.y * gridDim.z;
  const unsigned int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned int t = block * width + threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  for (unsigned int base = t; base < n_out; base += 4u * stride) {
    float4 v[4], w[4][4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const unsigned int i = base + u * stride;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        w[u][j] = (i < n_out && (unsigned)j < k) ? src[i + j * n_out] : make_float4(0.f, 0.f, 0.f, 0.f);
      }
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const unsigned int i = base + u * stride;
      v[u] = w[u][0];
#pragma unroll
      for (int j = 1; j < 4; ++j) {
        v[u].x += w[u][j].x; v[u].y += w[u][j].y; v[u].z += w[u][j].z; v[u].w += w[u][j].w;
      }
      for (unsigned int j = 4; j < k && i < n_out; ++j) {
        const float4 x = src[i + j * n_out];
        v[u].x += x.x; v[u].y += x.y; v[u].z += x.z; v[u].w += x.w;
      }
      if (i < n_out) dst[i] = v[u];
    }
  }
}
'''

# The stream PyTorch's eager steps issue on unless told otherwise.
DEFAULT_STREAM = 7

SIZES = {"float": 4, "c10::Half": 2, "c10::BFloat16": 2, "double": 8, "long int": 8,
         "int": 4, "bool": 1, "unsigned char": 1, "signed char": 1, "short int": 2}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def op_bytes(op):
    """(bytes of the operator's tensor inputs, bytes of its largest input)."""
    dims = op["args"].get("Input Dims") or []
    types = op["args"].get("Input type") or []
    sizes = []
    for d, t in zip(dims, types):
        if not isinstance(d, list) or not d or t not in SIZES:
            continue
        n = 1
        for x in d:
            n *= x
        sizes.append(n * SIZES[t])
    return sum(sizes), max(sizes, default=0)


def kernels_by_stream(trace):
    """(lanes, tail): the lanes, [(stream, [kernel])] in order of each stream's first
    kernel, and the kernels of PyTorch's default stream (7), which the walks fork their lanes
    from and join back to before these kernels (none where it ran none), every
    kernel a dict of grid, block, recorded µs and its operator's input and result bytes (the
    innermost CPU operator around its launch call); stamp kernels left out."""
    ev = trace["traceEvents"]
    ops = [e for e in ev if e.get("cat") == "cpu_op"]
    launches = {e["args"].get("correlation"): e for e in ev
                if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    out = {}
    for k in sorted((e for e in ev if e.get("cat") == "kernel"), key=lambda e: e["ts"]):
        if k["name"] == "stamp":
            continue
        call = launches.get(k["args"].get("correlation"))
        inner = None
        if call:
            around = [o for o in ops if o["tid"] == call["tid"]
                      and o["ts"] <= call["ts"] <= o["ts"] + o.get("dur", 0)]
            inner = min(around, key=lambda o: o.get("dur", 0), default=None)
        read, largest = op_bytes(inner) if inner else (0, 0)
        out.setdefault(k["args"]["stream"], []).append({
            "grid": tuple(k["args"]["grid"]), "block": tuple(k["args"]["block"]),
            "us": k["dur"], "ts": k["ts"], "read": read, "write": largest})
    tail = out.pop(DEFAULT_STREAM, []) if len(out) > 1 else []
    return list(out.items()), tail


def mimic(torch, cp, mod, recorded, variant):
    """A step issuing the `recorded` lanes and tail ([`kernels_by_stream`]) as `variant`
    (layout, kind) stand-ins: each lane on a stream forked from the current one (`"side"`),
    all lanes on one side stream in turn (`"series"`) or the first lane only (`"alone"`),
    joined back, then the tail on the current stream."""
    import numpy as np
    empty = mod.get_function("empty_kernel")
    touch = mod.get_function("touch")
    ew = mod.get_function("ew")
    ewu = mod.get_function("ewu")
    lanes, tail = [ks for _, ks in recorded[0]], recorded[1]
    layout, kind = variant
    if layout == "alone":
        lanes = lanes[:1]
    bufs = []
    for ks in lanes + [tail]:
        # (the element-wise kind reads whole results' worth of words: up to one more)
        words = max([1] + [(max(k["read"], k["write"]) + 15) // 16 + (k["write"] + 15) // 16
                           for k in ks])
        bufs.append((cp.zeros(words * 4, dtype=cp.float32), cp.zeros(words * 4, dtype=cp.float32)))
    side = [torch.cuda.Stream() for _ in (lanes if layout == "side" else lanes[:1])]

    tensors = []
    if kind == "torch":
        for ks in lanes + [tail]:
            n = max([1] + [(k["write"] + 3) // 4 for k in ks])
            tensors.append([torch.rand(n, device="cuda") for _ in range(3)])

    def issue_torch(ks, lane):
        x, y, out = tensors[lane]
        for k in ks:
            n = max(1, (k["write"] + 3) // 4)
            if k["read"] > k["write"]:
                torch.add(x[:n], y[:n], out=out[:n])
            else:
                torch.mul(x[:n], 0.5, out=out[:n])

    def issue(ks, lane):
        if kind == "torch":
            return issue_torch(ks, lane)
        src, dst = bufs[lane]
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            for k in ks:
                if kind == "empty":
                    empty(k["grid"], k["block"], ())
                elif kind.startswith("ew"):
                    # ewNN: NN% of the bytes (a stand-in's reads trimmed to fit its node);
                    # ewu: loads issued four results at a time
                    fn, digits = (ewu, kind[3:]) if kind.startswith("ewu") else (ew, kind[2:])
                    share = int(digits or 100) / 100
                    whole = max(1, (k["write"] + 15) // 16)
                    ins = max(1, -(-((k["read"] + 15) // 16) // whole))
                    n_out = max(1, int(share * whole))
                    fn(k["grid"], k["block"], (src, dst, np.uint32(n_out), np.uint32(ins)))
                else:
                    touch(k["grid"], k["block"], (src, dst, np.uint64((k["read"] + 15) // 16),
                                                  np.uint64((k["write"] + 15) // 16)))

    def step():
        main = torch.cuda.current_stream()
        for s in side:
            s.wait_stream(main)
        for i, ks in enumerate(lanes):
            with torch.cuda.stream(side[i if layout == "side" else 0]):
                issue(ks, i)
        for s in side:
            main.wait_stream(s)
        issue(tail, len(bufs) - 1)
    return step


def real_walk(group, name):
    """The step of walk `name` of `validate_all.py`'s group `group`, as its module builds it."""
    import validate_all
    module = next(m for g, m, _ in validate_all.GROUPS if g == group)
    step, _ = __import__(module[:-3]).build(name)
    return step


def real_case(torch, name):
    """The stamps probe's element-wise case `name` in each layout, as that probe lays it out
    ([`lane_overlap_stamps_probe.stamped`]), without its stamps."""
    import lane_overlap_stamps_probe as stamps
    first, others = stamps.elementwise_cases(torch)[name]
    lanes = [first] + others
    return {layout: stamps.stamped(torch, lambda _slot: None,
                                   lanes[:1] if layout == "alone" else lanes, layout == "side")
            for layout in ("side", "series", "alone")}


# (and ewNN, ewuNN: the element-wise sums over NN% of the bytes)
KINDS = ("empty", "touch", "ew", "ewu", "torch")


def parse_args(argv=None):
    """The probe's arguments, checked before any GPU work (argparse's message and exit 2 for a
    `--walk` or `--case` of the wrong form, an unknown kind, or nothing to probe)."""
    import argparse

    def spec(parts):
        def read(text):
            if text.count(":") != parts - 1 or not all(text.split(":")):
                form = "GROUP:NAME:TRACE" if parts == 3 else "NAME:TRACE"
                raise argparse.ArgumentTypeError(f"takes {form}, not {text!r}")
            return text.split(":")
        return read

    def trimmed(kind):
        digits = kind[3:] if kind.startswith("ewu") else kind[2:]
        return kind.startswith("ew") and digits.isdigit() and 0 < int(digits) <= 100

    def kinds(text):
        got = text.split(",")
        bad = [k for k in got if k not in KINDS and not trimmed(k)]
        if bad:
            raise argparse.ArgumentTypeError(f"unknown kind {bad[0]!r} (of {', '.join(KINDS)})")
        return got

    def extra(ap):
        ap.add_argument("--walk", action="append", default=[], type=spec(3),
                        help="GROUP:NAME:TRACE, a validate_all.py walk and its eager trace")
        ap.add_argument("--case", action="append", default=[], type=spec(2),
                        help="NAME:TRACE, an element-wise case of the stamps probe")
        ap.add_argument("--kinds", default=["empty", "touch"], type=kinds,
                        help="stand-in kinds, comma-separated: " + ", ".join(KINDS))
    args = probe_args(__doc__, 9, argv=argv, extra=extra)
    if not args.walk and not args.case:
        argparse.ArgumentParser(prog="stand_in_lanes_probe.py").error("name a --walk or a --case")
    return args


def main():
    args = parse_args()
    import cupy as cp
    import torch
    mod = cp.RawModule(code=STAND_IN_SRC)
    out = {"device": torch.cuda.get_device_name(), "walks": {}}
    todo = [(name, trace, ("walk", group)) for group, name, trace in args.walk]
    todo += [(name, trace, ("case", None)) for name, trace in args.case]
    with torch.no_grad():
        for name, trace, (what, group) in todo:
            torch.manual_seed(0)
            recorded = kernels_by_stream(load(trace))
            graphs = {}
            if what == "walk":
                step = real_walk(group, name)
                graphs["real.side"] = (capture(step)[0], step)
            else:
                for layout, step in real_case(torch, name).items():
                    graphs[f"real.{layout}"] = (capture(step)[0], step)
            for kind in args.kinds:
                for layout in ("side", "series", "alone"):
                    step = mimic(torch, cp, mod, recorded, (layout, kind))
                    # The step's buffers live as long as its graph, which reads them.
                    graphs[f"{kind}.{layout}"] = (capture(step)[0], step)
            print(name, flush=True)
            times = graph_times(torch, graphs, args.trials)
            out["walks"][name] = {
                "us": times["us"], "spread_us": times["spread_us"],
                "lanes": [[s, len(ks), sum(k["us"] for k in ks)] for s, ks in recorded[0]],
                "tail": [len(recorded[1]), sum(k["us"] for k in recorded[1])]}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
