"""Six walks written after 0947f07 (no pricing change since batch 80), before any run. On one
stream: the Mistral-7B layer shape (4096 wide, 14336 inner, 32 heads over 8 key/value heads,
bf16) for two layers decoding at batch 1 over a 2048-token static cache holding 200 tokens; a
Llama-shaped decode at batch 64 over a 1024-token static cache (bf16, 1024 wide, 4 layers), where
the projections are GEMMs, not GEMVs; a Gemma-shaped decode at batch 4 over a static cache (bf16,
2048 wide, head dim 256, one key/value head, 4 layers). On several streams: a LLaVA-style
projector (two linear layers with a GELU over 576 image tokens, bf16) beside a static-cache
decode at batch 1; a DLRM-style recommendation step, four `embedding_bag` lookups and a bottom
MLP over dense features each on a stream of its own, joined into pairwise feature interactions
and a top MLP. Not PyTorch: CuPy `fuse`d kernels, a logistic layer and a per-row sum of squares
over a 4096 x 1024 f32 matrix, four rounds.

    python3 scripts/validate_all.py --out DIR --groups heldout86
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_82_walks import static_cache_decode  # noqa: E402
from walk_parts import LLAMA_SMALL  # noqa: E402
from walk_registry import builder  # noqa: E402


def projector_beside_decode(tokens=576, vision=1024, text=2048):
    """A vision projector over one image's patch features on one lane, a text decode over a
    static cache on the other, as a server encodes a new request's image beside decodes."""
    import torch
    from walk_parts import corner, fork_join
    decode = static_cache_decode("Llama", "bfloat16", 1, 2048, 64, **LLAMA_SMALL)
    bf = dict(device="cuda", dtype=torch.bfloat16)
    feats = torch.randn(tokens, vision, **bf)
    w1, b1 = torch.randn(text, vision, **bf) * 0.02, torch.zeros(text, **bf)
    w2, b2 = torch.randn(text, text, **bf) * 0.02, torch.zeros(text, **bf)

    def project():
        f = torch.nn.functional
        with torch.no_grad():
            return f.linear(f.gelu(f.linear(feats, w1, b1)), w2, b2)
    return fork_join(lambda: corner(decode()), lambda: corner(project()))


def dlrm_step(batch=2048, tables=4, rows=200_000, dim=64, per_bag=16, dense=13):
    """Each embedding table's `embedding_bag` (sum over a bag of indices) on a stream of its
    own and the bottom MLP over the dense features on another; joined on the current stream
    into the pairwise dot products of the five feature vectors and a top MLP (f32)."""
    import torch
    f = torch.nn.functional
    dev = dict(device="cuda")
    embs = [torch.randn(rows, dim, **dev) * 0.01 for _ in range(tables)]
    idx = [torch.randint(0, rows, (batch * per_bag,), **dev) for _ in range(tables)]
    offsets = torch.arange(0, batch * per_bag, per_bag, **dev)
    x = torch.randn(batch, dense, **dev)
    bottom = [(torch.randn(512, dense, **dev) * 0.1, torch.zeros(512, **dev)),
              (torch.randn(256, 512, **dev) * 0.05, torch.zeros(256, **dev)),
              (torch.randn(dim, 256, **dev) * 0.05, torch.zeros(dim, **dev))]
    pairs = (tables + 1) * tables // 2
    top = [(torch.randn(512, dim + pairs, **dev) * 0.05, torch.zeros(512, **dev)),
           (torch.randn(256, 512, **dev) * 0.05, torch.zeros(256, **dev)),
           (torch.randn(1, 256, **dev) * 0.05, torch.zeros(1, **dev))]
    streams = [torch.cuda.Stream() for _ in range(tables + 1)]
    iu = torch.triu_indices(tables + 1, tables + 1, offset=1, device="cuda")

    def step():
        with torch.no_grad():
            main = torch.cuda.current_stream()
            outs = []
            for k, s in enumerate(streams):
                s.wait_stream(main)
                with torch.cuda.stream(s):
                    if k < tables:
                        outs.append(f.embedding_bag(idx[k], embs[k], offsets, mode="sum"))
                    else:
                        y = x
                        for w, b in bottom:
                            y = f.relu(f.linear(y, w, b))
                        outs.append(y)
            for s in streams:
                main.wait_stream(s)
            feats = torch.stack([outs[-1]] + outs[:-1], dim=1)
            inter = torch.bmm(feats, feats.transpose(1, 2))[:, iu[0], iu[1]]
            z = torch.cat([outs[-1], inter], dim=1)
            for i, (w, b) in enumerate(top):
                z = f.linear(z, w, b)
                z = torch.sigmoid(z) if i == len(top) - 1 else f.relu(z)
            return z
    return step


def cupy_fused_layers(rows=4096, cols=1024, rounds=4):
    """Per round: a fused logistic layer (scale, shift, sigmoid) into a buffer, then a fused
    per-row sum of squares of it, summed over the rounds."""
    import cupy as cp

    @cp.fuse()
    def logistic(x, w, b):
        return 1 / (1 + cp.exp(-(x * w + b)))

    @cp.fuse()
    def row_sq(y):
        return cp.sum(y * y, axis=1)

    x = cp.random.standard_normal((rows, cols), dtype=cp.float32)
    w = cp.random.standard_normal((cols,), dtype=cp.float32)
    b = cp.random.standard_normal((cols,), dtype=cp.float32)

    def step():
        y, total = x, None
        for _ in range(rounds):
            y = logistic(y, w, b)
            s = row_sq(y)
            total = s if total is None else total + s
        return total
    return step


build = builder(131_86, {
    "lk_mistral_4096_2_layers_static_cache_decode_b1": lambda: static_cache_decode(
        "Mistral", "bfloat16", 1, 2048, 200, vocab_size=32000, hidden_size=4096,
        intermediate_size=14336, num_hidden_layers=2, num_attention_heads=32,
        num_key_value_heads=8, max_position_embeddings=4096),
    "lk_llama_1024_static_cache_decode_b64": lambda: static_cache_decode(
        "Llama", "bfloat16", 64, 1024, 128, **LLAMA_SMALL),
    "lk_gemma_2048_static_cache_decode_b4": lambda: static_cache_decode(
        "Gemma", "bfloat16", 4, 2048, 160, vocab_size=32000, hidden_size=2048,
        intermediate_size=8192, num_hidden_layers=4, num_attention_heads=8,
        num_key_value_heads=1, head_dim=256, max_position_embeddings=4096),
    "lk_projector_beside_static_decode": projector_beside_decode,
    "lk_dlrm_embedding_lanes_and_mlps": dlrm_step,
    "lk_cupy_fused_layers": (cupy_fused_layers, "cupy"),
})
