"""Real PyTorch graphs of small-kernel lanes (24 f32 multiplies over 64 Ki floats) on the capture
stream, forked onto one side stream, and forked onto two, timed unprofiled in a process that first
took N streams from PyTorch's pool and ran a kernel on each: does the real graph move with the
process's stream history as the replay does with --prior-streams? One process per N; prints one
JSON line (us a step, fresh and after 32 kernels on a new stream).

    for n in 0 1 2 4 8 16; do python3 scripts/pool_streams_probe.py $n; done
"""
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture, replay_ms  # noqa: E402

n = int(sys.argv[1])
prior = []
for _ in range(n):
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.ones(1, device="cuda").add_(1)
    s.synchronize()
    prior.append(s)

def lane():
    x = torch.randn(64 * 1024, device="cuda")
    def run():
        y = x
        for _ in range(24):
            y = y * 1.0001
        return y
    return run

def forked(k):
    lanes = [lane() for _ in range(k)]
    streams = [torch.cuda.Stream() for _ in range(k)]
    def run():
        main = torch.cuda.current_stream()
        outs = []
        for s, l in zip(streams, lanes):
            s.wait_stream(main)
            with torch.cuda.stream(s):
                outs.append(l())
        for s in streams:
            main.wait_stream(s)
        return sum(o[:1] for o in outs)
    return run

walks = {"unforked": lane(), "forked1": forked(1), "forked2": forked(2)}
captured = {name: capture(step) for name, step in walks.items()}
graphs = {name: g for name, (g, _) in captured.items()}
torch.cuda.synchronize()


def medians(trials):
    """Median µs of one replay of each graph (`replay_ms`: 20 replays between events)."""
    return {k: statistics.median(v) * 1000 for k, v in replay_ms(torch, graphs, 20, trials).items()}


fresh = medians(15)
other = torch.cuda.Stream()
with torch.cuda.stream(other):
    t = torch.ones(1, device="cuda")
    for _ in range(32):
        t.add_(1)
torch.cuda.synchronize()
upper = medians(7)
print(json.dumps({"prior": n, "fresh_us": fresh, "after_other_stream_us": upper}))
