#!/usr/bin/env python3
"""Do stand-ins that stream memory reproduce a real walk's step between the per-node levels?

Builds one of validate.py's walks and its real graph, and three stand-in graphs from the walk's
recorded eager trace (same kernel count, recorded grids and blocks):

* spin:        every kernel a spin of its recorded duration (what launch-econ replays);
* stream:      every kernel reads about as many bytes as its grid can stream in its recorded
               duration, from its own place in a 2 GiB buffer (so every replay reads from
               HBM, as a decode step reads its weights);
* stream-long: kernels of 2 us or more stream, shorter ones spin.

All four graphs are timed (unprofiled) at the level the process starts at, then again after
kernels on a new stream (the upper level). The step between the levels, per node, is what the
replay must reproduce.

    python3 scripts/streaming_stand_in_probe.py WALK EAGER_TRACE.json

Result (H200, both processes at the upper level throughout; graph step, ms): MLP walk real
0.470, spin stand-ins 0.432 (-8%), streaming stand-ins for kernels >= 2 us 0.472 (+0.5%), all
streaming 0.498 (+6%); Qwen2 decode real 3.79, spin 3.46 (-9%), stream-long 3.74 (-1%), all
streaming 3.96 (+5%). Stand-in profiled sums within 1.2% of the recorded ones, except all-
streaming (+3..5%: the shortest kernels cannot stream and be as short).

Each stand-in plan is calibrated first: launched eagerly under the profiler (an idle GPU before
each kernel, as recorded), spins lengthened and byte counts scaled until each stand-in's
profiled duration matches its recorded one (three rounds). The profiler runs before the graphs
are timed, for the real graph too.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate  # noqa: E402

import cupy as cp  # noqa: E402
import torch  # noqa: E402

SRC = r'''
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
extern "C" __global__ void stream_rd(const float4* __restrict__ src, unsigned long long n4,
                                     float* sink) {
    // Eight independent loads in flight per thread, so that a wide grid streams at HBM speed.
    float acc = 0.f;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    for (; i + 7 * stride < n4; i += 8 * stride) {
        float4 v[8];
#pragma unroll
        for (int k = 0; k < 8; k++) v[k] = src[i + k * stride];
#pragma unroll
        for (int k = 0; k < 8; k++) acc += v[k].x + v[k].y + v[k].z + v[k].w;
    }
    for (; i < n4; i += stride) { float4 v = src[i]; acc += v.x + v.y + v.z + v.w; }
    if (acc == -1.f) sink[0] = acc;
}
'''
BANDWIDTH = 3.0e12  # bytes/s at most for a streaming stand-in's reads
PER_THREAD = 1.28e8  # bytes/s one thread streams (8 x 16 B in flight per ~1 us)
RAMP_US = 1.0  # of a stand-in's duration spent launching and retiring, not reading
SPIN_OVERHEAD_NS = 600  # a spin's profiled duration beyond its request, roughly
LONG_US = 2.0


def kernels_of(path):
    d = json.load(open(path))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    ks = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    ks.sort(key=lambda e: e["ts"])
    out = []
    for e in ks:
        g, b = e["args"]["grid"], e["args"]["block"]
        out.append((float(e["dur"]), (g[0] * g[1] * g[2],), (b[0] * b[1] * b[2],)))
    return out


def main(name, trace):
    step, kind = validate.build(name)
    stream = torch.cuda.Stream()
    real = validate.capture_torch(step, stream)
    real.replay()  # launched at once: a graph built and not yet launched raises every graph
    torch.cuda.synchronize()

    mod = cp.RawModule(code=SRC)
    spin, stream_rd = mod.get_function("spin"), mod.get_function("stream_rd")
    arena = cp.zeros(1 << 29, dtype=cp.float32)  # 2 GiB
    sink = cp.zeros(1, dtype=cp.float32)
    ks = kernels_of(trace)

    def calls_of(plan):
        """Launch calls for a plan: per kernel ("spin", ns) or ("stream", n4)."""
        offset, calls = 0, []
        for (kind, v), (_, grid, block) in zip(plan, ks):
            if kind == "stream":
                if offset + v * 4 > arena.size:
                    offset = 0
                calls.append((stream_rd, grid, block, (arena[offset:], cp.uint64(v), sink)))
                offset += v * 4 + 64 * 1024  # a fresh place each node, beyond the last
            else:
                calls.append((spin, grid, block, (cp.uint64(v),)))
        return calls

    def first_plan(stream_if):
        plan = []
        for dur_us, grid, block in ks:
            if stream_if(dur_us):
                bw = min(BANDWIDTH, grid[0] * block[0] * PER_THREAD)
                plan.append(("stream", max(1, int(max(0.0, dur_us - RAMP_US) * 1e-6 * bw / 16))))
            else:
                plan.append(("spin", max(0, int(dur_us * 1e3) - SPIN_OVERHEAD_NS)))
        return plan

    def profiled_us(calls):
        """Each call's profiled duration, µs, launched eagerly on an idle GPU (as recorded)."""
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            with cp.cuda.ExternalStream(stream.cuda_stream):
                for f, grid, block, args in calls:
                    f(grid, block, args)
                    stream.synchronize()
        ev = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        ev.sort(key=lambda e: e.time_range.start)
        assert len(ev) == len(calls), (len(ev), len(calls))
        return [e.time_range.end - e.time_range.start for e in ev]

    def calibrated(stream_if, rounds=3):
        """A plan whose stand-ins' profiled durations match the recorded ones."""
        plan = first_plan(stream_if)
        for _ in range(rounds):
            got = profiled_us(calls_of(plan))
            nxt = []
            for (kind, v), m, (d, _, _) in zip(plan, got, ks):
                if kind == "spin":
                    nxt.append((kind, max(0, int(v + (d - m) * 1e3))))
                else:
                    f = min(10.0, max(0.1, (d - 0.8) / max(m - 0.8, 0.05)))
                    nxt.append((kind, max(1, int(v * f))))
            plan = nxt
        got = profiled_us(calls_of(plan))
        err = sum(got) / sum(k[0] for k in ks) - 1
        return plan, err

    def captured(plan):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=stream):
            with cp.cuda.ExternalStream(stream.cuda_stream):
                for f, grid, block, args in calls_of(plan):
                    f(grid, block, args)
        g.replay()
        torch.cuda.synchronize()
        return g

    plans = {k: calibrated(f) for k, f in (("spin", lambda d: False),
                                           ("stream", lambda d: True),
                                           ("stream-long", lambda d: d >= LONG_US))}
    graphs = {"real": real}
    graphs.update({k: captured(p) for k, (p, _) in plans.items()})

    def all_timed():
        first = {k: validate.replay_ms(g.replay) for k, g in graphs.items()}
        second = {k: validate.replay_ms(g.replay) for k, g in reversed(list(graphs.items()))}
        return {k: round((first[k] + second[k]) / 2, 4) for k in graphs}

    lower = all_timed()
    validate.launch_on_other_stream("torch")
    upper = all_timed()
    n = len(ks)
    res = {"walk": name, "kernels": n, "recorded_kernel_sum_ms": sum(k[0] for k in ks) / 1e3,
           "stand_in_profiled_sum_error": {k: round(e, 4) for k, (_, e) in plans.items()},
           "graph_ms": {k: {"lower": lower[k], "upper": upper[k],
                            "step_us_per_node": round((upper[k] - lower[k]) * 1e3 / n, 3)}
                        for k in graphs}}
    print(json.dumps(res, indent=1), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
