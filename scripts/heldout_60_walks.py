"""Six walks written after fb425e0 (`--summary` and `replay` as at a7abc46) and before any
run: a third test of that version, and the first of whatever the cross-branch edge probe
leads to. On one stream: a GLM-4-shaped decode at batch 8 (bf16, 2048 wide, GQA 16/2). On
several streams: two chains of bf16 GEMVs (4 tokens, 4096 → 4096) that take turns through
events, each with a bias add, so every edge crosses branches above the per-node floor;
rotary embeddings written out (4 × 32 heads of 128, bf16: halves, negate, cat, muls) beside
a lane of bf16 GEMVs 4096 → 4096; a causal depthwise conv1d (4 × 4096 channels × 64 steps,
width 4, fp16, a Mamba-style mixer) beside a lane of fp16 GEMVs 2048 → 8192; KV-cache
writes (`index_copy_` of 8 new rows into 8 × 8 heads × 2048 × 128 bf16 caches) beside two
lanes of bf16 GEMVs 2048 → 2048 over 8 tokens; a prefix sum over 16 × 8192 f32 beside a lane
of bf16 GEMVs 4096 → 4096.

    python3 scripts/validate_all.py --out DIR --groups heldout60
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import beside_linear_lanes, no_grad_step, repeated  # noqa: E402
from walk_registry import builder  # noqa: E402

GLM4_2048 = dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=4,
                 num_attention_heads=16, num_key_value_heads=2, vocab_size=32000,
                 max_position_embeddings=2048, pad_token_id=0)


def glm4_2048_decode_b8():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Glm4", "bfloat16", 8, 1, **GLM4_2048)


def gemv_chains_taking_turns():
    """Two streams forked from the current one; pass i of the second chain (a GEMV and a bias
    add) waits for pass i of the first, and pass i + 1 of the first for pass i of the
    second."""
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        x0 = torch.randn(4, 4096, dtype=torch.bfloat16)
        wa = torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01
        wb = torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01
        bias = torch.randn(4096, dtype=torch.bfloat16)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()

    def run():
        main = torch.cuda.current_stream()
        s1.wait_stream(main)
        s2.wait_stream(main)
        a, b = x0, x0
        for _ in range(5):
            with torch.cuda.stream(s1):
                a = f.linear(b, wa) + bias
            s2.wait_stream(s1)
            with torch.cuda.stream(s2):
                b = f.linear(a, wb) + bias
            s1.wait_stream(s2)
        main.wait_stream(s1)
        main.wait_stream(s2)
        return a + b
    return no_grad_step(run)


def rotary_beside_gemv_lane():
    import torch
    with torch.device("cuda"):
        q = torch.randn(4, 32, 1, 128, dtype=torch.bfloat16)
        cos = torch.randn(1, 1, 1, 128, dtype=torch.bfloat16)
        sin = torch.randn(1, 1, 1, 128, dtype=torch.bfloat16)

    def rotate(y):
        half = torch.cat((-y[..., 64:], y[..., :64]), dim=-1)
        return y * cos + half * sin
    return beside_linear_lanes(repeated(q, 6, rotate), 1, 4096, 4096, 4, 4, torch.bfloat16)


def depthwise_conv_beside_gemv_lane():
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        x = torch.randn(4, 4096, 64, dtype=torch.float16)
        w = torch.randn(4096, 1, 4, dtype=torch.float16) * 0.1

    def mix(y):
        return f.silu(f.conv1d(f.pad(y, (3, 0)), w, groups=4096))
    return beside_linear_lanes(repeated(x, 4, mix), 1, 2048, 8192, 1, 4, torch.float16)


def kv_cache_writes_beside_two_gemv_lanes():
    import torch
    with torch.device("cuda"):
        k_cache = torch.zeros(8, 8, 2048, 128, dtype=torch.bfloat16)
        v_cache = torch.zeros(8, 8, 2048, 128, dtype=torch.bfloat16)
        k_new = torch.randn(8, 8, 1, 128, dtype=torch.bfloat16)
        v_new = torch.randn(8, 8, 1, 128, dtype=torch.bfloat16)
        pos = torch.tensor([1000], dtype=torch.long)

    def writes():
        for i in range(4):
            k_cache.index_copy_(2, pos + i, k_new)
            v_cache.index_copy_(2, pos + i, v_new)
        return k_cache[:, :, 1000:1004].sum() + v_cache[:, :, 1000:1004].sum()
    return beside_linear_lanes(writes, 2, 2048, 2048, 8, 4, torch.bfloat16)


def prefix_sum_beside_gemv_lane():
    import torch
    with torch.device("cuda"):
        x = torch.randn(16, 8192, dtype=torch.float32)
    sums = repeated(x, 6, lambda y: torch.cumsum(y, dim=-1) * 1e-3)
    return beside_linear_lanes(sums, 1, 4096, 4096, 1, 4, torch.bfloat16)


build = builder(131_60, {
    "kk_glm4_2048_decode_b8": glm4_2048_decode_b8,
    "kk_gemv_chains_taking_turns": gemv_chains_taking_turns,
    "kk_rotary_beside_gemv_lane": rotary_beside_gemv_lane,
    "kk_depthwise_conv_beside_gemv_lane": depthwise_conv_beside_gemv_lane,
    "kk_kv_cache_writes_beside_two_gemv_lanes": kv_cache_writes_beside_two_gemv_lanes,
    "kk_prefix_sum_beside_gemv_lane": prefix_sum_beside_gemv_lane,
})
