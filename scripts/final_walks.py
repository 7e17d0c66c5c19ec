"""Two walks for `scripts/validate.py --walk-module`, written at the end of the session that
added the roofline stand-in choice and the memory sharing in `--summary`, and run once with
that version unchanged: a transformers architecture not used before (GPT-NeoX at decode batch
1) and a Llama-shaped prefill of 256 tokens at batch 2 (results: docs/validation-h200.md,
"Walks written last"). An OPT decoder was written with them and left out: its attention
does not take the prepared 4-D mask `walk_parts.hf_step` passes.

    python3 scripts/validate.py --out DIR --walk-module scripts/final_walks.py \
        --walks neox_decode_b1,llama_prefill_2x256
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build(name):
    import torch
    from walk_parts import LLAMA, hf_decoder_step
    torch.manual_seed(13)
    if name == "neox_decode_b1":
        return hf_decoder_step("GPTNeoX", "float16", 1, 1, hidden_size=2048,
                               intermediate_size=8192, num_hidden_layers=16,
                               num_attention_heads=16, vocab_size=32000,
                               max_position_embeddings=2048), "torch"
    if name == "llama_prefill_2x256":
        return hf_decoder_step("Llama", "bfloat16", 2, 256,
                               **dict(LLAMA, num_hidden_layers=12)), "torch"
    raise KeyError(name)
