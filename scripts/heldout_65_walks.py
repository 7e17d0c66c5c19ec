"""Six walks written after e3d4314 (a lane waiting on another's work no longer costs the
front end per node), before any run, of operator kinds no earlier batch holds and of streams
that take turns as real programs do. On one stream: a VQ-VAE quantiser (distances of 4 x 256
latents to a 1024-entry codebook by `torch.cdist`, `argmin`, the codebook rows gathered and a
commitment loss, f32); a convolution done as im2col (`unfold`, a GEMM and a reshape, three
fp16 layers over two 48 x 48 images); a log-space scan of a linear recurrence (eight bf16
layers of gates, `logcumsumexp` over 256 steps and an output projection). On several
streams, taking turns through events: a draft model's GEMV chain and a target model's wider
GEMV, each round of one waiting on the other's last (speculative decoding, bf16); a layer's
weights copied ahead into one of two buffers on a copy stream while the compute stream runs
the layer before from the other (double-buffered prefetch, fp16, 8 MiB a layer); three
pipeline stages on three streams passing four micro-batches, each stage waiting on the one
before for the same micro-batch (bf16 linear and LayerNorm a stage).

    python3 scripts/validate_all.py --out DIR --groups heldout65
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import no_grad_step  # noqa: E402
from walk_registry import builder  # noqa: E402


def vq_codebook_lookup():
    import torch
    with torch.device("cuda"):
        latents = [torch.randn(256, 64) for _ in range(4)]
        codebook = torch.randn(1024, 64)

    def step():
        losses = []
        for z in latents:
            codes = torch.cdist(z, codebook).argmin(dim=-1)
            quantised = codebook[codes]
            losses.append(((quantised - z) ** 2).mean())
        return torch.stack(losses)
    return no_grad_step(step)


def im2col_unfold_matmul_fp16():
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        images = [torch.randn(1, 16, 48, 48, dtype=torch.float16) for _ in range(2)]
        weights = [torch.randn(16, 16 * 9, dtype=torch.float16) * 0.05 for _ in range(3)]

    def conv(x, w):
        cols = f.unfold(x, 3, padding=1)
        return torch.relu(w @ cols).view(x.shape)

    def step():
        out = []
        for x in images:
            for w in weights:
                x = conv(x, w)
            out.append(x)
        return out
    return no_grad_step(step)


def log_space_scan_bf16():
    import torch
    with torch.device("cuda"):
        x = torch.randn(4, 256, 512, dtype=torch.bfloat16)
        gates = [torch.randn(512, 512, dtype=torch.bfloat16) * 0.03 for _ in range(8)]
        outs = [torch.randn(512, 512, dtype=torch.bfloat16) * 0.03 for _ in range(8)]

    def step():
        y = x
        for g, o in zip(gates, outs):
            log_a = torch.nn.functional.logsigmoid((y @ g).float())
            h = torch.exp(torch.logcumsumexp(log_a, dim=1)).to(y.dtype)
            y = y + (h * y) @ o
        return y
    return no_grad_step(step)


def draft_verify_turns_bf16():
    """Draft rounds on one stream, each verified on another; the next draft round waits on
    the last verification."""
    import torch
    with torch.device("cuda"):
        h = torch.randn(1, 1024, dtype=torch.bfloat16)
        draft = [torch.randn(1024, 1024, dtype=torch.bfloat16) * 0.03 for _ in range(2)]
        target = torch.randn(1024, 4096, dtype=torch.bfloat16) * 0.03
        back = torch.randn(4096, 1024, dtype=torch.bfloat16) * 0.03
    s_draft, s_target = torch.cuda.Stream(), torch.cuda.Stream()

    def run():
        main = torch.cuda.current_stream()
        s_draft.wait_stream(main)
        x = h
        for _ in range(4):
            with torch.cuda.stream(s_draft):
                for w in draft:
                    x = torch.nn.functional.silu(x @ w)
            s_target.wait_stream(s_draft)
            with torch.cuda.stream(s_target):
                x = torch.tanh((x @ target) @ back)
            s_draft.wait_stream(s_target)
        main.wait_stream(s_draft)
        main.wait_stream(s_target)
        return x
    return no_grad_step(run)


def prefetch_double_buffer_fp16():
    """Layer i + 1's weights copied into buffer (i + 1) % 2 on a copy stream once layer i - 1
    has finished reading it, while layer i runs from buffer i % 2 on the compute stream."""
    import torch
    with torch.device("cuda"):
        layers = [torch.randn(2048, 2048, dtype=torch.float16) * 0.02 for _ in range(6)]
        buffers = [torch.empty(2048, 2048, dtype=torch.float16) for _ in range(2)]
        x0 = torch.randn(16, 2048, dtype=torch.float16)
    s_copy, s_compute = torch.cuda.Stream(), torch.cuda.Stream()

    def run():
        main = torch.cuda.current_stream()
        s_copy.wait_stream(main)
        s_compute.wait_stream(main)
        with torch.cuda.stream(s_copy):
            buffers[0].copy_(layers[0])
        x = x0
        for i in range(len(layers)):
            if i + 1 < len(layers):
                s_copy.wait_stream(s_compute)
                with torch.cuda.stream(s_copy):
                    buffers[(i + 1) % 2].copy_(layers[i + 1])
            s_compute.wait_stream(s_copy)
            with torch.cuda.stream(s_compute):
                x = torch.nn.functional.gelu(x @ buffers[i % 2])
        main.wait_stream(s_copy)
        main.wait_stream(s_compute)
        return x
    return no_grad_step(run)


def microbatch_pipeline_three_stages():
    import torch
    nn = torch.nn
    stages = [nn.Sequential(nn.Linear(1024, 1024), nn.LayerNorm(1024)).cuda().bfloat16().eval()
              for _ in range(3)]
    micro = [torch.randn(32, 1024, device="cuda", dtype=torch.bfloat16) for _ in range(4)]
    streams = [torch.cuda.Stream() for _ in stages]

    def run():
        main = torch.cuda.current_stream()
        streams[0].wait_stream(main)
        outs = []
        for x in micro:
            for k, (stage, s) in enumerate(zip(stages, streams)):
                if k:
                    s.wait_stream(streams[k - 1])
                with torch.cuda.stream(s):
                    x = stage(x)
            outs.append(x)
        for s in streams:
            main.wait_stream(s)
        return torch.cat(outs)
    return no_grad_step(run)


build = builder(131_65, {
    "kp_vq_codebook_lookup": vq_codebook_lookup,
    "kp_im2col_unfold_matmul_fp16": im2col_unfold_matmul_fp16,
    "kp_log_space_scan_bf16": log_space_scan_bf16,
    "kp_draft_verify_turns_bf16": draft_verify_turns_bf16,
    "kp_prefetch_double_buffer_fp16": prefetch_double_buffer_fp16,
    "kp_microbatch_pipeline_three_stages": microbatch_pipeline_three_stages,
})
