"""Diagnostic walks (not held out): the same lane forked onto one to four side streams, to see
whether what lanes cost each other grows with their number the way `replay --summary` prices
it. Three kinds of lane: a chain of 150 decode-sized bf16 adds (8 x 2048, no weights streamed),
a small Llama decode at batch 1 (a model of its own per lane, 4 layers of hidden 1024), and
held-out batch 30's sampling of two requests (temperature, softmax over 50 000 words, top-50:
29 small kernels and memsets, logits of its own per lane), which `replay` priced 6.9-8.9% low
on three lanes; and lanes of 24 element-wise kernels over 64 Ki floats with two small memsets
(`cudaMemsetAsync`, memset nodes in a graph) in the middle, as the sampling lanes have, and
without them.

    python3 scripts/validate.py --out DIR --walk-module scripts/lane_count_walks.py \\
        --walks lc_adds_1,lc_adds_2,lc_adds_3,lc_adds_4,lc_decode_1,lc_decode_2,lc_decode_3,lc_decode_4
    (and lc_sample_1 to lc_sample_3, lc_memsets_1 to lc_memsets_3, lc_no_memsets_1 and _2, and
    lc_no_memsets_unforked: the same lane on the capture stream itself)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import LLAMA_SMALL as SMALL  # noqa: E402
from walk_parts import fork_lanes  # noqa: E402


def adds(k):
    def make():
        import torch

        def lane():
            x = torch.randn(8, 2048, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(8, 2048, device="cuda", dtype=torch.bfloat16)

            def run():
                y = x
                for _ in range(150):
                    y = y + b
                return y
            return run
        return fork_lanes([lane() for _ in range(k)])
    return make


def decodes(k):
    def make():
        from walk_parts import hf_decoder_step
        return fork_lanes([hf_decoder_step("Llama", "bfloat16", 1, 1, **SMALL) for _ in range(k)])
    return make


def samples(k):
    def make():
        import torch
        with torch.device("cuda"):
            logits = [torch.randn(2, 50000, dtype=torch.float32) for _ in range(k)]

        def lane(i):
            def run():
                p = (logits[i] / 0.8).softmax(-1)
                top, idx = torch.topk(p, 50, dim=-1)
                return (top / top.sum(-1, keepdim=True)) * idx.float()
            return run
        return fork_lanes([lane(i) for i in range(k)])
    return make


def small_adds_lane(memsets):
    """A lane of 24 f32 element-wise kernels over 64 Ki floats (inputs of its own), with two
    memsets of 2 KiB and 392 bytes (`cudaMemsetAsync`: memset nodes in a graph) after the
    twelfth where `memsets`, as the sampling lanes' top-k runs them."""
    import cupy as cp
    import torch
    with torch.device("cuda"):
        x = torch.randn(64 * 1024)
        scratch = torch.empty(4096, dtype=torch.uint8)

    def run():
        y = x
        for i in range(24):
            if memsets and i == 12:
                s = torch.cuda.current_stream().cuda_stream
                cp.cuda.runtime.memsetAsync(scratch.data_ptr(), 0, 2048, s)
                cp.cuda.runtime.memsetAsync(scratch.data_ptr() + 2048, 0, 392, s)
            y = y * 1.0001
        return y
    return run


def memset_lanes(k, memsets=True, forked=True):
    def make():
        lanes = [small_adds_lane(memsets) for _ in range(k)]
        return fork_lanes(lanes) if forked else lanes[0]
    return make


build = builder(125, {
    **{f"lc_adds_{k}": adds(k) for k in range(1, 5)},
    **{f"lc_decode_{k}": decodes(k) for k in range(1, 5)},
    **{f"lc_sample_{k}": samples(k) for k in range(1, 4)},
    **{f"lc_memsets_{k}": memset_lanes(k) for k in range(1, 4)},
    **{f"lc_no_memsets_{k}": memset_lanes(k, memsets=False) for k in range(1, 3)},
    "lc_no_memsets_unforked": memset_lanes(1, memsets=False, forked=False),
})
