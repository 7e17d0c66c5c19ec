"""Four walks written after held-out batch 29 and the warning for one stream of f32 FMA GEMMs
beside other streams, before any run of them: a Phi-shaped decode at batch 1 on one stream,
a decode at batch 4 beside device-to-device copies of KV-cache blocks, three requests'
sampling (temperature, softmax over 50 000 words, top-k) each on a lane of its own, and a
text-to-image block's cross-attention (1024 queries over 77 keys) beside its feed-forward at
1024 tokens, bf16.

    python3 scripts/validate_all.py --out DIR --groups heldout30
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner  # noqa: E402
from walk_parts import decoder as _decoder  # noqa: E402


def decode_beside_kv_block_copies():
    import torch
    from walk_parts import fork_join, hf_decoder_step
    decode = hf_decoder_step("Llama", "bfloat16", 4, 1, vocab_size=32000, hidden_size=2048,
                             intermediate_size=5632, num_hidden_layers=4,
                             num_attention_heads=16, num_key_value_heads=4,
                             max_position_embeddings=2048)
    with torch.device("cuda"):
        pool = torch.randn(64, 16, 8, 128, 128, dtype=torch.bfloat16)
        dst = torch.empty(8, 16, 8, 128, 128, dtype=torch.bfloat16)

    def copies():
        for i in range(8):
            dst[i].copy_(pool[i * 7 + 3])
        return dst
    return fork_join(lambda: _corner(decode()), lambda: _corner(copies()))


def three_sampling_lanes():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        logits = [torch.randn(2, 50000, dtype=torch.float32) for _ in range(3)]

    def sample(k):
        def run():
            p = (logits[k] / 0.8).softmax(-1)
            top, idx = torch.topk(p, 50, dim=-1)
            return (top / top.sum(-1, keepdim=True)) * idx.float()
        return run
    return fork_lanes([sample(k) for k in range(3)])


def cross_attention_beside_ffn():
    import torch
    from walk_parts import fork_join
    f = torch.nn.functional
    with torch.device("cuda"):
        x = torch.randn(1, 1024, 640, dtype=torch.bfloat16)
        ctx = torch.randn(1, 77, 768, dtype=torch.bfloat16)
        q = torch.nn.Linear(640, 640, bias=False).bfloat16()
        k = torch.nn.Linear(768, 640, bias=False).bfloat16()
        v = torch.nn.Linear(768, 640, bias=False).bfloat16()
        o = torch.nn.Linear(640, 640).bfloat16()
        up = torch.nn.Linear(640, 2560 * 2).bfloat16()
        down = torch.nn.Linear(2560, 640).bfloat16()

    def attention():
        with torch.no_grad():
            y = x
            for _ in range(2):
                h = lambda t, n: t.view(1, n, 10, 64).transpose(1, 2)  # noqa: E731
                a = f.scaled_dot_product_attention(h(q(y), 1024), h(k(ctx), 77), h(v(ctx), 77))
                y = o(a.transpose(1, 2).reshape(1, 1024, 640)) + y
            return y

    def ffn():
        with torch.no_grad():
            y = x
            for _ in range(2):
                a, g = up(y).chunk(2, dim=-1)
                y = down(a * f.gelu(g)) + y
            return y
    return fork_join(lambda: _corner(attention()), lambda: _corner(ffn()))


build = builder(130_30, {
    "if_phi_decode_b1": _decoder("Phi", "bfloat16", 1, 1, hidden_size=2048,
                                 intermediate_size=8192, num_hidden_layers=8,
                                 num_attention_heads=32, max_position_embeddings=2048),
    "if_decode_beside_kv_block_copies": decode_beside_kv_block_copies,
    "if_three_sampling_lanes": three_sampling_lanes,
    "if_cross_attention_beside_ffn": cross_attention_beside_ffn,
})
