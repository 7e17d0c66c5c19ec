"""Four walks written after held-out batch 35's run and the spin fit's checks on one-stream
walks (no change to either graph price since 89f45ba), before any run of them: a
Persimmon-shaped decode at batch 2 (fused QKV, partial rotary embeddings, squared-ReLU MLP,
four layers of hidden 1024; transformers, fp16) and a Conformer-style convolution module stack
(pointwise convolution, GLU, 31-tap depthwise convolution, batch norm, SiLU, pointwise
convolution; six blocks over 4 x 512 frames of 256 channels, fp16), each on one stream; a
CuPy k-means step (three rounds of distances to 16 centroids, nearest-centroid labels and
masked sums for the new centroids over 4096 points of 64 dimensions); a bf16 MLP of hidden
4096 over 16 tokens split in two column halves, each half on a stream of its own, summed.

    python3 scripts/validate_all.py --out DIR --groups heldout36
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def persimmon_decode_b2():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Persimmon", "float16", 2, 1, hidden_size=1024,
                           intermediate_size=4096, num_hidden_layers=4, num_attention_heads=16,
                           vocab_size=32000, max_position_embeddings=2048)


def conformer_conv_modules():
    import torch
    nn = torch.nn

    class ConvModule(nn.Module):
        def __init__(self, ch):
            super().__init__()
            self.up = nn.Conv1d(ch, 2 * ch, 1)
            self.depth = nn.Conv1d(ch, ch, 31, padding=15, groups=ch)
            self.norm = nn.BatchNorm1d(ch)
            self.down = nn.Conv1d(ch, ch, 1)

        def forward(self, x):
            y = nn.functional.glu(self.up(x), dim=1)
            y = nn.functional.silu(self.norm(self.depth(y)))
            return x + self.down(y)

    with torch.device("cuda"):
        stack = nn.Sequential(*[ConvModule(256) for _ in range(6)]).half().eval()
        x = torch.randn(4, 256, 512, dtype=torch.float16)

    def step():
        with torch.no_grad():
            return stack(x)
    return step


def cupy_kmeans_step():
    import cupy as cp
    points = cp.random.random((4096, 64), dtype=cp.float32)
    start = points[:16].copy()
    ids = cp.arange(16)

    def step():
        centroids = start
        for _ in range(3):
            dist = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
            labels = dist.argmin(axis=1)
            member = (labels[:, None] == ids[None, :]).astype(cp.float32)
            sums = (member[:, :, None] * points[:, None, :]).sum(axis=0)
            counts = member.sum(axis=0)[:, None]
            centroids = sums / cp.maximum(counts, 1.0)
        return centroids
    return step


def split_mlp_halves_b16():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn
    with torch.device("cuda"):
        halves = [(nn.Linear(4096, 5504, bias=False).to(torch.bfloat16),
                   nn.Linear(5504, 4096, bias=False).to(torch.bfloat16)) for _ in range(2)]
        x = torch.randn(16, 4096, dtype=torch.bfloat16)

    def half(up, down):
        return lambda t: down(nn.functional.gelu(up(t)))

    run = fork_lanes([half(u, d) for u, d in halves])

    def step():
        with torch.no_grad():
            return run(x)
    return step


build = builder(131_36, {
    "il_persimmon_decode_b2": persimmon_decode_b2,
    "il_conformer_conv_modules": conformer_conv_modules,
    "il_cupy_kmeans_step": (cupy_kmeans_step, "cupy"),
    "il_split_mlp_halves_b16": split_mlp_halves_b16,
})
