"""Which per-node level a PyTorch process's graphs run at, before and after it captures and
replays a graph with a forked lane, and after 32 kernels on a new stream: a one-stream graph
of 64 one-element adds timed at each point (per node, us). ORDER: forked_first or other_first
(which of the two comes first); prints one JSON line.

    python3 scripts/graph_level_fork_probe.py forked_first
"""
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture as capture_kept, replay_ms  # noqa: E402

order = sys.argv[1]
x = torch.zeros(1, device="cuda")


def chain():
    for _ in range(64):
        x.add_(1)


def capture(step):
    """`step` warmed once on a side stream and captured (`walk_parts.capture`)."""
    g, _ = capture_kept(step, warmups=1)
    torch.cuda.synchronize()
    return g


def per_node(g, nodes, batches=9, reps=20):
    """Median µs a node of `g` (`replay_ms`: `reps` replays between events, `batches` times)."""
    ms = replay_ms(torch, {"g": g}, reps, batches)["g"]
    return round(statistics.median(ms) * 1000 / nodes, 4)


y = torch.zeros(64 * 1024, device="cuda")
side = torch.cuda.Stream()
def forked():
    main = torch.cuda.current_stream()
    side.wait_stream(main)
    with torch.cuda.stream(side):
        for _ in range(24):
            y.mul_(1.0001)
    main.wait_stream(side)

out = {"order": order}
g = capture(chain)
out["chain_first"] = per_node(g, 64)
if order == "forked_first":
    f = capture(forked)
    out["forked_graph_us"] = per_node(f, 1)
    out["chain_after_forked"] = per_node(g, 64)
other = torch.cuda.Stream()
with torch.cuda.stream(other):
    for _ in range(32):
        x.add_(1)
torch.cuda.synchronize()
out["chain_after_other_stream"] = per_node(g, 64)
if order != "forked_first":
    f = capture(forked)
    out["forked_graph_us"] = per_node(f, 1)
    out["chain_after_forked"] = per_node(g, 64)
print(json.dumps(out))
