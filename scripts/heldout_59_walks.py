"""Six walks written after a5922cb (`--summary` as at a7abc46; holders keeping their pace
tried offline and not kept) and before any run: a second test of the version batch 58 ran.
On one stream: a Starcoder2-shaped decode at batch 4 (bf16, 3072 wide, GQA 24/2). On several
streams: decode attention (SDPA, 4 × 32 heads of 128 over 1024 keys, bf16) beside a lane of
bf16 GEMVs 4096 → 4096; a written-out RMSNorm over 64 × 2048 bf16 beside a prefill-sized
bf16 GEMM (512 × 2048 → 5632); greedy and top-k sampling over 4 × 32000 fp32 logits beside
the output projection (4 tokens, 2048 → 32000 bf16); three lanes of small fp16 MLPs
(8 × 1024 → 4096 → 1024, GELU); a softmax over 8 × 16 × 1024 fp32 attention scores beside
two lanes of bf16 GEMVs 1024 → 4096.

    python3 scripts/validate_all.py --out DIR --groups heldout59
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import beside_linear_lanes, fork_lanes, no_grad_step, repeated  # noqa: E402
from walk_registry import builder  # noqa: E402

STARCODER2_3072 = dict(hidden_size=3072, intermediate_size=12288, num_hidden_layers=4,
                       num_attention_heads=24, num_key_value_heads=2, vocab_size=32000,
                       max_position_embeddings=2048)


def starcoder2_3072_decode_b4():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Starcoder2", "bfloat16", 4, 1, **STARCODER2_3072)


def decode_attention_beside_gemv_lane():
    import torch
    from walk_parts import attention_chain
    with torch.device("cuda"):
        q = torch.randn(4, 32, 1, 128, dtype=torch.bfloat16)
        k = torch.randn(4, 32, 1024, 128, dtype=torch.bfloat16)
        v = torch.randn(4, 32, 1024, 128, dtype=torch.bfloat16)
    return beside_linear_lanes(attention_chain(q, k, v, 6), 1, 4096, 4096, 1, 4,
                               torch.bfloat16)


def rmsnorm_beside_prefill_gemm():
    import torch
    from walk_parts import linear_lane, rms_norm
    with torch.device("cuda"):
        x = torch.randn(64, 2048, dtype=torch.bfloat16)
        g = torch.ones(2048, dtype=torch.bfloat16)
    norms = repeated(x, 6, lambda y: rms_norm(y, g))
    return no_grad_step(fork_lanes([norms, linear_lane(2048, 5632, 512, 2, torch.bfloat16)]))


def sampling_beside_output_projection():
    import torch
    with torch.device("cuda"):
        logits = torch.randn(4, 32000, dtype=torch.float32)

    def sample():
        greedy = logits.argmax(dim=-1)
        top = torch.topk(logits, 50, dim=-1)
        probs = torch.softmax(top.values / 0.8, dim=-1)
        return probs.sum(-1) + greedy.float() + top.indices[:, :1].float().squeeze(-1)
    return beside_linear_lanes(sample, 1, 2048, 32000, 4, 1, torch.bfloat16)


def three_small_mlp_lanes():
    import torch
    f = torch.nn.functional
    lanes = []
    for _ in range(3):
        with torch.device("cuda"):
            x = torch.randn(8, 1024, dtype=torch.float16)
            up = torch.randn(4096, 1024, dtype=torch.float16) * 0.02
            down = torch.randn(1024, 4096, dtype=torch.float16) * 0.02

        def mlp(x=x, up=up, down=down):
            y = x
            for _ in range(3):
                y = f.linear(f.gelu(f.linear(y, up)), down)
            return y
        lanes.append(mlp)
    return no_grad_step(fork_lanes(lanes))


def score_softmax_beside_two_gemv_lanes():
    import torch
    with torch.device("cuda"):
        scores = torch.randn(8, 16, 1024, dtype=torch.float32)
    softmaxes = repeated(scores, 6, lambda y: torch.softmax(y * 0.125, dim=-1))
    return beside_linear_lanes(softmaxes, 2, 1024, 4096, 1, 4, torch.bfloat16)


build = builder(131_59, {
    "kj_starcoder2_3072_decode_b4": starcoder2_3072_decode_b4,
    "kj_decode_attention_beside_gemv_lane": decode_attention_beside_gemv_lane,
    "kj_rmsnorm_beside_prefill_gemm": rmsnorm_beside_prefill_gemm,
    "kj_sampling_beside_output_projection": sampling_beside_output_projection,
    "kj_three_small_mlp_lanes": three_small_mlp_lanes,
    "kj_score_softmax_beside_two_gemv_lanes": score_softmax_beside_two_gemv_lanes,
})
