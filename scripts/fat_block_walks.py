"""Four walks on concurrent streams for `scripts/validate.py --walk-module`, written after
`replay --summary` began holding kernels of one round of fat blocks as the profile's widest
GEMM pair (and stretching kernels beside others beyond the sharing of the SMs), with shapes
that version was not built on: GEMVs of three widths side by side, decode attention beside a
math-held prefill MLP, gated fp16 MLPs at batch 4, and 32-head attention chains. Run them
with that version unchanged to check it on walks it has not seen.

    python3 scripts/validate.py --out DIR --walk-module scripts/fat_block_walks.py \\
        --walks gemv_trio_mixed,attention_beside_prefill,gated_pair_b4,attention_pair_32_heads
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from concurrent_walks import fork_join_n  # noqa: E402


def gemv_trio_mixed():
    """Three bf16 GEMV chains at batch 1 (hidden 2048, 4096 and 6144, 4 layers each, residual
    adds) on three streams."""
    import torch
    layers = 4
    with torch.device("cuda"):
        chains = [(torch.randn(1, d, dtype=torch.bfloat16),
                   [torch.randn(d, d, dtype=torch.bfloat16) * 0.02 for _ in range(layers)])
                  for d in (2048, 4096, 6144)]

    def chain(x, ws):
        def run():
            y = x
            for w in ws:
                y = y + torch.nn.functional.linear(y, w)
            return y[0, :1]
        return run
    return fork_join_n([chain(x, ws) for x, ws in chains])


def attention_beside_prefill():
    """bf16 decode attention (16 heads of 128 over 6144 cached positions, 6 times) on one
    stream beside a 384-token prefill MLP (2048 -> 8192 -> 2048 with GELU, 2 layers) on
    another."""
    import torch
    f = torch.nn.functional
    heads, hd, n, positions = 16, 128, 6, 6144
    d, h, tokens = 2048, 8192, 384
    with torch.device("cuda"):
        q = torch.randn(1, heads, 1, hd, dtype=torch.bfloat16)
        kv = [(torch.randn(1, heads, positions, hd, dtype=torch.bfloat16),
               torch.randn(1, heads, positions, hd, dtype=torch.bfloat16)) for _ in range(n)]
        ws = [(torch.randn(h, d, dtype=torch.bfloat16) * 0.02,
               torch.randn(d, h, dtype=torch.bfloat16) * 0.02) for _ in range(2)]
        x = torch.randn(tokens, d, dtype=torch.bfloat16)

    def attention():
        o = q
        for k, v in kv:
            o = f.scaled_dot_product_attention(o, k, v)
        return o.reshape(-1)[:1]

    def prefill():
        y = x
        for up, down in ws:
            y = y + f.linear(f.gelu(f.linear(y, up)), down)
        return y.reshape(-1)[:1]
    return fork_join_n([attention, prefill])


def gated_pair_b4():
    """Two fp16 gated-MLP branches at batch 4 (hidden 2560 -> 6912, gate and up in one GEMM,
    SiLU, 3 layers) on two streams."""
    from unseen_walks import gated_mlp_experts
    return fork_join_n(gated_mlp_experts(2, 2560, 6912, 3, 4))


def attention_pair_32_heads():
    """Two bf16 chains of decode attention on two streams, 32 heads of 128 over 4096 cached
    positions, 4 layers each, with a 4096 x 4096 output projection between layers."""
    from paced_walks import attention_pair
    return attention_pair(32, 128, 4, 4096)


build = builder(17, {
    "gemv_trio_mixed": gemv_trio_mixed,
    "attention_beside_prefill": attention_beside_prefill,
    "gated_pair_b4": gated_pair_b4,
    "attention_pair_32_heads": attention_pair_32_heads,
})
