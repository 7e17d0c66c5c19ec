"""The same CuPy step (batch 82's row normalisation into fixed buffers), unprofiled: ten steps
issued eagerly behind a long kernel that holds the stream (so they run back to back) against
ten launches of its cupy.cuda.Graph, timed by events, µs a step, seven trials. On an H100
(GPU-c00c4af8): 171.8 µs eager against 134.9 in the graph.

    python3 scripts/cupy_graph_step_probe.py
"""
import statistics
import cupy as cp
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
busy = cp.ElementwiseKernel("float32 a", "float32 b", "float t=a; for(int i=0;i<4000000;i++) t=t*1.0000001f+1e-7f; b=t", "busy")
yb = cp.empty((128,), dtype=cp.float32); ones = cp.ones((128,), dtype=cp.float32)
with s:
    for _ in range(5): step_out()
    busy(ones, yb)
    s.begin_capture(); step_out(); g = s.end_capture()
g.upload(s)
s.synchronize()
R = 10
out = {"eager": [], "graph": []}
for trial in range(7):
    for mode in ("eager", "graph"):
        with s:
            busy(ones, yb)           # holds the stream while the host queues the rest
            a = cp.cuda.Event(); b = cp.cuda.Event()
            a.record(s)
            for _ in range(R):
                step_out() if mode == "eager" else g.launch(s)
            b.record(s)
        s.synchronize()
        out[mode].append(cp.cuda.get_elapsed_time(a, b) * 1e3 / R)
for m in out:
    print(m, "median us a step %.2f" % statistics.median(out[m]), ["%.1f" % v for v in out[m]])
