#!/usr/bin/env python3
"""Do the lanes of an unprofiled PyTorch graph overlap? Profiled replays of the held-out walks
that `--summary` prices high (an element-wise chain beside a lane of decode GEMVs) show the
chain's branch starting tens of µs late and the lanes overlapping 2-12%; the offline model
has them side by side for as long as both run. This stamps %globaltimer (a one-block CuPy
kernel, [`lane_stamps`]) at each lane's start and end inside the graph, replays it with no
profiler in the process, and reports each lane's start and end (µs from the earliest stamp),
the share of the shorter lane the two overlap, and the graph's time beside graphs of each
lane alone and of the lanes one after another on one stream (same stamps).

`--cases elementwise` asks the same of lanes made only of element-wise kernels and norms
over data the L2 holds, which `replay` prices low on an H100 (its stand-ins slowing each
other less than the kernels do): three lanes of written-out RMSNorm (batch 74), four of
residual scales (batch 73), three of masked scaling (batch 70). `--traces DIR` records each
case's side-by-side, one-after-another and first-lane-alone steps (stamps and all) after
every timing, for `launch-econ replay`.

    python3 scripts/lane_overlap_stamps_probe.py --out FILE.json [--trials N]
        [--cases beside-gemv|elementwise] [--traces DIR]
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import (capture, graph_times, lane_of, lane_stamps, linear_lane,  # noqa: E402
                        probe_args, record_steps, repeated, rms_norm)


def cases(torch):
    """name -> (element-wise lane, [GEMV lanes]): shapes of kg_wide_adds, kg_gelu,
    kg_residual_adds (batch 56) and kh_wide_silu (batch 57)."""
    f = torch.nn.functional
    with torch.device("cuda"):
        wide = torch.randn(8, 65536, dtype=torch.bfloat16)
        wide_r = torch.randn(8, 65536, dtype=torch.bfloat16)
        g64 = torch.randn(64, 8192, dtype=torch.float16)
        res = torch.randn(16, 4096, dtype=torch.float16)
        res_r = torch.randn(16, 4096, dtype=torch.float16)
        silu = torch.randn(16, 32768, dtype=torch.float16)
    return {
        "wide_adds_beside_gemv_lane": (
            repeated(wide, 8, lambda y: y + wide_r),
            [linear_lane(2048, 8192, 1, 4, torch.bfloat16)]),
        "gelu_beside_fp16_gemv_lane": (
            repeated(g64, 8, lambda y: f.gelu(y) * 0.9),
            [linear_lane(2048, 8192, 1, 4, torch.float16)]),
        "residual_adds_beside_qkv_lanes": (
            repeated(res, 12, lambda y: y + res_r * 0.5),
            [linear_lane(4096, 6144, 1, 3, torch.float16) for _ in range(2)]),
        "wide_silu_beside_fp16_gemv_lane": (
            repeated(silu, 8, lambda y: f.silu(y) * 0.5),
            [linear_lane(4096, 4096, 1, 4, torch.float16)]),
    }


def elementwise_cases(torch):
    """name -> (first lane, [the other lanes]): lanes of one shape each, as batches 74, 73 and
    70 wrote them, every lane over tensors of its own."""
    def rmsnorm():
        with torch.device("cuda"):
            g = torch.rand(2048, dtype=torch.float16)
        return lane_of((32, 2048), torch.float16, 4, lambda y: rms_norm(y, g))

    def residual_scale():
        with torch.device("cuda"):
            r = torch.randn(1 << 18)
        return lane_of((1 << 18,), torch.float32, 6, lambda y: (y + r) * 0.5)

    def masked_scaling():
        with torch.device("cuda"):
            x = torch.randn(256, 1024)
        return repeated(x, 6, lambda y: torch.where(y > 0.1, y * 1.3, y * 0.2))

    out = {}
    for name, make, count in (("three_lanes_of_rmsnorm_fp16", rmsnorm, 3),
                              ("four_lanes_of_residual_scales_f32", residual_scale, 4),
                              ("three_lanes_of_masked_scaling_f32", masked_scaling, 3)):
        lanes = [make() for _ in range(count)]
        out[name] = (lanes[0], lanes[1:])
    return out


def stamped(torch, mark, lanes, side_by_side):
    """A step running `lanes`, lane i between stamps 2i and 2i + 1: each on a stream of its
    own forked from the current one and joined back, or all on one side stream in turn."""
    streams = [torch.cuda.Stream() for _ in (lanes if side_by_side else lanes[:1])]

    def step():
        main = torch.cuda.current_stream()
        for s in streams:
            s.wait_stream(main)
        for i, lane in enumerate(lanes):
            with torch.cuda.stream(streams[i if side_by_side else 0]):
                mark(2 * i)
                lane()
                mark(2 * i + 1)
        for s in streams:
            main.wait_stream(s)
    return step


def spans(torch, graph, rec, lanes, runs=30):
    """Medians over `runs` replays of each lane's (start, end), µs from the earliest stamp."""
    import numpy as np
    got = [[] for _ in range(lanes)]
    for _ in range(runs):
        rec[:] = 0
        torch.cuda.synchronize()
        graph.replay()
        torch.cuda.synchronize()
        h = rec.get().astype(np.int64)[:2 * lanes]
        h = (h - h.min()) / 1e3
        for i in range(lanes):
            got[i].append((h[2 * i], h[2 * i + 1]))
    return [(statistics.median(a for a, _ in g), statistics.median(b for _, b in g))
            for g in got]


def overlap_share(a, b):
    """The share of the shorter of spans `a` and `b` during which both run."""
    both = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    return both / max(1e-9, min(a[1] - a[0], b[1] - b[0]))


def parse_args(argv=None):
    """The probe's arguments, checked before any GPU work: `--cases` is one of two sets;
    `--traces DIR` records each case's steps there (NAME.LAYOUT.eager.json), after all timing."""
    return probe_args(__doc__, 9, traces=True, argv=argv, extra=lambda ap: ap.add_argument(
        "--cases", choices=["beside-gemv", "elementwise"], default="beside-gemv"))


def main():
    import json

    args = parse_args()
    import torch
    torch.manual_seed(0)
    mark, rec = lane_stamps(16)
    out = {"device": torch.cuda.get_device_name(), "cases": {}}
    steps = []
    with torch.no_grad():
        chosen = cases(torch) if args.cases == "beside-gemv" else elementwise_cases(torch)
        for name, (chain, gemvs) in chosen.items():
            lanes = [chain] + gemvs
            graphs = {"side_by_side": capture(stamped(torch, mark, lanes, True)),
                      "one_after_another": capture(stamped(torch, mark, lanes, False))}
            for i, lane in enumerate(lanes):
                graphs[f"lane{i}_alone"] = capture(stamped(torch, mark, [lane], True))
            print(name, flush=True)
            times = graph_times(torch, graphs, args.trials)
            sides = spans(torch, graphs["side_by_side"][0], rec, len(lanes))
            shares = [overlap_share(sides[0], s) for s in sides[1:]]
            for i, (a, b) in enumerate(sides):
                print(f"  lane {i}: {a:7.1f} -> {b:7.1f} us", flush=True)
            print("  overlap with the chain: " + ", ".join(f"{s:.0%}" for s in shares))
            out["cases"][name] = {"graph_us": times["us"], "spread_us": times["spread_us"],
                                  "lane_spans_us": sides, "overlap_with_chain": shares}
            steps += [(f"{name}.side_by_side", stamped(torch, mark, lanes, True)),
                      (f"{name}.one_after_another", stamped(torch, mark, lanes, False)),
                      (f"{name}.lane0_alone", stamped(torch, mark, lanes[:1], True))]
    if args.traces:
        # Only now the profiler: a session slows the launches after it.
        record_steps(torch, steps, args.traces)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
