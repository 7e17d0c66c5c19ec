"""Five walks written after 4dc883b (f32 GEMMs of few tokens on the FMA units hold their spread
too) and before any run of them, all on several streams: f32 matrix products of 4 rows on two
streams, f32 products of 2 rows beside a bf16 MLP, f32 linear layers at 16 tokens beside f32
softmax rows, three streams of f32 products of one row, and f32 products of 8 rows beside f32
GEMMs of 512 tokens. Matmuls in IEEE f32 (PyTorch's default).

    python3 scripts/validate_all.py --out DIR --groups heldout20
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner  # noqa: E402
from walk_parts import linear_chain as _linear_chain  # noqa: E402


def _f32(*shape):
    import torch
    from walk_parts import randn
    return randn(*shape, dtype=torch.float32)


def _products(x, ws, act=None):
    """A chain of `y @ w` through `ws` from `x`, `act` after each where given."""
    from walk_parts import chain
    return chain(lambda i, y: (lambda z: act(z) if act else z)((x if y is None else y) @ ws[i]),
                 len(ws))


def f32_gemv_pair_b4():
    import torch
    from walk_parts import fork_join
    with torch.device("cuda"):
        a = _products(_f32(4, 2048), [_f32(2048, 8192), _f32(8192, 2048)] * 2, torch.tanh)
        b = _products(_f32(4, 2048), [_f32(2048, 8192), _f32(8192, 2048)] * 2, torch.tanh)
    return fork_join(lambda: _corner(a()), lambda: _corner(b()))


def f32_gemv_beside_bf16_mlp():
    import torch
    from walk_parts import fork_join, randn
    f = torch.nn.functional
    with torch.device("cuda"):
        gemvs = _products(_f32(2, 6144), [_f32(6144, 6144) for _ in range(3)])
        mlp = [torch.nn.Linear(n, m, bias=False).bfloat16()
               for n, m in ((2048, 8192), (8192, 2048))] * 2
        x = randn(64, 2048, dtype=torch.bfloat16)
    return fork_join(lambda: _corner(gemvs()), lambda: _corner(_linear_chain(mlp, x, f.gelu)()))


def f32_linear_b16_beside_softmax():
    import torch
    from walk_parts import chain, fork_join
    f = torch.nn.functional
    with torch.device("cuda"):
        lin = [torch.nn.Linear(n, m) for n, m in ((2048, 4096), (4096, 2048))] * 2
        x = _f32(16, 2048)
        scores = _f32(8192, 2048)
    softmaxes = chain(lambda i, y: torch.softmax(scores if y is None else y, dim=-1), 3)
    return fork_join(lambda: _corner(_linear_chain(lin, x, f.silu)()),
                     lambda: _corner(softmaxes()))


def three_streams_f32_gemv():
    import torch
    from walk_parts import fork_join
    with torch.device("cuda"):
        sides = [_products(_f32(1, 4096), [_f32(4096, 4096) for _ in range(3)])
                 for _ in range(3)]
    return fork_join(lambda: _corner(sides[0]()),
                     fork_join(lambda: _corner(sides[1]()), lambda: _corner(sides[2]())))


def f32_gemv_beside_f32_gemm():
    import torch
    from walk_parts import fork_join
    with torch.device("cuda"):
        gemvs = _products(_f32(8, 4096), [_f32(4096, 4096) for _ in range(3)])
        gemms = _products(_f32(512, 1024), [_f32(1024, 1024) for _ in range(4)], torch.relu)
    return fork_join(lambda: _corner(gemvs()), lambda: _corner(gemms()))


build = builder(120, {
    "hv_f32_gemv_pair_b4": f32_gemv_pair_b4,
    "hv_f32_gemv_beside_bf16_mlp": f32_gemv_beside_bf16_mlp,
    "hv_f32_linear_b16_beside_softmax": f32_linear_b16_beside_softmax,
    "hv_three_streams_f32_gemv": three_streams_f32_gemv,
    "hv_f32_gemv_beside_f32_gemm": f32_gemv_beside_f32_gemm,
})
