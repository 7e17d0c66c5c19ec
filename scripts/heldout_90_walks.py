"""Six walks written after 5acca21 (a shapeless walk whose stand-ins stream past the L2 line is
now priced halfway down), before any run: four programs without recorded shapes, whose
footprint the trace cannot say, and two PyTorch walks. CuPy, on one stream: eight rounds of
column sums, row maxima and a centring over one 24 MiB f32 matrix (long kernels rereading data
the L2 holds); a fused multiply-add over four 64 MiB f32 vectors, four times (every round
streams fresh memory); a `RawKernel` of 64 sine-cosine iterations an element over 1M f32 (long
kernels that compute and read little); three 2048 x 2048 f32 matrix products through cuBLAS
with a bias and ReLU after each (GEMMs whose shapes the trace does not record). PyTorch: a
Qwen2-shaped static-cache decode at batch 2 (bf16, 1536 wide, 3 layers, 128 of 2048 cache
slots filled); two lanes of four 2048 x 2048 fp16 linear layers over 32 rows, each on a stream
of its own, joined on the current stream.

    python3 scripts/validate_all.py --out DIR --groups heldout90
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_82_walks import static_cache_decode  # noqa: E402
from walk_registry import builder  # noqa: E402


def cupy_matrix_reductions(rows=3072, cols=2048, rounds=8):
    """`rounds` of column sums, row maxima and a centring by the column means over one
    `rows` x `cols` f32 matrix: every kernel rereads the same 24 MiB."""
    import cupy as cp
    x = cp.random.standard_normal((rows, cols), dtype=cp.float32)
    y = cp.empty_like(x)

    def step():
        out = None
        for _ in range(rounds):
            mean = x.sum(axis=0) / rows
            peak = x.max(axis=1)
            cp.subtract(x, mean, out=y)
            out = peak.sum() + y[0, 0]
        return out
    return step


def cupy_streaming_fma(n=1 << 24, rounds=4):
    """`rounds` of `d = a * b + c` and `a = d * 0.5` over `n`-element f32 vectors (64 MiB each):
    every round reads and writes memory the L2 cannot hold."""
    import cupy as cp
    a, b, c = (cp.random.standard_normal(n, dtype=cp.float32) for _ in range(3))
    d = cp.empty_like(a)

    def step():
        for _ in range(rounds):
            cp.add(a * b, c, out=d)
            cp.multiply(d, cp.float32(0.5), out=a)
        return d[:1].sum()
    return step


TRIG_SRC = r'''
extern "C" __global__ void trig_iterate(float* x, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int k = 0; k < iters; ++k) v = __sinf(v) * 0.9f + __cosf(v * 0.5f) * 0.1f;
    x[i] = v;
}
'''


def cupy_trig_iterations(n=1 << 20, iters=64, rounds=6, threads=256):
    """`rounds` launches of a kernel of `iters` sine-cosine iterations an element over `n` f32,
    each followed by a scaling: kernels whose time is arithmetic, over 4 MiB."""
    import cupy as cp
    kernel = cp.RawKernel(TRIG_SRC, "trig_iterate")
    x = cp.random.standard_normal(n, dtype=cp.float32)
    blocks = (n + threads - 1) // threads

    def step():
        for _ in range(rounds):
            kernel((blocks,), (threads,), (x, cp.int32(n), cp.int32(iters)))
            cp.multiply(x, cp.float32(1.01), out=x)
        return x[:1].sum()
    return step


def cupy_gemm_relu_chain(width=2048, layers=3):
    """`layers` `width` x `width` f32 matrix products (cuBLAS) with a bias and ReLU after each."""
    import cupy as cp
    ws = [cp.random.standard_normal((width, width), dtype=cp.float32) * 0.02
          for _ in range(layers)]
    bias = cp.random.standard_normal(width, dtype=cp.float32) * 0.01
    x = cp.random.standard_normal((width, width), dtype=cp.float32)

    def step():
        y = x
        for w in ws:
            y = cp.maximum(y @ w + bias, 0)
        return y[:1, :1].sum()
    return step


def two_linear_lanes(width=2048, tokens=32, layers=4):
    """Two lanes of `layers` `width` x `width` fp16 linear layers over `tokens` rows, each on a
    stream of its own, joined on the current stream."""
    import torch
    from walk_parts import corner, fork_join, linear_lane, no_grad_step
    a = linear_lane(width, width, tokens, layers, torch.float16)
    b = linear_lane(width, width, tokens, layers, torch.float16)
    return no_grad_step(fork_join(lambda: corner(a()), lambda: corner(b())))


build = builder(131_90, {
    "lp_cupy_matrix_reductions_rereading_24mib": (cupy_matrix_reductions, "cupy"),
    "lp_cupy_streaming_fma_64mib_vectors": (cupy_streaming_fma, "cupy"),
    "lp_cupy_trig_iterations_compute_bound": (cupy_trig_iterations, "cupy"),
    "lp_cupy_gemm_bias_relu_chain_f32": (cupy_gemm_relu_chain, "cupy"),
    "lp_qwen2_1536_static_cache_decode_b2_bf16": lambda: static_cache_decode(
        "Qwen2", "bfloat16", 2, 2048, 128, vocab_size=32000, hidden_size=1536,
        intermediate_size=8960, num_hidden_layers=3, num_attention_heads=12,
        num_key_value_heads=2, max_position_embeddings=4096),
    "lp_two_lanes_of_linear_layers_fp16": two_linear_lanes,
})
