"""Six walks written after a466776 (no pricing change since batch 80), before any run. On one
stream: a Llama-shaped decode at batch 1 over a long static cache (8192 tokens holding 6000;
bf16, 1024 wide, 4 layers), where attention over the cache weighs more than the projections; a
chunked prefill of 512 tokens into a Qwen2-shaped static cache that holds 1024 (bf16, 1536
wide, 4 layers); the Phi-3-mini layer shape (3072 wide, 8192 inner, 32 heads; two layers)
decoding at batch 2 over a static cache. On several streams: three replicas of a small
Llama-shaped static-cache decode at batch 1, each on a stream of its own; four KV-cache blocks
copied to pinned host memory on a side stream beside a static-cache decode (an offload of cold
cache). Not PyTorch: a CuPy `RawKernel` row softmax (one block a row, shared-memory max and sum)
over 4096 x 1024 f32, then CuPy's row arg-max, four rounds.

    python3 scripts/validate_all.py --out DIR --groups heldout87
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_82_walks import filled_static_cache, static_cache_decode  # noqa: E402
from walk_parts import LLAMA_SMALL  # noqa: E402
from walk_registry import builder  # noqa: E402

QWEN2_1536 = dict(vocab_size=32000, hidden_size=1536, intermediate_size=8960,
                  num_hidden_layers=4, num_attention_heads=12, num_key_value_heads=2,
                  max_position_embeddings=4096)


def static_cache_prefill_chunk(arch, dtype, chunk, cache_len, held, **config):
    """One chunk of `chunk` tokens prefilled at batch 1 into a `StaticCache` of `cache_len`
    tokens that already holds `held`, as a server splits a long prompt: every layer attends
    over the cache and writes the chunk's keys and values into it."""
    import torch
    model, cache = filled_static_cache(arch, dtype, 1, cache_len, held, **config)
    vocab = model.config.vocab_size
    ids = torch.randint(0, vocab, (1, chunk), device="cuda")
    positions = torch.arange(held, held + chunk, device="cuda")

    def step():
        with torch.no_grad():
            return model(input_ids=ids, past_key_values=cache, cache_position=positions,
                         use_cache=True, logits_to_keep=1).logits
    return step


def three_static_decode_replicas():
    from walk_parts import corner, fork_lanes
    replicas = [static_cache_decode("Llama", "bfloat16", 1, 1024, 48, **LLAMA_SMALL)
                for _ in range(3)]
    return fork_lanes([lambda r=r: corner(r()) for r in replicas])


def cache_offload_beside_decode(blocks=4, block_mib=2):
    """A static-cache decode on one lane; on the other, `blocks` cache blocks of `block_mib`
    MiB each copied to pinned host buffers (non-blocking), as a server moves cold cache out."""
    import torch
    from walk_parts import corner, fork_join
    decode = static_cache_decode("Llama", "bfloat16", 1, 2048, 96, **LLAMA_SMALL)
    n = block_mib * (1 << 20) // 2
    dev = [torch.randn(n, device="cuda", dtype=torch.bfloat16) for _ in range(blocks)]
    host = [torch.empty(n, dtype=torch.bfloat16, pin_memory=True) for _ in range(blocks)]

    def offload():
        for h, d in zip(host, dev):
            h.copy_(d, non_blocking=True)
        return dev[0]
    return fork_join(lambda: corner(decode()), lambda: corner(offload()))


SOFTMAX_SRC = r'''
extern "C" __global__ void row_softmax(const float* x, float* y, int cols) {
    extern __shared__ float red[];
    const float* row = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    float m = -3.402823466e38f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += __expf(row[c] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    float inv = 1.f / red[0];
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = __expf(row[c] - m) * inv;
}
'''


def cupy_raw_row_softmax(rows=4096, cols=1024, rounds=4, threads=256):
    import cupy as cp
    kernel = cp.RawKernel(SOFTMAX_SRC, "row_softmax")
    x = cp.random.standard_normal((rows, cols), dtype=cp.float32)
    bufs = [cp.empty_like(x), cp.empty_like(x)]

    def step():
        src, picks = x, None
        for r in range(rounds):
            dst = bufs[r % 2]
            kernel((rows,), (threads,), (src, dst, cp.int32(cols)), shared_mem=threads * 4)
            a = dst.argmax(axis=1)
            picks = a if picks is None else picks + a
            src = dst
        return picks
    return step


build = builder(131_87, {
    "lm_llama_1024_long_static_cache_decode_b1": lambda: static_cache_decode(
        "Llama", "bfloat16", 1, 8192, 6000,
        **dict(LLAMA_SMALL, max_position_embeddings=8192)),
    "lm_qwen2_1536_static_cache_prefill_chunk_512": lambda: static_cache_prefill_chunk(
        "Qwen2", "bfloat16", 512, 4096, 1024, **QWEN2_1536),
    "lm_phi3_3072_2_layers_static_cache_decode_b2": lambda: static_cache_decode(
        "Phi3", "bfloat16", 2, 2048, 150, vocab_size=32064, hidden_size=3072,
        intermediate_size=8192, num_hidden_layers=2, num_attention_heads=32,
        max_position_embeddings=4096, pad_token_id=0),
    "lm_three_static_decode_replicas_b1": three_static_decode_replicas,
    "lm_cache_offload_beside_static_decode": cache_offload_beside_decode,
    "lm_cupy_raw_row_softmax": (cupy_raw_row_softmax, "cupy"),
})
