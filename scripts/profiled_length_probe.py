"""Does a kernel run longer while CUPTI records it than it does unprofiled? A graph of 16
ping-ponged launches of one kernel over vectors of 1M to 16M f32 (a CuPy `RawKernel`
three-point smoothing, one element a thread in blocks of 256, and of 64 and 1024 at 4M, or four
elements a thread; CuPy's and PyTorch's element-wise multiply by a scalar), for each: the graph
replayed back to back unprofiled (events, µs a replay); then, after every unprofiled timing of
the process, three single replays under torch.profiler (CUPTI), each node's recorded duration
and the replay's span; the replays timed by events while a session records them, and once the
sessions have ended; and the SM and memory clocks NVML reports while the 4M smoothing runs,
unprofiled and recorded. Held-out batch 88's CuPy smoothing (16 such kernels over 4M) ran 238
µs unprofiled against 256 µs of recorded kernels in its graph.

    python3 scripts/profiled_length_probe.py --out FILE.json
"""
import argparse
import json
import os
import statistics
import sys
from contextlib import nullcontext

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_88_walks import SMOOTH_SRC  # noqa: E402

NODES = 16

# Batch 88's smoothing kernel itself, and the same smoothing four elements a thread.
SRC = SMOOTH_SRC + r'''
extern "C" __global__ void smooth3_x4(const float* x, float* y, long long n) {
    long long base = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 4;
    for (int k = 0; k < 4; ++k) {
        long long i = base + k;
        if (i >= n) return;
        float l = x[i > 0 ? i - 1 : i];
        float r = x[i + 1 < n ? i + 1 : i];
        y[i] = 0.25f * l + 0.5f * x[i] + 0.25f * r;
    }
}
'''


def cupy_case(name, n, per_thread, threads=256):
    """A CuPy graph of NODES launches of `name` (a smoothing kernel, or "multiply": CuPy's
    element-wise multiply by a scalar) ping-ponged between two buffers of `n` f32."""
    import cupy as cp
    x = cp.random.standard_normal(n, dtype=cp.float32)
    bufs = [cp.empty_like(x), cp.empty_like(x)]
    s = cp.cuda.Stream(non_blocking=True)
    module = None
    if name == "multiply":
        def launch(src, dst):
            cp.multiply(src, 0.5, out=dst)
    else:
        module = cp.RawModule(code=SRC)
        kernel = module.get_function(name)
        blocks = (n // per_thread + threads - 1) // threads

        def launch(src, dst):
            kernel((blocks,), (threads,), (src, dst, cp.int64(n)))

    def issue():
        src = x
        for p in range(NODES):
            launch(src, bufs[p % 2])
            src = bufs[p % 2]
    with s:
        for _ in range(3):
            issue()
        s.begin_capture()
        issue()
        g = s.end_capture()
    g.upload(s)

    def replay(count):
        with s:
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record(s)
            for _ in range(count):
                g.launch(s)
            b.record(s)
        b.synchronize()
        return cp.cuda.get_elapsed_time(a, b) * 1e3 / count
    # The graph holds raw addresses and the module's code: the buffers and the module live as
    # long as its replay does.
    replay.keep = (x, bufs, module)
    return replay, s.synchronize


def torch_case(n):
    """A PyTorch graph of NODES `torch.mul(src, 0.5, out=dst)` ping-ponged over `n` f32."""
    import torch
    x = torch.randn(n, device="cuda")
    bufs = [torch.empty_like(x), torch.empty_like(x)]
    s = torch.cuda.Stream()

    def issue():
        src = x
        for p in range(NODES):
            torch.mul(src, 0.5, out=bufs[p % 2])
            src = bufs[p % 2]
    with torch.cuda.stream(s):
        for _ in range(3):
            issue()
    s.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        issue()

    def replay(count):
        with torch.cuda.stream(s):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(count):
                g.replay()
            b.record()
        b.synchronize()
        return a.elapsed_time(b) * 1e3 / count
    replay.keep = (x, bufs)  # the graph holds their addresses
    return replay, s.synchronize


def recorded(torch, replay, sync, count):
    """Each of `count` single replays under torch.profiler: its nodes' durations and span, µs."""
    from torch.profiler import ProfilerActivity, profile
    out = []
    for _ in range(count):
        sync()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            replay(1)
            sync()
        ks = sorted((e.time_range.start, e.time_range.end) for e in prof.events()
                    if e.device_type == torch.autograd.DeviceType.CUDA and e.device_time > 0)
        out.append({"durations_us": [b - a for a, b in ks],
                    "span_us": ks[-1][1] - ks[0][0] if ks else None})
    return out


def clocks_while(run):
    """(SM, memory) clocks in MHz that NVML reports every 10 ms while `run()` runs on another
    thread."""
    import threading
    import time
    import pynvml
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    t = threading.Thread(target=run)
    t.start()
    out = []
    while t.is_alive():
        out.append((pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                    pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM)))
        time.sleep(0.01)
    t.join()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--replays", type=int, default=50)
    ap.add_argument("--while-activities", default="cuda", choices=["cuda", "cpu"],
                    help="what the session the replays are timed in records (cpu: no CUPTI, "
                         "a control)")
    args = ap.parse_args()
    import torch
    cases = {}
    for n in (1 << 20, 1 << 22, 1 << 24):
        cases[f"cupy_smooth3_{n >> 20}M"] = cupy_case("smooth3", n, 1)
    for threads in (64, 1024):
        cases[f"cupy_smooth3_4M_{threads}_threads"] = cupy_case("smooth3", 1 << 22, 1, threads)
    cases["cupy_smooth3_x4_4M"] = cupy_case("smooth3_x4", 1 << 22, 4)
    cases["cupy_multiply_4M"] = cupy_case("multiply", 1 << 22, 1)
    for n in (1 << 22, 1 << 24):
        cases[f"torch_mul_{n >> 20}M"] = torch_case(n)
    for replay, sync in cases.values():
        replay(20)
    # Unprofiled first, interleaved case by case, before any profiler session in the process.
    timed = {k: [] for k in cases}
    for _ in range(args.trials):
        for k, (replay, sync) in cases.items():
            timed[k].append(replay(args.replays))
    res = {}
    for k, (replay, sync) in cases.items():
        rec = recorded(torch, replay, sync, 3)
        sums = [sum(r["durations_us"]) for r in rec]
        step = statistics.median(timed[k])
        res[k] = {"unprofiled_replay_us": timed[k], "recorded": rec}
        later = [d for r in rec for d in r["durations_us"][1:]]
        print(f"{k:22} unprofiled {step:8.1f} us a replay ({min(timed[k]):.1f}-{max(timed[k]):.1f})"
              f"  recorded sum {statistics.median(sums):8.1f} span "
              f"{statistics.median(r['span_us'] for r in rec):8.1f}"
              f"  node after the first {statistics.median(later):6.2f}"
              f"  (unprofiled - recorded sum)/node {(step - statistics.median(sums)) / NODES:+.2f}")
    # The same replays timed by events while a profiler session records them, and again once
    # every session has ended (PyTorch leaves CUPTI attached unless TEARDOWN_CUPTI=1): whether
    # the kernels run longer under CUPTI, or only read longer.
    from torch.profiler import ProfilerActivity, profile
    for k, (replay, sync) in cases.items():
        sync()
        acts = [ProfilerActivity.CUDA if args.while_activities == "cuda" else ProfilerActivity.CPU]
        with profile(activities=acts):
            during = [replay(args.replays) for _ in range(3)]
            sync()
        res[k]["during_session_replay_us"] = during
    for k, (replay, sync) in cases.items():
        after = [replay(args.replays) for _ in range(3)]
        res[k]["after_sessions_replay_us"] = after
        print(f"{k:22} unprofiled {statistics.median(timed[k]):8.1f}  while recorded "
              f"{statistics.median(res[k]['during_session_replay_us']):8.1f}  after the sessions "
              f"{statistics.median(after):8.1f} us a replay")
    # The clocks while the smoothing over 4M runs back to back, unprofiled and recorded: a GPU
    # whose SM clock drops under CUPTI would slow clock-bound kernels and not memory-bound ones.
    replay, sync = cases["cupy_smooth3_4M"]
    for label, session in (("unprofiled", nullcontext()),
                           ("while recorded", profile(activities=[ProfilerActivity.CUDA]))):
        sync()
        with session:
            clocks = clocks_while(lambda: replay(3000))
        res["cupy_smooth3_4M"][f"clocks_{label.replace(' ', '_')}_mhz"] = clocks
        print(f"cupy_smooth3_4M {label}: SM clock {statistics.median(c[0] for c in clocks)} MHz, "
              f"memory clock {statistics.median(c[1] for c in clocks)} MHz ({len(clocks)} samples)")
    with open(args.out, "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(), "nodes": NODES, "cases": res}, f,
                  indent=1)


if __name__ == "__main__":
    main()
