"""Diagnostic walks (not held out): a decoder's parts beside each other on two streams, to
find which part of a decoder beside a decoder `replay --summary` prices short.

Each walk forks two chains off the capture stream (`walk_parts.fork_join`): decode-sized
element-wise kernels (8 × 2048 bf16: adds, multiplies, SiLU, an RMS norm's reductions, 160
kernels), decode GEMMs that stream their weights (8 tokens through 2048 → 5632 → 2048, twelve
layers of their own weights, 277 MB a chain), or both interleaved as a small decoder's layers.

    python3 scripts/validate.py --out OUT --walk-module scripts/decoder_part_walks.py \\
        --walks d_ew_pair,d_gemv_pair,d_ew_beside_gemv,d_mini_decoder_pair

Results: docs/validation-h200.md, "What a decoder beside a decoder misses".
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import corner, fork_join  # noqa: E402
from walk_registry import builder  # noqa: E402

HIDDEN, FFN, TOKENS = 2048, 5632, 8


def element_wise_chain(n):
    """`n` decode-sized element-wise kernels and RMS-norm reductions, each on the last result."""
    import torch
    xs = [torch.randn(TOKENS, HIDDEN, device="cuda", dtype=torch.bfloat16) for _ in range(3)]

    def run():
        y = xs[0]
        for i in range(n):
            k = i % 4
            if k == 0:
                y = y + xs[1]
            elif k == 1:
                y = y * xs[2]
            elif k == 2:
                y = torch.nn.functional.silu(y)
            else:
                y = y * torch.rsqrt(y.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(y.dtype)
        return y
    return run


def _weights(layers):
    import torch
    ups = [torch.randn(FFN, HIDDEN, device="cuda", dtype=torch.bfloat16) * 0.02
           for _ in range(layers)]
    downs = [torch.randn(HIDDEN, FFN, device="cuda", dtype=torch.bfloat16) * 0.02
             for _ in range(layers)]
    return ups, downs, torch.randn(TOKENS, HIDDEN, device="cuda", dtype=torch.bfloat16)


def gemv_chain(layers):
    """`layers` up and down projections of 8 tokens, each layer's weights its own."""
    import torch
    ups, downs, x = _weights(layers)

    def run():
        y = x
        for u, d in zip(ups, downs):
            y = torch.matmul(torch.matmul(y, u.t()), d.t())
        return y
    return run


def mini_decoder(layers):
    """`layers` of RMS norm, up projection, SiLU, down projection and residual add."""
    import torch
    ups, downs, x = _weights(layers)
    w = torch.ones(HIDDEN, device="cuda", dtype=torch.bfloat16)

    def run():
        y = x
        for u, d in zip(ups, downs):
            h = y * torch.rsqrt(y.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(y.dtype) * w
            h = torch.nn.functional.silu(torch.matmul(h, u.t()))
            y = y + torch.matmul(h, d.t())
        return y
    return run


def side_by_side(make_a, make_b):
    """A walk's maker: the chains `make_a()` and `make_b()` forked onto two streams."""
    def make():
        a, b = make_a(), make_b()
        return fork_join(lambda: corner(a()), lambda: corner(b()))
    return make


build = builder(451, {
    "d_ew_pair": side_by_side(lambda: element_wise_chain(160), lambda: element_wise_chain(160)),
    "d_gemv_pair": side_by_side(lambda: gemv_chain(12), lambda: gemv_chain(12)),
    "d_ew_beside_gemv": side_by_side(lambda: element_wise_chain(160), lambda: gemv_chain(12)),
    "d_mini_decoder_pair": side_by_side(lambda: mini_decoder(12), lambda: mini_decoder(12)),
})
