"""Six walks written after dc76e28 (`--summary`: a kernel whose block fits nowhere beside a
kernel filling every SM waits until that kernel's blocks begin to retire; a small kernel's
stretch read at the load the other kernels move at the pace the model runs them) and before
any run. On one stream: a Llama-shaped decode at batch 4 (bf16, 2560 wide). On several
streams: GELU passes over 4 × 4096 bf16 beside bf16 GEMVs 4096 → 14336; a hand-written
RMSNorm (square, mean, reciprocal square root, scale) over 2 × 4096 bf16 beside two lanes of
bf16 GEMVs 4096 → 14336; softmax over 8 × 4096 fp16 beside three lanes of fp16 GEMVs
2048 → 8192; top-k (k = 50) over 4 × 32000 f32 beside two lanes of fp16 output projections
2048 → 32000; and residual adds with LayerNorm over 4 × 2048 fp16 beside decode attention
(SDPA over a 4096-position fp16 cache, batch 4, 16 heads) and a lane of fp16 GEMVs
2048 → 5632.

    python3 scripts/validate_all.py --out DIR --groups heldout54
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import attention_chain, linear_lane, repeated  # noqa: E402
from walk_parts import no_grad_step as no_grad  # noqa: E402
from walk_registry import builder  # noqa: E402

LLAMA_2560 = dict(hidden_size=2560, intermediate_size=6912, num_hidden_layers=4,
                  num_attention_heads=20, num_key_value_heads=4, vocab_size=32000,
                  max_position_embeddings=2048)


def llama_2560_decode_b4():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Llama", "bfloat16", 4, 1, **LLAMA_2560)


def gelu_beside_wide_gemv():
    import torch
    import torch.nn.functional as F
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.randn(4, 4096, dtype=torch.bfloat16)
    gelus = repeated(x, 12, lambda y: F.gelu(y) * 0.9)
    return no_grad(fork_lanes([linear_lane(4096, 14336, 1, 4, torch.bfloat16), gelus]))


def rms_norm(y):
    import torch
    return y * torch.rsqrt(y.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(y.dtype)


def rmsnorm_beside_two_wide_gemv_lanes():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.randn(2, 4096, dtype=torch.bfloat16)
    norms = repeated(x, 6, rms_norm)
    return no_grad(fork_lanes([norms] + [linear_lane(4096, 14336, 1, 3, torch.bfloat16)
                                         for _ in range(2)]))


def softmax_beside_three_gemv_lanes():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        s = torch.randn(8, 4096, dtype=torch.float16)
    softmaxes = repeated(s, 6, lambda y: torch.softmax(y, -1) * 4.0)
    return no_grad(fork_lanes([softmaxes] + [linear_lane(2048, 8192, 1, 4, torch.float16)
                                             for _ in range(3)]))


def top_k_beside_two_output_projection_lanes():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        logits = torch.randn(4, 32000, dtype=torch.float32)

    def top_k():
        y = logits
        for _ in range(3):
            values, _ = torch.topk(y, 50, dim=-1)
            y = y - values[:, -1:] * 1e-3
        return y
    return no_grad(fork_lanes([top_k] + [linear_lane(2048, 32000, 1, 2, torch.float16)
                                         for _ in range(2)]))


def residual_layernorm_beside_attention_and_gemvs_b4():
    import torch
    import torch.nn.functional as F
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        k = torch.randn(4, 16, 4096, 64, dtype=torch.float16)
        v = torch.randn(4, 16, 4096, 64, dtype=torch.float16)
        q = torch.randn(4, 16, 1, 64, dtype=torch.float16)
        x = torch.randn(4, 2048, dtype=torch.float16)
        r = torch.randn(4, 2048, dtype=torch.float16)
    norms = repeated(x, 8, lambda y: F.layer_norm(y + r, (2048,)))
    return no_grad(fork_lanes([attention_chain(q, k, v, 3), norms,
                               linear_lane(2048, 5632, 4, 4, torch.float16)]))


build = builder(131_54, {
    "ke_llama_2560_decode_b4": llama_2560_decode_b4,
    "ke_gelu_beside_wide_gemv": gelu_beside_wide_gemv,
    "ke_rmsnorm_beside_two_wide_gemv_lanes": rmsnorm_beside_two_wide_gemv_lanes,
    "ke_softmax_beside_three_gemv_lanes": softmax_beside_three_gemv_lanes,
    "ke_top_k_beside_two_output_projection_lanes": top_k_beside_two_output_projection_lanes,
    "ke_residual_layernorm_beside_attention_and_gemvs_b4":
        residual_layernorm_beside_attention_and_gemvs_b4,
})
