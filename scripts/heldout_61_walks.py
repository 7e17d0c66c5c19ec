"""Six walks written after b350b78 (every node pays the front end for each other lane) and
before GEMMs that move little memory were priced as small kernels: the first test of that,
and a second of the per-lane cost. On one stream: a Gemma-2-shaped decode at batch 4 (bf16,
2304 wide, GQA 8/4). On several streams: rank-8 LoRA adapters (bf16, 2048 → 8 → 2048, one
token) beside their base lane of bf16 GEMVs 2048 → 2048; rank-64 adapters (fp16, 4096 → 64 →
4096, 16 tokens) beside two lanes of fp16 projections 4096 → 4096; classifier heads (fp16,
8 tokens, 1024 → 32, a softmax each) beside an fp16 GEMV lane 4096 → 14336; a top-1 router
(bf16, 8 tokens, 4096 → 16 experts, softmax, arg-max) beside two expert lanes 4096 → 2048;
and speculative-decoding heads (fp16, one token, residual blocks 1024 → 1024 and a head
1024 → 4096) beside a decode GEMV lane 4096 → 4096 — GEMMs that stream more than small
kernels do, priced as before.

    python3 scripts/validate_all.py --out DIR --groups heldout61
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import beside_linear_lanes  # noqa: E402
from walk_registry import builder  # noqa: E402

GEMMA2_2304 = dict(hidden_size=2304, intermediate_size=9216, num_hidden_layers=4,
                   num_attention_heads=8, num_key_value_heads=4, head_dim=256,
                   vocab_size=32000, max_position_embeddings=2048)


def gemma2_2304_decode_b4():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Gemma2", "bfloat16", 4, 1, **GEMMA2_2304)


def adapters(x, rank, width, count, scale, dtype):
    """`count` LoRA adapters of `rank` over `x` (`width` wide), each scaled, summed."""
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        downs = [torch.randn(rank, width, dtype=dtype) * 0.01 for _ in range(count)]
        ups = [torch.randn(width, rank, dtype=dtype) * 0.01 for _ in range(count)]

    def run():
        y = None
        for a, b in zip(downs, ups):
            d = f.linear(f.linear(x, a), b) * scale
            y = d if y is None else y + d
        return y
    return run


def lora_rank8_beside_base_b1():
    import torch
    x = torch.randn(1, 2048, dtype=torch.bfloat16, device="cuda")
    return beside_linear_lanes(adapters(x, 8, 2048, 4, 2.0, torch.bfloat16), 1, 2048, 2048,
                               1, 4, torch.bfloat16)


def lora_rank64_beside_two_projection_lanes():
    import torch
    x = torch.randn(16, 4096, dtype=torch.float16, device="cuda")
    return beside_linear_lanes(adapters(x, 64, 4096, 3, 0.25, torch.float16), 2, 4096, 4096,
                               16, 3, torch.float16)


def classifier_heads_beside_wide_gemv_lane():
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        x = torch.randn(8, 1024, dtype=torch.float16)
        heads = [torch.randn(32, 1024, dtype=torch.float16) * 0.02 for _ in range(6)]

    def classify():
        return sum(torch.softmax(f.linear(x, w).float(), -1) for w in heads)
    return beside_linear_lanes(classify, 1, 4096, 14336, 1, 3, torch.float16)


def router_top1_beside_two_expert_lanes():
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        x = torch.randn(8, 4096, dtype=torch.bfloat16)
        gates = [torch.randn(16, 4096, dtype=torch.bfloat16) * 0.02 for _ in range(4)]

    def route():
        picks = []
        for w in gates:
            probs = torch.softmax(f.linear(x, w).float(), -1)
            picks.append(probs.max(-1).values + probs.argmax(-1).float())
        return sum(picks)
    return beside_linear_lanes(route, 2, 4096, 2048, 8, 4, torch.bfloat16)


def draft_heads_beside_decode_gemv_lane():
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        h = torch.randn(1, 1024, dtype=torch.float16)
        blocks = [torch.randn(1024, 1024, dtype=torch.float16) * 0.02 for _ in range(3)]
        head = torch.randn(4096, 1024, dtype=torch.float16) * 0.02

    def draft():
        y = h
        for w in blocks:
            y = y + f.silu(f.linear(y, w))
        return f.linear(y, head)
    return beside_linear_lanes(draft, 1, 4096, 4096, 1, 4, torch.float16)


build = builder(131_61, {
    "kl_gemma2_2304_decode_b4": gemma2_2304_decode_b4,
    "kl_lora_rank8_beside_base_b1": lora_rank8_beside_base_b1,
    "kl_lora_rank64_beside_two_projection_lanes": lora_rank64_beside_two_projection_lanes,
    "kl_classifier_heads_beside_wide_gemv_lane": classifier_heads_beside_wide_gemv_lane,
    "kl_router_top1_beside_two_expert_lanes": router_top1_beside_two_expert_lanes,
    "kl_draft_heads_beside_decode_gemv_lane": draft_heads_beside_decode_gemv_lane,
})
