"""Four walks written in session 54 after `--summary` came to sum what each kernel beside a
small kernel costs it (and before any run of them): a Qwen2-MoE decode at batch 2
(transformers, bf16, one stream); three lanes of six fp16 linear layers of 1536 over 8 tokens
with a GELU after each, each lane on a stream of its own; four lanes of four RMSNorm → bf16
linear 2048 blocks over 2 rows, each on a stream of its own; three lanes of decode attention
(SDPA over a 2048-position fp16 cache, batch 4, 16 heads) each followed by three fp16 linear
layers of 1024, each lane on a stream of its own.

    python3 scripts/validate_all.py --out DIR --groups heldout42
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import rms_norm  # noqa: E402
from walk_registry import builder  # noqa: E402


def qwen2_moe_decode_b2():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Qwen2Moe", "bfloat16", 2, 1, hidden_size=1024,
                           intermediate_size=2816, moe_intermediate_size=512,
                           shared_expert_intermediate_size=1024, num_experts=8,
                           num_experts_per_tok=2, num_hidden_layers=4, num_attention_heads=16,
                           num_key_value_heads=4, vocab_size=32000,
                           max_position_embeddings=2048, decoder_sparse_step=1,
                           mlp_only_layers=[], pad_token_id=0)


def three_gelu_lanes_1536_b8():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn
    with torch.device("cuda"):
        lanes = [nn.Sequential(*[nn.Sequential(nn.Linear(1536, 1536), nn.GELU())
                                 for _ in range(6)]).half() for _ in range(3)]
        x = torch.randn(8, 1536, dtype=torch.float16)
    run = fork_lanes(list(lanes))

    def step():
        with torch.no_grad():
            return run(x)
    return step


def four_rmsnorm_gemv_lanes_b2():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        lanes = [[(torch.rand(2048, dtype=torch.bfloat16) + 0.5,
                   torch.randn(2048, 2048, dtype=torch.bfloat16) / 45.0) for _ in range(4)]
                 for _ in range(4)]
        x = torch.randn(2, 2048, dtype=torch.bfloat16)

    def lane(blocks):
        def run(h):
            for w_norm, w in blocks:
                h = torch.nn.functional.linear(rms_norm(h, w_norm), w)
            return h
        return run

    run = fork_lanes([lane(b) for b in lanes])

    def step():
        with torch.no_grad():
            return run(x)
    return step


def three_attention_lanes_b4():
    import torch
    import torch.nn.functional as F
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        caches = [(torch.randn(4, 16, 2048, 64, dtype=torch.float16),
                   torch.randn(4, 16, 2048, 64, dtype=torch.float16)) for _ in range(3)]
        projs = [[torch.nn.Linear(1024, 1024, dtype=torch.float16) for _ in range(3)]
                 for _ in range(3)]
        q = torch.randn(4, 16, 1, 64, dtype=torch.float16)

    def lane(cache, layers):
        k, v = cache

        def run():
            h = F.scaled_dot_product_attention(q, k, v).reshape(4, 1024)
            for p in layers:
                h = p(h)
            return h
        return run

    run = fork_lanes([lane(c, p) for c, p in zip(caches, projs)])

    def step():
        with torch.no_grad():
            return run()
    return step


build = builder(131_42, {
    "is_qwen2_moe_decode_b2": qwen2_moe_decode_b2,
    "is_three_gelu_lanes_1536_b8": three_gelu_lanes_1536_b8,
    "is_four_rmsnorm_gemv_lanes_b2": four_rmsnorm_gemv_lanes_b2,
    "is_three_attention_lanes_b4": three_attention_lanes_b4,
})
