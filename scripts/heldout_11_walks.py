"""Nine walks written after stand-ins beside other streams took to asking their kernels'
shared memory dynamically (4238a09), then run once with it (docs/validation-h200.md,
"Held-out batch 11"): transformers Nemotron (decode batch 8) and Cohere (prefill of 64
tokens) shapes, a chain of 1-D convolutions with GELU, and on several streams: BatchNorm over
feature maps beside bf16 GEMMs, top-k over logits beside GEMVs, SiLU-gated products beside a
causal attention prefill, cumulative sums over rows beside GEMMs, a KV-cache index copy beside
decode attention, and three streams (decode attention, GEMVs, LayerNorm).

    python3 scripts/validate.py --out DIR --walk-module scripts/heldout_11_walks.py \\
        --walks hk_nemotron_decode_b8,hk_cohere_prefill_64,...
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
    torch.manual_seed(111)
    if name == "hk_nemotron_decode_b8":
        return hf_decoder_step("Nemotron", "bfloat16", 8, 1, hidden_size=2048,
                               intermediate_size=8192, num_hidden_layers=8,
                               num_attention_heads=16, num_key_value_heads=4, head_dim=128,
                               vocab_size=32000, max_position_embeddings=2048), "torch"
    if name == "hk_cohere_prefill_64":
        return hf_decoder_step("Cohere", "float16", 1, 64, hidden_size=2048,
                               intermediate_size=5632, num_hidden_layers=8,
                               num_attention_heads=16, num_key_value_heads=4,
                               vocab_size=32000, max_position_embeddings=2048), "torch"

    with torch.device("cuda"):
        if name == "hk_conv1d_gelu_chain":
            convs = [torch.nn.Conv1d(512, 512, 5, padding=2).half() for _ in range(6)]
            x = randn(16, 512, 1024)

            def step():
                y = x
                for c in convs:
                    y = f.gelu(c(y))
                return y
            return step, "torch"
        if name == "hk_batchnorm_beside_gemm":
            bn = torch.nn.BatchNorm2d(256).half().eval()
            feats = randn(32, 256, 32, 32)
            w = [randn(4096, 4096, dtype=torch.bfloat16) for _ in range(4)]
            x = randn(256, 4096, dtype=torch.bfloat16)

            def norms():
                y = feats
                for _ in range(4):
                    y = bn(y)
                return y[:1, :1].float().sum()
            return fork_join(norms, chain(lambda i, y: (x if y is None else y) @ w[i], 4)), \
                "torch"
        if name == "hk_topk_beside_gemv":
            logits = randn(64, 32000, dtype=torch.float32)
            w = [randn(8192, 4096, dtype=torch.bfloat16) for _ in range(6)]
            v = randn(1, 4096, dtype=torch.bfloat16)

            def picks():
                vals, _ = torch.topk(logits, 50, dim=-1)
                return vals.sum()

            def gemvs():
                y = v
                for m in w:
                    y = (y @ m.t())[:, :4096]
                return y.float().sum()
            return fork_join(picks, gemvs), "torch"
        if name == "hk_silu_mul_beside_prefill_attention":
            gate = randn(2048, 11008)
            up = randn(2048, 11008)
            q = randn(1, 32, 1024, 128)
            k = randn(1, 32, 1024, 128)
            v = randn(1, 32, 1024, 128)

            def gated():
                y = up
                for _ in range(3):
                    y = f.silu(gate) * y
                return y[:1].sum()
            prefill = attention(q, k, v, 3, is_causal=True)
            return fork_join(gated, lambda: prefill().sum()), "torch"
        if name == "hk_cumsum_beside_gemm":
            rows = randn(4096, 8192, dtype=torch.float32)
            w = [randn(2048, 2048, dtype=torch.bfloat16) for _ in range(6)]
            x = randn(1024, 2048, dtype=torch.bfloat16)

            def sums():
                y = rows
                for _ in range(2):
                    y = torch.cumsum(y, dim=-1)
                return y[:1, :8].sum()
            gemms = chain(lambda i, y: (x if y is None else y) @ w[i], 6)
            return fork_join(sums, lambda: gemms().float().sum()), "torch"
        if name == "hk_index_copy_beside_decode_attention":
            cache = randn(16, 32, 4096, 128, dtype=torch.bfloat16)
            new = randn(16, 32, 64, 128, dtype=torch.bfloat16)
            slots = torch.arange(1024, 1088, device="cuda")
            q = randn(16, 32, 1, 128, dtype=torch.bfloat16)
            keys = randn(16, 32, 4096, 128, dtype=torch.bfloat16)
            values = randn(16, 32, 4096, 128, dtype=torch.bfloat16)

            def writes():
                for _ in range(4):
                    cache.index_copy_(2, slots, new)
                return cache[:1, :1, :1, :1].float().sum()
            decode = attention(q, keys, values, 3)
            return fork_join(writes, lambda: decode().float().sum()), "torch"
        if name == "hk_three_streams_decode_norm":
            q = randn(4, 32, 1, 128, dtype=torch.bfloat16)
            k = randn(4, 32, 8192, 128, dtype=torch.bfloat16)
            v = randn(4, 32, 8192, 128, dtype=torch.bfloat16)
            w = [randn(14336, 4096, dtype=torch.bfloat16) for _ in range(3)]
            vec = randn(4, 4096, dtype=torch.bfloat16)
            ln = torch.nn.LayerNorm(4096).to(torch.bfloat16)
            acts = randn(4096, 4096, dtype=torch.bfloat16)
            decode = attention(q, k, v, 2)

            def gemvs():
                y = vec
                for m in w:
                    y = (y @ m.t())[:, :4096]
                return y.float().sum()

            def norms():
                y = acts
                for _ in range(3):
                    y = ln(y)
                return y[:1].float().sum()
            side = fork_join(gemvs, norms)
            return fork_join(lambda: decode().float().sum(), side), "torch"
    raise KeyError(name)
