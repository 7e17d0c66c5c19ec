"""Kernel durations (CUPTI, torch.profiler) of the same PyTorch kernels (adds of 64 KiB, 4 MiB
and 64 MiB, an exponential, a bf16 GEMV), 40 a round: eager back to back (queued behind a
sleep), eager with the host waiting 20 or 100 us before each, and in a graph; plus the graph's
unprofiled wall time. On an H100 (GPU-7c287f25) eager kernels ran alike at every cadence.

    python3 scripts/eager_cadence_probe.py OUT.json
"""
import json, statistics, sys, time
import torch
from torch.profiler import profile, ProfilerActivity

torch.manual_seed(0)
dev = "cuda"
cases = {}
a4 = torch.randn(1 << 20, device=dev); b4 = torch.randn(1 << 20, device=dev)          # 4 MiB f32
a64 = torch.randn(16 << 20, device=dev); b64 = torch.randn(16 << 20, device=dev)      # 64 MiB f32
s_a = torch.randn(16 << 10, device=dev); s_b = torch.randn(16 << 10, device=dev)      # 64 KiB
W = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16); x = torch.randn(1, 4096, device=dev, dtype=torch.bfloat16)
cases["add_4MiB"] = lambda: torch.add(a4, b4)
cases["add_64MiB"] = lambda: torch.add(a64, b64)
cases["add_64KiB"] = lambda: torch.add(s_a, s_b)
cases["gemv_bf16_4096"] = lambda: torch.nn.functional.linear(x, W)
cases["exp_4MiB"] = lambda: torch.exp(a4)
N = 40

def spin_us(us):
    t = time.perf_counter()
    while (time.perf_counter() - t) * 1e6 < us:
        pass

def durations(prof, name_filter=None):
    out = []
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and e.device_time > 0:
            out.append(e.device_time)  # us
    return out

res = {"gpu": torch.cuda.get_device_name(), "cases": {}}
for name, fn in cases.items():
    for _ in range(20): fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.current_stream().wait_stream(s); torch.cuda.synchronize()
    with torch.cuda.graph(g):
        for _ in range(N): fn()
    torch.cuda.synchronize()
    # unprofiled graph wall, eager b2b wall
    def wall(f, reps=20):
        ts = []
        for _ in range(7):
            torch.cuda.synchronize(); t = time.perf_counter()
            for _ in range(reps): f()
            torch.cuda.synchronize(); ts.append((time.perf_counter() - t) / reps * 1e6)
        return statistics.median(ts)
    g_wall = wall(g.replay) / N
    r = {"graph_wall_per_kernel_us": g_wall}
    for mode in ("eager_b2b", "eager_gap20", "eager_gap100", "graph"):
        for _ in range(2):
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                if mode == "graph":
                    g.replay()
                elif mode == "eager_b2b":
                    # queue behind a long kernel so the launches pile up and run back to back
                    torch.cuda._sleep(2_000_000)
                    for _ in range(N): fn()
                else:
                    gap = 20 if mode == "eager_gap20" else 100
                    for _ in range(N):
                        fn(); spin_us(gap)
                torch.cuda.synchronize()
        d = [v for v in durations(prof) if v < 1e5]
        d = sorted(d)[: N] if mode == "eager_b2b" else d  # drop the sleep kernel (longest)
        r[mode] = {"median_us": statistics.median(d), "n": len(d)}
    res["cases"][name] = r
    print(name, json.dumps(r))
json.dump(res, open(sys.argv[1], "w"), indent=1)
