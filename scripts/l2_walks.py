"""Three walks for `scripts/validate.py --walk-module` whose data fits the H200's L2, written
after long kernels of such walks began to spin (`--l2-resident spin`) and run once with that
version unchanged: a GPT-2-shaped decoder small enough that its weights stay in the L2 (512
wide, 4 layers, fp16, batch 1), a stack of fp16 MLP blocks at batch 1 over 32 MiB of weights,
and MobileNet-style depthwise-separable blocks at batch 1 (cuDNN depthwise and pointwise
convolutions) (results: docs/validation-h200.md, "Walks whose data fits the L2").

    python3 scripts/validate.py --out DIR --walk-module scripts/l2_walks.py \
        --walks tiny_gpt2_decode_b1,small_mlp_decode_b1,mobilenet_blocks_b1
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def tiny_gpt2_step():
    """A GPT-2-shaped decoder, 512 wide, 4 layers, 8 heads, an 8192-token vocabulary, fp16,
    at decode batch 1: ~20 MiB of weights."""
    from walk_parts import hf_decoder_step
    return hf_decoder_step("GPT2", "float16", 1, 1, "LMHeadModel", n_embd=512, n_layer=4,
                           n_head=8, vocab_size=8192, n_positions=256)


def small_mlp_step():
    """Eight fp16 MLP blocks (RMSNorm, 512 -> 2048 with GELU, 2048 -> 512, residual add) at
    batch 1: 32 MiB of weights, read once a step."""
    import torch
    f = torch.nn.functional
    d = 512
    with torch.device("cuda"):
        ws = [(torch.randn(4 * d, d, dtype=torch.float16) * 0.02,
               torch.randn(d, 4 * d, dtype=torch.float16) * 0.02,
               torch.ones(d, dtype=torch.float16)) for _ in range(8)]
        x = torch.randn(1, d, dtype=torch.float16)

    def step():
        with torch.no_grad():
            y = x
            for up, down, g in ws:
                y = y + f.linear(f.gelu(f.linear(f.rms_norm(y, (d,), g), up)), down)
            return y
    return step


def mobilenet_step():
    """Eight MobileNet-style depthwise-separable blocks (3x3 depthwise convolution, batch norm,
    ReLU6, 1x1 pointwise convolution, batch norm, ReLU6) over a 1 x 128 x 56 x 56 fp16 map."""
    import torch
    nn = torch.nn
    layers = []
    for _ in range(8):
        layers += [nn.Conv2d(128, 128, 3, padding=1, groups=128, bias=False),
                   nn.BatchNorm2d(128), nn.ReLU6(),
                   nn.Conv2d(128, 128, 1, bias=False), nn.BatchNorm2d(128), nn.ReLU6()]
    net = nn.Sequential(*layers).cuda().half().eval()
    x = torch.randn(1, 128, 56, 56, device="cuda", dtype=torch.float16)

    def step():
        with torch.no_grad():
            return net(x)
    return step


build = builder(29, {
    "tiny_gpt2_decode_b1": (tiny_gpt2_step, "torch"),
    "small_mlp_decode_b1": (small_mlp_step, "torch"),
    "mobilenet_blocks_b1": (mobilenet_step, "torch"),
})
