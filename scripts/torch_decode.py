#!/usr/bin/env python3
"""A decode-like step (a few transformer layers, one token, a KV cache), profiled with
torch.profiler and timed eagerly and as a torch.cuda.CUDAGraph replay, so that
`launch-econ replay` can be checked against PyTorch's own graph replay of the same step.

Writes into --out: decode_trace.json (Kineto trace of one step), decode_small.json (a two-layer
step, GPU events only: small enough for a test fixture), torch_results.json (timings).
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F

from walk_parts import timed_ms


class Layer(torch.nn.Module):
    def __init__(self, d, heads, ctx, dev, dt):
        super().__init__()
        self.h, self.dh = heads, d // heads
        mk = lambda *s: torch.randn(*s, device=dev, dtype=dt) * 0.02
        self.n1, self.n2 = torch.ones(d, device=dev, dtype=dt), torch.ones(d, device=dev, dtype=dt)
        self.qkv, self.o = mk(3 * d, d), mk(d, d)
        self.up, self.gate, self.down = mk(4 * d, d), mk(4 * d, d), mk(d, 4 * d)
        self.k = mk(1, heads, ctx, self.dh)
        self.v = mk(1, heads, ctx, self.dh)

    @staticmethod
    def rms(x, w):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w

    def forward(self, x, pos):
        b, d = x.shape
        q, k, v = F.linear(self.rms(x, self.n1), self.qkv).split(d, dim=-1)
        q = q.view(b, self.h, 1, self.dh)
        self.k.index_copy_(2, pos, k.view(b, self.h, 1, self.dh))
        self.v.index_copy_(2, pos, v.view(b, self.h, 1, self.dh))
        a = F.scaled_dot_product_attention(q, self.k, self.v)
        x = x + F.linear(a.reshape(b, d), self.o)
        hdn = self.rms(x, self.n2)
        return x + F.linear(F.silu(F.linear(hdn, self.gate)) * F.linear(hdn, self.up), self.down)


def build(layers, d, heads, ctx, dt=torch.bfloat16):
    dev = "cuda"
    model = [Layer(d, heads, ctx, dev, dt) for _ in range(layers)]
    x = torch.randn(1, d, device=dev, dtype=dt)
    pos = torch.tensor([ctx - 1], device=dev)

    def step():
        y = x
        for layer in model:
            y = layer(y, pos)
        return y

    return step


def event_ms(fn, n):
    times = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times), times


def profile(step, path, cpu):
    acts = [torch.profiler.ProfilerActivity.CUDA]
    if cpu:
        acts.append(torch.profiler.ProfilerActivity.CPU)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=acts) as prof:
        step()
        torch.cuda.synchronize()
    prof.export_chrome_trace(path)


def model_args(ap):
    """The step's shape and the output folder, as options of `ap` (shared with the scripts that
    record this step other ways)."""
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--d", type=int, default=2048)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--ctx", type=int, default=1024)
    return ap


def main():
    a = model_args(argparse.ArgumentParser()).parse_args()
    torch.manual_seed(0)
    step = build(a.layers, a.d, a.heads, a.ctx)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(5):
            step()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    eager_ev, _ = event_ms(step, 50)
    eager_wall, _ = timed_ms(step, 10, 15)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    for _ in range(5):
        g.replay()
    graph_ev, graph_ev_all = event_ms(g.replay, 100)
    graph_wall, _ = timed_ms(g.replay, 10, 15)
    profile(step, f"{a.out}/decode_trace.json", cpu=True)
    small = build(2, 512, 8, 256)
    for _ in range(3):
        small()
    profile(small, f"{a.out}/decode_small.json", cpu=False)
    res = dict(
        torch=torch.__version__,
        device=torch.cuda.get_device_name(0),
        config=vars(a),
        eager_event_ms=eager_ev,
        eager_wall_ms=eager_wall,
        graph_replay_event_ms=graph_ev,
        graph_replay_event_min_ms=min(graph_ev_all),
        graph_replay_event_max_ms=max(graph_ev_all),
        graph_replay_wall_ms=graph_wall,
    )
    with open(f"{a.out}/torch_results.json", "w") as f:
        json.dump(res, f, indent=2)
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
