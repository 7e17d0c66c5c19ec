"""Nine walks written after 6c3c3d0, before the paced stand-ins' read bandwidth was tried, and
run once with that change (docs/validation-h200.md, "Decode attention's reads paced
deep, and 27 walks held out, after 6c3c3d0"): transformers Qwen3 (decode batch 16) and Gemma
(prefill of 32 tokens) shapes, a CuPy walk of small raw kernels, and on several streams:
decode attention over 4096 positions beside a GEMV chain, a KV-cache write and decode
attention beside an MLP, rotary embedding over a prefill's heads beside GEMMs, a variance
over large rows beside fp16 convolutions, an embedding gather beside decode attention, and
three streams nested (GEMMs, a softmax, decode attention).

    python3 scripts/validate.py --out DIR --walk-module scripts/heldout_7_walks.py \\
        --walks hg_qwen3_decode_b16,hg_gemma_prefill_32,...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build(name):
    """(step, kind) of walk `name`; a KeyError for a name it does not know."""
    import torch
    from walk_parts import chain, fork_join, hf_decoder_step
    f = torch.nn.functional
    torch.manual_seed(71)
    if name == "hg_qwen3_decode_b16":
        return hf_decoder_step("Qwen3", "bfloat16", 16, 1, hidden_size=2048,
                               intermediate_size=6144, num_hidden_layers=10,
                               num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                               vocab_size=32000, max_position_embeddings=2048), "torch"
    if name == "hg_gemma_prefill_32":
        return hf_decoder_step("Gemma", "bfloat16", 1, 32, hidden_size=2048,
                               intermediate_size=8192, num_hidden_layers=8,
                               num_attention_heads=8, num_key_value_heads=1, head_dim=256,
                               vocab_size=32000, max_position_embeddings=2048), "torch"
    if name == "hg_cupy_small_kernels":
        return cupy_small_kernels(), "cupy"
    with torch.device("cuda"):
        if name == "hg_decode_attention_beside_gemv":
            q = torch.randn(8, 32, 1, 128, dtype=torch.bfloat16)
            k = torch.randn(8, 32, 4096, 128, dtype=torch.bfloat16)
            v = torch.randn(8, 32, 4096, 128, dtype=torch.bfloat16)
            x = torch.randn(1, 4096, dtype=torch.bfloat16)
            w = [torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(8)]

            def attention():
                y = q
                for _ in range(4):
                    y = f.scaled_dot_product_attention(y, k, v)
                return y.reshape(8, 4096)[:1]
            return fork_join(attention, chain(lambda i, y: (x if y is None else y) @ w[i], 8)), \
                "torch"
        if name == "hg_kv_write_attention_beside_mlp":
            cache_k = torch.randn(4, 32, 4096, 128, dtype=torch.float16)
            cache_v = torch.randn(4, 32, 4096, 128, dtype=torch.float16)
            new_k = torch.randn(4, 32, 1, 128, dtype=torch.float16)
            pos = torch.tensor([2048], dtype=torch.long)
            q = torch.randn(4, 32, 1, 128, dtype=torch.float16)
            x = torch.randn(4, 4096, dtype=torch.float16)
            up = torch.randn(4096, 11008, dtype=torch.float16) * 0.01
            gate = torch.randn(4096, 11008, dtype=torch.float16) * 0.01
            down = torch.randn(11008, 4096, dtype=torch.float16) * 0.01

            def attention():
                y = q
                for _ in range(3):
                    cache_k.index_copy_(2, pos, new_k)
                    cache_v.index_copy_(2, pos, new_k)
                    y = f.scaled_dot_product_attention(y, cache_k, cache_v)
                return y.reshape(4, 4096)

            def mlp():
                y = x
                for _ in range(3):
                    y = (f.silu(y @ gate) * (y @ up)) @ down
                return y
            return fork_join(attention, mlp), "torch"
        if name == "hg_rope_beside_gemm":
            qk = torch.randn(8, 32, 1024, 128, dtype=torch.float16)
            cos = torch.randn(1024, 64, dtype=torch.float16)
            sin = torch.randn(1024, 64, dtype=torch.float16)
            x = torch.randn(256, 4096, dtype=torch.float16)
            w = [torch.randn(4096, 4096, dtype=torch.float16) * 0.01 for _ in range(4)]

            def rope():
                y = qk
                for _ in range(2):
                    a, b = y[..., :64], y[..., 64:]
                    y = torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)
                return y[0, :2, :128].reshape(256, 128).repeat(1, 32)
            return fork_join(rope, chain(lambda i, y: (x if y is None else y) @ w[i], 4)), \
                "torch"
        if name == "hg_variance_beside_conv":
            rows = torch.randn(16384, 2048)
            img = torch.randn(8, 64, 64, 64, dtype=torch.float16)
            convs = [torch.nn.Conv2d(64, 64, 3, padding=1).half() for _ in range(4)]

            def variances():
                y = rows
                for _ in range(3):
                    y = (y - y.mean(dim=1, keepdim=True)) / (y.var(dim=1, keepdim=True) + 1.0)
                return y[:8 * 64].reshape(8, 64, 1, 2048)[..., :64].half()

            def conv():
                y = img
                for c in convs:
                    y = torch.relu(c(y))
                return y
            return fork_join(variances, conv), "torch"
        if name == "hg_embedding_beside_decode_attention":
            table = torch.randn(256000, 2048, dtype=torch.bfloat16)
            ids = torch.randint(0, 256000 - 4, (4096,))
            q = torch.randn(8, 16, 1, 128, dtype=torch.bfloat16)
            k = torch.randn(8, 16, 8192, 128, dtype=torch.bfloat16)
            v = torch.randn(8, 16, 8192, 128, dtype=torch.bfloat16)

            def gather():
                y = None
                for i in range(4):
                    e = f.embedding(ids + i, table)
                    y = e if y is None else y + e
                return y[:8].reshape(8, 16, 1, 128)

            def attention():
                y = q
                for _ in range(3):
                    y = f.scaled_dot_product_attention(y, k, v)
                return y
            return fork_join(gather, attention), "torch"
        if name == "hg_three_streams_nested":
            x = torch.randn(64, 4096, dtype=torch.bfloat16)
            w = [torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(5)]
            scores = torch.randn(8, 32, 64, 1024, dtype=torch.bfloat16)
            q = torch.randn(4, 32, 1, 128, dtype=torch.bfloat16)
            k = torch.randn(4, 32, 4096, 128, dtype=torch.bfloat16)
            v = torch.randn(4, 32, 4096, 128, dtype=torch.bfloat16)

            def softmaxes():
                y = scores
                for _ in range(3):
                    y = torch.softmax(y * 0.9, dim=-1)
                return y[0, :4, :8].reshape(4, 32, 1, 256)[..., :128]

            def attention():
                y = q
                for _ in range(3):
                    y = f.scaled_dot_product_attention(y, k, v)
                return y
            side = fork_join(softmaxes, attention)
            gemms = chain(lambda i, y: (x if y is None else y) @ w[i], 5)
            return fork_join(gemms, lambda: side().reshape(4, 4096)[:1].expand(64, 4096)), \
                "torch"
    raise KeyError(name)


def cupy_small_kernels():
    """A CuPy step of small element-wise and reduction kernels over vectors of 2^14 to 2^20
    elements: many launches of a few µs each, none of them PyTorch's."""
    import cupy as cp
    xs = [cp.random.standard_normal(1 << n, dtype=cp.float32) for n in (14, 16, 18, 20)]
    scale = cp.ElementwiseKernel("float32 x, float32 s", "float32 y", "y = x * s + 0.5f",
                                 "hg_scale")
    norm = cp.ReductionKernel("float32 x", "float32 y", "x * x", "a + b", "y = sqrt(a)", "0",
                              "hg_norm")

    def step():
        acc = None
        for _ in range(6):
            for x in xs:
                y = scale(x, cp.float32(0.999))
                r = norm(y)
                acc = r if acc is None else acc + r
        return acc
    return step
