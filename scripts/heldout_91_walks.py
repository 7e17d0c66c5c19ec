"""Six walks written after bc82c33 (batch 90 run: its CuPy kernels were long, so the level step
moved their price by under 1%), before any run: programs without shapes whose kernels are
short and many, where the step each graph node takes to the upper level is a few percent of
the step. CuPy, on one stream: 40 rounds of a scale-and-shift and a clamp over one 1M-element
f32 vector (4 MiB, reread every round); an add over 64 fresh 2M-element slices of a 512 MiB
array (every kernel reads memory of its own); a `RawKernel` five-point stencil ping-ponging 48
times between two 1024 x 1024 f32 grids (8 MiB); 60 row sums of one 4096 x 512 f32 matrix.
PyTorch: a Llama-shaped static-cache decode at batch 8 (fp16, 2048 wide, 4 layers, 512 of 2048
cache slots filled); two lanes of 24 element-wise kernels over 1M-element bf16 tensors, each on
a stream of its own.

    python3 scripts/validate_all.py --out DIR --groups heldout91
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_82_walks import static_cache_decode  # noqa: E402
from walk_registry import builder  # noqa: E402


def cupy_small_vector_rounds(n=1 << 20, rounds=40):
    """`rounds` of `x = clip(x * 0.999 + 0.001, -4, 4)` over one `n`-element f32 vector."""
    import cupy as cp
    x = cp.random.standard_normal(n, dtype=cp.float32)
    t = cp.empty_like(x)

    def step():
        for _ in range(rounds):
            cp.multiply(x, cp.float32(0.999), out=t)
            cp.add(t, cp.float32(0.001), out=t)
            cp.clip(t, -4.0, 4.0, out=x)
        return x[:1].sum()
    return step


def cupy_fresh_slices(total=1 << 27, slice_len=1 << 21):
    """An add of 1 to each `slice_len`-element slice of a `total`-element f32 array (512 MiB),
    slice by slice: every kernel reads and writes 8 MiB no other kernel of the step touches."""
    import cupy as cp
    x = cp.zeros(total, dtype=cp.float32)
    parts = [x[i:i + slice_len] for i in range(0, total, slice_len)]

    def step():
        for p in parts:
            cp.add(p, cp.float32(1.0), out=p)
        return x[:1].sum()
    return step


STENCIL_SRC = r'''
extern "C" __global__ void stencil5(const float* a, float* b, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x <= 0 || y <= 0 || x >= w - 1 || y >= h - 1) return;
    int i = y * w + x;
    b[i] = 0.2f * (a[i] + a[i - 1] + a[i + 1] + a[i - w] + a[i + w]);
}
'''


def cupy_stencil_ping_pong(w=1024, h=1024, sweeps=48):
    """`sweeps` five-point stencil sweeps between two `w` x `h` f32 grids, each reading the one
    the last wrote."""
    import cupy as cp
    kernel = cp.RawKernel(STENCIL_SRC, "stencil5")
    a = cp.random.standard_normal((h, w), dtype=cp.float32)
    b = a.copy()
    grid, block = ((w + 31) // 32, (h + 7) // 8), (32, 8)

    def step():
        src, dst = a, b
        for _ in range(sweeps):
            kernel(grid, block, (src, dst, cp.int32(w), cp.int32(h)))
            src, dst = dst, src
        return src[1, 1] * 1
    return step


def cupy_row_sums(rows=4096, cols=512, times=60):
    """`times` row sums of one `rows` x `cols` f32 matrix (8 MiB), each into a buffer of its
    own."""
    import cupy as cp
    x = cp.random.standard_normal((rows, cols), dtype=cp.float32)
    outs = [cp.empty(rows, dtype=cp.float32) for _ in range(times)]

    def step():
        for o in outs:
            cp.sum(x, axis=1, out=o)
        return outs[-1][:1].sum()
    return step


def two_elementwise_lanes(n=1 << 20, ops=24):
    """Two lanes of `ops` element-wise kernels (alternately a scale and a bias add) over
    `n`-element bf16 tensors, each on a stream of its own."""
    import torch
    from walk_parts import corner, fork_join, no_grad_step
    with torch.device("cuda"):
        xs = [torch.randn(n, dtype=torch.bfloat16) for _ in range(2)]

    def lane(x):
        def run():
            y = x
            for k in range(ops):
                y = y * 0.999 if k % 2 == 0 else y + 0.001
            return corner(y)
        return run
    return no_grad_step(fork_join(lane(xs[0]), lane(xs[1])))


build = builder(131_91, {
    "lq_cupy_small_vector_rounds_4mib": (cupy_small_vector_rounds, "cupy"),
    "lq_cupy_add_over_fresh_8mib_slices": (cupy_fresh_slices, "cupy"),
    "lq_cupy_stencil_ping_pong_8mib": (cupy_stencil_ping_pong, "cupy"),
    "lq_cupy_row_sums_of_one_8mib_matrix": (cupy_row_sums, "cupy"),
    "lq_llama_2048_4_layers_static_cache_decode_b8_fp16": lambda: static_cache_decode(
        "Llama", "float16", 8, 2048, 512, vocab_size=32000, hidden_size=2048,
        intermediate_size=5632, num_hidden_layers=4, num_attention_heads=16,
        num_key_value_heads=4, max_position_embeddings=4096),
    "lq_two_lanes_of_elementwise_bf16": two_elementwise_lanes,
})
