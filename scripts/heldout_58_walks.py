"""Six walks written after a7abc46 (`--summary` without the confinement; the wait for room
beside kernels that fill every SM and the small-kernel stretch at the load the others move
kept) and before any run: kinds the method has seen least. On one stream: a Granite-shaped
decode at batch 16 (bf16, 2560 wide, GQA 20/4). On several streams: a fused LayerNorm over
32 × 4096 fp16 beside two lanes of fp16 GEMVs 4096 → 4096; two chains of bf16 element-wise
kernels that take turns through events (each pass of one waits for the other's last), which
the GPU can only run one after another; multiplies over 4 × 4096 bf16 beside a prefill-sized
bf16 GEMM (256 × 4096 → 11008, a grid of many waves); tanh-GELU over 32 × 16384 fp16 beside
two lanes of bf16 GEMVs 2048 → 8192; embedding lookups of 64 rows from a 32000 × 2048 bf16
table beside a lane of bf16 linear layers 2048 → 5632 over 4 tokens.

    python3 scripts/validate_all.py --out DIR --groups heldout58
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import beside_linear_lanes, no_grad_step, repeated  # noqa: E402
from walk_registry import builder  # noqa: E402

GRANITE_2560 = dict(hidden_size=2560, intermediate_size=6912, num_hidden_layers=4,
                    num_attention_heads=20, num_key_value_heads=4, vocab_size=32000,
                    max_position_embeddings=2048)


def granite_2560_decode_b16():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Granite", "bfloat16", 16, 1, **GRANITE_2560)


def layernorm_beside_two_fp16_gemv_lanes():
    import torch
    with torch.device("cuda"):
        x = torch.randn(32, 4096, dtype=torch.float16)
        g = torch.ones(4096, dtype=torch.float16)
        b = torch.zeros(4096, dtype=torch.float16)
    norms = repeated(x, 6, lambda y: torch.nn.functional.layer_norm(y, (4096,), g, b))
    return beside_linear_lanes(norms, 2, 4096, 4096, 1, 4, torch.float16)


def chains_taking_turns():
    """Two streams forked from the current one; pass i of the second chain waits for pass i of
    the first, and pass i + 1 of the first for pass i of the second."""
    import torch
    with torch.device("cuda"):
        a0 = torch.randn(16, 8192, dtype=torch.bfloat16)
        b0 = torch.randn(16, 8192, dtype=torch.bfloat16)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()

    def run():
        main = torch.cuda.current_stream()
        s1.wait_stream(main)
        s2.wait_stream(main)
        a, b = a0, b0
        for _ in range(6):
            with torch.cuda.stream(s1):
                a = a * 0.5 + b
            s2.wait_stream(s1)
            with torch.cuda.stream(s2):
                b = torch.sigmoid(b - a)
            s1.wait_stream(s2)
        main.wait_stream(s1)
        main.wait_stream(s2)
        return a + b
    return no_grad_step(run)


def muls_beside_prefill_gemm():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.randn(4, 4096, dtype=torch.bfloat16)
        s = torch.randn(4, 4096, dtype=torch.bfloat16)
        h = torch.randn(256, 4096, dtype=torch.bfloat16)
        w = torch.randn(11008, 4096, dtype=torch.bfloat16) * 0.01
    muls = repeated(x, 10, lambda y: y * s)

    def gemms():
        y = None
        for _ in range(2):
            y = torch.nn.functional.linear(h, w)
        return y
    return no_grad_step(fork_lanes([muls, gemms]))


def gelu_tanh_beside_two_gemv_lanes():
    import torch
    with torch.device("cuda"):
        x = torch.randn(32, 16384, dtype=torch.float16)
    gelus = repeated(x, 6, lambda y: torch.nn.functional.gelu(y, approximate="tanh"))
    return beside_linear_lanes(gelus, 2, 2048, 8192, 1, 4, torch.bfloat16)


def embedding_lookups_beside_mlp_lane():
    import torch
    with torch.device("cuda"):
        table = torch.randn(32000, 2048, dtype=torch.bfloat16)
        ids = torch.randint(0, 32000, (8, 64))

    def lookups():
        y = None
        for row in ids:
            e = torch.nn.functional.embedding(row, table)
            y = e if y is None else y + e
        return y
    return beside_linear_lanes(lookups, 1, 2048, 5632, 4, 4, torch.bfloat16)


build = builder(131_58, {
    "ki_granite_2560_decode_b16": granite_2560_decode_b16,
    "ki_layernorm_beside_two_fp16_gemv_lanes": layernorm_beside_two_fp16_gemv_lanes,
    "ki_chains_taking_turns": chains_taking_turns,
    "ki_muls_beside_prefill_gemm": muls_beside_prefill_gemm,
    "ki_gelu_tanh_beside_two_gemv_lanes": gelu_tanh_beside_two_gemv_lanes,
    "ki_embedding_lookups_beside_mlp_lane": embedding_lookups_beside_mlp_lane,
})
