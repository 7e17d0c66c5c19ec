"""Six walks written after f7d773b (the mean of the replayed graph and the offline model as
`replay`'s default over the shipped H200 profile; streams without recorded waits priced
between two bounds), before any run, of operator kinds no earlier batch holds. On one
stream: an audio front end (STFT of four 1 s clips at 16 kHz, power, a mel projection and a
log, four chunks); a super-resolution head in fp16 (three convolutions and a pixel shuffle,
ESPCN-shaped, two images one after the other); per-layer expert counts of a router
(12 layers of a bf16 router GEMM over 16 tokens, top-2, `scatter_add_` into the counts). On
several streams: a spatial transformer's `affine_grid` and `grid_sample` (fp16) beside a lane
of 3x3 convolutions; nucleus-sampling thresholds found by `searchsorted` over cumulative
probabilities (f32, 8 x 32000) beside a bf16 GEMV lane; three lanes of flips and rolls with
adds (bf16, 16 x 2048).

    python3 scripts/validate_all.py --out DIR --groups heldout64
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import fork_lanes, linear_lane, no_grad_step, repeated  # noqa: E402
from walk_registry import builder  # noqa: E402


def stft_mel_frontend():
    import torch
    with torch.device("cuda"):
        clips = [torch.randn(4, 16000) for _ in range(4)]
        window = torch.hann_window(400)
        mel = torch.rand(201, 80) * 0.01

    def step():
        out = []
        for audio in clips:
            spec = torch.stft(audio, n_fft=400, hop_length=160, window=window,
                              return_complex=True)
            power = spec.abs().pow(2).transpose(1, 2)
            out.append(torch.log(torch.clamp(power @ mel, min=1e-10)))
        return out
    return no_grad_step(step)


def pixel_shuffle_upsampler_fp16():
    import torch
    nn = torch.nn
    net = nn.Sequential(
        nn.Conv2d(3, 64, 5, padding=2), nn.Tanh(),
        nn.Conv2d(64, 32, 3, padding=1), nn.Tanh(),
        nn.Conv2d(32, 3 * 9, 3, padding=1), nn.PixelShuffle(3),
    ).cuda().half().eval()
    images = [torch.randn(1, 3, 96, 96, device="cuda", dtype=torch.float16) for _ in range(2)]

    def step():
        return [net(x) for x in images]
    return no_grad_step(step)


def router_expert_counts_bf16():
    import torch
    with torch.device("cuda"):
        x = torch.randn(16, 1024, dtype=torch.bfloat16)
        routers = [torch.randn(1024, 64, dtype=torch.bfloat16) * 0.03 for _ in range(12)]
        counts = torch.zeros(12, 64)
        ones = torch.ones(16 * 2)

    def step():
        counts.zero_()
        for layer, w in enumerate(routers):
            logits = x @ w
            _, chosen = torch.topk(logits, 2, dim=-1)
            counts[layer].scatter_add_(0, chosen.flatten(), ones)
        return counts
    return no_grad_step(step)


def grid_sample_beside_conv_lane():
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        feats = torch.randn(4, 32, 64, 64, dtype=torch.float16)
        theta = (torch.eye(2, 3) + torch.randn(4, 2, 3) * 0.05).half()
        convs = [torch.nn.Conv2d(64, 64, 3, padding=1).half() for _ in range(4)]
        y = torch.randn(4, 64, 32, 32, dtype=torch.float16)

    def warp(z):
        grid = f.affine_grid(theta, list(z.shape), align_corners=False)
        return f.grid_sample(z, grid, align_corners=False)

    def conv_lane():
        z = y
        for conv in convs:
            z = torch.relu(conv(z))
        return z
    return no_grad_step(fork_lanes([repeated(feats, 6, warp), conv_lane]))


def searchsorted_beside_gemv_lane():
    import torch
    with torch.device("cuda"):
        probs = torch.softmax(torch.randn(8, 32000), dim=-1)
        thresholds = torch.rand(8, 1) * 0.9

    def nucleus():
        sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
        cumulative = torch.cumsum(sorted_probs, dim=-1)
        cut = torch.searchsorted(cumulative, thresholds)
        keep = torch.arange(32000, device="cuda") <= cut
        return torch.gather(order, 1, cut) + keep.sum(dim=-1, keepdim=True)
    return no_grad_step(fork_lanes([nucleus, linear_lane(4096, 4096, 1, 6, torch.bfloat16)]))


def flip_roll_lanes_bf16():
    import torch
    lanes = []
    for _ in range(3):
        x = torch.randn(16, 2048, device="cuda", dtype=torch.bfloat16)
        lanes.append(repeated(x, 6, lambda y: torch.flip(y, [-1]).roll(7, -2) + y * 0.5))
    return no_grad_step(fork_lanes(lanes))


build = builder(131_64, {
    "ko_stft_mel_frontend": stft_mel_frontend,
    "ko_pixel_shuffle_upsampler_fp16": pixel_shuffle_upsampler_fp16,
    "ko_router_expert_counts_bf16": router_expert_counts_bf16,
    "ko_grid_sample_beside_conv_lane": grid_sample_beside_conv_lane,
    "ko_searchsorted_beside_gemv_lane": searchsorted_beside_gemv_lane,
    "ko_flip_roll_lanes_bf16": flip_roll_lanes_bf16,
})
