"""Five walks written in session 54 after batch 42's run (no change to either graph price
since ad0f462), before any run of them: a Mixtral-shaped decode at batch 2 (transformers, bf16,
four experts, two a token) and a CuPy chain of row reductions and element-wise passes over
8192 × 1024 floats, each on one stream; two Llama-shaped decodes of different sizes side by
side (batch 2 and batch 8, each on a stream of its own); three lanes of three fp16 3×3
convolutions with BatchNorm and ReLU over 4 × 64 × 28 × 28; two lanes of a GPT-2-shaped MLP
(fp16, 1024 → 4096 → 1024 with GELU, four blocks) over 16 tokens beside a lane of LayerNorms
over 64 × 4096.

    python3 scripts/validate_all.py --out DIR --groups heldout43
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def mixtral_decode_b2():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Mixtral", "bfloat16", 2, 1, hidden_size=1024,
                           intermediate_size=2048, num_local_experts=4, num_experts_per_tok=2,
                           num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=4,
                           vocab_size=32000, max_position_embeddings=2048, pad_token_id=0)


def cupy_row_reductions():
    import cupy as cp
    x0 = cp.random.standard_normal((8192, 1024), dtype=cp.float32)

    def step():
        x = x0
        for _ in range(6):
            m = x.max(axis=1, keepdims=True)
            e = cp.exp(x - m)
            x = e / e.sum(axis=1, keepdims=True) + 0.5 * x
        return x
    return step


def two_llama_decodes():
    from walk_parts import LLAMA_MID, LLAMA_SMALL, corner, fork_join, hf_decoder_step
    small = hf_decoder_step("Llama", "bfloat16", 8, 1, **LLAMA_SMALL)
    mid = hf_decoder_step("Llama", "bfloat16", 2, 1, **LLAMA_MID)
    return fork_join(lambda: corner(small()), lambda: corner(mid()))


def three_conv_lanes_b4():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn
    with torch.device("cuda"):
        lanes = [nn.Sequential(*[nn.Sequential(nn.Conv2d(64, 64, 3, padding=1),
                                               nn.BatchNorm2d(64), nn.ReLU())
                                 for _ in range(3)]).half().eval() for _ in range(3)]
        x = torch.randn(4, 64, 28, 28, dtype=torch.float16)
    run = fork_lanes(list(lanes))

    def step():
        with torch.no_grad():
            return run(x)
    return step


def mlp_lanes_beside_layernorms():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn
    with torch.device("cuda"):
        mlps = [nn.Sequential(*[nn.Sequential(nn.Linear(1024, 4096), nn.GELU(),
                                              nn.Linear(4096, 1024)) for _ in range(4)]).half()
                for _ in range(2)]
        norms = nn.Sequential(*[nn.LayerNorm(4096) for _ in range(8)]).half()
        x = torch.randn(16, 1024, dtype=torch.float16)
        h = torch.randn(64, 4096, dtype=torch.float16)
    run = fork_lanes([lambda: mlps[0](x), lambda: mlps[1](x), lambda: norms(h)])

    def step():
        with torch.no_grad():
            return run()
    return step


build = builder(131_43, {
    "it_mixtral_decode_b2": mixtral_decode_b2,
    "it_cupy_row_reductions": (cupy_row_reductions, "cupy"),
    "it_two_llama_decodes": two_llama_decodes,
    "it_three_conv_lanes_b4": three_conv_lanes_b4,
    "it_mlp_lanes_beside_layernorms": mlp_lanes_beside_layernorms,
})
