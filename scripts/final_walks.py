"""Two walks for `scripts/validate.py --walk-module`, written at the end of the session that
added the roofline stand-in choice and the memory sharing in `--summary`, and run once with
that version unchanged: a transformers architecture not used before (GPT-NeoX at decode batch
1) and a Llama-shaped prefill of 256 tokens at batch 2 (results: docs/validation-h200.md,
"Walks written last"). An OPT decoder was written with them and left out: its attention
does not take the prepared 4-D mask `validate.hf_step` passes.

    python3 scripts/validate.py --out DIR --walk-module scripts/final_walks.py \
        --walks neox_decode_b1,llama_prefill_2x256
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build(name):
    import torch
    import transformers
    from validate import hf_step
    torch.manual_seed(13)
    with torch.device("cuda"):
        if name == "neox_decode_b1":
            cfg = transformers.GPTNeoXConfig(
                hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                num_attention_heads=16, vocab_size=32000, max_position_embeddings=2048)
            model = transformers.GPTNeoXForCausalLM(cfg).to(torch.float16)
            b, s = 1, 1
        elif name == "llama_prefill_2x256":
            cfg = transformers.LlamaConfig(
                hidden_size=2048, intermediate_size=5632, num_hidden_layers=12,
                num_attention_heads=32, num_key_value_heads=4, vocab_size=32000,
                max_position_embeddings=2048)
            model = transformers.LlamaForCausalLM(cfg).to(torch.bfloat16)
            b, s = 2, 256
        else:
            raise KeyError(name)
    model.eval()
    return hf_step(torch, model, b, s), "torch"
