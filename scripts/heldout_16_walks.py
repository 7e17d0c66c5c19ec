"""Nine walks written after 451f21d (`--gemm-operands`, fresh by default) and before any run of
them: transformers Bloom (decode batch 4, given a 2-D mask as its ALiBi biases need),
Persimmon (decode batch 4) and XGLM (prefill of 128 tokens) shapes, and on several streams:
LayerNorm rows beside bf16 batched matmuls, fp16 convolutions beside matrix-vector products,
softmax rows beside a causal attention prefill, two MLPs of other widths and types side by
side, a rotary-embedding-shaped element-wise step beside fp16 GEMMs, and three streams of
batched matmuls, RMS norms and matrix-vector products.

    python3 scripts/validate_all.py --out DIR --groups heldout16
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner, decoder as _decoder  # noqa: E402
from walk_parts import linear_chain as _linear_chain  # noqa: E402


def layernorm_beside_bmm():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        norms = [torch.nn.LayerNorm(2048).bfloat16() for _ in range(3)]
        rows = randn(8192, 2048, dtype=torch.bfloat16)
        q = randn(32, 256, 128, dtype=torch.bfloat16)
        k = [randn(32, 128, 256, dtype=torch.bfloat16) for _ in range(3)]
        v = [randn(32, 256, 128, dtype=torch.bfloat16) for _ in range(3)]
    lns = chain(lambda i, y: norms[i](rows if y is None else y), 3)
    bmms = chain(lambda i, y: torch.bmm(torch.bmm(q if y is None else y, k[i]), v[i]), 3)
    return fork_join(lambda: _corner(lns()), lambda: _corner(bmms()))


def conv_beside_gemv():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        convs = [torch.nn.Conv2d(64, 64, 3, padding=1).half() for _ in range(3)]
        img = randn(16, 64, 64, 64)
        w = [randn(4096, 4096) for _ in range(6)]
        v = randn(1, 4096)
    conv = chain(lambda i, y: torch.relu(convs[i](img if y is None else y)), 3)
    gemvs = chain(lambda i, y: torch.tanh((v if y is None else y) @ w[i]), 6)
    return fork_join(lambda: _corner(conv()), lambda: _corner(gemvs()))


def softmax_beside_prefill_attention():
    import torch
    from walk_parts import attention_chain, chain, fork_join, randn
    with torch.device("cuda"):
        scores = randn(16384, 2048)
        q, k, v = (randn(2, 16, 1024, 128) for _ in range(3))
    softmaxes = chain(lambda i, y: torch.softmax(scores if y is None else y, dim=-1), 3)
    attention = attention_chain(q, k, v, 3, is_causal=True)
    return fork_join(lambda: _corner(softmaxes()), lambda: _corner(attention()))


def two_mlps_b64_b16():
    import torch
    from walk_parts import fork_join, randn
    f = torch.nn.functional
    with torch.device("cuda"):
        wide = [torch.nn.Linear(n, m, bias=False).bfloat16()
                for _ in range(2) for n, m in ((2048, 8192), (8192, 2048))]
        deep = [torch.nn.Linear(4096, 11008, bias=False).half(),
                torch.nn.Linear(11008, 4096, bias=False).half()]
        xa = randn(64, 2048, dtype=torch.bfloat16)
        xb = randn(16, 4096)
    return fork_join(lambda: _corner(_linear_chain(wide, xa, f.silu)()),
                     lambda: _corner(_linear_chain(deep, xb, f.gelu)()))


def rope_beside_gemm():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        x = randn(16, 32, 512, 128)
        cos, sin = randn(512, 128), randn(512, 128)
        w = [randn(4096, 4096) for _ in range(3)]
        a = randn(1024, 4096)

    def rotate(t):
        half = t.shape[-1] // 2
        return torch.cat((-t[..., half:], t[..., :half]), dim=-1)
    ropes = chain(lambda i, y: (x if y is None else y) * cos + rotate(x if y is None else y) * sin,
                  3)
    gemms = chain(lambda i, y: (a if y is None else y) @ w[i], 3)
    return fork_join(lambda: _corner(ropes()), lambda: _corner(gemms()))


def three_streams_bmm_norm_gemv():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        p = randn(16, 512, 64, dtype=torch.bfloat16)
        k = randn(16, 64, 512, dtype=torch.bfloat16)
        rows = randn(4096, 4096)
        w = [randn(4096, 4096) for _ in range(4)]
        v = randn(2, 4096)

    def rms(t):
        return t * torch.rsqrt(t.float().pow(2).mean(-1, keepdim=True) + 1e-6).half()
    bmms = chain(lambda i, y: torch.bmm(torch.bmm(p if y is None else y, k), p), 2)
    norms = chain(lambda i, y: rms(rows if y is None else y), 3)
    gemvs = chain(lambda i, y: (v if y is None else y) @ w[i], 4)
    return fork_join(lambda: _corner(bmms()),
                     fork_join(lambda: _corner(norms()), lambda: _corner(gemvs())))


build = builder(116, {
    "hq_bloom_decode_b4": _decoder("Bloom", "float16", 4, 1, mask_2d=True, hidden_size=2048,
                                   n_layer=8, n_head=16),
    "hq_persimmon_decode_b4": _decoder("Persimmon", "float16", 4, 1, hidden_size=2048,
                                       intermediate_size=8192, num_hidden_layers=8,
                                       num_attention_heads=16, max_position_embeddings=2048),
    "hq_xglm_prefill_128": _decoder("XGLM", "float16", 1, 128, d_model=1024, num_layers=12,
                                    attention_heads=16, ffn_dim=4096,
                                    max_position_embeddings=2048),
    "hq_layernorm_beside_bmm": layernorm_beside_bmm,
    "hq_conv_beside_gemv": conv_beside_gemv,
    "hq_softmax_beside_prefill_attention": softmax_beside_prefill_attention,
    "hq_two_mlps_b64_b16": two_mlps_b64_b16,
    "hq_rope_beside_gemm": rope_beside_gemm,
    "hq_three_streams_bmm_norm_gemv": three_streams_bmm_norm_gemv,
})
