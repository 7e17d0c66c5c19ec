"""Six walks written after 53ce5e4, before any run: shapeless CuPy programs whose kernels have
grids small enough (256–512 blocks, grid-stride loops) and times long enough (several µs) for
the replay's stand-ins to stream — the first walks on which the half step down (5acca21) can
bite — and two PyTorch walks of long kernels. CuPy `RawKernel`s, on one stream: 60 row maxima
over one 8 MiB f32 matrix (rereading data the L2 holds); a scaling of 48 fresh 16 MiB slices
of a 768 MiB array (every kernel reads memory of its own); a nine-tap filter ping-ponging 64
times between two 4 MiB f32 vectors; 40 launches of 96 dependent multiply-adds an element over
one 4 MiB vector (time spent computing). PyTorch: 24 decode-shaped 4096 x 4096 bf16 linear
layers at batch 1 (GEMVs over 768 MiB of weights); a Qwen3-shaped static-cache decode at batch
32 (bf16, 1024 wide, 4 layers, 256 of 2048 cache slots filled).

    python3 scripts/validate_all.py --out DIR --groups heldout92
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_82_walks import static_cache_decode  # noqa: E402
from walk_registry import builder  # noqa: E402

SRC = r'''
extern "C" __global__ void row_max(const float* x, float* out, int rows, int cols) {
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        float m = -3.4e38f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, x[(long long)r * cols + c]);
        for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
        if ((threadIdx.x & 31) == 0) atomicMax((int*)&out[r], __float_as_int(fmaxf(m, 0.0f)));
    }
}
extern "C" __global__ void scale(float* x, long long n, float s) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) x[i] *= s;
}
extern "C" __global__ void fir9(const float* a, float* b, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float acc = 0.0f;
        for (int t = -4; t <= 4; ++t) {
            int j = min(max(i + t, 0), n - 1);
            acc += a[j] * (0.1f + 0.01f * t);
        }
        b[i] = acc;
    }
}
extern "C" __global__ void fma_chain(float* x, int n, int iters) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float v = x[i];
        for (int k = 0; k < iters; ++k) v = v * 0.999f + 0.001f;
        x[i] = v;
    }
}
'''


def _kernels():
    import cupy as cp
    mod = cp.RawModule(code=SRC)
    return {k: mod.get_function(k) for k in ("row_max", "scale", "fir9", "fma_chain")}


def cupy_row_maxima(rows=4096, cols=512, times=60, blocks=264, threads=256):
    """`times` row maxima of one `rows` x `cols` f32 matrix (8 MiB) by a grid-stride kernel of
    `blocks` blocks, each into a vector of its own."""
    import cupy as cp
    k = _kernels()["row_max"]
    x = cp.random.standard_normal((rows, cols), dtype=cp.float32)
    outs = [cp.zeros(rows, dtype=cp.float32) for _ in range(times)]

    def step():
        for o in outs:
            k((blocks,), (threads,), (x, o, cp.int32(rows), cp.int32(cols)))
        return outs[-1][:1] * 1
    return step


def cupy_scale_fresh_slices(total=3 << 26, slice_len=1 << 22, blocks=512, threads=256):
    """A scaling of each `slice_len`-element slice (16 MiB) of a `total`-element f32 array
    (768 MiB), slice by slice, by a grid-stride kernel of `blocks` blocks."""
    import cupy as cp
    k = _kernels()["scale"]
    x = cp.ones(total, dtype=cp.float32)
    parts = [x[i:i + slice_len] for i in range(0, total, slice_len)]

    def step():
        for p in parts:
            k((blocks,), (threads,), (p, cp.int64(slice_len), cp.float32(1.0)))
        return x[:1] * 1
    return step


def cupy_fir_ping_pong(n=1 << 20, passes=64, blocks=512, threads=256):
    """`passes` nine-tap filters between two `n`-element f32 vectors (4 MiB each), each reading
    the one the last wrote."""
    import cupy as cp
    k = _kernels()["fir9"]
    a = cp.random.standard_normal(n, dtype=cp.float32)
    b = cp.empty_like(a)

    def step():
        src, dst = a, b
        for _ in range(passes):
            k((blocks,), (threads,), (src, dst, cp.int32(n)))
            src, dst = dst, src
        return src[:1] * 1
    return step


def cupy_fma_chains(n=1 << 20, launches=40, iters=96, blocks=256, threads=256):
    """`launches` kernels of `iters` dependent multiply-adds an element over one `n`-element f32
    vector (4 MiB): time spent computing, little read."""
    import cupy as cp
    k = _kernels()["fma_chain"]
    x = cp.random.standard_normal(n, dtype=cp.float32)

    def step():
        for _ in range(launches):
            k((blocks,), (threads,), (x, cp.int32(n), cp.int32(iters)))
        return x[:1] * 1
    return step


def decode_linear_chain(width=4096, layers=24):
    """`layers` `width` x `width` bf16 linear layers at batch 1, chained: a decode step's
    projections alone, each a GEMV over 32 MiB of weights."""
    import torch
    from walk_parts import no_grad_step
    with torch.device("cuda"):
        ws = [torch.randn(width, width, dtype=torch.bfloat16) * 0.02 for _ in range(layers)]
        x = torch.randn(1, width, dtype=torch.bfloat16)

    def run():
        y = x
        for w in ws:
            y = torch.nn.functional.linear(y, w)
        return y
    return no_grad_step(run)


build = builder(131_92, {
    "lr_cupy_row_maxima_of_one_8mib_matrix": (cupy_row_maxima, "cupy"),
    "lr_cupy_scale_over_fresh_16mib_slices": (cupy_scale_fresh_slices, "cupy"),
    "lr_cupy_fir_ping_pong_4mib": (cupy_fir_ping_pong, "cupy"),
    "lr_cupy_fma_chains_compute_bound": (cupy_fma_chains, "cupy"),
    "lr_decode_linear_chain_4096_bf16": decode_linear_chain,
    "lr_qwen3_1024_static_cache_decode_b32_bf16": lambda: static_cache_decode(
        "Qwen3", "bfloat16", 32, 2048, 256, vocab_size=32000, hidden_size=1024,
        intermediate_size=3072, num_hidden_layers=4, num_attention_heads=16,
        num_key_value_heads=8, head_dim=128, max_position_embeddings=4096),
})
