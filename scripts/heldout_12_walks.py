"""Nine walks written after 90c5b4a (and after a try, not kept, that paced each block of a
paced read from its own start), then run once with the version of their day
(docs/validation-h200.md, "Held-out batch 12"):
transformers Qwen2 (decode batch 64) and Llama (prefill of 256 tokens) shapes, a chain of
fp16 linear layers with GELU, and on several streams: softmax over attention-sized scores beside
bf16 GEMMs, large adds beside a convolution chain, GELU over activations beside batched
matmuls, RMS-normalised rows beside a causal attention prefill, a transposed copy beside GEMVs,
and three streams (GEMMs, LayerNorm, adds).

    python3 scripts/validate.py --out DIR --walk-module scripts/heldout_12_walks.py \\
        --walks hl_qwen2_decode_b64,hl_llama_prefill_256,...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build(name):
    """(step, kind) of walk `name`; a KeyError for a name it does not know."""
    import torch
    from walk_parts import (attention_chain as attention, chain, fork_join, hf_decoder_step,
                            randn)
    f = torch.nn.functional
    torch.manual_seed(112)
    if name == "hl_qwen2_decode_b64":
        return hf_decoder_step("Qwen2", "bfloat16", 64, 1, hidden_size=1536,
                               intermediate_size=8960, num_hidden_layers=6,
                               num_attention_heads=12, num_key_value_heads=2,
                               vocab_size=32000, max_position_embeddings=2048), "torch"
    if name == "hl_llama_prefill_256":
        return hf_decoder_step("Llama", "float16", 1, 256, hidden_size=1024,
                               intermediate_size=2816, num_hidden_layers=6,
                               num_attention_heads=8, num_key_value_heads=8,
                               vocab_size=32000, max_position_embeddings=2048), "torch"

    with torch.device("cuda"):
        if name == "hl_linear_gelu_chain":
            layers = [torch.nn.Linear(2048, 2048).half() for _ in range(8)]
            x = randn(256, 2048)
            return chain(lambda i, y: f.gelu(layers[i](x if y is None else y)), 8), "torch"
        if name == "hl_softmax_beside_gemm":
            scores = randn(8, 32, 512, 512)
            w = [randn(4096, 4096, dtype=torch.bfloat16) for _ in range(4)]
            x = randn(512, 4096, dtype=torch.bfloat16)
            softmaxes = chain(lambda i, y: torch.softmax(scores if y is None else y, dim=-1), 3)
            gemms = chain(lambda i, y: (x if y is None else y) @ w[i], 4)
            return fork_join(lambda: softmaxes()[:1, :1, :1].float().sum(),
                             lambda: gemms().float().sum()), "torch"
        if name == "hl_adds_beside_conv":
            a = randn(32, 1024, 1024)
            b = randn(32, 1024, 1024)
            convs = [torch.nn.Conv2d(128, 128, 3, padding=1).half() for _ in range(3)]
            img = randn(8, 128, 64, 64)
            adds = chain(lambda i, y: (a if y is None else y) + b, 4)
            return fork_join(lambda: adds()[:1, :1, :1].float().sum(),
                             chain(lambda i, y: convs[i](img if y is None else y), 3)), "torch"
        if name == "hl_gelu_beside_bmm":
            acts = randn(4096, 8192)
            p = randn(32, 512, 128)
            qk = randn(32, 128, 512)
            gelus = chain(lambda i, y: f.gelu(acts if y is None else y), 3)
            bmms = chain(lambda i, y: torch.bmm(torch.bmm(p if y is None else y, qk), p), 4)
            return fork_join(lambda: gelus()[:1].float().sum(),
                             lambda: bmms().float().sum()), "torch"
        if name == "hl_rmsnorm_beside_prefill_attention":
            rows = randn(16384, 4096)
            weight = randn(4096)
            q = randn(2, 16, 1024, 128)
            k = randn(2, 16, 1024, 128)
            v = randn(2, 16, 1024, 128)
            norms = chain(lambda i, y: f.rms_norm(rows if y is None else y, (4096,), weight), 3)
            prefill = attention(q, k, v, 3, is_causal=True)
            return fork_join(lambda: norms()[:1].float().sum(),
                             lambda: prefill().float().sum()), "torch"
        if name == "hl_transpose_copy_beside_gemv":
            m = randn(8192, 8192)
            w = [randn(8192, 4096, dtype=torch.bfloat16) for _ in range(6)]
            v = randn(1, 4096, dtype=torch.bfloat16)
            copies = chain(lambda i, y: (m if y is None else y).t().contiguous(), 2)
            gemvs = chain(lambda i, y: ((v if y is None else y) @ w[i].t())[:, :4096], 6)
            return fork_join(lambda: copies()[:1, :1].float().sum(),
                             lambda: gemvs().float().sum()), "torch"
        if name == "hl_three_streams_gemm_norm_adds":
            w = [randn(4096, 4096, dtype=torch.bfloat16) for _ in range(3)]
            x = randn(1024, 4096, dtype=torch.bfloat16)
            ln = torch.nn.LayerNorm(2048).half()
            acts = randn(8192, 2048)
            a = randn(16, 1024, 1024)
            b = randn(16, 1024, 1024)
            gemms = chain(lambda i, y: (x if y is None else y) @ w[i], 3)
            norms = chain(lambda i, y: ln(acts if y is None else y), 3)
            adds = chain(lambda i, y: (a if y is None else y) + b, 3)
            side = fork_join(lambda: norms()[:1].float().sum(),
                             lambda: adds()[:1, :1].float().sum())
            return fork_join(lambda: gemms().float().sum(), side), "torch"
    raise KeyError(name)
