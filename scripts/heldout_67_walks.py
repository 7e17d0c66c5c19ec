"""Six walks written after 98f3f97 (a wait the event ids do not tie to its record call,
issued right after a record call, read at that call, and so on the stream that issued right
before it), before any run: streams that wait on each other through events the way real
programs make them. Three pipeline stages of unequal depth passing six micro-batches through
one `ready` event per stage recorded again each time (bf16); a producer whose output event,
recorded again every layer, three consumer streams wait on (fp16 GEMVs); a compute stream
handing each layer's output to a reduction stream and waiting, before the layer after next,
on that reduction's event (reused events both ways, f32); draft and target rounds of
speculative decoding ordered by a fresh `torch.cuda.Event()` each way per round (fp16); a
decode layer stack whose side stream writes each layer's K and V into a cache as soon as the
layer's projection is recorded (bf16); two model replicas on two streams each waiting, every
layer, on a shared router stream's event (fresh events, bf16).

    python3 scripts/validate_all.py --out DIR --groups heldout67
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import no_grad_step  # noqa: E402
from walk_registry import builder  # noqa: E402


def unequal_stages_reused_events_bf16():
    import torch
    nn = torch.nn
    depths = (1, 3, 2)
    stages = [nn.Sequential(*[nn.Sequential(nn.Linear(1024, 1024), nn.GELU())
                              for _ in range(d)]).cuda().bfloat16().eval() for d in depths]
    micro = [torch.randn(8, 1024, device="cuda", dtype=torch.bfloat16) for _ in range(6)]
    streams = [torch.cuda.Stream() for _ in stages]
    ready = [torch.cuda.Event() for _ in stages]

    def run():
        main = torch.cuda.current_stream()
        streams[0].wait_stream(main)
        outs = []
        for x in micro:
            for k, (stage, s) in enumerate(zip(stages, streams)):
                if k:
                    s.wait_event(ready[k - 1])
                with torch.cuda.stream(s):
                    x = stage(x)
                ready[k].record(s)
            outs.append(x)
        for s in streams:
            main.wait_stream(s)
        return torch.stack(outs)
    return no_grad_step(run)


def producer_event_three_consumers_fp16():
    import torch
    with torch.device("cuda"):
        h = torch.randn(1, 2048, dtype=torch.float16)
        produce = [torch.randn(2048, 2048, dtype=torch.float16) * 0.02 for _ in range(4)]
        consume = [[torch.randn(2048, 512, dtype=torch.float16) * 0.02 for _ in range(4)]
                   for _ in range(3)]
    consumers = [torch.cuda.Stream() for _ in range(3)]
    done = torch.cuda.Event()

    def run():
        main = torch.cuda.current_stream()
        for s in consumers:
            s.wait_stream(main)
        x, outs = h, []
        for layer in range(4):
            x = torch.tanh(x @ produce[layer])
            done.record(main)
            for c, s in enumerate(consumers):
                s.wait_event(done)
                with torch.cuda.stream(s):
                    outs.append(torch.relu(x @ consume[c][layer]))
        for s in consumers:
            main.wait_stream(s)
        return x, torch.cat(outs, dim=-1)
    return no_grad_step(run)


def compute_hands_layers_to_reducer_f32():
    import torch
    with torch.device("cuda"):
        x0 = torch.randn(64, 1024)
        weights = [torch.randn(1024, 1024) * 0.03 for _ in range(6)]
        sums = torch.zeros(6, 1024)
    s_compute, s_reduce = torch.cuda.Stream(), torch.cuda.Stream()
    layer_done, reduced = torch.cuda.Event(), torch.cuda.Event()

    def run():
        main = torch.cuda.current_stream()
        s_compute.wait_stream(main)
        s_reduce.wait_stream(main)
        x = x0
        for i, w in enumerate(weights):
            if i >= 2:
                s_compute.wait_event(reduced)
            with torch.cuda.stream(s_compute):
                x = torch.relu(x @ w)
            layer_done.record(s_compute)
            s_reduce.wait_event(layer_done)
            with torch.cuda.stream(s_reduce):
                sums[i].copy_(x.sum(dim=0))
            reduced.record(s_reduce)
        main.wait_stream(s_compute)
        main.wait_stream(s_reduce)
        return x, sums
    return no_grad_step(run)


def draft_target_fresh_events_fp16():
    import torch
    with torch.device("cuda"):
        h = torch.randn(2, 1536, dtype=torch.float16)
        draft = torch.randn(1536, 1536, dtype=torch.float16) * 0.03
        target = [torch.randn(1536, 1536, dtype=torch.float16) * 0.03 for _ in range(3)]
    s_draft, s_target = torch.cuda.Stream(), torch.cuda.Stream()

    def run():
        main = torch.cuda.current_stream()
        s_draft.wait_stream(main)
        s_target.wait_stream(main)
        x = h
        for _ in range(3):
            with torch.cuda.stream(s_draft):
                for _ in range(3):
                    x = torch.nn.functional.silu(x @ draft)
            drafted = torch.cuda.Event()
            drafted.record(s_draft)
            s_target.wait_event(drafted)
            with torch.cuda.stream(s_target):
                for w in target:
                    x = torch.tanh(x @ w)
            verified = torch.cuda.Event()
            verified.record(s_target)
            s_draft.wait_event(verified)
        main.wait_stream(s_draft)
        main.wait_stream(s_target)
        return x
    return no_grad_step(run)


def kv_cache_writes_on_side_stream_bf16():
    import torch
    with torch.device("cuda"):
        h = torch.randn(4, 1024, dtype=torch.bfloat16)
        qkv = [torch.randn(1024, 3072, dtype=torch.bfloat16) * 0.02 for _ in range(6)]
        out = [torch.randn(1024, 1024, dtype=torch.bfloat16) * 0.02 for _ in range(6)]
        cache = torch.zeros(6, 2, 4, 128, 1024, dtype=torch.bfloat16)
    s_cache = torch.cuda.Stream()

    def run():
        main = torch.cuda.current_stream()
        s_cache.wait_stream(main)
        x = h
        for layer in range(6):
            q, k, v = (x @ qkv[layer]).split(1024, dim=-1)
            projected = torch.cuda.Event()
            projected.record(main)
            s_cache.wait_event(projected)
            with torch.cuda.stream(s_cache):
                cache[layer, 0, :, 7].copy_(k)
                cache[layer, 1, :, 7].copy_(v)
            x = x + torch.nn.functional.silu(q * k + v) @ out[layer]
        main.wait_stream(s_cache)
        return x
    return no_grad_step(run)


def two_replicas_waiting_on_router_bf16():
    import torch
    with torch.device("cuda"):
        tokens = [torch.randn(4, 1024, dtype=torch.bfloat16) for _ in range(2)]
        router = [torch.randn(1024, 1024, dtype=torch.bfloat16) * 0.03 for _ in range(4)]
        layers = [[torch.randn(1024, 1024, dtype=torch.bfloat16) * 0.03 for _ in range(4)]
                  for _ in range(2)]
    s_router = torch.cuda.Stream()
    replicas = [torch.cuda.Stream() for _ in range(2)]

    def run():
        main = torch.cuda.current_stream()
        for s in [s_router] + replicas:
            s.wait_stream(main)
        xs, gate = list(tokens), torch.ones(4, 1024, device="cuda", dtype=torch.bfloat16)
        for layer in range(4):
            with torch.cuda.stream(s_router):
                gate = torch.sigmoid(gate @ router[layer])
            routed = torch.cuda.Event()
            routed.record(s_router)
            for r, s in enumerate(replicas):
                s.wait_event(routed)
                with torch.cuda.stream(s):
                    xs[r] = torch.relu(xs[r] @ layers[r][layer]) * gate
        for s in [s_router] + replicas:
            main.wait_stream(s)
        return torch.stack(xs)
    return no_grad_step(run)


build = builder(131_67, {
    "kr_unequal_stages_reused_events_bf16": unequal_stages_reused_events_bf16,
    "kr_producer_event_three_consumers_fp16": producer_event_three_consumers_fp16,
    "kr_compute_hands_layers_to_reducer_f32": compute_hands_layers_to_reducer_f32,
    "kr_draft_target_fresh_events_fp16": draft_target_fresh_events_fp16,
    "kr_kv_cache_writes_on_side_stream_bf16": kv_cache_writes_on_side_stream_bf16,
    "kr_two_replicas_waiting_on_router_bf16": two_replicas_waiting_on_router_bf16,
})
