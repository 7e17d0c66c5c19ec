"""Three walks on concurrent streams for `scripts/validate.py --walk-module`, written after
`replay --summary` began stretching GEMMs side by side by the memory load they make together,
and run with it unchanged, to check that model on walks it was not built on (results:
docs/validation-h200.md, "GEMMs side by side stretched by their memory load").

    python3 scripts/validate.py --out DIR --walk-module scripts/load_walks.py \
        --walks kv_projections_b4,wide_pair_bf16,gemm_beside_norms
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from concurrent_walks import fork_join_n  # noqa: E402


def kv_projections():
    """Q, K and V projections of a bf16 decoder on three streams (hidden 3072, K and V 1024
    wide, batch 4, 5 layers), each followed by a rotary-style multiply-add."""
    import torch
    d, kv, layers = 3072, 1024, 5
    with torch.device("cuda"):
        shapes = [d, kv, kv]
        ws = [[torch.randn(o, d, dtype=torch.bfloat16) * 0.02 for _ in range(layers)]
              for o in shapes]
        x = torch.randn(4, d, dtype=torch.bfloat16)
        cos = [torch.randn(4, o, dtype=torch.bfloat16) for o in shapes]

    def proj(w, c):
        def run():
            outs = []
            for m in w:
                y = torch.nn.functional.linear(x, m)
                outs.append(y * c + y)
            return outs[-1][0, :1]  # a view: the branches' outputs differ in width
        return run
    return fork_join_n([proj(w, c) for w, c in zip(ws, cos)])


def wide_pair():
    """Two bf16 chains of 3072 x 3072 GEMMs at batch 2 with GELU, 8 layers each: wide
    weights streamed side by side."""
    import torch
    d, layers = 3072, 8
    with torch.device("cuda"):
        chains = [[torch.randn(d, d, dtype=torch.bfloat16) * 0.02 for _ in range(layers)]
                  for _ in range(2)]
        x = torch.randn(2, d, dtype=torch.bfloat16)

    def chain(ws):
        def run():
            y = x
            for w in ws:
                y = torch.nn.functional.gelu(y @ w)
            return y
        return run
    return fork_join_n([chain(ws) for ws in chains])


def gemm_beside_norms():
    """An fp16 GEMM chain (2048 x 2048, batch 8, 10 layers, SiLU) on one stream beside a
    chain of LayerNorms and residual adds over 64 x 4096 activations on another."""
    import torch
    f = torch.nn.functional
    d, layers = 2048, 10
    with torch.device("cuda"):
        ws = [torch.randn(d, d, dtype=torch.float16) * 0.02 for _ in range(layers)]
        x = torch.randn(8, d, dtype=torch.float16)
        a = torch.randn(64, 4096, dtype=torch.float16)
        gs = [torch.ones(4096, dtype=torch.float16) for _ in range(layers)]

    def gemms():
        y = x
        for w in ws:
            y = f.silu(y @ w)
        return y[0, :1]  # a view: the branches' outputs differ in shape

    def norms():
        y = a
        for g in gs:
            y = y + f.layer_norm(y, (4096,), g)
        return y[0, :1]
    return fork_join_n([gemms, norms])


build = builder(7, {
    "kv_projections_b4": kv_projections,
    "wide_pair_bf16": wide_pair,
    "gemm_beside_norms": gemm_beside_norms,
})
