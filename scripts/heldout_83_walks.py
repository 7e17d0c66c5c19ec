"""Six walks written after 5b33a31 (no pricing change since batch 80), before any run: kinds
no earlier batch holds beside more static-cache decodes. On one stream: a ViT-shaped image
encoder at batch 4 (fp16, 224 x 224 images in 16 x 16 patches, 768 wide, 6 layers); a
Mistral-shaped decode at batch 8 over a 2048-token static cache holding 300 tokens (bf16, 1024
wide, 6 layers); a Phi-3-shaped decode at batch 1 over a 2048-token static cache holding 120
(bf16, 1536 wide, 4 layers). On several streams: a CLIP-like pair, a small ViT image tower
beside a Llama-shaped text tower over 32 tokens (fp16, 512 wide, 4 layers each); two replicas
of a Llama-shaped decode at batch 2, each over its own 2048-token static cache (bf16, 1024
wide, 4 layers). Not PyTorch: a CuPy program that subtracts each column's log-sum-exp from a
2048 x 512 f32 matrix six times (CuPy's max and sum reductions, exponentials and logarithms).

Static caches are 2048 tokens long: transformers 5.17 writes each step one position further
on, eager or replayed, and a validation runs ~800 steps (`heldout_82_walks.py`).

    python3 scripts/validate_all.py --out DIR --groups heldout83
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_82_walks import static_cache_decode  # noqa: E402
from walk_parts import LLAMA_SMALL  # noqa: E402
from walk_registry import builder  # noqa: E402


def vit_encoder(dtype, batch, **config):
    """A ViT-shaped image encoder's forward over `batch` random images (no head)."""
    import torch
    from walk_parts import hf_model
    model = hf_model("ViT", dtype, head="Model", **config)
    size = model.config.image_size
    pixels = torch.randn(batch, 3, size, size, device="cuda", dtype=getattr(torch, dtype))

    def step():
        with torch.no_grad():
            return model(pixel_values=pixels).last_hidden_state
    return step


def text_tower(dtype, batch, seq, **config):
    """A Llama-shaped text encoder's forward (the model without its head) over `batch`
    random sequences of `seq` tokens, under a causal 4-D mask as `walk_parts.hf_step` gives."""
    import torch
    from walk_parts import hf_model
    model = hf_model("Llama", dtype, head="Model", **config)
    ids = torch.randint(0, model.config.vocab_size, (batch, seq), device="cuda")
    mask = torch.ones(batch, 1, seq, seq, dtype=torch.bool, device="cuda").tril()

    def step():
        with torch.no_grad():
            return model(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state
    return step


def image_tower_beside_text_tower():
    from walk_parts import corner, fork_join
    image = vit_encoder("float16", 2, hidden_size=512, num_hidden_layers=4,
                        num_attention_heads=8, intermediate_size=2048)
    text = text_tower("float16", 2, 32, vocab_size=32000, hidden_size=512,
                      intermediate_size=1408, num_hidden_layers=4, num_attention_heads=8,
                      num_key_value_heads=8, max_position_embeddings=512)
    return fork_join(lambda: corner(image()), lambda: corner(text()))


def two_static_decode_replicas_b2():
    from walk_parts import corner, fork_join
    left = static_cache_decode("Llama", "bfloat16", 2, 2048, 96, **LLAMA_SMALL)
    right = static_cache_decode("Llama", "bfloat16", 2, 2048, 96, **LLAMA_SMALL)
    return fork_join(lambda: corner(left()), lambda: corner(right()))


def cupy_column_logsumexp():
    import cupy as cp
    x = cp.random.standard_normal((2048, 512), dtype=cp.float32)

    def step():
        h = x
        for _ in range(6):
            m = h.max(axis=0, keepdims=True)
            h = h - (cp.log(cp.exp(h - m).sum(axis=0, keepdims=True)) + m)
        return h
    return step


build = builder(131_83, {
    "lh_vit_768_encoder_b4_fp16": lambda: vit_encoder(
        "float16", 4, hidden_size=768, num_hidden_layers=6, num_attention_heads=12,
        intermediate_size=3072),
    "lh_mistral_1024_static_cache_decode_b8": lambda: static_cache_decode(
        "Mistral", "bfloat16", 8, 2048, 300, vocab_size=32000, hidden_size=1024,
        intermediate_size=3584, num_hidden_layers=6, num_attention_heads=16,
        num_key_value_heads=4, max_position_embeddings=4096),
    "lh_phi3_1536_static_cache_decode_b1": lambda: static_cache_decode(
        "Phi3", "bfloat16", 1, 2048, 120, vocab_size=32000, hidden_size=1536,
        intermediate_size=4096, num_hidden_layers=4, num_attention_heads=12,
        max_position_embeddings=4096, pad_token_id=0),
    "lh_image_tower_beside_text_tower": image_tower_beside_text_tower,
    "lh_two_static_decode_replicas_b2": two_static_decode_replicas_b2,
    "lh_cupy_column_logsumexp": (cupy_column_logsumexp, "cupy"),
})
