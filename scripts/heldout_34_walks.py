"""Four walks written after held-out batch 33's run and the profiler-cost probes (no change to
either graph price since 556ad32), before any run of them: a ConvNeXt-shaped image model at
batch 4 (7x7 depthwise convolutions, channels-first layer norms computed element by element,
linear layers over channels, GELU, layer scale; transformers, fp16) and an RWKV-style
time-mix recurrence (32 steps of element-wise decay, accumulate and normalise over 8 x 2048
bf16 states), each on one stream; a Llama-shaped decode at batch 4 beside beam search's
reorder of the previous step (log-softmax over 32 000 words plus the beams' scores, top-4 of
the flattened candidates, the KV cache of four layers gathered by beam); a Whisper-shaped
audio encoder (two 1-D convolutions over 3000 frames, two encoder layers over the 1500 that
remain) beside a small decode, each on a stream of its own.

    python3 scripts/validate_all.py --out DIR --groups heldout34
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import LLAMA_SMALL  # noqa: E402
from walk_parts import corner as _corner  # noqa: E402


def convnext_stages_b4():
    import torch
    from walk_parts import hf_model
    model = hf_model("ConvNext", "float16", head="Model", num_channels=3,
                     hidden_sizes=[96, 192, 384, 768], depths=[2, 2, 4, 2], image_size=224)
    with torch.device("cuda"):
        pixels = torch.randn(4, 3, 224, 224, dtype=torch.float16)

    def step():
        with torch.no_grad():
            return model(pixel_values=pixels).pooler_output
    return step


def rwkv_time_mix_scan():
    import torch
    with torch.device("cuda"):
        k, v, r = (torch.randn(32, 8, 2048, dtype=torch.bfloat16) for _ in range(3))
        decay = torch.rand(2048, dtype=torch.bfloat16) * 0.5 + 0.4
        num, den = torch.zeros(8, 2048, dtype=torch.bfloat16), torch.ones(8, 2048,
                                                                          dtype=torch.bfloat16)

    def step():
        a, b = num, den
        outs = []
        for t in range(32):
            w = torch.exp(k[t])
            a = a * decay + w * v[t]
            b = b * decay + w
            outs.append(torch.sigmoid(r[t]) * (a / b))
        return torch.stack(outs).sum(0)
    return step


def decode_beside_beam_reorder():
    import torch
    from walk_parts import fork_join, hf_decoder_step
    decode = hf_decoder_step("Llama", "bfloat16", 4, 1, **LLAMA_SMALL)
    with torch.device("cuda"):
        logits = torch.randn(4, 32000)
        scores = torch.randn(4, 1)
        cache = [torch.randn(4, 4, 512, 256, dtype=torch.bfloat16) for _ in range(8)]

    def reorder():
        cand = (logits.log_softmax(-1) + scores).view(1, -1)
        best, index = cand.topk(4, dim=-1)
        beams = (index // 32000).flatten()
        moved = [c.index_select(0, beams) for c in cache]
        return best.sum() + sum(m[:, 0, 0, 0].float().sum() for m in moved)
    return fork_join(lambda: _corner(decode()), lambda: _corner(reorder()))


def whisper_encoder_beside_decode():
    import torch
    from walk_parts import fork_join, hf_decoder_step
    nn = torch.nn
    decode = hf_decoder_step("Llama", "bfloat16", 1, 1, **LLAMA_SMALL)
    with torch.device("cuda"):
        conv1 = nn.Conv1d(80, 512, 3, padding=1).half()
        conv2 = nn.Conv1d(512, 512, 3, stride=2, padding=1).half()
        layers = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True, norm_first=True,
                                       activation="gelu"), 2, enable_nested_tensor=False).half()
        layers.eval()
        mel = torch.randn(1, 80, 3000, dtype=torch.float16)

    def encode():
        with torch.no_grad():
            x = nn.functional.gelu(conv2(nn.functional.gelu(conv1(mel))))
            return layers(x.transpose(1, 2))
    return fork_join(lambda: _corner(decode()), lambda: _corner(encode()))


build = builder(131_34, {
    "ij_convnext_stages_b4": convnext_stages_b4,
    "ij_rwkv_time_mix_scan": rwkv_time_mix_scan,
    "ij_decode_beside_beam_reorder": decode_beside_beam_reorder,
    "ij_whisper_encoder_beside_decode": whisper_encoder_beside_decode,
})
