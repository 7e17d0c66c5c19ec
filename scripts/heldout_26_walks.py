"""Four walks written after held-out batch 25 and the paced reads of whole grids (tried, not
kept), before any run of them: an OLMo-2-shaped decode at batch 4 on one stream, two
Mistral-shaped decodes at batch 2 side by side, a chain of RMSNorms beside a chain of bf16
GEMVs, and a sampling step (temperature, softmax, top-k) beside a bf16 prefill MLP of 256
tokens.

    python3 scripts/validate_all.py --out DIR --groups heldout26
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner  # noqa: E402
from walk_parts import decoder as _decoder  # noqa: E402

MISTRAL = dict(hidden_size=1536, intermediate_size=4096, num_hidden_layers=6,
               num_attention_heads=12, num_key_value_heads=4, max_position_embeddings=2048)


def two_mistral_decodes_b2():
    from walk_parts import fork_join, hf_decoder_step
    a = hf_decoder_step("Mistral", "bfloat16", 2, 1, vocab_size=32000, **MISTRAL)
    b = hf_decoder_step("Mistral", "bfloat16", 2, 1, vocab_size=32000, **MISTRAL)
    return fork_join(lambda: _corner(a()), lambda: _corner(b()))


def rmsnorms_beside_gemvs():
    import torch
    from walk_parts import fork_join, linear_chain
    f = torch.nn.functional
    with torch.device("cuda"):
        x = torch.randn(2048, 2048, dtype=torch.bfloat16)
        w = torch.randn(2048, dtype=torch.bfloat16)
        layers = [torch.nn.Linear(3072, 3072, bias=False).bfloat16() for _ in range(10)]
        v = torch.randn(1, 3072, dtype=torch.bfloat16)
    gemvs = linear_chain(layers, v, f.gelu)

    def norms():
        with torch.no_grad():
            y = x
            for _ in range(10):
                y = f.rms_norm(y, (2048,), w) * 1.01
            return y
    return fork_join(lambda: _corner(norms()), lambda: _corner(gemvs()))


def sampling_beside_prefill_mlp():
    import torch
    from walk_parts import fork_join
    f = torch.nn.functional
    with torch.device("cuda"):
        x = torch.randn(256, 2048, dtype=torch.bfloat16)
        up = torch.nn.Linear(2048, 5632, bias=False).bfloat16()
        down = torch.nn.Linear(5632, 2048, bias=False).bfloat16()
        logits = torch.randn(4, 50000, dtype=torch.float32)

    def mlp():
        with torch.no_grad():
            y = x
            for _ in range(4):
                y = down(f.silu(up(y)))
            return y

    def sample():
        p = (logits / 0.7).softmax(-1)
        top, idx = torch.topk(p, 40, dim=-1)
        return (top / top.sum(-1, keepdim=True)) * idx.float()
    return fork_join(lambda: _corner(mlp()), lambda: _corner(sample()))


build = builder(126_26, {
    "ib_olmo2_decode_b4": _decoder("Olmo2", "bfloat16", 4, 1, hidden_size=2048,
                                   intermediate_size=5632, num_hidden_layers=8,
                                   num_attention_heads=16, num_key_value_heads=16,
                                   max_position_embeddings=2048),
    "ib_two_mistral_decodes_b2": two_mistral_decodes_b2,
    "ib_rmsnorms_beside_gemvs": rmsnorms_beside_gemvs,
    "ib_sampling_beside_prefill_mlp": sampling_beside_prefill_mlp,
})
