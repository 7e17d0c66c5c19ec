"""Five walks for `scripts/validate.py --walk-module`, written after the run at caee65a and
run once with that version unchanged, on kinds the method had not met: a Qwen3-shaped
decoder (RMSNorm on the queries and keys of every head) at decode batch 8, a diffusion-style
stack of GroupNorm, SiLU and 3x3 convolutions (cuDNN), low-rank adapters beside the base
model's GEMMs on two streams (rank-16 GEMMs of a few blocks beside 4096-wide ones), CuPy
RawKernels (a shared-memory tiled matrix product and a row reduction, written by hand, no
shapes in the trace) and a decoder layer stack whose attention reads a 2048-token KV cache
through PyTorch's fused attention kernels
(results: docs/validation-h200.md, "Walks written after the caee65a run").

    python3 scripts/validate.py --out DIR --walk-module scripts/fresh_walks.py \
        --walks qwen3_decode_b8,groupnorm_conv_b2,lora_beside_base,cupy_raw_kernels,\
kv_cache_attention_b4
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def qwen3_step():
    """A Qwen3-shaped decoder (hidden 2048, 20 layers, GQA 16/8 heads of 128, q/k RMSNorm)
    at decode batch 8, bf16."""
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Qwen3", "bfloat16", 8, 1, hidden_size=2048, intermediate_size=6144,
                           num_hidden_layers=20, num_attention_heads=16, num_key_value_heads=8,
                           head_dim=128, vocab_size=32000, max_position_embeddings=2048)


def groupnorm_conv_step():
    """Eight fp16 blocks of GroupNorm(32 groups) -> SiLU -> 3x3 convolution (256 -> 256
    channels) with a residual add, over a 2 x 256 x 32 x 32 feature map, as a diffusion
    model's U-Net blocks are."""
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        blocks = [(torch.nn.GroupNorm(32, 256).half(),
                   torch.nn.Conv2d(256, 256, 3, padding=1).half()) for _ in range(8)]
        x = torch.randn(2, 256, 32, 32, dtype=torch.float16)

    def step():
        with torch.no_grad():
            y = x
            for norm, conv in blocks:
                y = y + conv(f.silu(norm(y)))
            return y
    return step


def lora_beside_base_step():
    """Twelve bf16 projections of a base model (4096 -> 4096 at 16 tokens) on one stream
    beside their rank-16 adapters (4096 -> 16 -> 4096, scaled) on another, the adapters'
    outputs summed and added to the base's on the stream that forked them."""
    import torch
    from walk_parts import fork_join
    f = torch.nn.functional
    with torch.device("cuda"):
        base = [torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(12)]
        adapters = [(torch.randn(16, 4096, dtype=torch.bfloat16) * 0.01,
                     torch.randn(4096, 16, dtype=torch.bfloat16) * 0.01) for _ in range(12)]
        x = torch.randn(16, 4096, dtype=torch.bfloat16)

    def base_side():
        with torch.no_grad():
            y = x
            for w in base:
                y = f.linear(y, w)
            return y

    def adapter_side():
        with torch.no_grad():
            acc = torch.zeros_like(x)
            for a, b in adapters:
                acc = acc + 0.5 * f.linear(f.linear(x, a), b)
            return acc

    return fork_join(base_side, adapter_side)


RAW_KERNELS = r"""
extern "C" __global__ void tiled_mm(const float* a, const float* b, float* c, int n) {
    __shared__ float ta[16][16], tb[16][16];
    int r = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < n; t += 16) {
        ta[threadIdx.y][threadIdx.x] = a[r * n + t + threadIdx.x];
        tb[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < 16; ++k) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
        __syncthreads();
    }
    c[r * n + col] = tanhf(acc);
}
extern "C" __global__ void row_scale(const float* x, float* y, int n) {
    __shared__ float s[256];
    const float* row = x + (size_t)blockIdx.x * n;
    float* out = y + (size_t)blockIdx.x * n;
    float m = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, fabsf(row[i]));
    s[threadIdx.x] = m;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] = fmaxf(s[threadIdx.x], s[threadIdx.x + k]);
        __syncthreads();
    }
    float inv = 1.f / (s[0] + 1e-6f);
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = row[i] * inv;
}
"""


def cupy_raw_kernels_step():
    """CuPy RawKernels, no library: twelve rounds of a shared-memory tiled f32 matrix product
    (512 x 512, 16 x 16 tiles, tanh) and a row scaling with a shared-memory max reduction
    (one block of 256 per row): hand-written kernels whose trace says nothing of their
    shapes."""
    import cupy as cp
    import numpy as np
    n = 512
    mod = cp.RawModule(code=RAW_KERNELS)
    mm, scale = mod.get_function("tiled_mm"), mod.get_function("row_scale")
    ws = [cp.random.random((n, n), dtype=cp.float32) * (2.0 / n) for _ in range(12)]
    x = cp.random.random((n, n), dtype=cp.float32)
    bufs = [cp.empty((n, n), dtype=cp.float32) for _ in range(2)]

    def step():
        y = x
        for w in ws:
            mm((n // 16, n // 16), (16, 16), (y, w, bufs[0], np.int32(n)))
            scale((n,), (256,), (bufs[0], bufs[1], np.int32(n)))
            y = bufs[1]
        return y
    return step


def kv_cache_attention_step():
    """Twelve bf16 decoder layers at decode batch 4 (hidden 2048, 16 heads of 128) whose
    attention writes the new token's keys and values into the last slot of a 2048-token KV
    cache of its own per layer and reads the cache through
    `scaled_dot_product_attention` on 4-D views (PyTorch's flash or memory-efficient
    kernels), with RMSNorm and a gated MLP."""
    import torch
    f = torch.nn.functional
    d, heads, ctx, batch = 2048, 16, 2048, 4
    with torch.device("cuda"):
        layers = [dict(
            qkv=torch.randn(3 * d, d, dtype=torch.bfloat16) * 0.02,
            out=torch.randn(d, d, dtype=torch.bfloat16) * 0.02,
            up=torch.randn(2 * 5632, d, dtype=torch.bfloat16) * 0.02,
            down=torch.randn(d, 5632, dtype=torch.bfloat16) * 0.02,
            k=torch.randn(batch, heads, ctx, d // heads, dtype=torch.bfloat16),
            v=torch.randn(batch, heads, ctx, d // heads, dtype=torch.bfloat16),
            n1=torch.nn.RMSNorm(d, dtype=torch.bfloat16),
            n2=torch.nn.RMSNorm(d, dtype=torch.bfloat16)) for _ in range(12)]
        x = torch.randn(batch, 1, d, dtype=torch.bfloat16)

    def step():
        with torch.no_grad():
            y = x
            for p in layers:
                q, k, v = f.linear(p["n1"](y), p["qkv"]).view(batch, 1, 3, heads,
                                                             d // heads).unbind(2)
                p["k"][:, :, ctx - 1] = k[:, 0]
                p["v"][:, :, ctx - 1] = v[:, 0]
                a = f.scaled_dot_product_attention(q.transpose(1, 2), p["k"], p["v"])
                y = y + f.linear(a.transpose(1, 2).reshape(batch, 1, d), p["out"])
                g, u = f.linear(p["n2"](y), p["up"]).chunk(2, dim=-1)
                y = y + f.linear(f.silu(g) * u, p["down"])
            return y
    return step


build = builder(23, {
    "qwen3_decode_b8": (qwen3_step, "torch"),
    "groupnorm_conv_b2": (groupnorm_conv_step, "torch"),
    "lora_beside_base": (lora_beside_base_step, "torch"),
    "cupy_raw_kernels": (cupy_raw_kernels_step, "cupy"),
    "kv_cache_attention_b4": (kv_cache_attention_step, "torch"),
})
