"""Six walks written after 7c70f32 (no pricing change since batch 80), before any run: kinds
no earlier batch holds. On one stream: a Qwen3-shaped decode at batch 2 over a 2048-token
static cache holding 200 tokens (bf16, 1024 wide, 6 layers); a StarCoder2-shaped prefill of
128 tokens at batch 2 (fp16, 1024 wide, 4 layers); a top-p sampling step over batch 8's logits
of a 32000-token vocabulary (temperature, a descending sort, softmax, cumulative sum, the
nucleus mask, renormalisation, an arg-max per row; f32). On several streams: three
Medusa-style draft heads side by side over one hidden state at batch 1 (each a SiLU residual
block of 2048 and a 2048 x 32000 projection, bf16); a chunk of a prefill (Llama-shaped, 64
tokens at batch 1) beside a static-cache decode at batch 4 of another replica (bf16, 1024 wide,
4 layers each). Not PyTorch: a CuPy program of user-written kernels, a fused bias-GELU
`ElementwiseKernel` and a row sum-of-squares `ReductionKernel` scaling the rows, eight rounds
over a 4096 x 1024 f32 matrix.

    python3 scripts/validate_all.py --out DIR --groups heldout84
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_82_walks import static_cache_decode  # noqa: E402
from walk_parts import LLAMA_SMALL, hf_decoder_step  # noqa: E402
from walk_registry import builder  # noqa: E402


def top_p_sampling(batch=8, vocab=32000, p=0.9, temperature=0.7):
    """A sampler's step without the random draw: nucleus (top-p) filtering of a batch's logits,
    then the most likely token of each row's renormalised nucleus."""
    import torch
    logits = torch.randn(batch, vocab, device="cuda")

    def step():
        with torch.no_grad():
            scaled = logits / temperature
            sorted_logits, order = torch.sort(scaled, dim=-1, descending=True)
            probs = torch.softmax(sorted_logits, dim=-1)
            cum = torch.cumsum(probs, dim=-1)
            keep = (cum - probs) < p
            kept = probs * keep
            kept = kept / kept.sum(dim=-1, keepdim=True)
            pick = kept.argmax(dim=-1, keepdim=True)
            return order.gather(-1, pick)
    return step


def medusa_heads(heads=3, hidden=2048, vocab=32000):
    """`heads` draft heads over one hidden state, each on a stream of its own: x + SiLU(W1 x),
    then a projection onto the vocabulary (as Medusa's heads are written)."""
    import torch
    from walk_parts import fork_lanes, no_grad_step
    bf = dict(device="cuda", dtype=torch.bfloat16)
    x = torch.randn(1, hidden, **bf)

    def head():
        w1 = torch.randn(hidden, hidden, **bf) * 0.02
        w2 = torch.randn(vocab, hidden, **bf) * 0.02

        def run():
            h = x + torch.nn.functional.silu(torch.nn.functional.linear(x, w1))
            return torch.nn.functional.linear(h, w2)
        return run
    return no_grad_step(fork_lanes([head() for _ in range(heads)]))


def prefill_chunk_beside_decode():
    from walk_parts import corner, fork_join
    chunk = hf_decoder_step("Llama", "bfloat16", 1, 64, **LLAMA_SMALL)
    decode = static_cache_decode("Llama", "bfloat16", 4, 2048, 160, **LLAMA_SMALL)
    return fork_join(lambda: corner(chunk()), lambda: corner(decode()))


def cupy_user_kernels(rows=4096, cols=1024, rounds=8):
    """User-written CuPy kernels: a fused bias-GELU (tanh form) and a row sum of squares whose
    root scales each row back, `rounds` times."""
    import cupy as cp
    bias_gelu = cp.ElementwiseKernel(
        "float32 x, float32 b", "float32 y",
        "float v = x + b; y = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)))",
        "bias_gelu_f32")
    # The mean square's 1/cols is written into the map: CuPy 14's reduction code has no
    # `_in_ind` in its post-map (the first run failed to compile so, before any price).
    row_ss = cp.ReductionKernel(
        "float32 xin", "float32 rms_out", f"xin * xin * {1.0 / cols!r}f", "a + b",
        "rms_out = sqrtf(a + 1e-6f)", "0", "row_rms_f32")
    x = cp.random.standard_normal((rows, cols), dtype=cp.float32)
    b = cp.random.standard_normal((cols,), dtype=cp.float32) * 0.1

    def step():
        h = x
        for _ in range(rounds):
            h = bias_gelu(h, b)
            h = h / row_ss(h, axis=1, keepdims=True)
        return h
    return step


build = builder(131_84, {
    "li_qwen3_1024_static_cache_decode_b2": lambda: static_cache_decode(
        "Qwen3", "bfloat16", 2, 2048, 200, vocab_size=32000, hidden_size=1024,
        intermediate_size=3072, num_hidden_layers=6, num_attention_heads=16,
        num_key_value_heads=8, head_dim=64, max_position_embeddings=4096),
    "li_starcoder2_1024_prefill_128_fp16": lambda: hf_decoder_step(
        "Starcoder2", "float16", 2, 128, vocab_size=32000, hidden_size=1024,
        intermediate_size=4096, num_hidden_layers=4, num_attention_heads=16,
        num_key_value_heads=4, max_position_embeddings=2048),
    "li_top_p_sampling_b8": top_p_sampling,
    "li_three_medusa_heads_bf16": medusa_heads,
    "li_prefill_chunk_beside_static_decode_b4": prefill_chunk_beside_decode,
    "li_cupy_user_kernels": (cupy_user_kernels, "cupy"),
})
