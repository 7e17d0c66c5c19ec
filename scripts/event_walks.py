"""Walks for `scripts/validate.py --walk-module` whose streams are ordered by events the
program records and waits on itself (not `wait_stream` forks and joins). Four were written
after the change that reads waits on one recording of an event as waiting for the same work
(36ebf5b) and run once with it: one producer's output waited on by three consumer streams in
every layer, a pipeline that records one reused event object again every layer, weights for
the next layer copied on a side stream while the current layer computes (waits both ways:
the copy waits until its buffer was read, the layer waits for its copy), and two streams that
hand work to each other back and forth (results: docs/validation-h200.md, "Streams ordered by
the program's own events"). The fifth, three side streams forked one after another on one
event the program records again on main for each, was written with the change that reads a
wait on an event ordering a pipeline as no fork (88b9be6), to check that forks on one kept
event stay forks (docs/validation-h200.md, "Waits on an event the program keeps").

    python3 scripts/validate.py --out DIR --walk-module scripts/event_walks.py \
        --walks broadcast_three_consumers,reused_event_pipeline,prefetch_next_weights,\
ping_pong_streams,forks_on_one_event
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def weights(torch, count, d):
    return [torch.randn(d, d, dtype=torch.float16, device="cuda") * 0.02 for _ in range(count)]


def fork(torch, streams):
    main = torch.cuda.current_stream()
    for s in streams:
        s.wait_stream(main)
    return main


def join(main, streams):
    for s in streams:
        main.wait_stream(s)


def broadcast_step():
    """Five fp16 layers (hidden 2048, batch 16) on a producer stream; after each, one event
    waited on by three consumer streams that each run a smaller projection (2048 -> 512) and
    a GELU of it; joined at the end."""
    import torch
    f = torch.nn.functional
    d, layers = 2048, 5
    wp = weights(torch, layers, d)
    wc = [[torch.randn(512, d, dtype=torch.float16, device="cuda") * 0.02 for _ in range(3)]
          for _ in range(layers)]
    x0 = torch.randn(16, d, dtype=torch.float16, device="cuda")
    producer = torch.cuda.Stream()
    consumers = [torch.cuda.Stream() for _ in range(3)]

    def step():
        main = fork(torch, [producer, *consumers])
        # Every activation is kept to the end of the step: other streams read it.
        x, outs, made = x0, [], []
        for i in range(layers):
            with torch.cuda.stream(producer):
                x = f.gelu(f.linear(x, wp[i]))
                done = torch.cuda.Event()
                done.record()
            made.append(x)
            for c, w in zip(consumers, wc[i]):
                c.wait_event(done)
                with torch.cuda.stream(c):
                    outs.append(f.gelu(f.linear(x, w)))
        join(main, [producer, *consumers])
        return x.sum() + sum(o.sum() for o in outs)
    return step


def reused_event_step():
    """Two fp16 streams (hidden 2048, batch 8), the second one layer behind the first, ordered
    by one Event object the first stream records again after every layer (six layers)."""
    import torch
    f = torch.nn.functional
    d, layers = 2048, 6
    wa, wb = weights(torch, layers, d), weights(torch, layers, d)
    xa0 = torch.randn(8, d, dtype=torch.float16, device="cuda")
    xb0 = torch.randn(8, d, dtype=torch.float16, device="cuda")
    first, second = torch.cuda.Stream(), torch.cuda.Stream()
    ready = torch.cuda.Event()

    def step():
        main = fork(torch, [first, second])
        xa, xb, made = xa0, xb0, []
        for i in range(layers):
            with torch.cuda.stream(first):
                xa = f.gelu(f.linear(xa, wa[i]))
                ready.record()
            made.append(xa)
            second.wait_event(ready)
            with torch.cuda.stream(second):
                xb = f.silu(f.linear(xb + xa, wb[i]))
        join(main, [first, second])
        return xa + xb
    return step


def prefetch_step():
    """Eight fp16 layers (hidden 2048, batch 32) computed from two weight buffers on a compute
    stream, while a copy stream copies the next layer's weights into the other buffer: the copy
    waits until the compute stream has used that buffer, the layer waits for its copy."""
    import torch
    f = torch.nn.functional
    d, layers = 2048, 8
    source = weights(torch, layers, d)
    buffers = [torch.empty(d, d, dtype=torch.float16, device="cuda") for _ in range(2)]
    x0 = torch.randn(32, d, dtype=torch.float16, device="cuda")
    compute, copier = torch.cuda.Stream(), torch.cuda.Stream()

    def step():
        main = fork(torch, [compute, copier])
        copied = [None, None]
        used = [None, None]
        with torch.cuda.stream(copier):
            buffers[0].copy_(source[0])
            copied[0] = torch.cuda.Event()
            copied[0].record()
        x = x0
        for i in range(layers):
            b = i % 2
            if i + 1 < layers:
                nb = 1 - b
                if used[nb] is not None:
                    copier.wait_event(used[nb])
                with torch.cuda.stream(copier):
                    buffers[nb].copy_(source[i + 1])
                    copied[nb] = torch.cuda.Event()
                    copied[nb].record()
            compute.wait_event(copied[b])
            with torch.cuda.stream(compute):
                x = f.gelu(f.linear(x, buffers[b]))
                used[b] = torch.cuda.Event()
                used[b].record()
        join(main, [compute, copier])
        return x
    return step


def ping_pong_step():
    """Two fp16 streams (hidden 1536, batch 4) that hand one activation back and forth ten
    times: each runs a projection and a residual add on what the other made, waiting on the
    event the other recorded."""
    import torch
    f = torch.nn.functional
    d, hops = 1536, 10
    ws = [torch.randn(d, d, dtype=torch.float16, device="cuda") * 0.02 for _ in range(hops)]
    x0 = torch.randn(4, d, dtype=torch.float16, device="cuda")
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]

    def step():
        main = fork(torch, streams)
        x, handed, made = x0, None, []
        for i in range(hops):
            s = streams[i % 2]
            if handed is not None:
                s.wait_event(handed)
            with torch.cuda.stream(s):
                x = x + f.silu(f.linear(x, ws[i]))
                made.append(x)
                handed = torch.cuda.Event()
                handed.record()
        join(main, streams)
        return x
    return step


def forks_on_one_event_step():
    """A main fp16 stream (hidden 2048, batch 8) runs a projection, then forks three side
    streams one after another by recording one Event it keeps on main again before each side
    stream waits on it (not `wait_stream`'s fresh event per fork); each side stream runs four
    projections with GELUs on the projection; main joins them and adds their outputs."""
    import torch
    f = torch.nn.functional
    d = 2048
    w_main = weights(torch, 1, d)[0]
    ws = [weights(torch, 4, d) for _ in range(3)]
    x0 = torch.randn(8, d, dtype=torch.float16, device="cuda")
    sides = [torch.cuda.Stream() for _ in range(3)]
    forked = torch.cuda.Event()

    def step():
        main = torch.cuda.current_stream()
        h = f.linear(x0, w_main)
        outs = []
        for s, w in zip(sides, ws):
            forked.record(main)
            s.wait_event(forked)
            with torch.cuda.stream(s):
                y = h
                for wi in w:
                    y = f.gelu(f.linear(y, wi))
                outs.append(y)
        join(main, sides)
        return outs[0] + outs[1] + outs[2]
    return step


build = builder(23, {
    "broadcast_three_consumers": broadcast_step,
    "reused_event_pipeline": reused_event_step,
    "prefetch_next_weights": prefetch_step,
    "ping_pong_streams": ping_pong_step,
    "forks_on_one_event": forks_on_one_event_step,
})
