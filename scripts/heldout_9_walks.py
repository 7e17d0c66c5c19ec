"""Nine walks written after the deep paced read was built and before the version with it ran
them, then run once with it (docs/validation-h200.md, "Decode attention's reads paced deep,
and 27 walks held out, after 6c3c3d0"): transformers Llama (decode batch 32) and Qwen2 (prefill of 128 tokens)
shapes, a GRU cell stepped 24 times, and on several streams: a causal attention prefill beside
decode attention, decode attention beside a SwiGLU MLP, grouped-query decode attention
(`enable_gqa`) beside f32 adds, two decode attentions of 4096 positions, an f32 LayerNorm
beside fp16 GEMMs, and three streams (decode attention, GEMVs, element-wise passes).

    python3 scripts/validate.py --out DIR --walk-module scripts/heldout_9_walks.py \\
        --walks hi_llama_decode_b32,hi_qwen2_prefill_128,...
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
    torch.manual_seed(97)
    if name == "hi_llama_decode_b32":
        return hf_decoder_step("Llama", "bfloat16", 32, 1, hidden_size=2048,
                               intermediate_size=5632, num_hidden_layers=8,
                               num_attention_heads=32, num_key_value_heads=8,
                               vocab_size=32000, max_position_embeddings=2048), "torch"
    if name == "hi_qwen2_prefill_128":
        return hf_decoder_step("Qwen2", "float16", 1, 128, hidden_size=1536,
                               intermediate_size=8960, num_hidden_layers=8,
                               num_attention_heads=12, num_key_value_heads=2,
                               vocab_size=32000, max_position_embeddings=2048), "torch"

    with torch.device("cuda"):
        if name == "hi_gru_cell_steps":
            cell = torch.nn.GRUCell(512, 1024)
            xs = randn(24, 64, 512, dtype=torch.float32)
            h0 = randn(64, 1024, dtype=torch.float32)

            def step():
                h = h0
                for t in range(24):
                    h = cell(xs[t], h)
                return h
            return step, "torch"
        if name == "hi_prefill_beside_decode_attention":
            pq = randn(1, 16, 2048, 128)
            prefill = attention(pq, randn(1, 16, 2048, 128), randn(1, 16, 2048, 128), 2,
                                is_causal=True)
            decode = attention(randn(8, 32, 1, 128), randn(8, 32, 4096, 128),
                               randn(8, 32, 4096, 128), 3)
            return fork_join(lambda: prefill()[0, :, :8].reshape(8, 16, 1, 128)
                             .repeat(1, 2, 1, 1), decode), "torch"
        if name == "hi_decode_attention_beside_swiglu":
            decode = attention(randn(16, 32, 1, 128, dtype=torch.bfloat16),
                               randn(16, 32, 2048, 128, dtype=torch.bfloat16),
                               randn(16, 32, 2048, 128, dtype=torch.bfloat16), 3)
            x = randn(16, 4096, dtype=torch.bfloat16)
            gate = randn(4096, 11008, dtype=torch.bfloat16) * 0.01
            up = randn(4096, 11008, dtype=torch.bfloat16) * 0.01
            down = randn(11008, 4096, dtype=torch.bfloat16) * 0.01

            def swiglu():
                y = x
                for _ in range(2):
                    y = (f.silu(y @ gate) * (y @ up)) @ down
                return y
            return fork_join(lambda: decode().reshape(16, 4096), swiglu), "torch"
        if name == "hi_gqa_decode_beside_adds":
            decode = attention(randn(4, 32, 1, 128), randn(4, 8, 8192, 128),
                               randn(4, 8, 8192, 128), 3, enable_gqa=True)
            big = randn(1 << 24, dtype=torch.float32)

            def adds():
                y = big
                for _ in range(4):
                    y = y + 0.5
                return y[:4 * 32 * 128].view(4, 32, 1, 128).half()
            return fork_join(decode, adds), "torch"
        if name == "hi_two_decode_attentions_4k":
            a = attention(randn(8, 32, 1, 128), randn(8, 32, 4096, 128),
                          randn(8, 32, 4096, 128), 3)
            b = attention(randn(8, 32, 1, 128), randn(8, 32, 4096, 128),
                          randn(8, 32, 4096, 128), 3)
            return fork_join(a, b), "torch"
        if name == "hi_f32_layernorm_beside_gemm":
            rows = randn(8192, 4096, dtype=torch.float32)
            ln = torch.nn.LayerNorm(4096)
            x = randn(256, 4096)
            w = [randn(4096, 4096) * 0.01 for _ in range(4)]

            def norms():
                y = rows
                for _ in range(3):
                    y = ln(y)
                return y[:256].half()
            return fork_join(norms, chain(lambda i, y: (x if y is None else y) @ w[i], 4)), \
                "torch"
        if name == "hi_three_streams_decode":
            decode = attention(randn(4, 32, 1, 128), randn(4, 32, 2048, 128),
                               randn(4, 32, 2048, 128), 3)
            x = randn(1, 4096)
            w = [randn(4096, 4096) * 0.01 for _ in range(6)]
            big = randn(1 << 23)

            def passes():
                y = big
                for _ in range(4):
                    y = y * 0.9 + 0.1
                return y[:4096].view(1, 4096)
            side = fork_join(chain(lambda i, y: (x if y is None else y) @ w[i], 6), passes)
            return fork_join(lambda: decode().reshape(4, 4096)[:1], side), "torch"
    raise KeyError(name)
