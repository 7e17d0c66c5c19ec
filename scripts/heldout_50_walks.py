"""Six walks written after held-out batch 49 ran and before any change to how normalisations
and reductions beside lanes of GEMMs are replayed; never run before. All on several streams:
RMSNorm passes over 2 × 4096 fp16 beside fp16 down projections 11008 → 4096 at 2 tokens;
LayerNorm passes over 1 × 2048 bf16 beside two lanes of bf16 GEMVs 2048 → 8192; variance and
mean over 8 × 4096 f32 rows, normalised, beside fp16 linear layers 4096 → 12288 at 8 tokens;
log-sum-exp over 2 × 32000 f32 logits beside bf16 output projections 2048 → 32000 at 2 tokens;
L2 normalisation of 16 × 1024 f32 rows beside three lanes of fp16 GEMVs 4096 → 4096; and a
Mistral-shaped decode (batch 2, bf16) beside RMSNorm passes over 2 × 4096 bf16.

    python3 scripts/validate_all.py --out DIR --groups heldout50
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import linear_lane, repeated, rms_norm  # noqa: E402
from walk_parts import no_grad_step as no_grad  # noqa: E402
from walk_registry import builder  # noqa: E402

MISTRAL_SMALL = dict(hidden_size=1024, intermediate_size=3584, num_hidden_layers=4,
                     num_attention_heads=16, num_key_value_heads=4,
                     vocab_size=32000, max_position_embeddings=2048)


def rms_norm_lane(rows, width, passes, dtype):
    """A lane of `passes` RMSNorms over `rows` × `width`."""
    import torch
    with torch.device("cuda"):
        h = torch.randn(rows, width, dtype=dtype)
        g = torch.rand(width, dtype=dtype) + 0.5
    return repeated(h, passes, lambda y: rms_norm(y, g))


def rmsnorm_beside_down_projections_b2():
    import torch
    from walk_parts import fork_lanes
    return no_grad(fork_lanes([linear_lane(11008, 4096, 2, 4, torch.float16),
                               rms_norm_lane(2, 4096, 8, torch.float16)]))


def layernorm_beside_two_gemv_lanes_bf16():
    import torch
    import torch.nn.functional as F
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.randn(1, 2048, dtype=torch.bfloat16)
        w = torch.rand(2048, dtype=torch.bfloat16) + 0.5

    def norms():
        y = x
        for _ in range(10):
            y = F.layer_norm(y, (2048,), w)
        return y
    return no_grad(fork_lanes([norms] + [linear_lane(2048, 8192, 1, 4, torch.bfloat16)
                                         for _ in range(2)]))


def var_mean_beside_qkv_b8():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.randn(8, 4096, dtype=torch.float32)

    def standardise():
        y = x
        for _ in range(6):
            var, mean = torch.var_mean(y, dim=-1, keepdim=True)
            y = (y - mean) / (var + 1e-5).sqrt()
        return y
    return no_grad(fork_lanes([linear_lane(4096, 12288, 8, 4, torch.float16), standardise]))


def logsumexp_beside_output_projections_b2():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        logits = torch.randn(2, 32000, dtype=torch.float32)

    def log_probs():
        y = logits
        for _ in range(4):
            y = y - torch.logsumexp(y, dim=-1, keepdim=True)
        return y
    return no_grad(fork_lanes([linear_lane(2048, 32000, 2, 3, torch.bfloat16), log_probs]))


def l2_normalise_beside_three_gemv_lanes():
    import torch
    import torch.nn.functional as F
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.randn(16, 1024, dtype=torch.float32)

    def normalise():
        y = x
        for _ in range(8):
            y = F.normalize(y * 1.5, dim=-1)
        return y
    return no_grad(fork_lanes([normalise] + [linear_lane(4096, 4096, 1, 4, torch.float16)
                                             for _ in range(3)]))


def mistral_decode_beside_rmsnorm_lane():
    import torch
    from walk_parts import corner, fork_join, hf_decoder_step
    decode = hf_decoder_step("Mistral", "bfloat16", 2, 1, **MISTRAL_SMALL)
    norms = rms_norm_lane(2, 4096, 8, torch.bfloat16)

    def lane():
        with torch.no_grad():
            return norms()
    return fork_join(lambda: corner(decode()), lambda: corner(lane()))


build = builder(131_50, {
    "ja_rmsnorm_beside_down_projections_b2": rmsnorm_beside_down_projections_b2,
    "ja_layernorm_beside_two_gemv_lanes_bf16": layernorm_beside_two_gemv_lanes_bf16,
    "ja_var_mean_beside_qkv_b8": var_mean_beside_qkv_b8,
    "ja_logsumexp_beside_output_projections_b2": logsumexp_beside_output_projections_b2,
    "ja_l2_normalise_beside_three_gemv_lanes": l2_normalise_beside_three_gemv_lanes,
    "ja_mistral_decode_beside_rmsnorm_lane": mistral_decode_beside_rmsnorm_lane,
})
