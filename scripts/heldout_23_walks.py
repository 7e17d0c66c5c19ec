"""Six walks written after the small-kernel stretch (09b4f6c: a small kernel that waits on its
loads runs slower beside other streams' memory load, by what small adds measured beside a
stream's GEMMs) and before any run of them, all on several streams, of kinds the batches
before did not hold: two different decoders' decode steps side by side (a Qwen2 and a Llama
at batch 4), a Mistral 64-token prefill beside a Mistral decode at batch 16, GPT-2 decodes
of two requests' batches side by side, three small Llama decodes on three streams (three
models served by one process), a bf16 decode beside a pipeline of fp16 element-wise image
post-processing, and an fp16 decode beside an embedding lookup and LayerNorms of a retrieval
encoder's batch.

    python3 scripts/validate_all.py --out DIR --groups heldout23
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import LLAMA_SMALL as SMALL, LLAMA_MID as MID  # noqa: E402
from walk_parts import corner as _corner  # noqa: E402


def qwen2_beside_llama_b4():
    from walk_parts import fork_join, hf_decoder_step
    qwen = hf_decoder_step("Qwen2", "bfloat16", 4, 1, **MID)
    llama = hf_decoder_step("Llama", "bfloat16", 4, 1, **MID)
    return fork_join(lambda: _corner(qwen()), lambda: _corner(llama()))


def mistral_prefill_beside_decode():
    from walk_parts import fork_join, hf_decoder_step
    prefill = hf_decoder_step("Mistral", "bfloat16", 1, 64, **SMALL)
    decode = hf_decoder_step("Mistral", "bfloat16", 16, 1, **MID)
    return fork_join(lambda: _corner(prefill()), lambda: _corner(decode()))


def gpt2_two_batches():
    from walk_parts import fork_join, hf_decoder_step
    cfg = dict(n_embd=1024, n_layer=8, n_head=16, vocab_size=32000, n_positions=1024)
    a = hf_decoder_step("GPT2", "float16", 2, 1, "LMHeadModel", **cfg)
    b = hf_decoder_step("GPT2", "float16", 8, 1, "LMHeadModel", **cfg)
    return fork_join(lambda: _corner(a()), lambda: _corner(b()))


def three_small_decodes():
    from walk_parts import fork_lanes, hf_decoder_step
    steps = [hf_decoder_step("Llama", "bfloat16", b, 1, **SMALL) for b in (1, 2, 4)]
    return fork_lanes(steps)


def decode_beside_image_post():
    import torch
    from walk_parts import fork_join, hf_decoder_step
    decode = hf_decoder_step("Llama", "bfloat16", 2, 1, **MID)
    img = torch.rand(4, 3, 224, 224, device="cuda", dtype=torch.float16)
    mean = torch.tensor([0.48, 0.46, 0.41], device="cuda", dtype=torch.float16).view(1, 3, 1, 1)
    std = torch.tensor([0.27, 0.26, 0.28], device="cuda", dtype=torch.float16).view(1, 3, 1, 1)

    def post():
        x = img
        for _ in range(12):
            x = ((x - mean) / std).clamp(-2.0, 2.0)
            x = torch.nn.functional.avg_pool2d(x, 3, 1, 1)
            x = x * std + mean
        return x
    return fork_join(lambda: _corner(decode()), lambda: _corner(post()))


def decode_beside_retrieval_encoder():
    import torch
    from walk_parts import fork_join, hf_decoder_step
    decode = hf_decoder_step("Llama", "float16", 4, 1, **MID)
    table = torch.nn.Embedding(50000, 768).cuda().half()
    norms = [torch.nn.LayerNorm(768).cuda().half() for _ in range(6)]
    ids = torch.randint(0, 50000, (16, 128), device="cuda")

    def encode():
        with torch.no_grad():
            x = table(ids)
            for n in norms:
                x = torch.nn.functional.gelu(n(x)) + x
            return x.mean(1)
    return fork_join(lambda: _corner(decode()), lambda: _corner(encode()))


build = builder(123, {
    "hy_qwen2_beside_llama_b4": qwen2_beside_llama_b4,
    "hy_mistral_prefill_beside_decode": mistral_prefill_beside_decode,
    "hy_gpt2_two_batches": gpt2_two_batches,
    "hy_three_small_decodes": three_small_decodes,
    "hy_decode_beside_image_post": decode_beside_image_post,
    "hy_decode_beside_retrieval_encoder": decode_beside_retrieval_encoder,
})
