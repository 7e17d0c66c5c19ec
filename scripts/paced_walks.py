"""Three walks on concurrent streams with long memory-bound attention, for
`scripts/validate.py --walk-module`, written before `replay` stood such kernels in by paced
reads of their recorded inputs was run on them, and run once with that version unchanged
(results: docs/validation-h200.md, "Attention beside other streams read what it read").

    python3 scripts/validate.py --out DIR --walk-module scripts/paced_walks.py \
        --walks two_requests_decode,attention_pair_8192,prefill_beside_decode
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from concurrent_walks import fork_join_n  # noqa: E402


def decoder(d, heads, layers, hidden, positions, dtype):
    """One request's decode step through a hand-written decoder (LayerNorm, fused QKV
    projection, SDPA of one query over `positions` cached ones, output projection, GELU MLP,
    residuals), batch 1, as a function of nothing."""
    import torch
    f = torch.nn.functional
    hd = d // heads
    with torch.device("cuda"):
        x = torch.randn(1, d, dtype=dtype)
        layer = [dict(
            qkv=torch.randn(3 * d, d, dtype=dtype) * 0.02,
            o=torch.randn(d, d, dtype=dtype) * 0.02,
            up=torch.randn(hidden, d, dtype=dtype) * 0.02,
            down=torch.randn(d, hidden, dtype=dtype) * 0.02,
            k=torch.randn(1, heads, positions, hd, dtype=dtype),
            v=torch.randn(1, heads, positions, hd, dtype=dtype),
        ) for _ in range(layers)]

    def run():
        y = x
        for p in layer:
            h = f.layer_norm(y, (d,))
            q = f.linear(h, p["qkv"])[:, :d].reshape(1, heads, 1, hd)
            a = f.scaled_dot_product_attention(q, p["k"], p["v"])
            y = y + f.linear(a.reshape(1, d), p["o"])
            h = f.layer_norm(y, (d,))
            y = y + f.linear(f.gelu(f.linear(h, p["up"])), p["down"])
        return y
    return run


def two_requests_decode():
    """Two fp16 decode requests on two streams, each 4 layers of hidden 2048 (16 heads of
    128, MLP 5632), one over 3072 cached positions, the other over 6144."""
    import torch
    return fork_join_n([decoder(2048, 16, 4, 5632, 3072, torch.float16),
                        decoder(2048, 16, 4, 5632, 6144, torch.float16)])


def attention_pair(heads, hd, n, positions):
    """Two bf16 chains of decode attention on two streams, `heads` heads of `hd` over
    `positions` cached positions, `n` layers each, with a `heads * hd` square output
    projection between layers."""
    import torch
    f = torch.nn.functional
    d = heads * hd
    with torch.device("cuda"):
        branches = []
        for _ in range(2):
            kv = [(torch.randn(1, heads, positions, hd, dtype=torch.bfloat16),
                   torch.randn(1, heads, positions, hd, dtype=torch.bfloat16))
                  for _ in range(n)]
            w = torch.randn(d, d, dtype=torch.bfloat16) * 0.02
            branches.append((kv, w))
        q0 = torch.randn(1, heads, 1, hd, dtype=torch.bfloat16)

    def chain(kv, w):
        def run():
            q = q0
            for k, v in kv:
                a = f.scaled_dot_product_attention(q, k, v)
                q = f.linear(a.reshape(1, d), w).reshape(1, heads, 1, hd)
            return q.reshape(-1)
        return run
    return fork_join_n([chain(kv, w) for kv, w in branches])


def attention_pair_8192():
    """Two bf16 chains of decode attention on two streams, 8 heads of 128 over 8192 cached
    positions, 5 layers each, with a small projection between layers: two memory-bound
    chains side by side."""
    return attention_pair(8, 128, 5, 8192)


def prefill_beside_decode():
    """A bf16 prefill MLP over 256 tokens (hidden 2048 -> 8192, 3 layers, GELU) on one
    stream beside a bf16 decode request (4 layers of hidden 2048, 16 heads, MLP 5632,
    4096 cached positions) on another."""
    import torch
    f = torch.nn.functional
    d, h = 2048, 8192
    with torch.device("cuda"):
        ws = [(torch.randn(h, d, dtype=torch.bfloat16) * 0.02,
               torch.randn(d, h, dtype=torch.bfloat16) * 0.02) for _ in range(3)]
        x = torch.randn(256, d, dtype=torch.bfloat16)

    def prefill():
        y = x
        for up, down in ws:
            y = y + f.linear(f.gelu(f.linear(y, up)), down)
        return y[:1]

    return fork_join_n([prefill, decoder(d, 16, 4, 5632, 4096, torch.bfloat16)])


build = builder(13, {
    "two_requests_decode": two_requests_decode,
    "attention_pair_8192": attention_pair_8192,
    "prefill_beside_decode": prefill_beside_decode,
})
