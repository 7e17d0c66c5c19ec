"""Five walks for `scripts/validate.py --walk-module`, written after the run at 890f16b and
run once with that version unchanged, on kinds the method had not met: another transformers
architecture (StarCoder2: biased projections, LayerNorm, GELU MLP), a recurrent cell stepped
32 times (small GEMMs over the same weights every step and a fused gate kernel), embedding
bags before an MLP (gathers from 100 MB tables), attention over a 4096-token causal prefill
through `scaled_dot_product_attention` on 3-D views (PyTorch's math path: f32 batched GEMMs
over a 4096 x 4096 score matrix and its softmax, milliseconds each) and a small draft model's
decode beside a larger model's verify step on two streams (results: docs/validation-h200.md,
"Walks written after the 890f16b run"). Two more were written with them and left out: a
Falcon-shaped decoder, whose transformers code copies a CPU tensor to the GPU inside the step
(no graph can capture it), and a ViT encoder at batch 8, whose captured graph ran 413 kernels
where its eager step ran 152.

    python3 scripts/validate.py --out DIR --walk-module scripts/later_walks.py \
        --walks starcoder2_decode_b4,gru_cell_32,embedding_bags_b512,sdpa_prefill_4096,\
draft_and_verify
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def starcoder2_step():
    """A StarCoder2-shaped decoder (hidden 2048, 16 layers, GQA 16/4 heads) at decode batch 4,
    fp16."""
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Starcoder2", "float16", 4, 1, hidden_size=2048,
                           intermediate_size=8192, num_hidden_layers=16, num_attention_heads=16,
                           num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048)


def gru_step():
    """An fp16 GRU cell (hidden 1024, batch 4) stepped over 32 inputs: per step two small
    GEMMs and PyTorch's fused gate kernel."""
    import torch
    with torch.device("cuda"):
        cell = torch.nn.GRUCell(1024, 1024).half()
        xs = torch.randn(32, 4, 1024, dtype=torch.float16)
        h0 = torch.zeros(4, 1024, dtype=torch.float16)

    def step():
        with torch.no_grad():
            h = h0
            for t in range(xs.shape[0]):
                h = cell(xs[t], h)
            return h
    return step


def embedding_bags_step():
    """Eight fp32 embedding-bag tables (200 000 x 128, sums of 20 rows, 512 bags each), their
    results joined and run through a three-layer bf16 MLP, as a recommender's step is."""
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        tables = [torch.nn.EmbeddingBag(200_000, 128, mode="sum") for _ in range(8)]
        idx = [torch.randint(0, 200_000, (512 * 20,)) for _ in tables]
        offsets = torch.arange(0, 512 * 20, 20)
        ws = [torch.randn(1024, 1024, dtype=torch.bfloat16) * 0.02 for _ in range(3)]

    def step():
        with torch.no_grad():
            y = torch.cat([t(i, offsets) for t, i in zip(tables, idx)], dim=1).bfloat16()
            for w in ws:
                y = f.relu(f.linear(y, w))
            return y
    return step


def sdpa_prefill_step():
    """Four bf16 attention layers over a 4096-token causal prefill (16 heads of 128; QKV and
    output projections). `scaled_dot_product_attention` over these 3-D (heads, tokens, dim)
    views takes PyTorch's math path, in f32: two batched GEMMs and a softmax over the
    16 x 4096 x 4096 scores per layer."""
    import torch
    f = torch.nn.functional
    d, heads, n = 2048, 16, 4096
    with torch.device("cuda"):
        ws = [(torch.randn(3 * d, d, dtype=torch.bfloat16) * 0.02,
               torch.randn(d, d, dtype=torch.bfloat16) * 0.02) for _ in range(4)]
        x = torch.randn(n, d, dtype=torch.bfloat16)

    def step():
        with torch.no_grad():
            y = x
            for qkv, out in ws:
                q, k, v = f.linear(y, qkv).view(n, 3, heads, d // heads).permute(1, 2, 0, 3)
                a = f.scaled_dot_product_attention(q, k, v, is_causal=True)
                y = y + f.linear(a.transpose(0, 1).reshape(n, d), out)
            return y
    return step


def draft_and_verify_step():
    """A draft model's decode (16 fp16 MLP layers of hidden 512, batch 1) on one stream
    beside a larger model's verify step (4 bf16 gated-MLP layers of hidden 4096 with RMSNorm
    at 8 tokens) on another; their results summed on the stream that forked them."""
    import torch
    from walk_parts import fork_join
    f = torch.nn.functional
    with torch.device("cuda"):
        small = [(torch.randn(2048, 512, dtype=torch.float16) * 0.02,
                  torch.randn(512, 2048, dtype=torch.float16) * 0.02) for _ in range(16)]
        big = [(torch.randn(2 * 11008, 4096, dtype=torch.bfloat16) * 0.01,
                torch.randn(4096, 11008, dtype=torch.bfloat16) * 0.01) for _ in range(4)]
        xs = torch.randn(1, 512, dtype=torch.float16)
        xb = torch.randn(8, 4096, dtype=torch.bfloat16)
        norm = torch.nn.RMSNorm(4096, dtype=torch.bfloat16)

    def draft():
        with torch.no_grad():
            y = xs
            for up, down in small:
                y = y + f.linear(f.gelu(f.linear(y, up)), down)
            return y.sum()

    def verify():
        with torch.no_grad():
            y = xb
            for up, down in big:
                a, b = f.linear(norm(y), up).chunk(2, dim=-1)
                y = y + f.linear(f.silu(a) * b, down)
            return y.float().sum()

    return fork_join(draft, verify)


build = builder(21, {
    "starcoder2_decode_b4": starcoder2_step,
    "gru_cell_32": gru_step,
    "embedding_bags_b512": embedding_bags_step,
    "sdpa_prefill_4096": sdpa_prefill_step,
    "draft_and_verify": draft_and_verify_step,
})
