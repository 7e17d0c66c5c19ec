"""Six walks written after the load-beside reading was taken back (2df6e69), before any run of
them and before any change to how `--summary` stretches kernels beside other streams. All on
several streams, where the offline model's per-kernel stretch is in question: GEMMs beside
GEMMs and small kernels beside small kernels. Two lanes of six bf16 linear layers of 3072 at
2 tokens; three lanes of gated MLPs (bf16, 1536 → 2 × 4096 → 1536 with SiLU and multiply) at
4 tokens; a lane of softmax-and-scale passes over 8 × 32 × 512 fp16 scores beside two lanes
of fp16 linear layers of 2560 at 8 tokens; four lanes of LayerNorm → 1024 → 4096 → GELU →
1024 (fp16) at 16 tokens; two lanes of decode attention (SDPA over a 1024-position fp16
cache, batch 2, 8 heads) beside a lane of a bf16 MLP 2048 → 8192 → 2048 at 2 tokens; and two
Llama-shaped decodes (hidden 1536, batch 2 and batch 8, bf16) side by side.

    python3 scripts/validate_all.py --out DIR --groups heldout45
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import no_grad_step as no_grad  # noqa: E402
from walk_registry import builder  # noqa: E402

LLAMA_1536 = dict(hidden_size=1536, intermediate_size=4096, num_hidden_layers=4,
                  num_attention_heads=12, num_key_value_heads=4, vocab_size=32000,
                  max_position_embeddings=2048)


def two_linear_lanes_3072_b2():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        lanes = [[torch.randn(3072, 3072, dtype=torch.bfloat16) * 0.01 for _ in range(6)]
                 for _ in range(2)]
        xs = [torch.randn(2, 3072, dtype=torch.bfloat16) for _ in range(2)]

    def lane(ws, x):
        def run():
            y = x
            for w in ws:
                y = torch.nn.functional.linear(y, w)
            return y
        return run

    return no_grad(fork_lanes([lane(ws, x) for ws, x in zip(lanes, xs)]))


def three_gated_mlp_lanes_b4():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn
    with torch.device("cuda"):
        mlps = [(nn.Linear(1536, 4096, bias=False), nn.Linear(1536, 4096, bias=False),
                 nn.Linear(4096, 1536, bias=False)) for _ in range(3)]
        for m in mlps:
            for p in m:
                p.bfloat16()
        x = torch.randn(4, 1536, dtype=torch.bfloat16)

    def lane(gate, up, down):
        def run():
            y = x
            for _ in range(2):
                y = down(nn.functional.silu(gate(y)) * up(y))
            return y
        return run

    return no_grad(fork_lanes([lane(*m) for m in mlps]))


def softmax_beside_projection_lanes():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        scores = torch.randn(8, 32, 512, dtype=torch.float16)
        projs = [[torch.nn.Linear(2560, 2560, dtype=torch.float16) for _ in range(4)]
                 for _ in range(2)]
        x = torch.randn(8, 2560, dtype=torch.float16)

    def softmaxes():
        y = scores
        for _ in range(8):
            y = torch.softmax(y * 0.125, dim=-1)
        return y

    def lane(layers):
        def run():
            y = x
            for p in layers:
                y = p(y)
            return y
        return run

    return no_grad(fork_lanes([softmaxes] + [lane(p) for p in projs]))


def four_layernorm_gelu_lanes_b16():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn
    with torch.device("cuda"):
        lanes = [nn.Sequential(nn.LayerNorm(1024), nn.Linear(1024, 4096), nn.GELU(),
                               nn.Linear(4096, 1024)).half().eval() for _ in range(4)]
        x = torch.randn(16, 1024, dtype=torch.float16)
    return no_grad(fork_lanes([lambda m=m: m(x) for m in lanes]))


def attention_lanes_beside_mlp_b2():
    import torch
    import torch.nn.functional as F
    from walk_parts import fork_lanes
    nn = torch.nn
    with torch.device("cuda"):
        caches = [(torch.randn(2, 8, 1024, 64, dtype=torch.float16),
                   torch.randn(2, 8, 1024, 64, dtype=torch.float16)) for _ in range(2)]
        q = torch.randn(2, 8, 1, 64, dtype=torch.float16)
        up = nn.Linear(2048, 8192).bfloat16()
        down = nn.Linear(8192, 2048).bfloat16()
        x = torch.randn(2, 2048, dtype=torch.bfloat16)

    def attention(k, v):
        def run():
            y = q
            for _ in range(4):
                y = F.scaled_dot_product_attention(y, k, v)
            return y
        return run

    def mlp():
        y = x
        for _ in range(3):
            y = down(F.silu(up(y)))
        return y

    return no_grad(fork_lanes([attention(k, v) for k, v in caches] + [mlp]))


def two_llama_1536_decodes():
    from walk_parts import corner, fork_join, hf_decoder_step
    two = hf_decoder_step("Llama", "bfloat16", 2, 1, **LLAMA_1536)
    eight = hf_decoder_step("Llama", "bfloat16", 8, 1, **LLAMA_1536)
    return fork_join(lambda: corner(two()), lambda: corner(eight()))


build = builder(131_45, {
    "iv_two_linear_lanes_3072_b2": two_linear_lanes_3072_b2,
    "iv_three_gated_mlp_lanes_b4": three_gated_mlp_lanes_b4,
    "iv_softmax_beside_projection_lanes": softmax_beside_projection_lanes,
    "iv_four_layernorm_gelu_lanes_b16": four_layernorm_gelu_lanes_b16,
    "iv_attention_lanes_beside_mlp_b2": attention_lanes_beside_mlp_b2,
    "iv_two_llama_1536_decodes": two_llama_1536_decodes,
})
