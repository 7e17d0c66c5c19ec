#!/usr/bin/env python3
"""Each side of a two-stream walk alone, both side by side, and both one after the other, as
CUDA graphs replayed unprofiled and interleaved: whether `replay --summary` misses a walk in
what each lane costs alone or in what the lanes cost each other.

Each graph forks its sides off the capture stream onto streams of their own and joins them
back, as `walk_parts.fork_join` does, so that a side alone runs where it runs in the walk. The
sides are those of held-out batch 22's two-stream decoders (`scripts/heldout_22_walks.py`) and
two of its Llama decodes side by side; `pair_over_longer` is the side-by-side graph over the
longer side alone (1 would be a perfect overlap, the one-stream graph over it the serial bound).

    python3 scripts/lane_alone_probe.py --out lanes.json \\
        [--pairs prefill_beside_decode,vit_beside_decode,two_decodes]

Needs a CUDA device, PyTorch and transformers (docs/validation-h200.md, "What a decoder beside
a decoder misses").
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import heldout_22_walks as h  # noqa: E402
from walk_parts import capture, fork_lanes, hf_decoder_step, replay_ms  # noqa: E402


def sides(name):
    """The two sides of pair `name`, each a step of one model."""
    if name == "prefill_beside_decode":
        return (hf_decoder_step("Llama", "bfloat16", 1, 128, **h.SMALL_LLAMA),
                hf_decoder_step("Llama", "bfloat16", 8, 1, **h.LLAMA_2K))
    if name == "vit_beside_decode":
        return h.vit_encoder(), hf_decoder_step("Llama", "float16", 1, 1, **h.LLAMA_2K)
    if name == "two_decodes":
        return (hf_decoder_step("Llama", "bfloat16", 8, 1, **h.LLAMA_2K),
                hf_decoder_step("Llama", "bfloat16", 8, 1, **h.LLAMA_2K))
    raise SystemExit(f"error: unknown pair {name!r}")


def timed(torch, graphs, reps=20, trials=21):
    """Median, min and max ms of one replay of each graph, the graphs interleaved."""
    times = replay_ms(torch, {k: g for k, (g, _) in graphs.items()}, reps, trials)
    return {k: (statistics.median(v), min(v), max(v)) for k, v in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--pairs", default="prefill_beside_decode,vit_beside_decode,two_decodes")
    args = ap.parse_args()
    import torch
    out = {"device": torch.cuda.get_device_name(), "pairs": {}}
    for name in args.pairs.split(","):
        a, b = sides(name)
        graphs = {"a_alone": capture(fork_lanes([a])),
                  "b_alone": capture(fork_lanes([b])),
                  "side_by_side": capture(fork_lanes([a, b])),
                  "one_stream": capture(fork_lanes([lambda: (a(), b())[1]]))}
        t = timed(torch, graphs)
        r = {k: v[0] for k, v in t.items()}
        r["range_ms"] = {k: [v[1], v[2]] for k, v in t.items()}
        r["pair_over_longer"] = r["side_by_side"] / max(r["a_alone"], r["b_alone"])
        print(name, " ".join(f"{k} {v:.4f}" for k, v in r.items() if k != "range_ms"), flush=True)
        out["pairs"][name] = r
        del graphs
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
