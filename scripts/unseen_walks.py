"""Seven more walks for `scripts/validate.py --walk-module`, written after the sub-floor balance
and run with the method unchanged, to check it on kinds of walk it has not seen: two more
transformers architectures (Phi-3 with its fused QKV and gate-up projections, Gemma with a
256-wide head), an encoder at batch 32 (BERT, large kernels), a decoder compiled by
`torch.compile` (Triton kernels), fp32 matmuls (no tensor cores), a CuPy walk around cuFFT
and two gated-MLP experts on two streams
(results: docs/validation-h200.md, "Walks of kinds not seen before").

    python3 scripts/validate.py --out DIR --walk-module scripts/unseen_walks.py \
        --walks phi3_decode_b1,gemma_decode_b2,bert_b32_s128,compiled_decoder,fp32_mlp_b4,cupy_fft,\
two_streams_experts
"""
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def transformers_walk(name):
    from walk_parts import hf_decoder_step
    if name == "phi3_decode_b1":
        return hf_decoder_step("Phi3", "bfloat16", 1, 1, hidden_size=2048,
                               intermediate_size=5632, num_hidden_layers=16,
                               num_attention_heads=32, num_key_value_heads=8, vocab_size=32000,
                               max_position_embeddings=2048, pad_token_id=0)
    return hf_decoder_step("Gemma", "bfloat16", 2, 1, hidden_size=1536, intermediate_size=6144,
                           num_hidden_layers=18, num_attention_heads=8, num_key_value_heads=1,
                           head_dim=256, vocab_size=32000, max_position_embeddings=2048)


def bert_step():
    import torch
    import transformers
    with torch.device("cuda"):
        cfg = transformers.BertConfig(hidden_size=768, num_hidden_layers=12,
                                      num_attention_heads=12, intermediate_size=3072)
        model = transformers.BertModel(cfg).to(torch.float16).eval()
    ids = torch.randint(0, cfg.vocab_size, (32, 128), device="cuda")
    types = torch.zeros_like(ids)
    # A prepared 4-D mask, as for the decoders in validate.py: without one the mask code
    # skips the mask in the eager step (cuDNN attention) but materialises it under capture
    # (the math path, fp32 batched GEMMs and a softmax), and the graph runs 411 kernels where
    # the recorded step ran 152.
    mask = torch.ones(32, 1, 128, 128, dtype=torch.bool, device="cuda")

    def step():
        with torch.no_grad():
            return model(input_ids=ids, token_type_ids=types,
                         attention_mask=mask).last_hidden_state
    return step


def compiled_decoder_step():
    """An fp16 decoder-shaped stack (RMSNorm, gated MLP, residual; hidden 2048, 12 layers,
    batch 1) compiled by torch.compile's default mode: Triton kernels fuse the element-wise
    work, cuBLAS keeps the matmuls; no graphs of its own."""
    import torch
    f = torch.nn.functional
    d, h, layers = 2048, 5632, 12
    with torch.device("cuda"):
        ws = [(torch.randn(2 * h, d, dtype=torch.float16) * 0.01,
               torch.randn(d, h, dtype=torch.float16) * 0.01,
               torch.ones(d, dtype=torch.float16)) for _ in range(layers)]
        x = torch.randn(1, d, dtype=torch.float16)

    def layer_stack(y):
        for up, down, g in ws:
            n = y.float()
            n = (n * torch.rsqrt(n.pow(2).mean(-1, keepdim=True) + 1e-6)).half() * g
            a, b = f.linear(n, up).chunk(2, dim=-1)
            y = y + f.linear(f.silu(a) * b, down)
        return y

    compiled = torch.compile(layer_stack, dynamic=False)

    def step():
        with torch.no_grad():
            return compiled(x)
    return step


def fp32_mlp_step():
    """fp32 LayerNorm + MLP layers at batch 4 with TF32 off: SIMT GEMM kernels, not the
    tensor-core ones every other walk uses."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    f = torch.nn.functional
    d, h, layers = 1024, 4096, 10
    with torch.device("cuda"):
        ws = [(torch.nn.LayerNorm(d), torch.randn(h, d) * 0.02, torch.randn(d, h) * 0.02)
              for _ in range(layers)]
        x = torch.randn(4, d)

    def step():
        with torch.no_grad():
            y = x
            for norm, up, down in ws:
                y = y + f.linear(f.gelu(f.linear(norm(y), up)), down)
            return y
    return step


def cupy_fft_step():
    """CuPy around cuFFT: a spectral filter applied 24 times to 1 Mi complex samples
    (forward FFT, element-wise multiply, inverse FFT, a scaled magnitude)."""
    import cupy as cp
    n = 1 << 20
    x = (cp.random.random(n, dtype=cp.float32) - 0.5).astype(cp.float32)
    filters = [cp.random.random(n // 2 + 1, dtype=cp.float32).astype(cp.complex64)
               for _ in range(24)]
    cp.fft.config.get_plan_cache().set_size(16)

    def step():
        y = x
        for flt in filters:
            spec = cp.fft.rfft(y) * flt
            y = cp.fft.irfft(spec, n=n)
            y = cp.tanh(y * 0.5)
        return y
    return step


def gated_mlp_experts(count, d, h, layers, batch):
    """`count` fp16 gated-MLP experts (hidden d -> h, SiLU gate, h -> d, residual; `layers`
    each, no bias) over one input of `batch` rows: a callable per expert."""
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        experts = [[(torch.randn(2 * h, d, dtype=torch.float16) * 0.02,
                     torch.randn(d, h, dtype=torch.float16) * 0.02) for _ in range(layers)]
                   for _ in range(count)]
        x = torch.randn(batch, d, dtype=torch.float16)

    def expert(ws):
        def run():
            y = x
            for up, down in ws:
                a, b = f.linear(y, up).chunk(2, dim=-1)
                y = y + f.linear(f.silu(a) * b, down)
            return y
        return run
    return [expert(ws) for ws in experts]


def experts_step():
    """Two fp16 gated-MLP experts (hidden 1536 -> 4096 -> 1536, 6 layers each, batch 8, no
    bias) on two streams forked from the current one and joined back."""
    from walk_parts import fork_join
    return fork_join(*gated_mlp_experts(2, 1536, 4096, 6, 8))


build = builder(3, {
    "phi3_decode_b1": functools.partial(transformers_walk, "phi3_decode_b1"),
    "gemma_decode_b2": functools.partial(transformers_walk, "gemma_decode_b2"),
    "bert_b32_s128": bert_step,
    "compiled_decoder": compiled_decoder_step,
    "fp32_mlp_b4": fp32_mlp_step,
    "cupy_fft": (cupy_fft_step, "cupy"),
    "two_streams_experts": experts_step,
})
