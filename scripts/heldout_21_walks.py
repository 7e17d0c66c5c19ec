"""Eight walks written after held-out batch 20 ran (the model as of e3b89f9) and before any run
of them, of kinds the batches before did not hold: transformers Mistral decode (bf16, batch 8),
Gemma prefill (bf16, 64 tokens, one key/value head of 256), Granite decode (fp16, batch 1) and
StableLM prefill (fp16, 2 x 16 tokens); and on several streams: a small draft model's decode
step beside a larger target model's (two transformers Llamas, as speculative decoding runs
them), bf16 MLPs of 32 tokens on two streams, bf16 RMS norms beside a 256-token bf16 GEMM
chain, and three bf16 expert MLPs of 16 tokens each on three streams.

    python3 scripts/validate_all.py --out DIR --groups heldout21
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner, decoder as _decoder  # noqa: E402
from walk_parts import linear_chain as _linear_chain  # noqa: E402


def _mlp(d, hidden, dtype):
    """An up and a down projection without bias, made on the current device in `dtype`."""
    import torch
    return [torch.nn.Linear(d, hidden, bias=False).to(dtype),
            torch.nn.Linear(hidden, d, bias=False).to(dtype)]


def draft_beside_target():
    from walk_parts import fork_join, hf_decoder_step
    draft = hf_decoder_step("Llama", "bfloat16", 1, 1, hidden_size=1024, intermediate_size=2816,
                            num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=4,
                            vocab_size=32000, max_position_embeddings=2048)
    target = hf_decoder_step("Llama", "bfloat16", 1, 1, hidden_size=2048,
                             intermediate_size=5632, num_hidden_layers=8,
                             num_attention_heads=32, num_key_value_heads=4, vocab_size=32000,
                             max_position_embeddings=2048)
    return fork_join(lambda: _corner(draft()), lambda: _corner(target()))


def bf16_mlp_pair_b32():
    import torch
    from walk_parts import fork_join, randn
    f = torch.nn.functional
    with torch.device("cuda"):
        a = _mlp(4096, 11008, torch.bfloat16) * 2
        b = _mlp(4096, 11008, torch.bfloat16) * 2
        xa, xb = (randn(32, 4096, dtype=torch.bfloat16) for _ in range(2))
    return fork_join(lambda: _corner(_linear_chain(a, xa, f.silu)()),
                     lambda: _corner(_linear_chain(b, xb, f.silu)()))


def rmsnorm_beside_bf16_gemm_b256():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        norms = [torch.nn.RMSNorm(4096).to(torch.bfloat16) for _ in range(4)]
        rows = randn(8192, 4096, dtype=torch.bfloat16)
        a = randn(256, 4096, dtype=torch.bfloat16)
        w = [randn(4096, 4096, dtype=torch.bfloat16) for _ in range(4)]
    lns = chain(lambda i, y: norms[i](rows if y is None else y), 4)
    gemms = chain(lambda i, y: torch.relu((a if y is None else y) @ w[i]), 4)
    return fork_join(lambda: _corner(lns()), lambda: _corner(gemms()))


def three_expert_mlps_b16():
    import torch
    from walk_parts import fork_join, randn
    f = torch.nn.functional
    with torch.device("cuda"):
        experts = [_mlp(2048, 5632, torch.bfloat16) for _ in range(3)]
        xs = [randn(16, 2048, dtype=torch.bfloat16) for _ in range(3)]
    sides = [_linear_chain(e, x, f.silu) for e, x in zip(experts, xs)]
    return fork_join(lambda: _corner(sides[0]()),
                     fork_join(lambda: _corner(sides[1]()), lambda: _corner(sides[2]())))


build = builder(121, {
    "hw_mistral_decode_b8": _decoder("Mistral", "bfloat16", 8, 1, hidden_size=2048,
                                     intermediate_size=5632, num_hidden_layers=8,
                                     num_attention_heads=16, num_key_value_heads=4,
                                     max_position_embeddings=2048),
    "hw_gemma_prefill_64": _decoder("Gemma", "bfloat16", 1, 64, hidden_size=2048,
                                    intermediate_size=8192, num_hidden_layers=6,
                                    num_attention_heads=8, num_key_value_heads=1, head_dim=256,
                                    max_position_embeddings=2048),
    "hw_granite_decode_b1": _decoder("Granite", "float16", 1, 1, hidden_size=2048,
                                     intermediate_size=5632, num_hidden_layers=10,
                                     num_attention_heads=16, num_key_value_heads=4,
                                     max_position_embeddings=2048),
    "hw_stablelm_prefill_16": _decoder("StableLm", "float16", 2, 16, hidden_size=2048,
                                       intermediate_size=5632, num_hidden_layers=8,
                                       num_attention_heads=16, num_key_value_heads=16,
                                       max_position_embeddings=2048),
    "hw_draft_beside_target": draft_beside_target,
    "hw_bf16_mlp_pair_b32": bf16_mlp_pair_b32,
    "hw_rmsnorm_beside_bf16_gemm_b256": rmsnorm_beside_bf16_gemm_b256,
    "hw_three_expert_mlps_b16": three_expert_mlps_b16,
})
