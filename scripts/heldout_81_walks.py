"""Six walks written after 920a18a (no pricing change since the front-end gap was signed and
the replay's mean taken with a profile of the GPU), before any run: a third held-out test of
both. On one stream: a Mistral-shaped decode at batch 4 (fp16, 1024 wide, 6 layers); a
Gemma-shaped prefill of 64 tokens (bf16, 2048 wide, head dim 256, 4 layers); a Qwen2-shaped
decode at batch 32 (bf16, 896 wide, 8 layers). On several streams: two GPT-2-shaped decodes
side by side (fp16, 768 wide, 4 layers each); a lane of bf16 GEMMs over 64 tokens (1024 ->
4096) beside two lanes of row softmaxes over 8 x 2048 (bf16). Not PyTorch: a CuPy MLP of six
layers of 1024 over 16 rows (f32, cuBLAS GEMMs through `cupy.matmul` with a tanh between).

    python3 scripts/validate_all.py --out DIR --groups heldout81
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import decoder, fork_lanes, lane_of, linear_lane, no_grad_step  # noqa: E402
from walk_registry import builder  # noqa: E402


def two_gpt2_decodes_fp16():
    from walk_parts import corner, fork_join, hf_decoder_step
    config = dict(vocab_size=32000, n_embd=768, n_layer=4, n_head=12, n_positions=1024)
    left = hf_decoder_step("GPT2", "float16", 1, 1, head="LMHeadModel", **config)
    right = hf_decoder_step("GPT2", "float16", 1, 1, head="LMHeadModel", **config)
    return fork_join(lambda: corner(left()), lambda: corner(right()))


def gemm_lane_beside_softmax_lanes_bf16():
    import torch
    softmaxes = [lane_of((8, 2048), torch.bfloat16, 8, lambda y: torch.softmax(y, dim=-1))
                 for _ in range(2)]
    return no_grad_step(fork_lanes([linear_lane(1024, 4096, 64, 6, torch.bfloat16)]
                                   + softmaxes))


def cupy_tanh_mlp():
    import cupy as cp
    ws = [cp.random.standard_normal((1024, 1024), dtype=cp.float32) * 0.03 for _ in range(6)]
    x = cp.random.standard_normal((16, 1024), dtype=cp.float32)

    def step():
        h = x
        for w in ws:
            h = cp.tanh(cp.matmul(h, w))
        return h
    return step


build = builder(131_81, {
    "lf_mistral_1024_decode_b4": decoder("Mistral", "float16", 4, 1, hidden_size=1024,
                                         intermediate_size=3584, num_hidden_layers=6,
                                         num_attention_heads=16, num_key_value_heads=4,
                                         max_position_embeddings=2048),
    "lf_gemma_2048_prefill_64": decoder("Gemma", "bfloat16", 1, 64, hidden_size=2048,
                                        intermediate_size=8192, num_hidden_layers=4,
                                        num_attention_heads=8, num_key_value_heads=1,
                                        head_dim=256, max_position_embeddings=2048),
    "lf_qwen2_896_decode_b32": decoder("Qwen2", "bfloat16", 32, 1, hidden_size=896,
                                       intermediate_size=4864, num_hidden_layers=8,
                                       num_attention_heads=14, num_key_value_heads=2,
                                       max_position_embeddings=2048),
    "lf_two_gpt2_decodes_fp16": two_gpt2_decodes_fp16,
    "lf_gemm_lane_beside_softmax_lanes_bf16": gemm_lane_beside_softmax_lanes_bf16,
    "lf_cupy_tanh_mlp": (cupy_tanh_mlp, "cupy"),
})
