"""CuPy kernels of a row-normalisation step (batch 82's CuPy walk, written into fixed buffers with
out=) timed by CUPTI (torch.profiler) eagerly on a CuPy stream and in a cupy.cuda.Graph of the
same step: per kernel name, the median duration in each. On an H100 (GPU-c00c4af8) the graph's
kernels ran 4.5-5.7% shorter (docs/validation-h200.md, "Held-out batch 82 on an H100").

    python3 scripts/cupy_graph_kernels_probe.py
"""
import statistics, collections
import cupy as cp
import torch
from torch.profiler import profile, ProfilerActivity
x = cp.random.standard_normal((1024, 1024), dtype=cp.float32)
t1 = cp.empty_like(x); t2 = cp.empty_like(x); n = cp.empty((1024, 1), dtype=cp.float32)
def step_out():
    h = x
    for _ in range(6):
        cp.multiply(h, h, out=t1)
        t1.sum(axis=1, keepdims=True, out=n)
        cp.sqrt(n, out=n)
        cp.true_divide(h, n, out=t2)
        cp.multiply(t2, 1.5, out=t2)
        h = t2
    return h
s = cp.cuda.Stream(non_blocking=True)
with s:
    for _ in range(5): step_out()
    s.begin_capture(); step_out(); g = s.end_capture()
g.upload(s)
for _ in range(5): g.launch(s)
s.synchronize()
res = {}
for mode in ("eager_out", "graph_out"):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        with s:
            for _ in range(3):
                step_out() if mode == "eager_out" else g.launch(s)
        s.synchronize()
    d = collections.defaultdict(list)
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and e.device_time > 0:
            d[e.name[:40]].append(e.device_time)
    res[mode] = {k: statistics.median(v) for k, v in d.items()}
for k in sorted(res["eager_out"]):
    print("%-40s" % k, " ".join("%s %.3f" % (m, res[m].get(k, float('nan'))) for m in res))
