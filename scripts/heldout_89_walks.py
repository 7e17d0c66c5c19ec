"""Six walks written after d2201fd (no pricing change since batch 80), before any run. On one
stream: a Phi-2-shaped decode at batch 4 over a 2048-token static cache holding 200 tokens
(fp16, 2560 wide, partial rotary, parallel attention and MLP, 2 layers); a tiny Llama-shaped
decode at batch 1 over a static cache (bf16, 256 wide, 8 layers), nearly every kernel under a
microsecond and a half; a BART-shaped decoder over 32 target tokens at batch 4 attending to 256
encoder states (fp16, 768 wide, 6 layers, no cache), the first walk with cross-attention. On
several streams: a base projection lane (four 4096 x 4096 bf16 linear layers over 16 tokens)
beside four LoRA adapter lanes of rank 16, each on a stream of its own; four KV-cache blocks
copied in from pinned host memory on a side stream beside a static-cache decode (a prefetch of
offloaded cache, host to device). Not PyTorch: a CuPy `RawKernel` 256-bin histogram of a
4M-element f32 vector through shared-memory atomics, then CuPy's cumulative sum over the bins
and a normalisation, six rounds, the histogram zeroed each round.

    python3 scripts/validate_all.py --out DIR --groups heldout89
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_82_walks import static_cache_decode  # noqa: E402
from walk_parts import LLAMA_SMALL  # noqa: E402
from walk_registry import builder  # noqa: E402


def bart_decoder(batch=4, tgt=32, src=256, layers=6):
    """A BART-shaped decoder (`BartModel`'s decoder, fp16) over `tgt` target tokens at `batch`,
    attending causally to itself and across to `src` random encoder states, no cache.

    cuDNN's attention is turned off for the walk's process: with it on, an fp16 attention
    without a mask runs cuDNN in eager and another path under capture, so the graph would not
    hold the eager step's kernels (the ViT and RoBERTa walks of batches 83 and 88)."""
    import torch
    from walk_parts import hf_model
    torch.backends.cuda.enable_cudnn_sdp(False)
    model = hf_model("Bart", "float16", head="Model", vocab_size=32000, d_model=768,
                     encoder_layers=1, decoder_layers=layers, encoder_attention_heads=12,
                     decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072,
                     max_position_embeddings=512)
    decoder = model.get_decoder()
    ids = torch.randint(3, 32000, (batch, tgt), device="cuda")
    states = torch.randn(batch, src, 768, device="cuda", dtype=torch.float16)

    def step():
        with torch.no_grad():
            return decoder(input_ids=ids, encoder_hidden_states=states,
                           use_cache=False).last_hidden_state
    return step


def lora_lanes_beside_base(width=4096, tokens=16, layers=4, adapters=4, rank=16):
    """A base lane of `layers` `width` x `width` bf16 linear layers over `tokens` rows beside
    `adapters` lanes, each on a stream of its own, of a rank-`rank` adapter (down, then up
    projection) over the same rows: a multi-LoRA server's small GEMMs beside the big ones."""
    import torch
    from walk_parts import corner, fork_lanes, linear_lane, no_grad_step
    base = linear_lane(width, width, tokens, layers, torch.bfloat16)
    with torch.device("cuda"):
        x = torch.randn(tokens, width, dtype=torch.bfloat16)
        pairs = [(torch.randn(rank, width, dtype=torch.bfloat16) * 0.01,
                  torch.randn(width, rank, dtype=torch.bfloat16) * 0.01)
                 for _ in range(adapters)]

    def adapter(a, b):
        return lambda: torch.nn.functional.linear(torch.nn.functional.linear(x, a), b)
    lanes = [lambda: corner(base())] + [adapter(a, b) for a, b in pairs]
    return no_grad_step(fork_lanes(lanes))


def cache_prefetch_beside_decode(blocks=4, block_mib=2):
    """A static-cache decode on one lane; on the other, `blocks` cache blocks of `block_mib`
    MiB each copied in from pinned host buffers (non-blocking), as a server brings offloaded
    cache back before it is attended to."""
    import torch
    from walk_parts import corner, fork_join
    decode = static_cache_decode("Llama", "bfloat16", 1, 2048, 96, **LLAMA_SMALL)
    n = block_mib * (1 << 20) // 2
    host = [torch.randn(n, dtype=torch.bfloat16).pin_memory() for _ in range(blocks)]
    dev = [torch.empty(n, device="cuda", dtype=torch.bfloat16) for _ in range(blocks)]

    def prefetch():
        for d, h in zip(dev, host):
            d.copy_(h, non_blocking=True)
        return dev[-1]
    return fork_join(lambda: corner(decode()), lambda: corner(prefetch()))


HISTOGRAM_SRC = r'''
extern "C" __global__ void histogram256(const float* x, unsigned int* bins, long long n,
                                        float lo, float scale) {
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        int b = (int)((x[i] - lo) * scale);
        b = b < 0 ? 0 : (b > 255 ? 255 : b);
        atomicAdd(&local[b], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}
'''


def cupy_histogram_scan(n=1 << 22, rounds=6, blocks=1024, threads=256):
    import cupy as cp
    kernel = cp.RawKernel(HISTOGRAM_SRC, "histogram256")
    x = cp.random.standard_normal(n, dtype=cp.float32)
    bins = cp.zeros(256, dtype=cp.uint32)
    lo, scale = cp.float32(-4.0), cp.float32(256 / 8.0)

    def step():
        out = None
        for _ in range(rounds):
            bins.fill(0)
            kernel((blocks,), (threads,), (x, bins, cp.int64(n), lo, scale))
            cdf = cp.cumsum(bins).astype(cp.float32)
            out = cdf / cdf[-1]
        return out
    return step


build = builder(131_89, {
    "lo_phi_2560_static_cache_decode_b4_fp16": lambda: static_cache_decode(
        "Phi", "float16", 4, 2048, 200, vocab_size=32000, hidden_size=2560,
        intermediate_size=10240, num_hidden_layers=2, num_attention_heads=32,
        num_key_value_heads=32, partial_rotary_factor=0.4, max_position_embeddings=4096),
    "lo_tiny_llama_256_8_layers_static_cache_decode_b1": lambda: static_cache_decode(
        "Llama", "bfloat16", 1, 2048, 64, vocab_size=32000, hidden_size=256,
        intermediate_size=688, num_hidden_layers=8, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=4096),
    "lo_bart_768_decoder_b4_tgt32_src256_fp16": bart_decoder,
    "lo_lora_adapters_beside_base_projection_bf16": lora_lanes_beside_base,
    "lo_cache_prefetch_beside_static_decode": cache_prefetch_beside_decode,
    "lo_cupy_histogram_scan": (cupy_histogram_scan, "cupy"),
})
