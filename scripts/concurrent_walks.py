"""Three walks on concurrent streams for `scripts/validate.py --walk-module`, written after
`replay` began standing element-wise kernels in by chases on such walks, and run with it
unchanged, to check it on concurrent walks it was not chosen on (results:
docs/validation-h200.md, "Walks of kinds not seen before, and kernels beside other streams'
traffic").

    python3 scripts/validate.py --out DIR --walk-module scripts/concurrent_walks.py \
        --walks four_experts_b4,decode_and_sample,norm_branches_b32
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def fork_join_n(branches):
    """A step running each of `branches` on a side stream of its own, forked from the current
    stream and joined back; the results are summed on the current stream."""
    import torch
    streams = [torch.cuda.Stream() for _ in branches]

    def step():
        main = torch.cuda.current_stream()
        outs = []
        for s, run in zip(streams, branches):
            s.wait_stream(main)
            with torch.cuda.stream(s):
                outs.append(run())
        for s in streams:
            main.wait_stream(s)
        total = outs[0]
        for o in outs[1:]:
            total = total + o
        return total
    return step


def four_experts():
    """Four fp16 gated-MLP experts (hidden 1024 -> 2816, 4 layers each, batch 4) on four
    streams."""
    from unseen_walks import gated_mlp_experts
    return fork_join_n(gated_mlp_experts(4, 1024, 2816, 4, 4))


def decode_and_sample():
    """A bf16 decoder-shaped MLP stack (RMSNorm, gated MLP, residual; hidden 2048 -> 5632, 6
    layers, batch 2) on one stream beside the previous step's sampling on another (fp32
    softmax over 32000 logits, top-50, a cumulative sum and an argmax)."""
    import torch
    f = torch.nn.functional
    d, h, layers, vocab = 2048, 5632, 6, 32000
    with torch.device("cuda"):
        ws = [(torch.randn(2 * h, d, dtype=torch.bfloat16) * 0.02,
               torch.randn(d, h, dtype=torch.bfloat16) * 0.02,
               torch.ones(d, dtype=torch.bfloat16)) for _ in range(layers)]
        x = torch.randn(2, d, dtype=torch.bfloat16)
        logits = torch.randn(2, vocab)

    def decoder():
        y = x
        for up, down, g in ws:
            n = f.rms_norm(y, (d,), g)
            a, b = f.linear(n, up).chunk(2, dim=-1)
            y = y + f.linear(f.silu(a) * b, down)
        return y.float()[:, :2]

    def sample():
        p = torch.softmax(logits / 0.8, dim=-1)
        top, idx = torch.topk(p, 50, dim=-1)
        c = torch.cumsum(top, dim=-1)
        pick = torch.argmax((c > 0.5).to(torch.int32), dim=-1)
        return torch.gather(idx, 1, pick[:, None]).float().expand(2, 2)
    return fork_join_n([decoder, sample])


def norm_branches():
    """Two fp16 branches at batch 32 (LayerNorm, 1024 -> 4096, GELU, 4096 -> 1024, residual;
    5 layers each), forked and joined."""
    import torch
    f = torch.nn.functional
    d, h, layers = 1024, 4096, 5
    with torch.device("cuda"):
        branches = [[(torch.nn.LayerNorm(d).half(), torch.randn(h, d, dtype=torch.float16) * 0.02,
                      torch.randn(d, h, dtype=torch.float16) * 0.02) for _ in range(layers)]
                    for _ in range(2)]
        x = torch.randn(32, d, dtype=torch.float16)

    def branch(ws):
        def run():
            with torch.no_grad():
                y = x
                for norm, up, down in ws:
                    y = y + f.linear(f.gelu(f.linear(norm(y), up)), down)
                return y
        return run
    return fork_join_n([branch(ws) for ws in branches])


build = builder(4, {
    "four_experts_b4": four_experts,
    "decode_and_sample": decode_and_sample,
    "norm_branches_b32": norm_branches,
})
