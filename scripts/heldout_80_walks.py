"""Six walks written after 82abef0 (the front-end gap signed: a graph node may cost less than
its kernel's profiled duration, as on an H100), before any run: its first test, and a second
of the replay's mean with a profile of the GPU. On one stream: a StableLM-shaped decode at
batch 2 (bf16, 2048 wide, 4 layers); a Granite-shaped prefill of 128 tokens (fp16, 1024
wide, GQA 16/4, 6 layers); a Phi-3-shaped decode at batch 8 (bf16, 1536 wide, 6 layers). On
several streams: a small Qwen2-shaped draft decode beside a larger Llama-shaped target decode
(bf16, 896 and 2048 wide); causal attention over 4 x 16 heads x 256 x 64 (fp16, SDPA) beside
a lane of fp16 GEMVs 2048 -> 2048 over 4 tokens. Not PyTorch: a CuPy program that takes the
softmax of the rows of a 512 x 2048 f32 matrix six times (CuPy's max and sum reductions, an
exponential and a division).

    python3 scripts/validate_all.py --out DIR --groups heldout80
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import decoder, fork_lanes, linear_lane, no_grad_step  # noqa: E402
from walk_registry import builder  # noqa: E402


def draft_beside_target_decodes():
    from walk_parts import corner, fork_join, hf_decoder_step
    draft = hf_decoder_step("Qwen2", "bfloat16", 1, 1, vocab_size=32000, hidden_size=896,
                            intermediate_size=4864, num_hidden_layers=4, num_attention_heads=14,
                            num_key_value_heads=2, max_position_embeddings=2048)
    target = hf_decoder_step("Llama", "bfloat16", 1, 1, vocab_size=32000, hidden_size=2048,
                             intermediate_size=5632, num_hidden_layers=4,
                             num_attention_heads=16, num_key_value_heads=4,
                             max_position_embeddings=2048)
    return fork_join(lambda: corner(draft()), lambda: corner(target()))


def attention_beside_gemv_lane_fp16():
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        q = torch.randn(4, 16, 256, 64, dtype=torch.float16)
        k = torch.randn(4, 16, 256, 64, dtype=torch.float16)
        v = torch.randn(4, 16, 256, 64, dtype=torch.float16)

    def attend():
        y = q
        for _ in range(4):
            y = f.scaled_dot_product_attention(y, k, v, is_causal=True)
        return y
    return no_grad_step(fork_lanes([attend, linear_lane(2048, 2048, 4, 6, torch.float16)]))


def cupy_row_softmax():
    import cupy as cp
    x = cp.random.standard_normal((512, 2048), dtype=cp.float32)

    def step():
        h = x
        for _ in range(6):
            e = cp.exp(h - h.max(axis=1, keepdims=True))
            h = e / e.sum(axis=1, keepdims=True)
        return h
    return step


build = builder(131_80, {
    "le_stablelm_2048_decode_b2": decoder("StableLm", "bfloat16", 2, 1, hidden_size=2048,
                                          intermediate_size=5632, num_hidden_layers=4,
                                          num_attention_heads=16, num_key_value_heads=16,
                                          max_position_embeddings=2048),
    "le_granite_1024_prefill_128": decoder("Granite", "float16", 1, 128, hidden_size=1024,
                                           intermediate_size=2816, num_hidden_layers=6,
                                           num_attention_heads=16, num_key_value_heads=4,
                                           max_position_embeddings=2048),
    "le_phi3_1536_decode_b8": decoder("Phi3", "bfloat16", 8, 1, hidden_size=1536,
                                      intermediate_size=4096, num_hidden_layers=6,
                                      num_attention_heads=12, max_position_embeddings=2048,
                                      pad_token_id=0),
    "le_draft_beside_target_decodes": draft_beside_target_decodes,
    "le_attention_beside_gemv_lane_fp16": attention_beside_gemv_lane_fp16,
    "le_cupy_row_softmax": (cupy_row_softmax, "cupy"),
})
