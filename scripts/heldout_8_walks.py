"""Nine walks written after the paced reads' peak-bandwidth bound was built and before it was
run, then run once with it (docs/validation-h200.md, "Decode attention's reads paced
deep, and 27 walks held out, after 6c3c3d0"): transformers StableLm (decode batch 8) and Phi
(prefill of 48 tokens) shapes, a chain of fp16 1-D convolutions, and on several streams:
decode attention over 2048 positions beside a LayerNorm, decode attention over 16384
positions beside prefill-sized GEMMs, decode attention over 8192 positions beside a softmax,
a large tensor copy beside decode attention, GEMVs over 8192 × 8192 weights beside row sums,
and three streams nested (decode attention, an MLP, an RMSNorm).

    python3 scripts/validate.py --out DIR --walk-module scripts/heldout_8_walks.py \\
        --walks hh_stablelm_decode_b8,hh_phi_prefill_48,...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build(name):
    """(step, kind) of walk `name`; a KeyError for a name it does not know."""
    import torch
    from walk_parts import chain, fork_join, hf_decoder_step
    f = torch.nn.functional
    torch.manual_seed(83)
    if name == "hh_stablelm_decode_b8":
        return hf_decoder_step("StableLm", "float16", 8, 1, hidden_size=2048,
                               intermediate_size=5632, num_hidden_layers=12,
                               num_attention_heads=32, num_key_value_heads=32,
                               vocab_size=32000, max_position_embeddings=2048), "torch"
    if name == "hh_phi_prefill_48":
        return hf_decoder_step("Phi", "float16", 1, 48, hidden_size=2048,
                               intermediate_size=8192, num_hidden_layers=10,
                               num_attention_heads=32, vocab_size=32000,
                               max_position_embeddings=2048), "torch"

    def decode_attention(batch, heads, positions, n, dtype=torch.float16):
        q = torch.randn(batch, heads, 1, 128, dtype=dtype)
        k = torch.randn(batch, heads, positions, 128, dtype=dtype)
        v = torch.randn(batch, heads, positions, 128, dtype=dtype)

        def run():
            y = q
            for _ in range(n):
                y = f.scaled_dot_product_attention(y, k, v)
            return y
        return run

    with torch.device("cuda"):
        if name == "hh_conv1d_chain":
            x = torch.randn(4, 256, 4096, dtype=torch.float16)
            convs = [torch.nn.Conv1d(256, 256, 5, padding=2).half() for _ in range(10)]

            def step():
                y = x
                for c in convs:
                    y = f.gelu(c(y))
                return y
            return step, "torch"
        if name == "hh_decode_2k_beside_layernorm":
            rows = torch.randn(16384, 1024, dtype=torch.bfloat16)
            ln = torch.nn.LayerNorm(1024).to(torch.bfloat16)
            attention = decode_attention(16, 32, 2048, 4, torch.bfloat16)

            def norms():
                y = rows
                for _ in range(4):
                    y = ln(y)
                return y[:16 * 32].reshape(16, 32, 1, 1024)[..., :128]
            return fork_join(norms, attention), "torch"
        if name == "hh_decode_16k_beside_gemm":
            attention = decode_attention(2, 32, 16384, 2)
            x = torch.randn(512, 4096, dtype=torch.float16)
            w = [torch.randn(4096, 4096, dtype=torch.float16) * 0.01 for _ in range(4)]
            gemms = chain(lambda i, y: (x if y is None else y) @ w[i], 4)
            return fork_join(lambda: attention().reshape(2, 4096).repeat(256, 1), gemms), \
                "torch"
        if name == "hh_decode_8k_beside_softmax":
            attention = decode_attention(8, 8, 8192, 3)
            scores = torch.randn(8, 16, 256, 1024, dtype=torch.float16)

            def softmaxes():
                y = scores
                for _ in range(3):
                    y = torch.softmax(y + 0.5, dim=-1)
                return y[:, :8, :1, :128]
            return fork_join(softmaxes, attention), "torch"
        if name == "hh_copy_beside_decode_attention":
            big = torch.randn(1 << 26, dtype=torch.float16)
            out = torch.empty_like(big)
            attention = decode_attention(4, 32, 4096, 3)

            def copies():
                for _ in range(3):
                    out.copy_(big)
                    big.copy_(out)
                return big[:4 * 32 * 128].view(4, 32, 1, 128)
            return fork_join(copies, attention), "torch"
        if name == "hh_gemv_beside_row_sums":
            x = torch.randn(1, 8192, dtype=torch.float16)
            w = [torch.randn(8192, 8192, dtype=torch.float16) * 0.01 for _ in range(4)]
            t = torch.randn(8192, 8192)

            def sums():
                y = t
                for _ in range(2):
                    y = y - y.sum(dim=0, keepdim=True) / 8192
                return y[:1].half()
            gemvs = chain(lambda i, y: (x if y is None else y) @ w[i], 4)
            return fork_join(gemvs, sums), "torch"
        if name == "hh_three_streams_attention_mlp_norm":
            attention = decode_attention(4, 32, 4096, 2)
            x = torch.randn(4, 4096, dtype=torch.float16)
            up = torch.randn(4096, 14336, dtype=torch.float16) * 0.01
            down = torch.randn(14336, 4096, dtype=torch.float16) * 0.01
            rows = torch.randn(8192, 4096, dtype=torch.float16)
            g = torch.randn(4096, dtype=torch.float16)

            def mlp():
                y = x
                for _ in range(2):
                    y = f.silu(y @ up) @ down
                return y

            def rmsnorm():
                y = rows
                for _ in range(3):
                    y = y * torch.rsqrt(y.float().pow(2).mean(-1, keepdim=True) + 1e-6).half() * g
                return y[:4]
            side = fork_join(mlp, rmsnorm)
            return fork_join(lambda: attention().reshape(4, 4096), side), "torch"
    raise KeyError(name)
