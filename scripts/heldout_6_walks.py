"""Nine walks written after 93cff67 and run once with the version of that session's change
to the paced stand-ins (docs/validation-h200.md, "The paced stand-ins' registers, and nine
more walks held out, after 93cff67"):
transformers Starcoder2 (decode batch 2) and Mistral (prefill of 64 tokens) shapes, and on
several streams: a LayerNorm over 8192 rows beside bf16 GEMMs, softmax over attention scores
beside a matmul chain, a tanh-GELU with bias over 4096 × 8192 beside decode attention,
masked_fill over 4096 × 4096 beside GEMMs, large bf16 GEMMs (math-bound) beside f32 adds,
two decode attentions over 1024 and 8192 positions, and a sum over rows beside an attention
prefill.

    python3 scripts/validate.py --out DIR --walk-module scripts/heldout_6_walks.py \\
        --walks hf_starcoder2_decode_b2,hf_mistral_prefill_64,...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build(name):
    """(step, kind) of walk `name`; a KeyError for a name it does not know."""
    import torch
    from walk_parts import chain, fork_join, hf_decoder_step
    f = torch.nn.functional
    torch.manual_seed(67)
    if name == "hf_starcoder2_decode_b2":
        return hf_decoder_step("Starcoder2", "bfloat16", 2, 1, hidden_size=2048,
                               intermediate_size=8192, num_hidden_layers=10,
                               num_attention_heads=16, num_key_value_heads=4, vocab_size=32000,
                               max_position_embeddings=2048), "torch"
    if name == "hf_mistral_prefill_64":
        return hf_decoder_step("Mistral", "float16", 1, 64, hidden_size=2048,
                               intermediate_size=5632, num_hidden_layers=10,
                               num_attention_heads=16, num_key_value_heads=8, vocab_size=32000,
                               max_position_embeddings=2048), "torch"
    with torch.device("cuda"):
        if name == "hf_layernorm_rows_beside_gemm":
            rows = torch.randn(8192, 2048, dtype=torch.float16)
            ln = torch.nn.LayerNorm(2048).half()
            x = torch.randn(32, 4096, dtype=torch.bfloat16)
            w = [torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(5)]

            def norms():
                y = rows
                for _ in range(4):
                    y = ln(y) * 1.01
                return y[:32].repeat(1, 2).to(torch.bfloat16)
            return fork_join(norms, chain(lambda i, y: (x if y is None else y) @ w[i], 5)), \
                "torch"
        if name == "hf_softmax_scores_beside_matmul":
            scores = torch.randn(16, 32, 128, 512, dtype=torch.float16)
            x = torch.randn(64, 2048, dtype=torch.float16)
            w = [torch.randn(2048, 2048, dtype=torch.float16) * 0.02 for _ in range(6)]

            def softmaxes():
                y = scores
                for _ in range(3):
                    y = torch.softmax(y * 1.1, dim=-1)
                return y[0, :2].reshape(-1, 2048)[:64]
            return fork_join(softmaxes, chain(lambda i, y: (x if y is None else y) @ w[i], 6)), \
                "torch"
        if name == "hf_gelu_bias_beside_decode_attention":
            h = torch.randn(4096, 8192, dtype=torch.bfloat16)
            bias = torch.randn(8192, dtype=torch.bfloat16)
            q = torch.randn(8, 32, 1, 128, dtype=torch.bfloat16)
            k = torch.randn(8, 32, 2048, 128, dtype=torch.bfloat16)
            v = torch.randn(8, 32, 2048, 128, dtype=torch.bfloat16)

            def gelus():
                y = h
                for _ in range(3):
                    y = f.gelu(y + bias, approximate="tanh")
                return y[:8, :4096]

            def attention():
                y = q
                for _ in range(3):
                    y = f.scaled_dot_product_attention(y, k, v)
                return y.reshape(8, 4096)
            return fork_join(gelus, attention), "torch"
        if name == "hf_masked_fill_beside_gemm":
            a = torch.randn(4096, 4096)
            mask = torch.rand(4096, 4096) > 0.5
            x = torch.randn(16, 4096)
            w = [torch.randn(4096, 4096) * 0.01 for _ in range(4)]

            def fills():
                y = a
                for i in range(4):
                    y = y.masked_fill(mask, float(i)) * 0.5
                return y[:16]
            return fork_join(fills, chain(lambda i, y: (x if y is None else y) @ w[i], 4)), \
                "torch"
        if name == "hf_big_gemm_beside_adds":
            xa = torch.randn(2048, 4096, dtype=torch.bfloat16)
            w = [torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(3)]
            big = torch.randn(1 << 23)
            one = torch.ones(1 << 23)

            def adds():
                y = big
                for _ in range(6):
                    y = y + one
                return y[:2048 * 8].reshape(2048, 8).repeat(1, 512).to(torch.bfloat16)
            return fork_join(chain(lambda i, y: (xa if y is None else y) @ w[i], 3), adds), \
                "torch"
        if name == "hf_two_decode_attentions":
            q = torch.randn(4, 32, 1, 128, dtype=torch.float16)
            k1 = torch.randn(4, 32, 1024, 128, dtype=torch.float16)
            v1 = torch.randn(4, 32, 1024, 128, dtype=torch.float16)
            k2 = torch.randn(4, 32, 8192, 128, dtype=torch.float16)
            v2 = torch.randn(4, 32, 8192, 128, dtype=torch.float16)

            def attend(k, v, n):
                def run():
                    y = q
                    for _ in range(n):
                        y = f.scaled_dot_product_attention(y, k, v)
                    return y
                return run
            return fork_join(attend(k1, v1, 8), attend(k2, v2, 3)), "torch"
        if name == "hf_row_sums_beside_prefill_attention":
            t = torch.randn(8192, 4096)
            q = torch.randn(2, 16, 1024, 64, dtype=torch.float16)
            k = torch.randn(2, 16, 1024, 64, dtype=torch.float16)
            v = torch.randn(2, 16, 1024, 64, dtype=torch.float16)

            def sums():
                y = t
                for _ in range(3):
                    y = y - y.sum(dim=1, keepdim=True) / 4096
                return y[:2048, :1024].reshape(2, 16, 64, 1024).transpose(2, 3).half()

            def attention():
                y = q
                for _ in range(3):
                    y = f.scaled_dot_product_attention(y, k, v, is_causal=True)
                return y
            return fork_join(sums, attention), "torch"
    raise KeyError(name)
