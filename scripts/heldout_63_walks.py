"""Six walks written after the trace-only eager step began reading the profiler's cost
outside each event from the gaps between operators where no operator only calls operators
(`trace::callbacks`), before any run: loops of leaf operators, each one launch and no view,
of kinds the stored walks of one-element adds do not hold. On one stream: in-place negation
of a 4096-element f32 vector, 300 times; 200 copies between two bf16 tensors of 64 × 1024;
clamps and scalings in place, alternating, over 32 × 4096 fp16; fills and in-place adds
alternating over 16384 f32. On two streams: two lanes of 120 in-place adds each (f32, 8192
elements), forked and joined with the streams' own waits; three lanes of 40 in-place
multiplications by another tensor and divisions by it (bf16, 4 × 4096).

    python3 scripts/validate_all.py --out DIR --groups heldout63
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def leaf_lanes(lanes):
    """A step that forks each of `lanes` (a function of no arguments) onto a stream of its
    own and joins them back, with no operator of its own: only the streams' waits."""
    import torch
    streams = [torch.cuda.Stream() for _ in lanes]

    def step():
        main = torch.cuda.current_stream()
        for s, lane in zip(streams, lanes):
            s.wait_stream(main)
            with torch.cuda.stream(s):
                lane()
        for s in streams:
            main.wait_stream(s)
    return step


def inplace_negation_loop():
    import torch
    x = torch.randn(4096, device="cuda")

    def step():
        for _ in range(300):
            x.mul_(-1.0)
    return step


def copy_loop_bf16():
    import torch
    with torch.device("cuda"):
        a = torch.randn(64, 1024, dtype=torch.bfloat16)
        b = torch.empty(64, 1024, dtype=torch.bfloat16)

    def step():
        for _ in range(100):
            b.copy_(a)
            a.copy_(b)
    return step


def clamp_and_scale_fp16():
    import torch
    x = torch.randn(32, 4096, device="cuda", dtype=torch.float16)

    def step():
        for _ in range(100):
            x.clamp_(-2.0, 2.0)
            x.mul_(1.001)
    return step


def fill_and_add_f32():
    import torch
    with torch.device("cuda"):
        x = torch.empty(16384)
        y = torch.randn(16384)

    def step():
        for _ in range(100):
            x.fill_(0.5)
            x.add_(y)
    return step


def two_lanes_of_inplace_adds():
    import torch
    with torch.device("cuda"):
        xs = [torch.zeros(8192) for _ in range(2)]
        ys = [torch.randn(8192) for _ in range(2)]

    def lane(x, y):
        def run():
            for _ in range(120):
                x.add_(y)
        return run
    return leaf_lanes([lane(x, y) for x, y in zip(xs, ys)])


def three_lanes_of_muls_and_divs_bf16():
    import torch
    with torch.device("cuda"):
        xs = [torch.ones(4, 4096, dtype=torch.bfloat16) for _ in range(3)]
        ws = [torch.rand(4, 4096, dtype=torch.bfloat16) * 0.01 + 0.995 for _ in range(3)]

    def lane(x, w):
        def run():
            for _ in range(40):
                x.mul_(w)
                x.div_(w)
        return run
    return leaf_lanes([lane(x, w) for x, w in zip(xs, ws)])


build = builder(131_63, {
    "kn_inplace_negation_loop": inplace_negation_loop,
    "kn_copy_loop_bf16": copy_loop_bf16,
    "kn_clamp_and_scale_fp16": clamp_and_scale_fp16,
    "kn_fill_and_add_f32": fill_and_add_f32,
    "kn_two_lanes_of_inplace_adds": two_lanes_of_inplace_adds,
    "kn_three_lanes_of_muls_and_divs_bf16": three_lanes_of_muls_and_divs_bf16,
})
