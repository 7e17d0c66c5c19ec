"""Four walks written after 41f1d11 (`--summary` reads a small kernel's stretch at the widest
kernel beside it), before any run of them: an Ernie-4.5-shaped decode at batch 4
(transformers, bf16) and a CuPy softmax cross-entropy over a 32 000-word vocabulary for 64
tokens (row maxima, exponentials, sums, logs, the targets' log-probabilities, their mean),
each on one stream; three gated MLPs of hidden 2048 over 8 tokens (gate and up projections,
SiLU, product, down projection; bf16), each on a stream of its own; three lanes of a
LayerNorm, a QKV projection and a rotary-style mix over 4 tokens of hidden 2048 (fp16), each
on a stream of its own, summed.

    python3 scripts/validate_all.py --out DIR --groups heldout39
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def ernie45_decode_b4():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Ernie4_5", "bfloat16", 4, 1, hidden_size=1024,
                           intermediate_size=3072, num_hidden_layers=4, num_attention_heads=16,
                           num_key_value_heads=4, head_dim=64, vocab_size=32000,
                           max_position_embeddings=2048)


def cupy_softmax_xent():
    import cupy as cp
    logits = cp.random.standard_normal((64, 32000), dtype=cp.float32)
    targets = cp.random.randint(0, 32000, 64)
    rows = cp.arange(64)

    def step():
        top = logits.max(axis=1, keepdims=True)
        shifted = logits - top
        log_norm = cp.log(cp.exp(shifted).sum(axis=1))
        picked = shifted[rows, targets] - log_norm
        return -picked.mean()
    return step


def three_gated_mlps_b8():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn

    class Gated(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = nn.Linear(2048, 5632, bias=False)
            self.up = nn.Linear(2048, 5632, bias=False)
            self.down = nn.Linear(5632, 2048, bias=False)

        def forward(self, t):
            return self.down(nn.functional.silu(self.gate(t)) * self.up(t))

    with torch.device("cuda"):
        mlps = [Gated().to(torch.bfloat16) for _ in range(3)]
        x = torch.randn(8, 2048, dtype=torch.bfloat16)
    run = fork_lanes(list(mlps))

    def step():
        with torch.no_grad():
            return run(x)
    return step


def three_norm_qkv_lanes_b4():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn

    class Lane(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(2048)
            self.qkv = nn.Linear(2048, 3 * 2048)

        def forward(self, t):
            q, k, v = self.qkv(self.norm(t)).chunk(3, dim=-1)
            half = q.shape[-1] // 2
            cos, sin = torch.cos(k[..., :half]), torch.sin(k[..., half:])
            rot = torch.cat([q[..., :half] * cos - q[..., half:] * sin,
                             q[..., half:] * cos + q[..., :half] * sin], dim=-1)
            return rot + v

    with torch.device("cuda"):
        lanes = [Lane().half() for _ in range(3)]
        x = torch.randn(4, 2048, dtype=torch.float16)
    run = fork_lanes(list(lanes))

    def step():
        with torch.no_grad():
            return run(x)
    return step


build = builder(131_39, {
    "ip_ernie45_decode_b4": ernie45_decode_b4,
    "ip_cupy_softmax_xent": (cupy_softmax_xent, "cupy"),
    "ip_three_gated_mlps_b8": three_gated_mlps_b8,
    "ip_three_norm_qkv_lanes_b4": three_norm_qkv_lanes_b4,
})
