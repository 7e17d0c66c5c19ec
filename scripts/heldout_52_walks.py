"""Six walks written after chase-rounds became the default (9a1df66: a reduction whose threads
each read more than 64 bytes before their block reduces chases, the others barrier-chase) and
before any run. All on several streams: row maxima over 16 × 8192 f32 beside two lanes of
fp16 GEMVs 4096 → 4096; vector norms of 2 × 11008 f32 activations beside fp16 down
projections 11008 → 4096 at 2 tokens; means over the sequence of 4 × 512 × 1024 fp16 beside
decode attention (SDPA over a 2048-position fp16 cache, batch 4, 16 heads); cumulative sums
and a total over 8 × 4096 f32 beside fp16 linear layers 2048 → 8192 at one token; two lanes of
written-out RMSNorms over 1 × 4096 fp16 beside fused QKV GEMVs 4096 → 12288; and a
Llama-shaped decode (batch 2, fp16) beside a lane of f32 sums over 64 × 4096.

    python3 scripts/validate_all.py --out DIR --groups heldout52
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import attention_chain, linear_lane, repeated, rms_norm  # noqa: E402
from walk_parts import no_grad_step as no_grad  # noqa: E402
from walk_registry import builder  # noqa: E402

LLAMA_1536 = dict(hidden_size=1536, intermediate_size=4096, num_hidden_layers=4,
                  num_attention_heads=12, num_key_value_heads=4,
                  vocab_size=32000, max_position_embeddings=2048)


def row_maxima_beside_two_gemv_lanes():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.randn(16, 8192, dtype=torch.float32)
    maxima = repeated(x, 6, lambda y: y - y.amax(-1, keepdim=True) * 0.5)
    return no_grad(fork_lanes([maxima] + [linear_lane(4096, 4096, 1, 4, torch.float16)
                                          for _ in range(2)]))


def vector_norms_beside_down_projections_b2():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        a = torch.randn(2, 11008, dtype=torch.float32)
    norms = repeated(a, 6, lambda y: y / torch.linalg.vector_norm(y, dim=-1, keepdim=True))
    return no_grad(fork_lanes([linear_lane(11008, 4096, 2, 4, torch.float16), norms]))


def sequence_means_beside_decode_attention_b4():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        k = torch.randn(4, 16, 2048, 64, dtype=torch.float16)
        v = torch.randn(4, 16, 2048, 64, dtype=torch.float16)
        q = torch.randn(4, 16, 1, 64, dtype=torch.float16)
        h = torch.randn(4, 512, 1024, dtype=torch.float16)
    means = repeated(h, 4, lambda y: y - y.mean(1, keepdim=True))
    return no_grad(fork_lanes([attention_chain(q, k, v, 3), means]))


def cumsums_beside_linear_layers_b1():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.rand(8, 4096, dtype=torch.float32)
    sums = repeated(x, 6, lambda y: torch.cumsum(y, -1) / y.sum() + y)
    return no_grad(fork_lanes([linear_lane(2048, 8192, 1, 4, torch.float16), sums]))


def rmsnorm_lanes_beside_qkv_gemvs():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.randn(1, 4096, dtype=torch.float16)
        g = torch.ones(4096, dtype=torch.float16)
    lanes = [repeated(x, 8, lambda y: rms_norm(y, g)) for _ in range(2)]
    return no_grad(fork_lanes([linear_lane(4096, 12288, 1, 4, torch.float16)] + lanes))


def llama_decode_beside_sum_lane():
    import torch
    from walk_parts import corner, fork_join, hf_decoder_step
    decode = hf_decoder_step("Llama", "float16", 2, 1, **LLAMA_1536)
    with torch.device("cuda"):
        x = torch.randn(64, 4096, dtype=torch.float32)
    sums = repeated(x, 6, lambda y: y - y.sum(-1, keepdim=True) * 1e-4)

    def lane():
        with torch.no_grad():
            return sums()
    return fork_join(lambda: corner(decode()), lambda: corner(lane()))


build = builder(131_52, {
    "kc_row_maxima_beside_two_gemv_lanes": row_maxima_beside_two_gemv_lanes,
    "kc_vector_norms_beside_down_projections_b2": vector_norms_beside_down_projections_b2,
    "kc_sequence_means_beside_decode_attention_b4": sequence_means_beside_decode_attention_b4,
    "kc_cumsums_beside_linear_layers_b1": cumsums_beside_linear_layers_b1,
    "kc_rmsnorm_lanes_beside_qkv_gemvs": rmsnorm_lanes_beside_qkv_gemvs,
    "kc_llama_decode_beside_sum_lane": llama_decode_beside_sum_lane,
})
