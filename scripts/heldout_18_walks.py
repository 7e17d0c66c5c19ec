"""Nine walks written after 6c8cfb8 (every IEEE f32 GEMM holds the SMs its blocks
spread over, up to the profile's widest pair) and before any run of them: transformers Qwen2
decode in f32 (batch 4) and GPT-2 decode in f32 (batch 8, its LM head class), and on several
streams: two chains of f32 linear layers of 4096 at batch 32, two f32 MLPs at batch 512, two
streams of f32 attention (scores, softmax, values by batched matmuls), f32 GEMMs beside bf16
matrix-vector products, four streams of f32 GEMMs at 64 tokens, f32 GEMMs beside f32 adds,
and f32 convolutions beside f32 linear layers. Matmuls in IEEE f32 (PyTorch's default).

    python3 scripts/validate_all.py --out DIR --groups heldout18
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner, decoder as _decoder  # noqa: E402
from walk_parts import linear_chain as _linear_chain  # noqa: E402

F32 = "float32"


def _f32(*shape):
    import torch
    from walk_parts import randn
    return randn(*shape, dtype=torch.float32)


def gpt2_f32_decode_b8():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("GPT2", F32, 8, 1, "LMHeadModel", n_embd=1024, n_layer=12, n_head=16,
                           n_positions=1024, vocab_size=32000)


def f32_linear_pair_b32_d4096():
    import torch
    from walk_parts import fork_join
    f = torch.nn.functional
    with torch.device("cuda"):
        a = [torch.nn.Linear(4096, 4096) for _ in range(3)]
        b = [torch.nn.Linear(4096, 4096) for _ in range(3)]
        xa, xb = _f32(32, 4096), _f32(32, 4096)
    return fork_join(lambda: _corner(_linear_chain(a, xa, f.silu)()),
                     lambda: _corner(_linear_chain(b, xb, f.silu)()))


def f32_mlp_pair_b512():
    import torch
    from walk_parts import fork_join
    f = torch.nn.functional
    with torch.device("cuda"):
        a = [torch.nn.Linear(n, m) for n, m in ((1024, 2048), (2048, 1024))]
        b = [torch.nn.Linear(n, m) for n, m in ((1024, 2048), (2048, 1024))]
        xa, xb = _f32(512, 1024), _f32(512, 1024)
    return fork_join(lambda: _corner(_linear_chain(a, xa, f.relu)()),
                     lambda: _corner(_linear_chain(b, xb, f.relu)()))


def f32_attention_pair():
    import torch
    from walk_parts import chain, fork_join

    def attention(q, k, v):
        return chain(lambda i, y: torch.bmm(
            torch.softmax(torch.bmm(q if y is None else y, k) * 0.125, dim=-1), v), 2)
    with torch.device("cuda"):
        sides = [attention(_f32(32, 192, 64), _f32(32, 64, 192), _f32(32, 192, 64))
                 for _ in range(2)]
    return fork_join(lambda: _corner(sides[0]()), lambda: _corner(sides[1]()))


def f32_gemm_beside_bf16_gemv():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        a = _f32(256, 2048)
        w = [_f32(2048, 2048) for _ in range(3)]
        v = randn(1, 4096, dtype=torch.bfloat16)
        wv = [randn(4096, 4096, dtype=torch.bfloat16) for _ in range(6)]
    gemms = chain(lambda i, y: torch.relu((a if y is None else y) @ w[i]), 3)
    gemvs = chain(lambda i, y: (v if y is None else y) @ wv[i], 6)
    return fork_join(lambda: _corner(gemms()), lambda: _corner(gemvs()))


def four_streams_f32_b64():
    import torch
    from walk_parts import chain, fork_join
    with torch.device("cuda"):
        xs = [_f32(64, 2048) for _ in range(4)]
        ws = [[_f32(2048, 2048) for _ in range(2)] for _ in range(4)]

    def side(j):
        return lambda: _corner(chain(
            lambda i, y: torch.sigmoid((xs[j] if y is None else y) @ ws[j][i]), 2)())
    return fork_join(fork_join(side(0), side(1)), fork_join(side(2), side(3)))


def f32_gemm_beside_adds():
    import torch
    from walk_parts import chain, fork_join
    with torch.device("cuda"):
        a = _f32(384, 3072)
        w = [_f32(3072, 3072) for _ in range(2)]
        x, b = _f32(16 << 20), _f32(16 << 20)
    gemms = chain(lambda i, y: (a if y is None else y) @ w[i], 2)
    adds = chain(lambda i, y: (x if y is None else y) + b, 4)
    return fork_join(lambda: _corner(gemms()), lambda: _corner(adds()))


def f32_conv_beside_linear():
    import torch
    from walk_parts import chain, fork_join
    f = torch.nn.functional
    with torch.device("cuda"):
        convs = [torch.nn.Conv2d(64, 64, 3, padding=1) for _ in range(2)]
        img = _f32(4, 64, 56, 56)
        lin = [torch.nn.Linear(2048, 2048) for _ in range(3)]
        x = _f32(128, 2048)
    conv = chain(lambda i, y: torch.relu(convs[i](img if y is None else y)), 2)
    return fork_join(lambda: _corner(conv()),
                     lambda: _corner(_linear_chain(lin, x, f.gelu)()))


build = builder(118, {
    "hs_qwen2_f32_decode_b4": _decoder("Qwen2", F32, 4, 1, hidden_size=1024,
                                       intermediate_size=2816, num_hidden_layers=8,
                                       num_attention_heads=16, num_key_value_heads=4,
                                       max_position_embeddings=2048),
    "hs_gpt2_f32_decode_b8": gpt2_f32_decode_b8,
    "hs_f32_linear_pair_b32_d4096": f32_linear_pair_b32_d4096,
    "hs_f32_mlp_pair_b512": f32_mlp_pair_b512,
    "hs_f32_attention_pair": f32_attention_pair,
    "hs_f32_gemm_beside_bf16_gemv": f32_gemm_beside_bf16_gemv,
    "hs_four_streams_f32_b64": four_streams_f32_b64,
    "hs_f32_gemm_beside_adds": f32_gemm_beside_adds,
    "hs_f32_conv_beside_linear": f32_conv_beside_linear,
})
