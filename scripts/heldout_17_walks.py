"""Nine walks written after the offline model's rule for IEEE f32 GEMMs of no more blocks than
SMs (they hold the SMs their blocks spread over) and before any run of them: transformers
GPT-2 decode in f32 (batch 8) and OLMo prefill (64 tokens), and on several streams: two chains
of f32 linear layers at batch 64, an f32 MLP beside a bf16 MLP, two streams of f32 batched
matmuls, f32 GEMMs beside softmax rows, three streams of small f32 GEMMs, f32 convolutions
side by side (cuDNN's kernels, no recorded GEMM shapes), and f32 matrix-vector products
beside LayerNorm rows. Matmuls in IEEE f32 (PyTorch's default: TF32 off).

    python3 scripts/validate_all.py --out DIR --groups heldout17
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner, decoder as _decoder  # noqa: E402
from walk_parts import linear_chain as _linear_chain  # noqa: E402

F32 = "float32"


def f32_linear_pair_b64():
    import torch
    from walk_parts import fork_join, randn
    f = torch.nn.functional
    with torch.device("cuda"):
        a = [torch.nn.Linear(2048, 2048) for _ in range(4)]
        b = [torch.nn.Linear(2048, 2048) for _ in range(4)]
        xa, xb = randn(64, 2048, dtype=torch.float32), randn(64, 2048, dtype=torch.float32)
    return fork_join(lambda: _corner(_linear_chain(a, xa, f.gelu)()),
                     lambda: _corner(_linear_chain(b, xb, f.gelu)()))


def f32_mlp_beside_bf16_mlp():
    import torch
    from walk_parts import fork_join, randn
    f = torch.nn.functional
    with torch.device("cuda"):
        f32 = [torch.nn.Linear(1024, 4096), torch.nn.Linear(4096, 1024)]
        bf16 = [torch.nn.Linear(n, m).bfloat16() for n, m in ((2048, 8192), (8192, 2048))] * 2
        xa = randn(256, 1024, dtype=torch.float32)
        xb = randn(128, 2048, dtype=torch.bfloat16)
    return fork_join(lambda: _corner(_linear_chain(f32, xa, f.relu)()),
                     lambda: _corner(_linear_chain(bf16, xb, f.silu)()))


def f32_bmm_pair():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        qa, qb = (randn(24, 256, 64, dtype=torch.float32) for _ in range(2))
        ka = [randn(24, 64, 256, dtype=torch.float32) for _ in range(3)]
        kb = [randn(24, 64, 256, dtype=torch.float32) for _ in range(3)]
        va = [randn(24, 256, 64, dtype=torch.float32) for _ in range(3)]
        vb = [randn(24, 256, 64, dtype=torch.float32) for _ in range(3)]
    side_a = chain(lambda i, y: torch.bmm(torch.bmm(qa if y is None else y, ka[i]), va[i]), 3)
    side_b = chain(lambda i, y: torch.bmm(torch.bmm(qb if y is None else y, kb[i]), vb[i]), 3)
    return fork_join(lambda: _corner(side_a()), lambda: _corner(side_b()))


def f32_gemm_beside_softmax():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        a = randn(512, 2048, dtype=torch.float32)
        w = [randn(2048, 2048, dtype=torch.float32) for _ in range(3)]
        scores = randn(8192, 1024, dtype=torch.float32)
    gemms = chain(lambda i, y: torch.relu((a if y is None else y) @ w[i]), 3)
    softmaxes = chain(lambda i, y: torch.softmax(scores if y is None else y, dim=-1), 4)
    return fork_join(lambda: _corner(gemms()), lambda: _corner(softmaxes()))


def three_streams_small_f32():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        xs = [randn(128, 1536, dtype=torch.float32) for _ in range(3)]
        ws = [[randn(1536, 1536, dtype=torch.float32) for _ in range(3)] for _ in range(3)]

    def side(j):
        return chain(lambda i, y: torch.tanh((xs[j] if y is None else y) @ ws[j][i]), 3)
    sides = [side(j) for j in range(3)]
    return fork_join(lambda: _corner(sides[0]()),
                     fork_join(lambda: _corner(sides[1]()), lambda: _corner(sides[2]())))


def f32_conv_pair():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        ca = [torch.nn.Conv2d(32, 32, 3, padding=1) for _ in range(3)]
        cb = [torch.nn.Conv2d(32, 32, 3, padding=1) for _ in range(3)]
        ia, ib = (randn(8, 32, 64, 64, dtype=torch.float32) for _ in range(2))
    side_a = chain(lambda i, y: torch.relu(ca[i](ia if y is None else y)), 3)
    side_b = chain(lambda i, y: torch.relu(cb[i](ib if y is None else y)), 3)
    return fork_join(lambda: _corner(side_a()), lambda: _corner(side_b()))


def f32_gemv_beside_layernorm():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        w = [randn(4096, 4096, dtype=torch.float32) for _ in range(4)]
        v = randn(4, 4096, dtype=torch.float32)
        norms = [torch.nn.LayerNorm(1024) for _ in range(3)]
        rows = randn(16384, 1024, dtype=torch.float32)
    gemvs = chain(lambda i, y: (v if y is None else y) @ w[i], 4)
    lns = chain(lambda i, y: norms[i](rows if y is None else y), 3)
    return fork_join(lambda: _corner(gemvs()), lambda: _corner(lns()))


build = builder(117, {
    "hr_gpt2_f32_decode_b8": _decoder("GPT2", F32, 8, 1, n_embd=1024, n_layer=12, n_head=16,
                                      n_positions=1024),
    "hr_olmo_prefill_64": _decoder("Olmo", "float16", 1, 64, hidden_size=2048,
                                   intermediate_size=8192, num_hidden_layers=8,
                                   num_attention_heads=16, max_position_embeddings=2048),
    "hr_f32_linear_pair_b64": f32_linear_pair_b64,
    "hr_f32_mlp_beside_bf16_mlp": f32_mlp_beside_bf16_mlp,
    "hr_f32_bmm_pair": f32_bmm_pair,
    "hr_f32_gemm_beside_softmax": f32_gemm_beside_softmax,
    "hr_three_streams_small_f32": three_streams_small_f32,
    "hr_f32_conv_pair": f32_conv_pair,
    "hr_f32_gemv_beside_layernorm": f32_gemv_beside_layernorm,
})
