"""Six walks written after fabd72a (no pricing change since batch 80), before any run: decode
steps over a transformers `StaticCache`, the cache that users capture in graphs (a fixed-size
KV cache written in place at the step's position), which no earlier batch holds. On one stream:
a Llama-shaped decode at batch 1 over a 1024-token static cache holding 200 tokens (bf16, 1024
wide, 4 layers); a Qwen2-shaped decode at batch 4 over a 2048-token cache holding 100 (bf16,
1536 wide, 6 layers); a GPT-2-shaped prefill of 256 tokens without a cache (fp16, 1024 wide, 6
layers). On several streams: a Qwen2-shaped draft decode beside a Llama-shaped target decode,
each over a 2048-token static cache of its own (bf16, 896 and 1024 wide); a lane of decode
attention (8 x 16 heads over 512 cached keys, fp16) beside a lane of MLP GEMMs over 8 tokens.
Not PyTorch: a CuPy program that normalises the rows of a 1024 x 1024 f32 matrix to unit length
six times (element-wise kernels and CuPy's sum reduction).

The static-cache walks' first run (fabd72a) failed before any price: transformers 5.17 writes
each step one position further on, eager or replayed in a graph, whatever `cache_position`
says, so a validation's ~800 steps ran past the end of 512- and 256-token caches (an
`index_copy_` out of bounds). The caches were made long enough for them (the Llama walk's
1024 tokens, run first, held; the other two failed again at 768 and 512 and were given 2048);
a static cache attends over all of its length whatever the position, so every step runs the
same kernels.

    python3 scripts/validate_all.py --out DIR --groups heldout82
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import (LLAMA_SMALL, attention_chain, fork_lanes, linear_lane,  # noqa: E402
                        no_grad_step)
from walk_registry import builder  # noqa: E402


def filled_static_cache(arch, dtype, batch, cache_len, held, **config):
    """A transformers model of `arch` (`walk_parts.hf_model`) and a `StaticCache` of
    `cache_len` tokens for `batch` sequences that a prefill of `held` random tokens has
    written, as a walk over a static cache is built."""
    import inspect
    import torch
    import transformers
    from walk_parts import hf_model
    model = hf_model(arch, dtype, **config)
    params = inspect.signature(transformers.StaticCache.__init__).parameters
    kw = dict(config=model.config, max_cache_len=cache_len)
    extra = dict(max_batch_size=batch, device="cuda", dtype=getattr(torch, dtype))
    kw.update({k: v for k, v in extra.items() if k in params})
    cache = transformers.StaticCache(**kw)
    with torch.no_grad():
        model(input_ids=torch.randint(0, model.config.vocab_size, (batch, held), device="cuda"),
              past_key_values=cache, cache_position=torch.arange(held, device="cuda"),
              use_cache=True)
    return model, cache


def static_cache_decode(arch, dtype, batch, cache_len, held, **config):
    """One decode step of `arch` at `batch` over a `StaticCache` of `cache_len` tokens that
    already holds `held` (written by a prefill when the walk is built): the step writes its
    token's keys and values in place (transformers 5.17 one position further each step, eager
    or replayed, so the cache leaves room for a validation's steps)."""
    import torch
    model, cache = filled_static_cache(arch, dtype, batch, cache_len, held, **config)
    vocab = model.config.vocab_size
    token = torch.randint(0, vocab, (batch, 1), device="cuda")
    position = torch.tensor([held], device="cuda")

    def step():
        with torch.no_grad():
            return model(input_ids=token, past_key_values=cache, cache_position=position,
                         use_cache=True).logits
    return step


def static_draft_beside_target_decodes():
    from walk_parts import corner, fork_join
    draft = static_cache_decode("Qwen2", "bfloat16", 1, 2048, 64, vocab_size=32000,
                                hidden_size=896, intermediate_size=4864, num_hidden_layers=4,
                                num_attention_heads=14, num_key_value_heads=2,
                                max_position_embeddings=2048)
    target = static_cache_decode("Llama", "bfloat16", 1, 2048, 64, **LLAMA_SMALL)
    return fork_join(lambda: corner(draft()), lambda: corner(target()))


def gpt2_prefill_256_fp16():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("GPT2", "float16", 1, 256, head="LMHeadModel", vocab_size=32000,
                           n_embd=1024, n_layer=6, n_head=16, n_positions=1024)


def attention_lane_beside_mlp_lane_fp16():
    import torch
    with torch.device("cuda"):
        q = torch.randn(8, 16, 1, 64, dtype=torch.float16)
        k = torch.randn(8, 16, 512, 64, dtype=torch.float16)
        v = torch.randn(8, 16, 512, 64, dtype=torch.float16)
    return no_grad_step(fork_lanes([attention_chain(q, k, v, 6),
                                    linear_lane(2048, 8192, 8, 4, torch.float16)]))


def cupy_row_l2_normalise():
    import cupy as cp
    x = cp.random.standard_normal((1024, 1024), dtype=cp.float32)

    def step():
        h = x
        for _ in range(6):
            h = 1.5 * h / (cp.sqrt((h * h).sum(axis=1, keepdims=True)) + 1e-6)
        return h
    return step


build = builder(131_82, {
    "lg_llama_1024_static_cache_decode_b1": lambda: static_cache_decode(
        "Llama", "bfloat16", 1, 1024, 200, **LLAMA_SMALL),
    "lg_qwen2_1536_static_cache_decode_b4": lambda: static_cache_decode(
        "Qwen2", "bfloat16", 4, 2048, 100, vocab_size=32000, hidden_size=1536,
        intermediate_size=4096, num_hidden_layers=6, num_attention_heads=12,
        num_key_value_heads=2, max_position_embeddings=2048),
    "lg_gpt2_1024_prefill_256_fp16": gpt2_prefill_256_fp16,
    "lg_static_draft_beside_target_decodes": static_draft_beside_target_decodes,
    "lg_attention_lane_beside_mlp_lane_fp16": attention_lane_beside_mlp_lane_fp16,
    "lg_cupy_row_l2_normalise": (cupy_row_l2_normalise, "cupy"),
})
