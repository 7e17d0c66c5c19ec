"""Six walks written after held-out batches 47 and 48 ran, for the next change to how small
kernels beside lanes of fat-block GEMMs are replayed or priced, and before any such change;
never run before. All on several streams: two lanes of LayerNorm passes over 1 × 4096 bf16
beside a lane of bf16 GEMVs 4096 → 14336; a lane of sum and amax reductions over 16 × 4096 f32
beside bf16 linear layers 2048 → 8192 at 2 tokens; a lane of adds over 4 × 1024 fp16 beside two
lanes of fp16 GEMVs 8192 → 1024 (narrow outputs); a lane of softmax over 4 × 8 × 512 f32 beside
fp16 linear layers 1024 → 16384 at 4 tokens (wide outputs); GroupNorm and SiLU over
1 × 128 × 16 × 16 fp16 beside decode attention (SDPA over a 2048-position fp16 cache, batch 4,
16 heads); and a Qwen3-shaped decode (batch 4, bf16) beside a lane of LayerNorm passes over
4 × 2048 bf16.

    python3 scripts/validate_all.py --out DIR --groups heldout49
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import attention_chain, linear_lane, repeated  # noqa: E402
from walk_parts import no_grad_step as no_grad  # noqa: E402
from walk_registry import builder  # noqa: E402

QWEN3_SMALL = dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=4,
                   num_attention_heads=16, num_key_value_heads=8, head_dim=64,
                   vocab_size=32000, max_position_embeddings=2048)


def layer_norm_lane(width, rows, passes, dtype):
    """A lane of `passes` LayerNorms over `rows` × `width`."""
    import torch
    with torch.device("cuda"):
        norm = torch.nn.LayerNorm(width).to(dtype)
        x = torch.randn(rows, width, dtype=dtype)
    return repeated(x, passes, norm)


def layernorm_lanes_beside_wide_gemv():
    import torch
    from walk_parts import fork_lanes
    lanes = [layer_norm_lane(4096, 1, 8, torch.bfloat16) for _ in range(2)]
    return no_grad(fork_lanes([linear_lane(4096, 14336, 1, 4, torch.bfloat16)] + lanes))


def reductions_beside_decode_gemms():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.randn(16, 4096, dtype=torch.float32)

    def reductions():
        y = x
        for _ in range(4):
            y = y - y.sum(-1, keepdim=True) * 1e-4
            y = y / y.abs().amax(-1, keepdim=True)
        return y
    return no_grad(fork_lanes([linear_lane(2048, 8192, 2, 6, torch.bfloat16), reductions]))


def adds_beside_narrow_gemv_lanes():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        a = torch.randn(4, 1024, dtype=torch.float16)
        b = torch.randn(4, 1024, dtype=torch.float16)

    def adds():
        y = a
        for _ in range(32):
            y = y + b
        return y
    return no_grad(fork_lanes([adds] + [linear_lane(8192, 1024, 1, 4, torch.float16)
                                        for _ in range(2)]))


def softmax_beside_wide_projections_b4():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        s = torch.randn(4, 8, 512, dtype=torch.float32)

    def softmaxes():
        y = s
        for _ in range(6):
            y = torch.softmax(y * 2.0, dim=-1)
        return y
    return no_grad(fork_lanes([linear_lane(1024, 16384, 4, 4, torch.float16), softmaxes]))


def groupnorm_silu_beside_attention():
    import torch
    import torch.nn.functional as F
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        k = torch.randn(4, 16, 2048, 64, dtype=torch.float16)
        v = torch.randn(4, 16, 2048, 64, dtype=torch.float16)
        q = torch.randn(4, 16, 1, 64, dtype=torch.float16)
        norm = torch.nn.GroupNorm(32, 128).half()
        x = torch.randn(1, 128, 16, 16, dtype=torch.float16)

    def norms():
        y = x
        for _ in range(6):
            y = F.silu(norm(y))
        return y
    return no_grad(fork_lanes([attention_chain(q, k, v, 3), norms]))


def qwen3_decode_beside_layernorm_lane():
    import torch
    from walk_parts import corner, fork_join, hf_decoder_step
    decode = hf_decoder_step("Qwen3", "bfloat16", 4, 1, **QWEN3_SMALL)
    norms = layer_norm_lane(2048, 4, 8, torch.bfloat16)

    def lane():
        with torch.no_grad():
            return norms()
    return fork_join(lambda: corner(decode()), lambda: corner(lane()))


build = builder(131_49, {
    "iz_layernorm_lanes_beside_wide_gemv": layernorm_lanes_beside_wide_gemv,
    "iz_reductions_beside_decode_gemms": reductions_beside_decode_gemms,
    "iz_adds_beside_narrow_gemv_lanes": adds_beside_narrow_gemv_lanes,
    "iz_softmax_beside_wide_projections_b4": softmax_beside_wide_projections_b4,
    "iz_groupnorm_silu_beside_attention": groupnorm_silu_beside_attention,
    "iz_qwen3_decode_beside_layernorm_lane": qwen3_decode_beside_layernorm_lane,
})
