"""Six walks written after a3a2636 (chase-rounds the default since 9a1df66: a reduction whose
threads each read more than 64 bytes of its largest input before their block reduces chases,
the others barrier-chase) and before any run. On one stream: a Qwen2-shaped decode at batch 8
(bf16, 1536 wide). On several streams: column sums over 4096 × 64 f32 (a reduction across
rows) beside two lanes of fp16 GEMVs 4096 → 4096; LayerNorms over 2 × 8192 bf16 beside decode
attention (SDPA over a 2048-position bf16 cache, batch 2, 32 heads); mean pooling over
8 × 256 × 2048 fp16 beside linear layers 2048 → 8192 at 8 tokens; log-softmax over
2 × 32000 f32 beside output-projection GEMVs 2048 → 32000; and variance over 16 × 4096 f32
beside two lanes of bf16 linear layers 4096 → 2048 at 2 tokens.

    python3 scripts/validate_all.py --out DIR --groups heldout53
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import attention_chain, linear_lane, repeated  # noqa: E402
from walk_parts import no_grad_step as no_grad  # noqa: E402
from walk_registry import builder  # noqa: E402

QWEN2_1536 = dict(hidden_size=1536, intermediate_size=4096, num_hidden_layers=4,
                  num_attention_heads=12, num_key_value_heads=2, vocab_size=32000,
                  max_position_embeddings=2048)


def qwen2_decode_b8():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Qwen2", "bfloat16", 8, 1, **QWEN2_1536)


def column_sums_beside_two_gemv_lanes():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.randn(4096, 64, dtype=torch.float32)
    sums = repeated(x, 6, lambda y: y - y.sum(0, keepdim=True) * 1e-4)
    return no_grad(fork_lanes([sums] + [linear_lane(4096, 4096, 1, 4, torch.float16)
                                        for _ in range(2)]))


def wide_layernorms_beside_decode_attention_b2():
    import torch
    import torch.nn.functional as F
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        k = torch.randn(2, 32, 2048, 128, dtype=torch.bfloat16)
        v = torch.randn(2, 32, 2048, 128, dtype=torch.bfloat16)
        q = torch.randn(2, 32, 1, 128, dtype=torch.bfloat16)
        x = torch.randn(2, 8192, dtype=torch.bfloat16)
    norms = repeated(x, 8, lambda y: F.layer_norm(y, (8192,)))
    return no_grad(fork_lanes([attention_chain(q, k, v, 3), norms]))


def mean_pooling_beside_linear_layers_b8():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        h = torch.randn(8, 256, 2048, dtype=torch.float16)
    pools = repeated(h, 4, lambda y: y + y.mean(1, keepdim=True))
    return no_grad(fork_lanes([linear_lane(2048, 8192, 8, 4, torch.float16), pools]))


def log_softmax_beside_output_gemvs():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        logits = torch.randn(2, 32000, dtype=torch.float32)
    scores = repeated(logits, 4, lambda y: torch.log_softmax(y, -1) * 0.5)
    return no_grad(fork_lanes([linear_lane(2048, 32000, 1, 2, torch.float16), scores]))


def variances_beside_two_linear_lanes_b2():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.randn(16, 4096, dtype=torch.float32)
    spreads = repeated(x, 6, lambda y: y / (y.var(-1, keepdim=True) + 1.0))
    return no_grad(fork_lanes([spreads] + [linear_lane(4096, 2048, 2, 4, torch.bfloat16)
                                           for _ in range(2)]))


build = builder(131_53, {
    "kd_qwen2_decode_b8": qwen2_decode_b8,
    "kd_column_sums_beside_two_gemv_lanes": column_sums_beside_two_gemv_lanes,
    "kd_wide_layernorms_beside_decode_attention_b2": wide_layernorms_beside_decode_attention_b2,
    "kd_mean_pooling_beside_linear_layers_b8": mean_pooling_beside_linear_layers_b8,
    "kd_log_softmax_beside_output_gemvs": log_softmax_beside_output_gemvs,
    "kd_variances_beside_two_linear_lanes_b2": variances_beside_two_linear_lanes_b2,
})
