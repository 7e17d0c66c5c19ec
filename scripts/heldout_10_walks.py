"""Nine walks written after lists of scalars were sized as arguments (a layer norm's, a
reduction's inputs) and the paced reads in rounds of blocks were built, before the A/B that
chose between them came back, then run once with the version chosen
(docs/validation-h200.md, "Norms' inputs sized, and walks held out after 6e3705e"):
transformers GLM (decode batch 4) and Helium (prefill of 32 tokens) shapes, a chain of
depthwise 2-D convolutions, and on several streams: a hand-written RMSNorm (pow, mean,
rsqrt, mul) beside decode attention, GroupNorm beside 3 x 3 convolutions, f32 sums over
rows beside bf16 GEMMs, a row softmax beside decode attention, concatenations beside GEMVs,
and three streams (prefill GEMMs, LayerNorm, GELU).

    python3 scripts/validate.py --out DIR --walk-module scripts/heldout_10_walks.py \\
        --walks hj_glm_decode_b4,hj_helium_prefill_32,...
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
    torch.manual_seed(101)
    if name == "hj_glm_decode_b4":
        return hf_decoder_step("Glm", "bfloat16", 4, 1, hidden_size=2048,
                               intermediate_size=6144, num_hidden_layers=8,
                               num_attention_heads=16, num_key_value_heads=4, head_dim=128,
                               vocab_size=32000, max_position_embeddings=2048,
                               pad_token_id=0), "torch"
    if name == "hj_helium_prefill_32":
        return hf_decoder_step("Helium", "float16", 1, 32, hidden_size=2048,
                               intermediate_size=5632, num_hidden_layers=8,
                               num_attention_heads=16, num_key_value_heads=16, head_dim=128,
                               vocab_size=32000, max_position_embeddings=2048), "torch"

    with torch.device("cuda"):
        if name == "hj_depthwise_conv_chain":
            convs = [torch.nn.Conv2d(256, 256, 3, padding=1, groups=256).half()
                     for _ in range(8)]
            x = randn(8, 256, 56, 56)

            def step():
                y = x
                for c in convs:
                    y = f.relu(c(y))
                return y
            return step, "torch"
        if name == "hj_rmsnorm_beside_decode_attention":
            rows = randn(8192, 4096, dtype=torch.bfloat16)
            weight = torch.ones(4096, dtype=torch.bfloat16)

            def norms():
                y = rows
                for _ in range(3):
                    v = y.float().pow(2).mean(-1, keepdim=True)
                    y = (y.float() * torch.rsqrt(v + 1e-6)).to(torch.bfloat16) * weight
                return y[:8].reshape(8, 32, 1, 128)
            decode = attention(randn(8, 32, 1, 128, dtype=torch.bfloat16),
                               randn(8, 32, 4096, 128, dtype=torch.bfloat16),
                               randn(8, 32, 4096, 128, dtype=torch.bfloat16), 3)
            return fork_join(norms, decode), "torch"
        if name == "hj_groupnorm_beside_conv":
            gn = torch.nn.GroupNorm(32, 256).half()
            feats = randn(16, 256, 64, 64)
            convs = [torch.nn.Conv2d(128, 128, 3, padding=1).half() for _ in range(3)]
            img = randn(8, 128, 32, 32)

            def norms():
                y = feats
                for _ in range(3):
                    y = gn(y)
                return y[:8, :128, :32, :32]
            return fork_join(norms, chain(lambda i, y: convs[i](img if y is None else y), 3)), \
                "torch"
        if name == "hj_row_sums_f32_beside_gemm":
            big = randn(16384, 4096, dtype=torch.float32)
            x = randn(512, 4096, dtype=torch.bfloat16)
            w = [randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(4)]

            def sums():
                s = big.sum(dim=1)
                for _ in range(2):
                    s = s + big.sum(dim=1)
                return s[:512, None].to(torch.bfloat16).expand(512, 4096)
            return fork_join(sums, chain(lambda i, y: (x if y is None else y) @ w[i], 4)), \
                "torch"
        if name == "hj_softmax_rows_beside_decode_attention":
            scores = randn(4096, 8192)

            def softmaxes():
                y = scores
                for _ in range(3):
                    y = torch.softmax(y, dim=-1)
                return y[:16, :512].reshape(16, 4, 1, 128)
            decode = attention(randn(16, 4, 1, 128), randn(16, 4, 8192, 128),
                               randn(16, 4, 8192, 128), 3)
            return fork_join(softmaxes, decode), "torch"
        if name == "hj_cat_beside_gemv":
            parts = [randn(2048, 4096) for _ in range(4)]
            x = randn(1, 4096)
            w = [randn(4096, 4096) * 0.01 for _ in range(8)]

            def cats():
                y = torch.cat(parts, dim=0)
                for _ in range(2):
                    y = torch.cat([y[:4096] * 0.5, y[4096:]], dim=0)
                return y[:1]
            return fork_join(cats, chain(lambda i, y: (x if y is None else y) @ w[i], 8)), \
                "torch"
        if name == "hj_three_streams_prefill":
            x = randn(1024, 2048)
            w = [randn(2048, 2048) * 0.01 for _ in range(4)]
            ln = torch.nn.LayerNorm(2048).half()
            acts = randn(8192, 2048)
            gelu_in = randn(1 << 24)

            def norms():
                y = acts
                for _ in range(3):
                    y = ln(y)
                return y[:1024]

            def gelus():
                y = gelu_in
                for _ in range(3):
                    y = f.gelu(y)
                return y[:1024 * 2048].view(1024, 2048)
            side = fork_join(norms, gelus)
            return fork_join(chain(lambda i, y: (x if y is None else y) @ w[i], 4), side), \
                "torch"
    raise KeyError(name)
