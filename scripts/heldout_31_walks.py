"""Four walks written after held-out batch 30's run and the diagnostics that followed it (no
change to either price since batch 30 was written), before any run of them: a Falcon-shaped
decode at batch 16 in its first architecture (multi-query attention, attention and MLP in
parallel) on one stream; a decode at batch 4 beside copies of KV-cache blocks out to
page-locked host memory (offloading); a decode at batch 8 beside the previous step's top-p
post-processing (repetition penalty by gather and scatter, a sort over 32 000 words, cumsum,
masking); a text encoder and a vision encoder (PyTorch's `nn.TransformerEncoder`, bf16), each
on a stream of its own, as a dual-encoder model embeds both.

    python3 scripts/validate_all.py --out DIR --groups heldout31
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner  # noqa: E402
from walk_parts import decoder as _decoder  # noqa: E402


def decode_beside_kv_offload():
    import torch
    from walk_parts import fork_join, hf_decoder_step
    decode = hf_decoder_step("Llama", "bfloat16", 4, 1, vocab_size=32000, hidden_size=2048,
                             intermediate_size=5632, num_hidden_layers=4,
                             num_attention_heads=16, num_key_value_heads=4,
                             max_position_embeddings=2048)
    with torch.device("cuda"):
        blocks = torch.randn(8, 16, 4, 64, 128, dtype=torch.bfloat16)
    host = [torch.empty(16, 4, 64, 128, dtype=torch.bfloat16).pin_memory() for _ in range(8)]

    def offload():
        for i in range(8):
            host[i].copy_(blocks[i], non_blocking=True)
        return blocks[0]
    return fork_join(lambda: _corner(decode()), lambda: _corner(offload()))


def top_p_beside_decode():
    import torch
    from walk_parts import fork_join, hf_decoder_step
    decode = hf_decoder_step("Qwen2", "bfloat16", 8, 1, vocab_size=32000, hidden_size=1536,
                             intermediate_size=8960, num_hidden_layers=4,
                             num_attention_heads=12, num_key_value_heads=2,
                             max_position_embeddings=2048)
    with torch.device("cuda"):
        logits = torch.randn(8, 32000)
        history = torch.randint(0, 32000, (8, 64))

    def post():
        seen = logits.gather(1, history)
        penalised = logits.scatter(1, history, torch.where(seen > 0, seen / 1.2, seen * 1.2))
        ranked, order = torch.sort(penalised / 0.7, dim=-1, descending=True)
        kept = ranked.softmax(-1).cumsum(-1) <= 0.9
        probs = ranked.masked_fill(~kept, float("-inf")).softmax(-1)
        return probs * order[:, :1].float()
    return fork_join(lambda: _corner(decode()), lambda: _corner(post()))


def text_beside_vision_encoders():
    import torch
    from walk_parts import fork_join

    def encoder(width, heads, tokens):
        with torch.device("cuda"):
            layer = torch.nn.TransformerEncoderLayer(width, heads, 4 * width, batch_first=True,
                                                     norm_first=True, activation="gelu")
            enc = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
            enc = enc.bfloat16().eval()
            x = torch.randn(4, tokens, width, dtype=torch.bfloat16)

        def run():
            with torch.no_grad():
                return enc(x)
        return run
    text, vision = encoder(512, 8, 77), encoder(768, 12, 197)
    return fork_join(lambda: _corner(text()), lambda: _corner(vision()))


build = builder(131_31, {
    "ig_falcon_mqa_decode_b16": _decoder("Falcon", "float16", 16, 1, hidden_size=2048,
                                         num_hidden_layers=8, num_attention_heads=32,
                                         multi_query=True, parallel_attn=True,
                                         new_decoder_architecture=False, bias=False),
    "ig_decode_beside_kv_offload": decode_beside_kv_offload,
    "ig_top_p_beside_decode": top_p_beside_decode,
    "ig_text_beside_vision_encoders": text_beside_vision_encoders,
})
