"""Six walks written after 38bd6f5 (no change to the method since dc76e28: batches 53 and 54
had not run yet) and before any run. On one stream: a Mistral-shaped decode at batch 4 (bf16,
2048 wide). On several streams: decode attention (SDPA over a 2048-position bf16 cache,
batch 2, 16 heads of 128) beside a lane of bf16 linear layers 2048 → 8192 at 2 tokens, as a
parallel attention-and-MLP block runs them; a mixture-of-experts router (2048 → 64 logits,
softmax, top-2) over 4 tokens beside two lanes of bf16 expert projections 2048 → 1408; LoRA
adapters (fp16 4096 → 16 → 4096, scaled) over 8 tokens beside their base linear layers
4096 → 4096; int8 weights dequantised to bf16 (4096 × 4096, a scale a row) beside a lane of
bf16 GEMVs 4096 → 4096; and a repetition penalty (gather, scale, scatter over 4 × 32000 f32
logits at 64 token ids a row) beside two lanes of fp16 output projections 2048 → 32000.

    python3 scripts/validate_all.py --out DIR --groups heldout55
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import attention_chain, beside_linear_lanes  # noqa: E402
from walk_registry import builder  # noqa: E402

MISTRAL_2048 = dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=6,
                    num_attention_heads=16, num_key_value_heads=4, vocab_size=32000,
                    max_position_embeddings=2048)


def mistral_decode_b4():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Mistral", "bfloat16", 4, 1, **MISTRAL_2048)


def attention_beside_mlp_lane_b2():
    import torch
    with torch.device("cuda"):
        k = torch.randn(2, 16, 2048, 128, dtype=torch.bfloat16)
        v = torch.randn(2, 16, 2048, 128, dtype=torch.bfloat16)
        q = torch.randn(2, 16, 1, 128, dtype=torch.bfloat16)
    return beside_linear_lanes(attention_chain(q, k, v, 3), 1, 2048, 8192, 2, 4, torch.bfloat16)


def router_beside_two_expert_lanes():
    import torch
    with torch.device("cuda"):
        x = torch.randn(4, 2048, dtype=torch.bfloat16)
        w = torch.randn(64, 2048, dtype=torch.bfloat16) * 0.02

    def route():
        y = x
        for _ in range(4):
            probs = torch.softmax(torch.nn.functional.linear(y, w).float(), -1)
            top, _ = torch.topk(probs, 2, dim=-1)
            y = y * top.sum(-1, keepdim=True).to(y.dtype)
        return y
    return beside_linear_lanes(route, 2, 2048, 1408, 4, 4, torch.bfloat16)


def lora_adapters_beside_base_b8():
    import torch
    with torch.device("cuda"):
        x = torch.randn(8, 4096, dtype=torch.float16)
        downs = [torch.randn(16, 4096, dtype=torch.float16) * 0.01 for _ in range(4)]
        ups = [torch.randn(4096, 16, dtype=torch.float16) * 0.01 for _ in range(4)]

    def adapters():
        y = None
        for a, b in zip(downs, ups):
            f = torch.nn.functional.linear
            d = f(f(x, a), b) * 0.5
            y = d if y is None else y + d
        return y
    return beside_linear_lanes(adapters, 1, 4096, 4096, 8, 4, torch.float16)


def dequantise_beside_gemv_lane():
    import torch
    with torch.device("cuda"):
        q = torch.randint(-127, 128, (4096, 4096), dtype=torch.int8)
        scale = torch.rand(4096, 1, dtype=torch.bfloat16) * 0.01

    def dequantise():
        y = None
        for _ in range(3):
            w = q.to(torch.bfloat16) * scale
            y = w if y is None else y + w
        return y
    return beside_linear_lanes(dequantise, 1, 4096, 4096, 1, 4, torch.bfloat16)


def repetition_penalty_beside_output_lanes():
    import torch
    with torch.device("cuda"):
        logits = torch.randn(4, 32000, dtype=torch.float32)
        seen = torch.randint(0, 32000, (4, 64))

    def penalise():
        y = logits.clone()
        for _ in range(3):
            picked = torch.gather(y, 1, seen)
            picked = torch.where(picked > 0, picked / 1.3, picked * 1.3)
            y = y.scatter(1, seen, picked)
        return y
    return beside_linear_lanes(penalise, 2, 2048, 32000, 1, 2, torch.float16)


build = builder(131_55, {
    "kf_mistral_decode_b4": mistral_decode_b4,
    "kf_attention_beside_mlp_lane_b2": attention_beside_mlp_lane_b2,
    "kf_router_beside_two_expert_lanes": router_beside_two_expert_lanes,
    "kf_lora_adapters_beside_base_b8": lora_adapters_beside_base_b8,
    "kf_dequantise_beside_gemv_lane": dequantise_beside_gemv_lane,
    "kf_repetition_penalty_beside_output_lanes": repetition_penalty_beside_output_lanes,
})
