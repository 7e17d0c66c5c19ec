"""Six walks written after barrier chases became the default (6e3939b) and before they ran on
any walk written for them; never run before. All on several streams: fp16 softmax over
8 × 16 × 256 scores beside fp16 GEMVs 4096 → 11008; GroupNorm over 2 × 256 × 8 × 8 fp16
beside two lanes of bf16 GEMVs 4096 → 4096; sums and means over 32 × 2048 f32 beside decode
attention (SDPA over a 4096-position fp16 cache, batch 2, 32 heads); arg-max over 4 × 32000
f32 logits beside fp16 linear layers 4096 → 4096 at 4 tokens; embedding lookups (a gather,
not a reduction) beside two lanes of fp16 GEMVs 2048 → 8192; and a Llama-shaped decode
(batch 4, fp16) beside a lane of LayerNorm passes over 4 × 2048 fp16.

    python3 scripts/validate_all.py --out DIR --groups heldout51
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import attention_chain, linear_lane, repeated  # noqa: E402
from walk_parts import no_grad_step as no_grad  # noqa: E402
from walk_registry import builder  # noqa: E402

LLAMA_SMALL = dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                   num_attention_heads=16, num_key_value_heads=4,
                   vocab_size=32000, max_position_embeddings=2048)


def softmax_beside_up_projection_gemvs():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        s = torch.randn(8, 16, 256, dtype=torch.float16)
    softmaxes = repeated(s, 8, lambda y: torch.softmax(y * 1.5, dim=-1))
    return no_grad(fork_lanes([linear_lane(4096, 11008, 1, 4, torch.float16), softmaxes]))


def groupnorm_beside_two_gemv_lanes():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        norm = torch.nn.GroupNorm(32, 256).half()
        x = torch.randn(2, 256, 8, 8, dtype=torch.float16)
    norms = repeated(x, 8, norm)
    return no_grad(fork_lanes([norms] + [linear_lane(4096, 4096, 1, 4, torch.bfloat16)
                                         for _ in range(2)]))


def sums_beside_decode_attention_b2():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        k = torch.randn(2, 32, 4096, 64, dtype=torch.float16)
        v = torch.randn(2, 32, 4096, 64, dtype=torch.float16)
        q = torch.randn(2, 32, 1, 64, dtype=torch.float16)
        x = torch.randn(32, 2048, dtype=torch.float32)
    centre = repeated(x, 6, lambda y: (y - y.mean(-1, keepdim=True)
                                       + y.sum(-1, keepdim=True) * 1e-6))
    return no_grad(fork_lanes([attention_chain(q, k, v, 3), centre]))


def argmax_beside_projections_b4():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        logits = torch.randn(4, 32000, dtype=torch.float32)

    def picks():
        out = []
        y = logits
        for _ in range(4):
            out.append(y.argmax(-1))
            y = y * 0.5
        return torch.stack(out).float()
    return no_grad(fork_lanes([linear_lane(4096, 4096, 4, 4, torch.float16), picks]))


def embedding_lookups_beside_gemv_lanes():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        table = torch.nn.Embedding(32000, 2048).half()
        ids = torch.randint(0, 32000, (4, 8))
    lookups = repeated(ids, 6, lambda y: table(y % 32000).sum(-1).long())
    return no_grad(fork_lanes([lookups] + [linear_lane(2048, 8192, 1, 4, torch.float16)
                                           for _ in range(2)]))


def llama_decode_beside_layernorm_lane():
    import torch
    import torch.nn.functional as F
    from walk_parts import corner, fork_join, hf_decoder_step
    decode = hf_decoder_step("Llama", "float16", 4, 1, **LLAMA_SMALL)
    with torch.device("cuda"):
        x = torch.randn(4, 2048, dtype=torch.float16)
    norms = repeated(x, 8, lambda y: F.layer_norm(y, (2048,)))

    def lane():
        with torch.no_grad():
            return norms()
    return fork_join(lambda: corner(decode()), lambda: corner(lane()))


build = builder(131_51, {
    "jb_softmax_beside_up_projection_gemvs": softmax_beside_up_projection_gemvs,
    "jb_groupnorm_beside_two_gemv_lanes": groupnorm_beside_two_gemv_lanes,
    "jb_sums_beside_decode_attention_b2": sums_beside_decode_attention_b2,
    "jb_argmax_beside_projections_b4": argmax_beside_projections_b4,
    "jb_embedding_lookups_beside_gemv_lanes": embedding_lookups_beside_gemv_lanes,
    "jb_llama_decode_beside_layernorm_lane": llama_decode_beside_layernorm_lane,
})
