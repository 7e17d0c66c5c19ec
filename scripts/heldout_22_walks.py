"""Six walks written after held-out batch 21 ran (the model as of b2df299) and before any run
of them, of kinds an inference engine runs that the batches before did not hold: a
Qwen2-7B-shaped decode slice (bf16, batch 1, hidden 3584) and transformers OPT decode (fp16,
batch 4; an in-sample walk, `unmet_walks.py`, ran the shape at 16 layers); and on several
streams: a small Llama's 128-token prefill beside another Llama's decode at
batch 8 (chunked prefill beside decode), a ViT image encoder beside a Llama decode step (a
multimodal model's two towers), causal flash attention over 512 tokens beside a 512-token
bf16 MLP (attention and MLP of different micro-batches overlapped), and host-to-device copies
from pinned memory beside a Llama decode step (a KV cache prefetched from host memory).

    python3 scripts/validate_all.py --out DIR --groups heldout22
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner, decoder as _decoder  # noqa: E402

SMALL_LLAMA = dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=6,
                   num_attention_heads=16, num_key_value_heads=4, vocab_size=32000,
                   max_position_embeddings=2048)
LLAMA_2K = dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=6,
                num_attention_heads=32, num_key_value_heads=4, vocab_size=32000,
                max_position_embeddings=2048)


def prefill_beside_decode():
    from walk_parts import fork_join, hf_decoder_step
    prefill = hf_decoder_step("Llama", "bfloat16", 1, 128, **SMALL_LLAMA)
    decode = hf_decoder_step("Llama", "bfloat16", 8, 1, **LLAMA_2K)
    return fork_join(lambda: _corner(prefill()), lambda: _corner(decode()))


def vit_beside_decode():
    from walk_parts import fork_join, hf_decoder_step
    encoder = vit_encoder()
    decode = hf_decoder_step("Llama", "float16", 1, 1, **LLAMA_2K)
    return fork_join(lambda: _corner(encoder()), lambda: _corner(decode()))


def vit_encoder():
    """A ViT-B/16-shaped encoder in fp16 at batch 1 from PyTorch's own layers: the patch
    convolution, a class token, six `nn.TransformerEncoderLayer`s (eval: PyTorch's fused
    encoder path) over 197 tokens."""
    import torch
    with torch.device("cuda"):
        patch = torch.nn.Conv2d(3, 768, 16, stride=16).half().eval()
        cls = torch.randn(1, 1, 768, dtype=torch.float16)
        layers = [torch.nn.TransformerEncoderLayer(768, 12, 3072, batch_first=True,
                                                   norm_first=True).half().eval()
                  for _ in range(6)]
        pixels = torch.randn(1, 3, 224, 224, dtype=torch.float16)

    def run():
        with torch.no_grad():
            x = patch(pixels).flatten(2).transpose(1, 2)
            x = torch.cat([cls, x], dim=1)
            for layer in layers:
                x = layer(x)
            return x
    return run


def flash_prefill_beside_mlp_b512():
    import torch
    from walk_parts import attention_chain, fork_join, linear_chain, randn
    f = torch.nn.functional
    with torch.device("cuda"):
        q, k, v = (randn(1, 32, 512, 128, dtype=torch.bfloat16) for _ in range(3))
        mlp = [torch.nn.Linear(4096, 11008, bias=False).to(torch.bfloat16),
               torch.nn.Linear(11008, 4096, bias=False).to(torch.bfloat16)] * 2
        x = randn(512, 4096, dtype=torch.bfloat16)
    attention = attention_chain(q, k, v, 4, is_causal=True)
    return fork_join(lambda: _corner(attention()), lambda: _corner(linear_chain(mlp, x, f.silu)()))


def h2d_kv_beside_decode():
    import torch
    from walk_parts import fork_join, hf_decoder_step
    decode = hf_decoder_step("Llama", "bfloat16", 4, 1, **LLAMA_2K)
    # Four layers' keys and values for 4 sequences of 1024 positions, 4 heads of 64: 4 MiB each.
    host = [torch.randn(2, 4, 4, 1024, 64, dtype=torch.bfloat16).pin_memory() for _ in range(4)]
    with torch.device("cuda"):
        dev = [torch.empty_like(h, device="cuda") for h in host]

    def prefetch():
        for h, g in zip(host, dev):
            g.copy_(h, non_blocking=True)
        return dev[-1]
    return fork_join(lambda: _corner(prefetch()), lambda: _corner(decode()))


build = builder(122, {
    # OPT takes its learned positions from a 2-D mask (a 4-D one failed in its first run).
    "hx_opt_decode_b4": _decoder("OPT", "float16", 4, 1, mask_2d=True, hidden_size=2048,
                                 ffn_dim=8192, num_hidden_layers=8, num_attention_heads=32,
                                 word_embed_proj_dim=2048, max_position_embeddings=2048),
    "hx_qwen2_7b_slice_decode_b1": _decoder("Qwen2", "bfloat16", 1, 1, hidden_size=3584,
                                            intermediate_size=18944, num_hidden_layers=3,
                                            num_attention_heads=28, num_key_value_heads=4,
                                            max_position_embeddings=2048),
    "hx_prefill_beside_decode": prefill_beside_decode,
    "hx_vit_beside_decode": vit_beside_decode,
    "hx_flash_prefill_beside_mlp_b512": flash_prefill_beside_mlp_b512,
    "hx_h2d_kv_beside_decode": h2d_kv_beside_decode,
})
