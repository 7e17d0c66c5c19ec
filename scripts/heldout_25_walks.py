"""Four walks written after the small kernels' curve gained its point beside small kernels
(`small_pair`) and the replay of walks with branches began to run after eight launches, and
before any run of them, all on several streams: two GPT-2 decodes at batch 1 side by side, a
fp16 prefill attention beside a LayerNorm-GELU chain, a sampling step (softmax and top-k over a
32000-token vocabulary) beside a Llama decode at batch 8, and fp16 convolution blocks beside a
chain of GEMVs.

    python3 scripts/validate_all.py --out DIR --groups heldout25
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import LLAMA_MID as MID  # noqa: E402
from walk_parts import corner as _corner  # noqa: E402


def two_gpt2_decodes_b1():
    from walk_parts import fork_join, hf_decoder_step
    cfg = dict(n_embd=768, n_layer=6, n_head=12, vocab_size=32000, n_positions=1024)
    a = hf_decoder_step("GPT2", "float16", 1, 1, "LMHeadModel", **cfg)
    b = hf_decoder_step("GPT2", "float16", 1, 1, "LMHeadModel", **cfg)
    return fork_join(lambda: _corner(a()), lambda: _corner(b()))


def prefill_attention_beside_norms():
    import torch
    from walk_parts import attention_chain, fork_join, randn
    f = torch.nn.functional
    with torch.device("cuda"):
        q, k, v = (randn(1, 8, 1024, 128) for _ in range(3))
        x = randn(4096, 1024)
        norm = torch.nn.LayerNorm(1024).cuda().half()
    attn = attention_chain(q, k, v, 6, is_causal=True)

    def norms():
        with torch.no_grad():
            y = x
            for _ in range(8):
                y = f.gelu(norm(y))
            return y
    return fork_join(lambda: _corner(attn()), lambda: _corner(norms()))


def sampling_beside_decode_b8():
    import torch
    from walk_parts import fork_join, hf_decoder_step
    decode = hf_decoder_step("Llama", "bfloat16", 8, 1, **MID)
    logits = torch.randn(8, 32000, device="cuda", dtype=torch.float32)

    def sample():
        p = (logits / 0.8).softmax(-1)
        top, idx = torch.topk(p, 50, dim=-1)
        return (top / top.sum(-1, keepdim=True)) * idx.float()
    return fork_join(lambda: _corner(decode()), lambda: _corner(sample()))


def conv_blocks_beside_gemvs():
    import torch
    from walk_parts import fork_join, linear_chain
    f = torch.nn.functional
    with torch.device("cuda"):
        convs = [torch.nn.Conv2d(64, 64, 3, padding=1).half() for _ in range(6)]
        img = torch.randn(1, 64, 56, 56, dtype=torch.float16)
        layers = [torch.nn.Linear(4096, 4096, bias=False).half() for _ in range(8)]
        x = torch.randn(1, 4096, dtype=torch.float16)
    gemvs = linear_chain(layers, x, f.silu)

    def blocks():
        with torch.no_grad():
            y = img
            for c in convs:
                y = f.relu(c(y)) + y
            return y
    return fork_join(lambda: _corner(blocks()), lambda: _corner(gemvs()))


build = builder(125_25, {
    "ia_two_gpt2_decodes_b1": two_gpt2_decodes_b1,
    "ia_prefill_attention_beside_norms": prefill_attention_beside_norms,
    "ia_sampling_beside_decode_b8": sampling_beside_decode_b8,
    "ia_conv_blocks_beside_gemvs": conv_blocks_beside_gemvs,
})
