"""Nine walks written after c45399d (gathers sized by what they pick) and with an in-place
`index_copy_` sized by what it writes, then run once with the version of their day
(docs/validation-h200.md, "Held-out batch 15"): transformers Bloom (decode batch 8), CodeGen
(prefill of 256 tokens) and BioGPT (decode batch 32) shapes, and on several streams: a sort of
f32 rows beside fp16 linear layers, average pooling beside fp16 convolutions, bilinear
upsampling beside bf16 linear layers, f32 matrix-vector products beside bf16 GEMMs, two streams
of bf16 batched matmuls, and four streams of LayerNorm + bf16 linear layers.

    python3 scripts/validate.py --out DIR --walk-module scripts/heldout_15_walks.py \\
        --walks hp_bloom_decode_b8,hp_codegen_prefill_256,...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner, decoder as _decoder  # noqa: E402
from walk_parts import linear_chain as _linear_chain  # noqa: E402


def sort_beside_linear():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        rows = [randn(64, 8192, dtype=torch.float32) for _ in range(3)]
        layers = [torch.nn.Linear(4096, 4096, bias=False).half() for _ in range(4)]
        x = randn(256, 4096)
    sorts = chain(lambda i, y: torch.sort(rows[i], dim=-1).values, 3)
    return fork_join(lambda: _corner(sorts()), lambda: _corner(_linear_chain(layers, x, torch.relu)()))


def avgpool_beside_conv():
    import torch
    from walk_parts import chain, fork_join, randn
    f = torch.nn.functional
    with torch.device("cuda"):
        maps = randn(32, 256, 56, 56)
        convs = [torch.nn.Conv2d(128, 128, 3, padding=1).half() for _ in range(3)]
        x = randn(32, 128, 28, 28)
    pools = chain(lambda i, y: f.avg_pool2d(maps, 2 + i), 3)
    conv = chain(lambda i, y: torch.relu(convs[i](x if y is None else y)), 3)
    return fork_join(lambda: _corner(pools()), lambda: _corner(conv()))


def upsample_beside_linear():
    import torch
    from walk_parts import chain, fork_join, randn
    f = torch.nn.functional
    with torch.device("cuda"):
        images = randn(16, 64, 64, 64)
        layers = [torch.nn.Linear(4096, 4096).bfloat16() for _ in range(4)]
        x = randn(128, 4096, dtype=torch.bfloat16)
    ups = chain(lambda i, y: f.interpolate(images, scale_factor=2, mode="bilinear"), 3)
    return fork_join(lambda: _corner(ups()), lambda: _corner(_linear_chain(layers, x, f.gelu)()))


def f32_gemv_beside_bf16_gemm():
    import torch
    from walk_parts import chain, fork_join, randn
    torch.backends.cuda.matmul.allow_tf32 = False
    with torch.device("cuda"):
        w32 = [randn(4096, 4096, dtype=torch.float32) for _ in range(4)]
        v = randn(8, 4096, dtype=torch.float32)
        w16 = [randn(2048, 2048, dtype=torch.bfloat16) for _ in range(4)]
        x = randn(512, 2048, dtype=torch.bfloat16)
    gemvs = chain(lambda i, y: torch.tanh((v if y is None else y) @ w32[i]), 4)
    gemms = chain(lambda i, y: torch.relu((x if y is None else y) @ w16[i]), 4)
    return fork_join(lambda: _corner(gemvs()), lambda: _corner(gemms()))


def bmm_pair_bf16():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        q = [randn(16, 256, 128, dtype=torch.bfloat16) for _ in range(2)]
        k = [randn(16, 128, 256, dtype=torch.bfloat16) for _ in range(2)]

    def side(j):
        return chain(lambda i, y: torch.bmm(torch.bmm(q[j] if y is None else y, k[j]), q[j]), 3)
    return fork_join(lambda: _corner(side(0)()), lambda: _corner(side(1)()))


def four_streams_norm_linear():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        norms = [[torch.nn.LayerNorm(2048).bfloat16() for _ in range(3)] for _ in range(4)]
        layers = [[torch.nn.Linear(2048, 2048).bfloat16() for _ in range(3)] for _ in range(4)]
        xs = [randn(128, 2048, dtype=torch.bfloat16) for _ in range(4)]

    def side(j):
        step = chain(lambda i, y: layers[j][i](norms[j][i](xs[j] if y is None else y)), 3)
        return lambda: _corner(step())
    return fork_join(fork_join(side(0), side(1)), fork_join(side(2), side(3)))


build = builder(115, {
    "hp_bloom_decode_b8": _decoder("Bloom", "float16", 8, 1, hidden_size=2048, n_layer=8,
                                   n_head=16),
    "hp_codegen_prefill_256": _decoder("CodeGen", "float16", 1, 256, n_embd=2048, n_layer=6,
                                       n_head=16, rotary_dim=64, n_positions=2048, n_ctx=2048),
    "hp_biogpt_decode_b32": _decoder("BioGpt", "float16", 32, 1, hidden_size=1024,
                                     num_hidden_layers=12, num_attention_heads=16,
                                     intermediate_size=4096, max_position_embeddings=2048),
    "hp_sort_beside_linear": sort_beside_linear,
    "hp_avgpool_beside_conv": avgpool_beside_conv,
    "hp_upsample_beside_linear": upsample_beside_linear,
    "hp_f32_gemv_beside_bf16_gemm": f32_gemv_beside_bf16_gemm,
    "hp_bmm_pair_bf16": bmm_pair_bf16,
    "hp_four_streams_norm_linear": four_streams_norm_linear,
})
