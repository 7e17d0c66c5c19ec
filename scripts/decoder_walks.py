"""Hand-written fp16 decoders for `scripts/validate.py --walk-module`, shaped like the two
hand-written decoders of the issue that asked for accurate prices (hidden 1024 × 24 layers, and
hidden 4096 × 32 layers, whose graph saves only a tenth of its eager step): the decode step of
scripts/torch_decode.py (RMSNorm, fused QKV, KV-cache update, SDPA over 1024 cached positions,
SwiGLU MLP), batch 1, in fp16. Written after the method was fixed and run with it unchanged.

    python3 scripts/validate.py --out DIR --walk-module scripts/decoder_walks.py \
        --walks fp16_decoder_1024_l24,fp16_decoder_4096_l32
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SHAPES = {
    "fp16_decoder_1024_l24": (24, 1024, 8),
    "fp16_decoder_4096_l32": (32, 4096, 32),
}


def build(name):
    import torch
    from torch_decode import build as decoder
    layers, d, heads = SHAPES[name]
    torch.manual_seed(2)
    return decoder(layers, d, heads, 1024, dt=torch.float16), "torch"
