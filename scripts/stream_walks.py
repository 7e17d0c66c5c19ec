"""Walks on concurrent streams for `scripts/validate.py --walk-module`, written after `replay`
began running recorded GEMMs for real on such walks, to check that on GEMMs it was not
developed on: `linear` layers with bias (`aten::addmm`, weights used transposed), batched
matmuls (`aten::bmm`), bf16, and three streams (results: docs/validation-h200.md,
"Concurrent walks the real-GEMM replay was not developed on"; numbers: docs/validation-stream-walks-h200.json).

    python3 scripts/validate.py --out DIR --walk-module scripts/stream_walks.py \
        --walks two_streams_linear,two_streams_attention,three_streams
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build(name):
    import torch
    torch.manual_seed(2)
    from walk_parts import fork_join
    f = torch.nn.functional
    if name == "two_streams_linear":
        # Two bf16 MLP branches of nn.Linear layers with bias, hidden 2048 -> 5632 -> 2048.
        d, h, layers = 2048, 5632, 6
        with torch.device("cuda"):
            a = [(torch.nn.Linear(d, h), torch.nn.Linear(h, d)) for _ in range(layers)]
            b = [(torch.nn.LayerNorm(d), torch.nn.Linear(d, h), torch.nn.Linear(h, d))
                 for _ in range(layers)]
            for m in [x for pair in a for x in pair] + [x for t in b for x in t]:
                m.to(torch.bfloat16)
            x = torch.randn(4, d, dtype=torch.bfloat16)

        def side_a():
            y = x
            for up, down in a:
                y = y + down(f.silu(up(y)))
            return y

        def side_b():
            y = x
            for norm, up, down in b:
                y = y + down(f.gelu(up(norm(y))))
            return y
        return fork_join(side_a, side_b), "torch"
    if name == "two_streams_attention":
        # fp16 attention-shaped batched matmuls (16 heads, 4 queries, 512 keys of 128) beside
        # a chain of 1024 x 1024 GEMMs.
        heads, q, keys, dh, layers = 16, 4, 512, 128, 8
        with torch.device("cuda"):
            qs = torch.randn(heads, q, dh, dtype=torch.float16)
            ks = [torch.randn(heads, keys, dh, dtype=torch.float16) for _ in range(layers)]
            vs = [torch.randn(heads, keys, dh, dtype=torch.float16) for _ in range(layers)]
            ws = [torch.randn(1024, 1024, dtype=torch.float16) * 0.03 for _ in range(16)]
            x = torch.randn(8, 1024, dtype=torch.float16)

        def attention():
            o = qs
            for k, v in zip(ks, vs):
                p = torch.softmax(torch.bmm(o, k.transpose(1, 2)) * dh ** -0.5, dim=-1)
                o = torch.bmm(p, v)
            return o.reshape(-1)[: 8 * 1024].reshape(8, 1024)

        def gemms():
            y = x
            for w in ws:
                y = torch.relu(y @ w)
            return y
        return fork_join(attention, gemms), "torch"
    if name == "three_streams":
        # Three fp16 GEMM chains (1536 x 1536, 8 each, tanh between) forked and joined.
        d, layers = 1536, 8
        with torch.device("cuda"):
            ws = [[torch.randn(d, d, dtype=torch.float16) * 0.02 for _ in range(layers)]
                  for _ in range(3)]
            x = torch.randn(8, d, dtype=torch.float16)
        streams = [torch.cuda.Stream() for _ in range(3)]

        def chain(w):
            y = x
            for m in w:
                y = torch.tanh(y @ m)
            return y

        def step():
            main = torch.cuda.current_stream()
            outs = []
            for s, w in zip(streams, ws):
                s.wait_stream(main)
                with torch.cuda.stream(s):
                    outs.append(chain(w))
            for s in streams:
                main.wait_stream(s)
            return outs[0] + outs[1] + outs[2]
        return step, "torch"
    raise KeyError(name)
