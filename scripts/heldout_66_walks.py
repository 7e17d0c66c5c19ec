"""Six walks written after the record calls' producer reading (a record call right after
work on one stream, with work issued after it before the next record, is read as made on
that stream), before any run, of programs whose streams wait on each other through events
in the ways that reading meets: a two-stage pipeline of MLP blocks passing six micro-batches
(each stage waiting on the one before, `wait_stream`); three GEMM shards on three streams
whose events are recorded one after another once all are issued, summed by a fourth stream
as each arrives; four streams passing chunks round a ring, each round's events recorded one
after another; an encoder recording a fresh event after each of four chunks, a decoder
stream waiting on each in turn; a three-stage pipeline that records one event per stage
again for every micro-batch (event objects made once); a shared expert and routed experts
on two streams, a third stream waiting on the shared expert's event (recorded after the
routed experts were issued) for a partial sum, then on the routed experts' for the rest.

    python3 scripts/validate_all.py --out DIR --groups heldout66
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import no_grad_step  # noqa: E402
from walk_registry import builder  # noqa: E402


def two_stage_pipeline_mlp_blocks_fp16():
    import torch
    nn = torch.nn

    def block():
        return nn.Sequential(nn.LayerNorm(1024), nn.Linear(1024, 2048), nn.GELU(),
                             nn.Linear(2048, 1024))
    stages = [nn.Sequential(block(), block()).cuda().half().eval() for _ in range(2)]
    micro = [torch.randn(16, 1024, device="cuda", dtype=torch.float16) for _ in range(6)]
    streams = [torch.cuda.Stream() for _ in stages]

    def run():
        main = torch.cuda.current_stream()
        streams[0].wait_stream(main)
        outs = []
        for x in micro:
            with torch.cuda.stream(streams[0]):
                h = stages[0](x)
            streams[1].wait_stream(streams[0])
            with torch.cuda.stream(streams[1]):
                outs.append(stages[1](h))
        for s in streams:
            main.wait_stream(s)
        return torch.cat(outs)
    return no_grad_step(run)


def shards_reduced_as_they_arrive_bf16():
    import torch
    with torch.device("cuda"):
        x = torch.randn(8, 2048, dtype=torch.bfloat16)
        up = [torch.randn(2048, 2048, dtype=torch.bfloat16) * 0.02 for _ in range(3)]
        down = [torch.randn(2048, 2048, dtype=torch.bfloat16) * 0.02 for _ in range(3)]
    shard_streams = [torch.cuda.Stream() for _ in range(3)]
    reducer = torch.cuda.Stream()

    def run():
        main = torch.cuda.current_stream()
        for s in shard_streams + [reducer]:
            s.wait_stream(main)
        outs = []
        for s, a, b in zip(shard_streams, up, down):
            with torch.cuda.stream(s):
                outs.append(torch.relu(x @ a) @ b)
        events = []
        for s in shard_streams:
            e = torch.cuda.Event()
            e.record(s)
            events.append(e)
        with torch.cuda.stream(reducer):
            total = torch.zeros(8, 2048, device="cuda", dtype=torch.bfloat16)
            for e, o in zip(events, outs):
                reducer.wait_event(e)
                total = total + o
        for s in shard_streams + [reducer]:
            main.wait_stream(s)
        return total
    return no_grad_step(run)


def ring_of_four_streams_f32():
    import torch
    with torch.device("cuda"):
        chunks = [torch.randn(256 * 1024) for _ in range(4)]
    streams = [torch.cuda.Stream() for _ in range(4)]

    def run():
        main = torch.cuda.current_stream()
        for s in streams:
            s.wait_stream(main)
        cur = list(chunks)
        for _ in range(3):
            events = []
            for s in streams:
                e = torch.cuda.Event()
                e.record(s)
                events.append(e)
            nxt = []
            for i, s in enumerate(streams):
                prev = (i - 1) % len(streams)
                s.wait_event(events[prev])
                with torch.cuda.stream(s):
                    nxt.append(cur[i] * 0.5 + cur[prev])
            cur = nxt
        for s in streams:
            main.wait_stream(s)
        return torch.stack(cur)
    return no_grad_step(run)


def chunked_encoder_feeding_decoder_fp16():
    import torch
    nn = torch.nn
    enc = nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 512)).cuda().half().eval()
    proj = nn.Linear(512, 512).cuda().half().eval()
    with torch.device("cuda"):
        chunks = [torch.randn(64, 512, dtype=torch.float16) for _ in range(4)]
        queries = torch.randn(8, 512, dtype=torch.float16)
    s_enc, s_dec = torch.cuda.Stream(), torch.cuda.Stream()

    def run():
        main = torch.cuda.current_stream()
        s_enc.wait_stream(main)
        s_dec.wait_stream(main)
        memory, events = [], []
        for c in chunks:
            with torch.cuda.stream(s_enc):
                memory.append(enc(c))
            e = torch.cuda.Event()
            e.record(s_enc)
            events.append(e)
        q = queries
        for m, e in zip(memory, events):
            s_dec.wait_event(e)
            with torch.cuda.stream(s_dec):
                attn = torch.softmax(q @ m.t() * 0.044, dim=-1)
                q = q + proj(attn @ m)
        main.wait_stream(s_enc)
        main.wait_stream(s_dec)
        return q
    return no_grad_step(run)


def reused_ready_events_pipeline_bf16():
    import torch
    nn = torch.nn
    stages = [nn.Sequential(nn.Linear(768, 768), nn.SiLU()).cuda().bfloat16().eval()
              for _ in range(3)]
    micro = [torch.randn(24, 768, device="cuda", dtype=torch.bfloat16) for _ in range(4)]
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
        return torch.cat(outs)
    return no_grad_step(run)


def shared_expert_beside_routed_combine_bf16():
    import torch
    with torch.device("cuda"):
        h = torch.randn(4, 2048, dtype=torch.bfloat16)
        shared_up = torch.randn(2048, 8192, dtype=torch.bfloat16) * 0.02
        shared_down = torch.randn(8192, 2048, dtype=torch.bfloat16) * 0.02
        routed = [(torch.randn(2048, 1024, dtype=torch.bfloat16) * 0.02,
                   torch.randn(1024, 2048, dtype=torch.bfloat16) * 0.02) for _ in range(2)]
    s_shared, s_routed, s_combine = (torch.cuda.Stream() for _ in range(3))

    def run():
        main = torch.cuda.current_stream()
        for s in (s_shared, s_routed, s_combine):
            s.wait_stream(main)
        with torch.cuda.stream(s_shared):
            shared = torch.nn.functional.silu(h @ shared_up) @ shared_down
        with torch.cuda.stream(s_routed):
            routed_out = sum(torch.nn.functional.silu(h @ a) @ b for a, b in routed)
        shared_done, routed_done = torch.cuda.Event(), torch.cuda.Event()
        shared_done.record(s_shared)
        s_combine.wait_event(shared_done)
        with torch.cuda.stream(s_combine):
            partial = torch.nn.functional.rms_norm(h + shared, (2048,))
        routed_done.record(s_routed)
        s_combine.wait_event(routed_done)
        with torch.cuda.stream(s_combine):
            out = partial + routed_out
        for s in (s_shared, s_routed, s_combine):
            main.wait_stream(s)
        return out
    return no_grad_step(run)


build = builder(131_66, {
    "kq_two_stage_pipeline_mlp_blocks_fp16": two_stage_pipeline_mlp_blocks_fp16,
    "kq_shards_reduced_as_they_arrive_bf16": shards_reduced_as_they_arrive_bf16,
    "kq_ring_of_four_streams_f32": ring_of_four_streams_f32,
    "kq_chunked_encoder_feeding_decoder_fp16": chunked_encoder_feeding_decoder_fp16,
    "kq_reused_ready_events_pipeline_bf16": reused_ready_events_pipeline_bf16,
    "kq_shared_expert_beside_routed_combine_bf16": shared_expert_beside_routed_combine_bf16,
})
