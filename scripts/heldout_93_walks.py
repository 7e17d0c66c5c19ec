"""Six walks written after 25c179b, before any run: kinds of kernel the H100 runs have not
priced. A decoder-shaped stack compiled by `torch.compile` (Triton kernels beside cuBLAS's;
bf16, 1536 wide, 8 layers, batch 8); a Phi-3-shaped static-cache decode at batch 4; a
Qwen2-shaped prefill of 512 tokens (2 layers: large GEMMs and flash attention); CuPy
`RawKernel`s too small to fill the GPU (32 blocks over 256 KiB, 240 launches of ~2 µs);
CuPy's own row sums of matrices of eight sizes (16 KiB to 32 MiB, one stream, no shapes); and a
Llama-shaped static-cache decode on one stream beside a top-p filter of the last logits (softmax,
sort, cumulative sum) on another.

    python3 scripts/validate_all.py --out DIR --groups heldout93
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_82_walks import static_cache_decode  # noqa: E402
from walk_parts import LLAMA_SMALL, corner, fork_join, hf_decoder_step  # noqa: E402
from walk_registry import builder  # noqa: E402

SRC = r'''
extern "C" __global__ void axpy(const float* x, float* y, int n, float a) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}
extern "C" __global__ void clamp(float* y, int n, float lo, float hi) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = fminf(fmaxf(y[i], lo), hi);
}
'''


def compiled_decoder_stack(d=1536, h=4096, layers=8, batch=8):
    """RMSNorm, gated MLP and residual layers (bf16) compiled by torch.compile's default mode:
    Triton kernels fuse the element-wise work, cuBLAS keeps the matmuls; no graphs of its own."""
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        ws = [(torch.randn(2 * h, d, dtype=torch.bfloat16) * 0.01,
               torch.randn(d, h, dtype=torch.bfloat16) * 0.01,
               torch.ones(d, dtype=torch.bfloat16)) for _ in range(layers)]
        x = torch.randn(batch, d, dtype=torch.bfloat16)

    def layer_stack(y):
        for up, down, g in ws:
            n = y.float()
            n = (n * torch.rsqrt(n.pow(2).mean(-1, keepdim=True) + 1e-6)).to(y.dtype) * g
            a, b = f.linear(n, up).chunk(2, dim=-1)
            y = y + f.linear(f.silu(a) * b, down)
        return y

    compiled = torch.compile(layer_stack, dynamic=False)

    def step():
        with torch.no_grad():
            return compiled(x)
    return step


def cupy_small_grid_rounds(n=1 << 16, rounds=120, blocks=32, threads=256):
    """`rounds` of an axpy and a clamp over two `n`-element f32 vectors (256 KiB each) by
    grid-stride kernels of `blocks` blocks: kernels that leave most SMs idle."""
    import cupy as cp
    mod = cp.RawModule(code=SRC)
    axpy, clamp = mod.get_function("axpy"), mod.get_function("clamp")
    x = cp.random.standard_normal(n, dtype=cp.float32)
    y = cp.zeros(n, dtype=cp.float32)

    def step():
        for _ in range(rounds):
            axpy((blocks,), (threads,), (x, y, cp.int32(n), cp.float32(0.5)))
            clamp((blocks,), (threads,), (y, cp.int32(n), cp.float32(-4.0), cp.float32(4.0)))
        return y[:1] * 1
    return step


def cupy_row_sums_of_eight_sizes(times=6):
    """CuPy's `sum(axis=1)` over f32 matrices of 64 x 64 (16 KiB) to 2048 x 4096 (32 MiB),
    each `times` times: reduction kernels of CuPy's own, grids from one block to thousands."""
    import cupy as cp
    shapes = [(64, 64), (128, 256), (256, 512), (512, 1024), (1024, 1024), (1024, 2048),
              (2048, 2048), (2048, 4096)]
    mats = [cp.random.standard_normal(s, dtype=cp.float32) for s in shapes]
    outs = [cp.empty(s[0], dtype=cp.float32) for s in shapes]

    def step():
        for _ in range(times):
            for m, o in zip(mats, outs):
                cp.sum(m, axis=1, out=o)
        return outs[-1][:1] * 1
    return step


def top_p_filter(logits, p=0.9):
    """The tokens a top-p sampler would keep: softmax, sort descending, cumulative sum, the
    mask of the smallest set reaching `p`, scattered back; the most likely kept token."""
    import torch
    probs = torch.softmax(logits.float(), dim=-1)
    sorted_p, order = torch.sort(probs, dim=-1, descending=True)
    keep = (sorted_p.cumsum(-1) - sorted_p) < p
    kept = torch.zeros_like(probs).scatter(-1, order, sorted_p * keep)
    return kept.argmax(-1)


def decode_beside_top_p(batch=4, vocab=32000):
    """A Llama-shaped static-cache decode (bf16, batch 1) on one stream beside a top-p filter of
    `batch` rows of last logits on another, joined."""
    import torch
    decode = static_cache_decode("Llama", "bfloat16", 1, 1024, 128, **LLAMA_SMALL)
    logits = torch.randn(batch, vocab, device="cuda", dtype=torch.bfloat16)
    return fork_join(lambda: corner(decode()), lambda: corner(top_p_filter(logits)))


build = builder(131_93, {
    "ls_compiled_decoder_stack_b8_bf16": compiled_decoder_stack,
    "ls_phi3_static_cache_decode_b4_bf16": lambda: static_cache_decode(
        "Phi3", "bfloat16", 4, 2048, 128, vocab_size=32000, hidden_size=1536,
        intermediate_size=4096, num_hidden_layers=4, num_attention_heads=12,
        num_key_value_heads=4, max_position_embeddings=4096),
    "ls_qwen2_prefill_512_bf16": lambda: hf_decoder_step(
        "Qwen2", "bfloat16", 1, 512, vocab_size=32000, hidden_size=1536,
        intermediate_size=8960, num_hidden_layers=2, num_attention_heads=12,
        num_key_value_heads=2, max_position_embeddings=2048),
    "ls_cupy_small_grid_rounds_256kib": (cupy_small_grid_rounds, "cupy"),
    "ls_cupy_row_sums_of_eight_sizes": (cupy_row_sums_of_eight_sizes, "cupy"),
    "ls_llama_decode_beside_top_p_filter_bf16": decode_beside_top_p,
})
