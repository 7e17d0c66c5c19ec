"""Five walks written at the start of session 54 (no change to either graph price since
41f1d11), before any run of them: a Gemma 3 text decode at batch 2 and a Qwen3 mixture-of-
experts decode at batch 4 (transformers, bf16, one stream each); a CuPy chain of fused
element-wise kernels (`ElementwiseKernel`, 1 Mi floats, sixteen of them with a reduction
every fourth); a decode attention lane (SDPA over a 4096-position fp16 KV cache, batch 8)
beside a SwiGLU MLP lane of hidden 2048 (bf16, 8 tokens), each on a stream of its own; and two
lanes of four LayerNorm → Linear 2048 → ReLU blocks over 32 rows (fp16), each on a stream of
its own.

    python3 scripts/validate_all.py --out DIR --groups heldout41
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def gemma3_decode_b2():
    # Gemma 3's text model takes Gemma3TextConfig (Gemma3Config is the multimodal one), so
    # the model is made here rather than by walk_parts.hf_model's `arch + "Config"`.
    import torch
    import transformers
    from walk_parts import hf_step
    cfg = transformers.Gemma3TextConfig(hidden_size=1024, intermediate_size=4096,
                                        num_hidden_layers=4, num_attention_heads=8,
                                        num_key_value_heads=4, head_dim=128, vocab_size=32000,
                                        max_position_embeddings=2048, sliding_window=512,
                                        pad_token_id=0)
    with torch.device("cuda"):
        model = transformers.Gemma3ForCausalLM(cfg).to(torch.bfloat16)
    model.eval()
    return hf_step(torch, model, 2, 1)


def qwen3_moe_decode_b4():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Qwen3Moe", "bfloat16", 4, 1, hidden_size=1024,
                           intermediate_size=2816, moe_intermediate_size=512,
                           num_experts=8, num_experts_per_tok=2, num_hidden_layers=4,
                           num_attention_heads=16, num_key_value_heads=4, head_dim=64,
                           vocab_size=32000, max_position_embeddings=2048,
                           decoder_sparse_step=1, mlp_only_layers=[], pad_token_id=0)


def cupy_fused_elementwise():
    import cupy as cp
    scale_shift = cp.ElementwiseKernel("float32 x, float32 a, float32 b", "float32 y",
                                       "y = tanhf(x * a + b)", "scale_shift_tanh")
    mix = cp.ElementwiseKernel("float32 x, float32 h", "float32 y",
                               "y = 0.5f * x + 0.5f * h * h", "mix_square")
    x0 = cp.random.standard_normal(1 << 20, dtype=cp.float32)

    def step():
        x, h = x0, x0
        for k in range(16):
            h = scale_shift(x, cp.float32(1.0 + k / 16), cp.float32(0.01 * k))
            x = mix(x, h)
            if k % 4 == 3:
                x = x / (cp.abs(x).sum() + 1.0)
        return x
    return step


def attention_beside_swiglu_b8():
    import torch
    import torch.nn.functional as F
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        q = torch.randn(8, 32, 1, 128, dtype=torch.float16)
        k = torch.randn(8, 32, 4096, 128, dtype=torch.float16)
        v = torch.randn(8, 32, 4096, 128, dtype=torch.float16)
        gate, up, down = (torch.nn.Linear(2048, 5632, bias=False, dtype=torch.bfloat16),
                          torch.nn.Linear(2048, 5632, bias=False, dtype=torch.bfloat16),
                          torch.nn.Linear(5632, 2048, bias=False, dtype=torch.bfloat16))
        x = torch.randn(8, 2048, dtype=torch.bfloat16)

    def attention():
        o = q
        for _ in range(4):
            o = F.scaled_dot_product_attention(o, k, v)
        return o.float()

    def mlp():
        h = x
        for _ in range(4):
            h = down(F.silu(gate(h)) * up(h))
        return h.float()

    run = fork_lanes([attention, mlp])

    def step():
        with torch.no_grad():
            return run()
    return step


def norm_linear_lanes_b32():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn
    with torch.device("cuda"):
        lanes = [nn.Sequential(*[nn.Sequential(nn.LayerNorm(2048), nn.Linear(2048, 2048),
                                               nn.ReLU()) for _ in range(4)]).half()
                 for _ in range(2)]
        x = torch.randn(32, 2048, dtype=torch.float16)
    run = fork_lanes(list(lanes))

    def step():
        with torch.no_grad():
            return run(x)
    return step


build = builder(131_41, {
    "ir_gemma3_decode_b2": gemma3_decode_b2,
    "ir_qwen3_moe_decode_b4": qwen3_moe_decode_b4,
    "ir_cupy_fused_elementwise": (cupy_fused_elementwise, "cupy"),
    "ir_attention_beside_swiglu_b8": attention_beside_swiglu_b8,
    "ir_norm_linear_lanes_b32": norm_linear_lanes_b32,
})
