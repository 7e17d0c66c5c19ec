"""Diagnostic walks (not held out): the same lane forked onto one to four side streams, to see
whether what lanes cost each other grows with their number the way `replay --summary` prices
it. Two kinds of lane: a chain of 150 decode-sized bf16 adds (8 x 2048, no weights streamed),
and a small Llama decode at batch 1 (a model of its own per lane, 4 layers of hidden 1024).

    python3 scripts/validate.py --out DIR --walk-module scripts/lane_count_walks.py \\
        --walks lc_adds_1,lc_adds_2,lc_adds_3,lc_adds_4,lc_decode_1,lc_decode_2,lc_decode_3,lc_decode_4
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


build = builder(125, {
    **{f"lc_adds_{k}": adds(k) for k in range(1, 5)},
    **{f"lc_decode_{k}": decodes(k) for k in range(1, 5)},
})
