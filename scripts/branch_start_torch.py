"""When does a PyTorch-captured graph start its second branch? (docs/validation-h200.md,
"Paced reads per block ...; where a PyTorch graph starts its second branch".) A BatchNorm chain
(as held-out walk hk_batchnorm_beside_gemm) on one side stream beside four whole-SM kernels on
another (cuBLAS GEMMs, or a CuPy spin with 213 KB of dynamic shared memory), captured in
either order; each graph replayed once under torch.profiler, launched from the current and
from a side stream; prints the first kernels' starts, us from the first. The late second
branch it shows is the profiler's: unprofiled, the same graphs start both branches at once
(scripts/branch_start_profiler.py; docs/validation-h200.md, "A profiled graph's late second
branch; pooled paced reads (tried, not kept)").

    python3 scripts/branch_start_torch.py      (PyTorch and CuPy on a CUDA GPU)
"""
import sys, torch, cupy as cp
sys.path.insert(0, 'scripts')
from walk_parts import fork_join, chain, randn, cupy_spin_module
torch.manual_seed(0)
_, wk = cupy_spin_module()
with torch.device('cuda'):
    bn = torch.nn.BatchNorm2d(256).half().eval()
    feats = randn(32, 256, 32, 32)
    w = [randn(4096, 4096, dtype=torch.bfloat16) for _ in range(4)]
    x = randn(256, 4096, dtype=torch.bfloat16)
    sink = torch.zeros(1)
def norms():
    y = feats
    for _ in range(4):
        y = bn(y)
    return y[:1, :1].float().sum()
def spins():
    st = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    with st:
        for _ in range(4):
            wk((128,), (384,), (cp.uint64(16000), sink.data_ptr()), shared_mem=213268)
    return sink.sum()
gemms = chain(lambda i, y: (x if y is None else y) @ w[i], 4)
variants = {'bn|gemm': fork_join(norms, lambda: gemms().float().sum()),
            'bn|spin': fork_join(norms, spins),
            'gemm|bn': fork_join(lambda: gemms().float().sum(), norms),
            'spin|bn': fork_join(spins, norms)}
for name, step in variants.items():
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): step()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        step()
    for _ in range(10): g.replay()
    torch.cuda.synchronize()
    for on_side in (False, True):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
            if on_side:
                with torch.cuda.stream(s):
                    g.replay()
            else:
                g.replay()
            torch.cuda.synchronize()
        ev = [e for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        ev.sort(key=lambda e: e.time_range.start)
        t0 = ev[0].time_range.start
        print('==', name, 'side stream' if on_side else 'current stream')
        for e in ev[:8]:
            print(f'{e.time_range.start - t0:8.1f} {e.time_range.end - e.time_range.start:7.1f} {e.name[:60]}')
