"""Six walks written after the one-read floor of chasing stand-ins (`--chase-floor one-step`,
the replay's default from this batch on) was chosen on the stored walks, before any run of
them. All on several streams, where short element-wise kernels run beside other lanes: a lane
of rotary-embedding passes over 4 × 32 × 128 bf16 queries beside a lane of bf16 QKV projections
2048 → 6144 at 4 tokens; three lanes of SiLU-and-residual passes over 1 × 4096 fp16 beside a
lane of fp16 GEMVs 4096 → 4096; a lane of residual adds and scales over 8 × 2048 bf16 beside
decode attention (SDPA over a 4096-position bf16 cache, batch 8, 32 heads); a lane of leaky
`where` and clamp passes over 8 × 4096 fp16 beside fp16 up projections 4096 → 11008 at 8
tokens; two lanes of temperature softmax and argmax over 2 × 32000 f32 logits beside a bf16 MLP
2048 → 5632 → 2048 at 2 tokens; and a Phi-3-shaped decode (batch 2, bf16) beside a lane of
embedding lookups from a 32000 × 2048 bf16 table.

    python3 scripts/validate_all.py --out DIR --groups heldout47
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import attention_chain, linear_lane  # noqa: E402
from walk_parts import no_grad_step as no_grad  # noqa: E402
from walk_registry import builder  # noqa: E402

PHI3_SMALL = dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                  num_attention_heads=16, num_key_value_heads=16, vocab_size=32000,
                  max_position_embeddings=2048, pad_token_id=0)


def rope_beside_qkv_projections():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        q = torch.randn(4, 32, 1, 128, dtype=torch.bfloat16)
        cos = torch.randn(1, 1, 1, 128, dtype=torch.bfloat16)
        sin = torch.randn(1, 1, 1, 128, dtype=torch.bfloat16)

    def rope():
        y = q
        for _ in range(6):
            half = y.shape[-1] // 2
            rotated = torch.cat((-y[..., half:], y[..., :half]), dim=-1)
            y = y * cos + rotated * sin
        return y
    return no_grad(fork_lanes([linear_lane(2048, 6144, 4, 6, torch.bfloat16), rope]))


def silu_lanes_beside_gemvs():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        xs = [torch.randn(1, 4096, dtype=torch.float16) for _ in range(3)]

    def lane(x):
        def run():
            y = x
            for _ in range(8):
                y = torch.nn.functional.silu(y) + x
            return y
        return run
    return no_grad(fork_lanes([linear_lane(4096, 4096, 1, 8, torch.float16)]
                              + [lane(x) for x in xs]))


def residual_beside_decode_attention_b8():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        k = torch.randn(8, 32, 4096, 64, dtype=torch.bfloat16)
        v = torch.randn(8, 32, 4096, 64, dtype=torch.bfloat16)
        q = torch.randn(8, 32, 1, 64, dtype=torch.bfloat16)
        h = torch.randn(8, 2048, dtype=torch.bfloat16)
        r = torch.randn(8, 2048, dtype=torch.bfloat16)

    def residual():
        y = h
        for _ in range(12):
            y = (y + r) * 0.5
        return y
    return no_grad(fork_lanes([attention_chain(q, k, v, 3), residual]))


def where_clamp_beside_up_projections_b8():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.randn(8, 4096, dtype=torch.float16)

    def masks():
        y = x
        for _ in range(8):
            y = torch.where(y > 0, y, 0.1 * y).clamp(-4.0, 4.0)
        return y
    return no_grad(fork_lanes([linear_lane(4096, 11008, 8, 4, torch.float16), masks]))


def two_sampling_lanes_beside_mlp_b2():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        logits = [torch.randn(2, 32000, dtype=torch.float32) for _ in range(2)]
        up = torch.randn(5632, 2048, dtype=torch.bfloat16) * 0.01
        down = torch.randn(2048, 5632, dtype=torch.bfloat16) * 0.01
        x = torch.randn(2, 2048, dtype=torch.bfloat16)

    def mlp():
        y = x
        for _ in range(3):
            y = torch.nn.functional.linear(torch.nn.functional.gelu(
                torch.nn.functional.linear(y, up)), down)
        return y

    def sample(z):
        def run():
            p = torch.softmax(z / 0.7, dim=-1)
            return p.argmax(-1).float()
        return run
    return no_grad(fork_lanes([mlp] + [sample(z) for z in logits]))


def phi3_decode_beside_embedding_lookups():
    import torch
    from walk_parts import corner, fork_join, hf_decoder_step
    decode = hf_decoder_step("Phi3", "bfloat16", 2, 1, **PHI3_SMALL)
    with torch.device("cuda"):
        table = torch.randn(32000, 2048, dtype=torch.bfloat16)
        ids = [torch.randint(0, 32000, (64,)) for _ in range(4)]

    def lookups():
        with torch.no_grad():
            y = None
            for i in ids:
                e = torch.nn.functional.embedding(i, table)
                y = e if y is None else y + e
            return y
    return fork_join(lambda: corner(decode()), lambda: corner(lookups()))


build = builder(131_47, {
    "ix_rope_beside_qkv_projections": rope_beside_qkv_projections,
    "ix_silu_lanes_beside_gemvs": silu_lanes_beside_gemvs,
    "ix_residual_beside_decode_attention_b8": residual_beside_decode_attention_b8,
    "ix_where_clamp_beside_up_projections_b8": where_clamp_beside_up_projections_b8,
    "ix_two_sampling_lanes_beside_mlp_b2": two_sampling_lanes_beside_mlp_b2,
    "ix_phi3_decode_beside_embedding_lookups": phi3_decode_beside_embedding_lookups,
})
