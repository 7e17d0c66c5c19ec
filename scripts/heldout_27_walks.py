"""Four walks written after held-out batch 26 and the change that lays each measured stretch
on the whole node (`--summary`), before any run of them: a Llama-shaped decode at batch 8 with
grouped-query attention on one stream, two Qwen3-shaped decodes of different widths side by
side, LayerNorm + GELU passes over 4096 x 1024 fp16 beside a chain of fp16 GEMVs at batch 4,
and three lanes: rotary embedding and KV-cache writes, an MLP at batch 8, and a softmax over a
vocabulary in f32.

    python3 scripts/validate_all.py --out DIR --groups heldout27
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner  # noqa: E402
from walk_parts import decoder as _decoder  # noqa: E402


def two_qwen3_decodes():
    from walk_parts import fork_join, hf_decoder_step
    small = hf_decoder_step("Qwen3", "bfloat16", 1, 1, vocab_size=32000, hidden_size=1024,
                            intermediate_size=3072, num_hidden_layers=8, num_attention_heads=16,
                            num_key_value_heads=8, head_dim=64, max_position_embeddings=2048)
    wide = hf_decoder_step("Qwen3", "bfloat16", 1, 1, vocab_size=32000, hidden_size=2048,
                           intermediate_size=6144, num_hidden_layers=4, num_attention_heads=16,
                           num_key_value_heads=8, head_dim=128, max_position_embeddings=2048)
    return fork_join(lambda: _corner(small()), lambda: _corner(wide()))


def layernorm_gelu_beside_gemvs():
    import torch
    from walk_parts import fork_join, linear_chain
    f = torch.nn.functional
    with torch.device("cuda"):
        x = torch.randn(4096, 1024, dtype=torch.float16)
        w = torch.randn(1024, dtype=torch.float16)
        b = torch.randn(1024, dtype=torch.float16)
        layers = [torch.nn.Linear(4096, 4096, bias=False).half() for _ in range(8)]
        v = torch.randn(4, 4096, dtype=torch.float16)
    gemvs = linear_chain(layers, v, f.silu)

    def norms():
        with torch.no_grad():
            y = x
            for _ in range(8):
                y = f.gelu(f.layer_norm(y, (1024,), w, b))
            return y
    return fork_join(lambda: _corner(norms()), lambda: _corner(gemvs()))


def rope_kv_beside_mlp_and_softmax():
    import torch
    from walk_parts import fork_lanes
    f = torch.nn.functional
    batch, heads, dim, cache = 8, 16, 128, 2048
    with torch.device("cuda"):
        q = torch.randn(batch, heads, 1, dim, dtype=torch.bfloat16)
        k = torch.randn(batch, heads, 1, dim, dtype=torch.bfloat16)
        cos = torch.randn(1, 1, 1, dim, dtype=torch.bfloat16)
        sin = torch.randn(1, 1, 1, dim, dtype=torch.bfloat16)
        k_cache = torch.zeros(batch, heads, cache, dim, dtype=torch.bfloat16)
        pos = torch.tensor([100], dtype=torch.long)
        x = torch.randn(batch, 2048, dtype=torch.bfloat16)
        up = torch.nn.Linear(2048, 5632, bias=False).bfloat16()
        down = torch.nn.Linear(5632, 2048, bias=False).bfloat16()
        logits = torch.randn(batch, 32000, dtype=torch.float32)

    def rotate(t):
        a, b = t[..., : dim // 2], t[..., dim // 2:]
        return torch.cat((-b, a), dim=-1)

    def rope_kv():
        out = q
        for _ in range(6):
            qr = q * cos + rotate(q) * sin
            kr = k * cos + rotate(k) * sin
            k_cache.index_copy_(2, pos, kr)
            out = out + qr
        return out

    def mlp():
        with torch.no_grad():
            y = x
            for _ in range(3):
                y = down(f.silu(up(y)))
            return y

    def softmax():
        p = logits
        for _ in range(3):
            p = (p / 0.8).softmax(-1)
        return p
    return fork_lanes([rope_kv, mlp, softmax])


build = builder(127_27, {
    "ic_llama_decode_b8_gqa": _decoder("Llama", "bfloat16", 8, 1, hidden_size=3072,
                                       intermediate_size=8192, num_hidden_layers=6,
                                       num_attention_heads=24, num_key_value_heads=8,
                                       max_position_embeddings=2048),
    "ic_two_qwen3_decodes": two_qwen3_decodes,
    "ic_layernorm_gelu_beside_gemvs": layernorm_gelu_beside_gemvs,
    "ic_rope_kv_beside_mlp_and_softmax": rope_kv_beside_mlp_and_softmax,
})
