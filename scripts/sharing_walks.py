"""Three walks on concurrent streams for `scripts/validate.py --walk-module`, written after
`replay --summary` began letting kernels side by side share the SMs, and run with it
unchanged, to check that model on walks it was not built on (results:
docs/validation-h200.md, "Kernels side by side sharing the SMs").

    python3 scripts/validate.py --out DIR --walk-module scripts/sharing_walks.py \
        --walks three_experts_bf16_b16,prefill_branches_256,gemv_beside_attention
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from concurrent_walks import fork_join_n  # noqa: E402


def three_experts():
    """Three bf16 gated-MLP experts (hidden 2048 -> 5632, 3 layers each, batch 16, RMSNorm
    before each) on three streams."""
    import torch
    f = torch.nn.functional
    d, h, layers = 2048, 5632, 3
    with torch.device("cuda"):
        experts = [[(torch.randn(2 * h, d, dtype=torch.bfloat16) * 0.02,
                     torch.randn(d, h, dtype=torch.bfloat16) * 0.02,
                     torch.ones(d, dtype=torch.bfloat16)) for _ in range(layers)]
                   for _ in range(3)]
        x = torch.randn(16, d, dtype=torch.bfloat16)

    def expert(ws):
        def run():
            y = x
            for up, down, g in ws:
                a, b = f.linear(f.rms_norm(y, (d,), g), up).chunk(2, dim=-1)
                y = y + f.linear(f.silu(a) * b, down)
            return y
        return run
    return fork_join_n([expert(ws) for ws in experts])


def prefill_branches():
    """Two fp16 branches over 256 tokens (1024 -> 4096 with bias, ReLU, 4096 -> 1024,
    residual; 4 layers each): GEMMs of several waves side by side."""
    import torch
    f = torch.nn.functional
    d, h, layers = 1024, 4096, 4
    with torch.device("cuda"):
        branches = [[(torch.randn(h, d, dtype=torch.float16) * 0.02,
                      torch.randn(h, dtype=torch.float16) * 0.02,
                      torch.randn(d, h, dtype=torch.float16) * 0.02) for _ in range(layers)]
                    for _ in range(2)]
        x = torch.randn(256, d, dtype=torch.float16)

    def branch(ws):
        def run():
            y = x
            for up, bias, down in ws:
                y = y + f.linear(f.relu(f.linear(y, up, bias)), down)
            return y
        return run
    return fork_join_n([branch(ws) for ws in branches])


def gemv_beside_attention():
    """A bf16 decode projection chain (batch 1, hidden 4096, 6 GEMVs with residual adds) on
    one stream beside decode attention on another (SDPA of 1 query over 2048 cached positions,
    32 heads of 128, 6 times, each followed by a projection back to 4096 wide)."""
    import torch
    f = torch.nn.functional
    d, n = 4096, 6
    with torch.device("cuda"):
        ws = [torch.randn(d, d, dtype=torch.bfloat16) * 0.02 for _ in range(n)]
        x = torch.randn(1, d, dtype=torch.bfloat16)
        q = torch.randn(1, 32, 1, 128, dtype=torch.bfloat16)
        kv = [(torch.randn(1, 32, 2048, 128, dtype=torch.bfloat16),
               torch.randn(1, 32, 2048, 128, dtype=torch.bfloat16)) for _ in range(n)]
        wo = torch.randn(d, d, dtype=torch.bfloat16) * 0.02

    def chain():
        y = x
        for w in ws:
            y = y + f.linear(y, w)
        return y

    def attention():
        y = x
        for k, v in kv:
            o = f.scaled_dot_product_attention(q, k, v)
            y = y + f.linear(o.reshape(1, d), wo)
        return y
    return fork_join_n([chain, attention])


build = builder(5, {
    "three_experts_bf16_b16": three_experts,
    "prefill_branches_256": prefill_branches,
    "gemv_beside_attention": gemv_beside_attention,
})
