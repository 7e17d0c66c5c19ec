"""Six walks written after held-out batch 47 ran and before any A/B of chases for every kernel
(`--concurrent-stand-ins chase`) on them or any change that follows from one; never run
before. All on several streams, where normalisations, reductions and softmax run beside other
lanes: two lanes of RMSNorm passes over 4 × 2048 bf16 beside a lane of bf16 gate and up
projections 2048 → 5632 at 4 tokens; a lane of LayerNorm passes over 1 × 2048 fp16 beside two
lanes of fp16 GEMVs 2048 → 8192; two lanes of softmax over 4 × 16 × 256 fp16 scores beside a
lane of fp16 linear layers 1024 → 3072 at 16 tokens; a lane of cumulative sums over 8 × 4096
f32 beside bf16 down projections 11008 → 4096 at 2 tokens; a lane of GroupNorm passes over
2 × 64 × 32 × 32 fp16 beside a lane of 3 × 3 convolutions of that shape; and a GPT-NeoX-shaped
decode (batch 2, fp16) beside a lane of log-softmax and top-k over 2 × 50304 f32 logits.

    python3 scripts/validate_all.py --out DIR --groups heldout48
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import linear_lane, rms_norm  # noqa: E402
from walk_parts import no_grad_step as no_grad  # noqa: E402
from walk_registry import builder  # noqa: E402

NEOX_SMALL = dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=4,
                  num_attention_heads=16, vocab_size=50304, max_position_embeddings=2048)


def rmsnorm_lanes_beside_gate_up_b4():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        hs = [torch.randn(4, 2048, dtype=torch.bfloat16) for _ in range(2)]
        g = torch.randn(2048, dtype=torch.bfloat16)

    def norms(h):
        def run():
            y = h
            for _ in range(6):
                y = rms_norm(y, g)
            return y
        return run
    return no_grad(fork_lanes([linear_lane(2048, 5632, 4, 4, torch.bfloat16)]
                              + [norms(h) for h in hs]))


def layernorm_beside_gemv_lanes_b1():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        norm = torch.nn.LayerNorm(2048).half()
        x = torch.randn(1, 2048, dtype=torch.float16)

    def norms():
        y = x
        for _ in range(10):
            y = norm(y)
        return y
    return no_grad(fork_lanes([norms] + [linear_lane(2048, 8192, 1, 4, torch.float16)
                                         for _ in range(2)]))


def softmax_lanes_beside_projections():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        scores = [torch.randn(4, 16, 256, dtype=torch.float16) for _ in range(2)]

    def lane(s):
        def run():
            y = s
            for _ in range(6):
                y = torch.softmax(y * 1.5, dim=-1)
            return y
        return run
    return no_grad(fork_lanes([linear_lane(1024, 3072, 16, 6, torch.float16)]
                              + [lane(s) for s in scores]))


def cumsum_beside_down_projections():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.randn(8, 4096, dtype=torch.float32)

    def sums():
        y = x
        for _ in range(6):
            y = torch.cumsum(y, dim=-1) * 1e-3
        return y
    return no_grad(fork_lanes([linear_lane(11008, 4096, 2, 3, torch.bfloat16), sums]))


def group_norm_beside_convolutions():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn
    with torch.device("cuda"):
        x = torch.randn(2, 64, 32, 32, dtype=torch.float16)
        norm = nn.GroupNorm(8, 64).half()
        convs = [nn.Conv2d(64, 64, 3, padding=1).half() for _ in range(4)]

    def norms():
        y = x
        for _ in range(4):
            y = norm(y)
        return y

    def conv_lane():
        y = x
        for c in convs:
            y = c(y)
        return y
    return no_grad(fork_lanes([conv_lane, norms]))


def neox_decode_beside_log_softmax_top_k():
    import torch
    from walk_parts import corner, fork_join, hf_decoder_step
    decode = hf_decoder_step("GPTNeoX", "float16", 2, 1, **NEOX_SMALL)
    with torch.device("cuda"):
        logits = torch.randn(2, 50304, dtype=torch.float32)

    def pick():
        with torch.no_grad():
            top, idx = torch.topk(torch.log_softmax(logits, dim=-1), 40, dim=-1)
            return top.sum(-1) + idx.float().sum(-1)
    return fork_join(lambda: corner(decode()), lambda: corner(pick()))


build = builder(131_48, {
    "iy_rmsnorm_lanes_beside_gate_up_b4": rmsnorm_lanes_beside_gate_up_b4,
    "iy_layernorm_beside_gemv_lanes_b1": layernorm_beside_gemv_lanes_b1,
    "iy_softmax_lanes_beside_projections": softmax_lanes_beside_projections,
    "iy_cumsum_beside_down_projections": cumsum_beside_down_projections,
    "iy_group_norm_beside_convolutions": group_norm_beside_convolutions,
    "iy_neox_decode_beside_log_softmax_top_k": neox_decode_beside_log_softmax_top_k,
})
