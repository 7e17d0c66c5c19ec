"""Which ingredient makes held-out walk hk_batchnorm_beside_gemm's two chains take nearly the sum
of their times side by side? (docs/validation-h200.md, "A profiled graph's late second branch;
pooled paced reads (tried, not kept)".) Chains of four, captured as torch.cuda.CUDAGraph alone and
forked in pairs: the walk's real BatchNorm passes (bn) and bf16 GEMMs (gemms); CuPy stand-ins of
the GEMMs' shape, whole-SM spins of 128 blocks x 384 threads with 213 KB of dynamic shared memory
and few registers (spinW); of the BatchNorm transforms' shape, 8192 blocks of 256 threads each
spinning 2 us (spinBIG) or copying 8 bytes a thread through 16 MB (copyBIG), each after two
one-block kernels as the BatchNorm's small kernels. Prints each graph's replay time (median of
3 interleaved rounds of validate.replay_ms) and, for a pair, how much of the possible overlap
(from the sum of the two alone down to the longer one) it kept.

    python3 scripts/lockstep_pair_probe.py      (PyTorch and CuPy on a CUDA GPU)
"""
import sys, torch, cupy as cp
sys.path.insert(0, 'scripts')
from validate import capture_torch, replay_ms
from walk_parts import cupy_spin_module, fork_join, randn
mod, spin = cupy_spin_module(r'''
extern "C" __global__ void copy(const float2* __restrict__ a, float2* __restrict__ b, unsigned n){
  unsigned i = blockIdx.x*blockDim.x + threadIdx.x; if(i<n){ float2 v=a[i]; v.x*=1.0001f; b[i]=v; } }
''')
copyk = mod.get_function('copy')
sink = cp.zeros(1, dtype=cp.float32)
with torch.device('cuda'):
    bn = torch.nn.BatchNorm2d(256).half().eval()
    feats = randn(32, 256, 32, 32)
    w = [randn(4096, 4096, dtype=torch.bfloat16) for _ in range(4)]
    x = randn(256, 4096, dtype=torch.bfloat16)
    buf = [torch.empty(32 * 256 * 32 * 32, dtype=torch.float16) for _ in range(2)]
n2 = buf[0].numel() // 4
def cs(): return cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
def T():
    spin((1,), (128,), (cp.uint64(1000), sink), shared_mem=512)
def norms():
    y = feats
    for _ in range(4): y = bn(y)
    return y[:1, :1].float().sum()
def gemms():
    y = x
    for i in range(4): y = y @ w[i]
    return y
def spin_w():
    with cs():
        for _ in range(4): spin((128,), (384,), (cp.uint64(16000), sink), shared_mem=213268)
    return x
def spin_big():
    with cs():
        for _ in range(4):
            T(); T(); spin((8192,), (256,), (cp.uint64(2000), sink), shared_mem=1024)
    return x
def copy_big():
    with cs():
        for i in range(4):
            T(); T(); copyk((8192,), (256,), (buf[i % 2].data_ptr(), buf[1 - i % 2].data_ptr(), cp.uint32(n2)))
    return x
def j(a, b):
    return fork_join(lambda: (a(), 0)[1], lambda: (b(), 0)[1])
variants = {'bn': norms, 'gemms': gemms, 'spinW': spin_w, 'spinBIG': spin_big, 'copyBIG': copy_big,
            'bn|gemms': j(norms, gemms), 'bn|spinW': j(norms, spin_w), 'spinBIG|gemms': j(spin_big, gemms),
            'copyBIG|gemms': j(copy_big, gemms), 'copyBIG|spinW': j(copy_big, spin_w), 'spinBIG|spinW': j(spin_big, spin_w)}
s = torch.cuda.Stream()
graphs = {k: capture_torch(v, s) for k, v in variants.items()}
res = {k: [] for k in graphs}
for rnd in range(3):
    for k, g in graphs.items(): res[k].append(replay_ms(g.replay) * 1e3)
med = {k: sorted(v)[1] for k, v in res.items()}
for k, v in med.items():
    extra = ''
    if '|' in k:
        a, b = k.split('|'); lo, hi = max(med[a], med[b]), med[a] + med[b]
        extra = f'  alone {med[a]:.1f} + {med[b]:.1f}: max {lo:.1f}, sum {hi:.1f}; overlap kept {100*(hi-v)/(hi-lo+1e-9):.0f}%'
    print(f'{k:16s} {v:7.1f} us{extra}')
