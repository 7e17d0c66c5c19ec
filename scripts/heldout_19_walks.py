"""Nine walks written after 43ef864 (a matmul operator's GEMM kernel, by name, is its call) and
before any run of them: transformers Qwen3 prefill (fp16, 32 tokens) and Phi-3 decode (fp16,
batch 2), and on several streams: f32 linear layers at batch 8 on two streams, f32 linear
layers at batch 16 beside bf16 decode attention, a bf16 MLP beside f32 RMS norms, f32 linear
layers at batch 1 on two streams, three streams of an f32 GEMM, f32 softmax and f32
LayerNorm, f32 baddbmm on two streams, and GELU over 32M elements beside f32 GEMMs.
Matmuls in IEEE f32 where f32 (PyTorch's default).

    python3 scripts/validate_all.py --out DIR --groups heldout19
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner, decoder as _decoder  # noqa: E402
from walk_parts import linear_chain as _linear_chain  # noqa: E402


def _f32(*shape):
    import torch
    from walk_parts import randn
    return randn(*shape, dtype=torch.float32)


def _linear_pair(batch, d, layers, act):
    import torch
    from walk_parts import fork_join
    with torch.device("cuda"):
        a = [torch.nn.Linear(d, d) for _ in range(layers)]
        b = [torch.nn.Linear(d, d) for _ in range(layers)]
        xa, xb = _f32(batch, d), _f32(batch, d)
    return fork_join(lambda: _corner(_linear_chain(a, xa, act)()),
                     lambda: _corner(_linear_chain(b, xb, act)()))


def f32_linear_pair_b8():
    import torch
    return _linear_pair(8, 3072, 3, torch.tanh)


def f32_linear_pair_b1():
    import torch
    return _linear_pair(1, 4096, 3, torch.relu)


def f32_linear_beside_decode_attention():
    import torch
    from walk_parts import attention_chain, fork_join, randn
    f = torch.nn.functional
    with torch.device("cuda"):
        lin = [torch.nn.Linear(2048, 2048) for _ in range(4)]
        x = _f32(16, 2048)
        q = randn(16, 32, 1, 128, dtype=torch.bfloat16)
        k = randn(16, 32, 2048, 128, dtype=torch.bfloat16)
        v = randn(16, 32, 2048, 128, dtype=torch.bfloat16)
    return fork_join(lambda: _corner(_linear_chain(lin, x, f.gelu)()),
                     lambda: _corner(attention_chain(q, k, v, 3)()))


def bf16_mlp_beside_f32_rmsnorm():
    import torch
    from walk_parts import chain, fork_join, randn
    f = torch.nn.functional
    with torch.device("cuda"):
        mlp = [torch.nn.Linear(n, m, bias=False).bfloat16()
               for n, m in ((2048, 5632), (5632, 2048))] * 2
        x = randn(32, 2048, dtype=torch.bfloat16)
        rows = _f32(8192, 2048)
        g = _f32(2048)

    def rms(t):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * g
    norms = chain(lambda i, y: rms(rows if y is None else y), 3)
    return fork_join(lambda: _corner(_linear_chain(mlp, x, f.silu)()),
                     lambda: _corner(norms()))


def three_streams_f32_gemm_softmax_norm():
    import torch
    from walk_parts import chain, fork_join
    with torch.device("cuda"):
        a = _f32(256, 2048)
        w = [_f32(2048, 2048) for _ in range(3)]
        scores = _f32(4096, 2048)
        norms = [torch.nn.LayerNorm(2048) for _ in range(2)]
        rows = _f32(8192, 2048)
    gemms = chain(lambda i, y: torch.relu((a if y is None else y) @ w[i]), 3)
    softmaxes = chain(lambda i, y: torch.softmax(scores if y is None else y, dim=-1), 3)
    lns = chain(lambda i, y: norms[i](rows if y is None else y), 2)
    return fork_join(lambda: _corner(gemms()),
                     fork_join(lambda: _corner(softmaxes()), lambda: _corner(lns())))


def f32_baddbmm_pair():
    import torch
    from walk_parts import chain, fork_join
    with torch.device("cuda"):
        sides = [(_f32(16, 256, 256), _f32(16, 256, 128), _f32(16, 128, 256)) for _ in range(2)]

    def side(c, a, b):
        return chain(lambda i, y: torch.baddbmm(c if y is None else y, a, b, alpha=0.5), 3)
    runs = [side(*s) for s in sides]
    return fork_join(lambda: _corner(runs[0]()), lambda: _corner(runs[1]()))


def gelu_beside_f32_gemm():
    import torch
    from walk_parts import chain, fork_join
    f = torch.nn.functional
    with torch.device("cuda"):
        x = _f32(32 << 20)
        a = _f32(1024, 1024)
        w = [_f32(1024, 1024) for _ in range(4)]
    gelus = chain(lambda i, y: f.gelu(x if y is None else y), 3)
    gemms = chain(lambda i, y: (a if y is None else y) @ w[i], 4)
    return fork_join(lambda: _corner(gelus()), lambda: _corner(gemms()))


build = builder(119, {
    "hu_qwen3_prefill_32": _decoder("Qwen3", "float16", 1, 32, hidden_size=2048,
                                    intermediate_size=6144, num_hidden_layers=8,
                                    num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                                    max_position_embeddings=2048),
    "hu_phi3_decode_b2": _decoder("Phi3", "float16", 2, 1, hidden_size=2048,
                                  intermediate_size=5632, num_hidden_layers=8,
                                  num_attention_heads=16, max_position_embeddings=2048,
                                  pad_token_id=0),
    "hu_f32_linear_pair_b8": f32_linear_pair_b8,
    "hu_f32_linear_beside_decode_attention": f32_linear_beside_decode_attention,
    "hu_bf16_mlp_beside_f32_rmsnorm": bf16_mlp_beside_f32_rmsnorm,
    "hu_f32_linear_pair_b1": f32_linear_pair_b1,
    "hu_three_streams_f32_gemm_softmax_norm": three_streams_f32_gemm_softmax_norm,
    "hu_f32_baddbmm_pair": f32_baddbmm_pair,
    "hu_gelu_beside_f32_gemm": gelu_beside_f32_gemm,
})
