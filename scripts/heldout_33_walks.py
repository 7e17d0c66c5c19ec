"""Four walks written after held-out batch 32's run (no change to either price since
556ad32), before any run of them: a Llama-shaped decode at batch 1 with hidden 4096 (four
layers: GEMVs that stream 4096-wide weights) on one stream; a CuPy layer-norm chain (a
ReductionKernel for each row's mean and square mean, an ElementwiseKernel that normalises,
over 64 to 8192 rows of 1024 floats) on one stream, not PyTorch; a mixture-of-experts layer's
shared expert (a bf16 MLP over 64 tokens) beside its routed tokens' dispatch (router GEMM,
softmax, top-6 of 64 experts, the tokens gathered into expert order); a decode at batch 8
beside the previous step's logits copied out to page-locked host memory, non-blocking, and
their argmax, each on a stream of its own.

    python3 scripts/validate_all.py --out DIR --groups heldout33
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner  # noqa: E402
from walk_parts import decoder as _decoder  # noqa: E402


def cupy_layernorm_chain():
    import cupy as cp
    width = 1024
    mean = cp.ReductionKernel("T x", "T y", "x", "a + b", f"y = a / {width}.0", "0", "row_mean")
    sq_mean = cp.ReductionKernel("T x", "T y", "x * x", "a + b", f"y = a / {width}.0", "0",
                                 "row_sq_mean")
    norm = cp.ElementwiseKernel("T x, T m, T q", "T y", "y = (x - m) * rsqrt(q - m * m + 1e-5f)",
                                "row_norm")
    xs = [cp.random.random((rows, width), dtype=cp.float32) for rows in (64, 512, 2048, 8192)]
    outs = [cp.empty_like(x) for x in xs]

    def step():
        for _ in range(3):
            for x, y in zip(xs, outs):
                m = mean(x, axis=1, keepdims=True)
                q = sq_mean(x, axis=1, keepdims=True)
                norm(x, m, q, y)
        return outs[-1]
    return step


def shared_expert_beside_dispatch():
    import torch
    from walk_parts import fork_join
    nn = torch.nn
    tokens, hidden, experts, k = 64, 2048, 64, 6
    with torch.device("cuda"):
        up, gate = nn.Linear(hidden, 5632, bias=False), nn.Linear(hidden, 5632, bias=False)
        down = nn.Linear(5632, hidden, bias=False)
        router = nn.Linear(hidden, experts, bias=False)
        for m in (up, gate, down, router):
            m.bfloat16()
        x = torch.randn(tokens, hidden, dtype=torch.bfloat16)

    def shared():
        with torch.no_grad():
            return down(nn.functional.silu(gate(x)) * up(x))

    def dispatch():
        with torch.no_grad():
            weights, chosen = router(x).float().softmax(-1).topk(k, dim=-1)
            order = chosen.flatten().argsort()
            routed = x.index_select(0, order // k)
            return routed * weights.flatten()[order].unsqueeze(1).to(routed.dtype)
    return fork_join(lambda: _corner(shared()), lambda: _corner(dispatch()))


def decode_beside_logits_to_host():
    import torch
    from walk_parts import fork_join, hf_decoder_step
    decode = hf_decoder_step("Llama", "bfloat16", 8, 1, vocab_size=32000, hidden_size=2048,
                             intermediate_size=5632, num_hidden_layers=4,
                             num_attention_heads=16, num_key_value_heads=4,
                             max_position_embeddings=2048)
    with torch.device("cuda"):
        logits = torch.randn(8, 32000)
    host = torch.empty(8, 32000).pin_memory()

    def out():
        host.copy_(logits, non_blocking=True)
        return logits.argmax(-1).float()
    return fork_join(lambda: _corner(decode()), lambda: _corner(out()))


build = builder(131_33, {
    "ii_llama_wide_decode_b1": _decoder("Llama", "bfloat16", 1, 1, hidden_size=4096,
                                        intermediate_size=11008, num_hidden_layers=4,
                                        num_attention_heads=32, num_key_value_heads=8,
                                        max_position_embeddings=2048),
    "ii_cupy_layernorm_chain": (cupy_layernorm_chain, "cupy"),
    "ii_shared_expert_beside_dispatch": shared_expert_beside_dispatch,
    "ii_decode_beside_logits_to_host": decode_beside_logits_to_host,
})
