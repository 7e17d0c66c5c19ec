"""A kernel's speed as a graph node against its eager launch, over the same buffers (every
kernel writes into a fixed output, so eager launches and graph nodes touch the same addresses).

Per case, first unprofiled (no profiler has run in the process yet): the graph's time per node
(the slope between graphs of N and 2N nodes, CUDA events), the graph's time per node at N, and
the eager launches' time per kernel queued back to back behind a sleep kernel (events after
the sleep). Then under torch.profiler (CUPTI): each kernel's duration eagerly, queued back to
back, and as a graph node. A ratio below 1 is a kernel that runs shorter as a graph node than
its eager recording says, which a price built from eager recordings would put high.

    python3 scripts/graph_node_speed_probe.py OUT.json
"""
import json
import statistics
import sys

import torch
from torch.profiler import profile, ProfilerActivity

N = 64
TRIALS = 15
SLEEP_CYCLES = 6_000_000  # ~3 ms at 2 GHz: longer than the host takes to issue 2N launches


def f32(mib):
    return torch.randn(int(mib * (1 << 20)) // 4, device="cuda")


def cases():
    """name -> (what, a launch writing into a fixed buffer)."""
    out = {}
    for mib in (0.0625, 1, 4, 16, 256):
        a, b, c = f32(mib), f32(mib), f32(mib)
        out[f"add_{mib}MiB"] = ("element-wise add, f32", lambda a=a, b=b, c=c: torch.add(a, b, out=c))
    a4, c4 = f32(4), f32(4)
    out["exp_4MiB"] = ("element-wise exp, f32", lambda: torch.exp(a4, out=c4))
    out["mul_scalar_4MiB"] = ("multiply by a scalar, f32", lambda: torch.mul(a4, 1.5, out=c4))
    rows = a4.view(1024, 1024)
    red = torch.empty(1024, 1, device="cuda")
    out["row_sum_4MiB"] = ("row sums, f32", lambda: torch.sum(rows, dim=1, keepdim=True, out=red))
    sm = torch.empty_like(rows)
    out["row_softmax_4MiB"] = ("row softmax, f32",
                               lambda: torch.ops.aten._softmax.out(rows, -1, False, out=sm))
    for k in (4096, 8192):
        w = torch.randn(k, k, device="cuda", dtype=torch.bfloat16)
        x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
        y = torch.empty(1, k, device="cuda", dtype=torch.bfloat16)
        out[f"gemv_bf16_{k}"] = (f"bf16 GEMV, {k * k * 2 >> 20} MiB of weights",
                                 lambda w=w, x=x, y=y: torch.mm(x, w, out=y))
    A = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    B = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    C = torch.empty(2048, 2048, device="cuda", dtype=torch.float16)
    out["gemm_fp16_2048"] = ("fp16 GEMM 2048^3 (tensor cores)", lambda: torch.mm(A, B, out=C))
    out["sleep_20k_cycles"] = ("clock-bound spin (torch.cuda._sleep)",
                               lambda: torch.cuda._sleep(20_000))
    return out


def graph_of(fn, n):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            fn()
    torch.cuda.synchronize()
    return g


def event_ms(work):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    work()
    e.record()
    e.synchronize()
    return s.elapsed_time(e)


def eager_queued_us(fn):
    """Per kernel, N launches queued behind a sleep so the GPU runs them back to back."""
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(SLEEP_CYCLES)
    s.record()
    for _ in range(N):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) * 1e3 / N


def unprofiled(fn):
    g1, g2 = graph_of(fn, N), graph_of(fn, 2 * N)
    for _ in range(3):
        g1.replay(), g2.replay()
    slope, at_n, eager = [], [], []
    for _ in range(TRIALS):
        t1 = event_ms(g1.replay)
        t2 = event_ms(g2.replay)
        slope.append((t2 - t1) * 1e3 / N)
        at_n.append(t1 * 1e3 / N)
        eager.append(eager_queued_us(fn))
    return {"graph_slope_us": statistics.median(slope),
            "graph_slope_spread_us": [min(slope), max(slope)],
            "graph_per_node_at_n_us": statistics.median(at_n),
            "eager_queued_unprofiled_us": statistics.median(eager),
            "eager_queued_spread_us": [min(eager), max(eager)]}, g1


def profiled(fn, g):
    r = {}
    for mode in ("eager", "graph"):
        durs = []
        for _ in range(3):
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                if mode == "graph":
                    g.replay()
                else:
                    torch.cuda._sleep(SLEEP_CYCLES)
                    for _ in range(N):
                        fn()
                torch.cuda.synchronize()
            d = [e.device_time for e in prof.events()
                 if e.device_type == torch.autograd.DeviceType.CUDA and e.device_time > 0]
            if mode == "eager":
                d = sorted(d)[:-1]  # drops the holding sleep (the longest)
            durs += d
        r[f"{mode}_profiled_us"] = statistics.median(durs)
        r[f"{mode}_kernels_per_launch"] = len(durs) / (3 * N)
    r["graph_over_eager_profiled"] = r["graph_profiled_us"] / r["eager_profiled_us"]
    return r


def main():
    torch.manual_seed(0)
    cs = cases()
    res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "nodes": N,
           "trials": TRIALS, "cases": {}}
    graphs = {}
    for name, (what, fn) in cs.items():
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        r, graphs[name] = unprofiled(fn)
        res["cases"][name] = {"what": what, **r}
    # Every unprofiled timing first: an attached CUPTI slows later launches.
    for name, (what, fn) in cs.items():
        res["cases"][name].update(profiled(fn, graphs[name]))
    for name, r in res["cases"].items():
        print("%-18s eager %.3f graph %.3f ratio %.3f | slope %.3f at-N %.3f eager-queued %.3f"
              % (name, r["eager_profiled_us"], r["graph_profiled_us"],
                 r["graph_over_eager_profiled"], r["graph_slope_us"],
                 r["graph_per_node_at_n_us"], r["eager_queued_unprofiled_us"]))
    json.dump(res, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
