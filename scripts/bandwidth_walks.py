"""Three walks on concurrent streams for `scripts/validate.py --walk-module`, written before
`replay --summary` began sharing device memory between kernels side by side, and run once
with that version unchanged, to check it on walks it was not built on (results:
docs/validation-h200.md, "Device memory shared as well as the SMs").

    python3 scripts/validate.py --out DIR --walk-module scripts/bandwidth_walks.py \
        --walks four_gemv_chains,mlp_pair_b32,gemm_beside_long_attention
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from concurrent_walks import fork_join_n  # noqa: E402


def four_gemv_chains():
    """Four bf16 chains of 4096 x 4096 GEMVs at batch 1 (5 layers each, residual adds) on
    four streams: together they ask for more than device memory gives."""
    import torch
    d, layers = 4096, 5
    with torch.device("cuda"):
        chains = [[torch.randn(d, d, dtype=torch.bfloat16) * 0.02 for _ in range(layers)]
                  for _ in range(4)]
        x = torch.randn(1, d, dtype=torch.bfloat16)

    def chain(ws):
        def run():
            y = x
            for w in ws:
                y = y + torch.nn.functional.linear(y, w)
            return y
        return run
    return fork_join_n([chain(ws) for ws in chains])


def mlp_pair():
    """Two fp16 MLP branches at batch 32 (hidden 2560 -> 6912 -> 2560 with GELU, 3 layers
    each) on two streams."""
    import torch
    f = torch.nn.functional
    d, h, layers = 2560, 6912, 3
    with torch.device("cuda"):
        branches = [[(torch.randn(h, d, dtype=torch.float16) * 0.02,
                      torch.randn(d, h, dtype=torch.float16) * 0.02) for _ in range(layers)]
                    for _ in range(2)]
        x = torch.randn(32, d, dtype=torch.float16)

    def branch(ws):
        def run():
            y = x
            for up, down in ws:
                y = y + f.linear(f.gelu(f.linear(y, up)), down)
            return y
        return run
    return fork_join_n([branch(ws) for ws in branches])


def gemm_beside_long_attention():
    """A bf16 GEMM chain (3584 x 3584, batch 8, 6 layers, SiLU) beside decode attention over
    4096 cached positions (28 heads of 128, one query, 6 times)."""
    import torch
    f = torch.nn.functional
    d, n = 3584, 6
    with torch.device("cuda"):
        ws = [torch.randn(d, d, dtype=torch.bfloat16) * 0.02 for _ in range(n)]
        x = torch.randn(8, d, dtype=torch.bfloat16)
        q = torch.randn(1, 28, 1, 128, dtype=torch.bfloat16)
        kv = [(torch.randn(1, 28, 4096, 128, dtype=torch.bfloat16),
               torch.randn(1, 28, 4096, 128, dtype=torch.bfloat16)) for _ in range(n)]

    def gemms():
        y = x
        for w in ws:
            y = f.silu(y @ w)
        return y[0, :1]  # a view: the branches' outputs differ in shape

    def attention():
        o = q
        for k, v in kv:
            o = f.scaled_dot_product_attention(o, k, v)
        return o.reshape(-1)[:1]
    return fork_join_n([gemms, attention])


build = builder(11, {
    "four_gemv_chains": four_gemv_chains,
    "mlp_pair_b32": mlp_pair,
    "gemm_beside_long_attention": gemm_beside_long_attention,
})
