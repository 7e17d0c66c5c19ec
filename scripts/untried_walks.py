"""Seven walks for `scripts/validate.py --walk-module`, written after the 73-walk run at
03cdeeb and the gathers change, and run once with that version unchanged, on kinds the method
had not met: fp8 GEMMs through `torch._scaled_mm` (cuBLASLt's fp8 kernels) with the
activations quantised between them, a mixture-of-experts layer routed densely (router, top-2,
scatter of the gates, every expert on every token), a ViT-B/16 encoder from transformers at
batch 1 (a patch convolution, then 197 tokens through 12 layers), a sampling step over a
128k vocabulary (top-k, softmax, cumulative sum, sort, repetition penalty through gather and
scatter), pinned host-to-device copies on one stream beside GEMMs on another, a decoder with
cross-attention over 1500 encoder states (Whisper-shaped) at decode batch 4, and the decode
step of a state-space model (Mamba-shaped: a causal depthwise convolution and a selective
state update per layer, made of many small element-wise kernels)
(results: docs/validation-h200.md, "Walks of kinds not met before, after 03690f0"). One more
was written after that run: decoder layers whose attention and MLP run on two streams side by
side, forked and joined in every layer (`parallel_block_decode_b8`). No ViT from transformers
could be written whose graph runs its recorded walk: under capture transformers materialises
the bidirectional attention mask it leaves out eagerly (it cannot look at the mask's values
there), so with SDPA every fused kernel refuses the mask's stride-0 last dimension and the
graph runs PyTorch's f32 math path (cuDNN, flash or memory-efficient attention named: "No
available kernel"), and with transformers' own attention the mask's creation copies from the
host and the capture fails.

    python3 scripts/validate.py --out DIR --walk-module scripts/untried_walks.py \
        --walks fp8_gemm_chain_b64,dense_moe_b8,vit_b16_b1,sampling_b32_v128k,\
h2d_beside_gemms,cross_attention_decode_b4,ssm_decode_b1
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def fp8_gemm_chain_step():
    """Sixteen 4096 x 4096 fp8 (e4m3) GEMMs at 64 tokens through `torch._scaled_mm` with
    per-tensor scales and a bf16 result, each result through SiLU and quantised back to fp8
    for the next (scale, clamp, cast)."""
    import torch
    f = torch.nn.functional
    d, tokens = 4096, 64
    fp8 = torch.float8_e4m3fn
    with torch.device("cuda"):
        # `_scaled_mm` takes its second operand column-major: the transpose of a row-major
        # weight of shape (out, in).
        ws = [(torch.randn(d, d) * 0.02).to(fp8).t() for _ in range(16)]
        one = torch.tensor(1.0)
        w_scale = torch.tensor(0.02)
        x = torch.randn(tokens, d).to(fp8)

    def step():
        with torch.no_grad():
            y = x
            for w in ws:
                out = torch._scaled_mm(y, w, scale_a=one, scale_b=w_scale,
                                       out_dtype=torch.bfloat16)
                y = (f.silu(out) * 4.0).clamp(-448.0, 448.0).to(fp8)
            return y.to(torch.bfloat16)
    return step


def dense_moe_step():
    """Eight bf16 mixture-of-experts layers at 8 tokens (hidden 2048, 8 experts of a gated
    MLP 2048 -> 1408 -> 2048, top-2 routing) computed densely, as a capturable MoE is: the
    router's top-2 gates scattered into a (tokens, experts) matrix, every expert run on every
    token and its output scaled by its column, the sum added to the residual."""
    import torch
    f = torch.nn.functional
    d, hidden, experts, tokens = 2048, 1408, 8, 8
    with torch.device("cuda"):
        layers = [dict(
            router=torch.randn(experts, d, dtype=torch.bfloat16) * 0.02,
            gate_up=[torch.randn(2 * hidden, d, dtype=torch.bfloat16) * 0.02
                     for _ in range(experts)],
            down=[torch.randn(d, hidden, dtype=torch.bfloat16) * 0.02
                  for _ in range(experts)],
            norm=torch.nn.RMSNorm(d, dtype=torch.bfloat16)) for _ in range(8)]
        x = torch.randn(tokens, d, dtype=torch.bfloat16)

    def step():
        with torch.no_grad():
            y = x
            for p in layers:
                h = p["norm"](y)
                probs = f.linear(h, p["router"]).float().softmax(-1)
                top, idx = probs.topk(2, dim=-1)
                gates = torch.zeros_like(probs).scatter_(1, idx, top / top.sum(-1, True))
                gates = gates.to(torch.bfloat16)
                out = torch.zeros_like(y)
                for e in range(experts):
                    g, u = f.linear(h, p["gate_up"][e]).chunk(2, dim=-1)
                    out = out + gates[:, e:e + 1] * f.linear(f.silu(g) * u, p["down"][e])
                y = y + out
            return y
    return step


def vit_step():
    """A ViT-B/16 encoder (transformers `ViTModel`, hidden 768, 12 layers, 12 heads, a
    224 x 224 image) in fp16 at batch 1: a 16 x 16 patch convolution, then 197 tokens through
    LayerNorm, attention and a GELU MLP per layer."""
    import torch
    import transformers
    with torch.device("cuda"):
        cfg = transformers.ViTConfig(hidden_size=768, num_hidden_layers=12,
                                     num_attention_heads=12, intermediate_size=3072,
                                     image_size=224, patch_size=16)
        model = transformers.ViTModel(cfg, add_pooling_layer=False).to(torch.float16)
        pixels = torch.randn(1, 3, 224, 224, dtype=torch.float16)
    model.eval()

    def step():
        with torch.no_grad():
            return model(pixel_values=pixels).last_hidden_state
    return step


def sampling_step():
    """Four rounds of a sampling step for 32 sequences over a 128,256-token vocabulary, in
    fp32: a repetition penalty on each sequence's last 64 tokens (gather, where, scatter),
    temperature, top-50 (`topk`), softmax, nucleus cut through a cumulative sum over the
    sorted top-50, and the most probable token kept (argmax: no random numbers)."""
    import torch
    batch, vocab, k = 32, 128256, 50
    with torch.device("cuda"):
        logits = [torch.randn(batch, vocab) for _ in range(4)]
        history = torch.randint(0, vocab, (batch, 64))

    def step():
        picks = []
        for z in logits:
            seen = z.gather(1, history)
            z = z.scatter(1, history, torch.where(seen > 0, seen / 1.2, seen * 1.2))
            top, idx = (z / 0.8).topk(k, dim=-1)
            probs = top.softmax(-1)
            sorted_p, order = probs.sort(dim=-1, descending=True)
            cut = sorted_p.cumsum(-1) - sorted_p > 0.9
            sorted_p = sorted_p.masked_fill(cut, 0.0)
            best = order.gather(1, sorted_p.argmax(-1, keepdim=True))
            picks.append(idx.gather(1, best))
        return torch.cat(picks, dim=1)
    return step


def h2d_beside_gemms_step():
    """Eight 8 MiB copies from pinned host memory to the device on one stream beside eight
    bf16 4096 x 4096 GEMMs at 64 tokens on another, as an engine that streams offloaded
    weights in while it computes; forked and joined."""
    import torch
    from walk_parts import fork_join
    f = torch.nn.functional
    d, tokens = 4096, 64
    host = [torch.randn(1024, d, dtype=torch.bfloat16).pin_memory() for _ in range(8)]
    with torch.device("cuda"):
        dev = [torch.empty(1024, d, dtype=torch.bfloat16) for _ in range(8)]
        ws = [torch.randn(d, d, dtype=torch.bfloat16) * 0.02 for _ in range(8)]
        x = torch.randn(tokens, d, dtype=torch.bfloat16)

    def copies():
        for h, g in zip(host, dev):
            g.copy_(h, non_blocking=True)
        return dev[-1][:tokens]

    def gemms():
        with torch.no_grad():
            y = x
            for w in ws:
                y = f.linear(y, w)
            return y

    return fork_join(copies, gemms)


def cross_attention_step():
    """Twelve fp16 decoder layers at decode batch 4 (hidden 1024, 16 heads of 64), Whisper
    shaped: LayerNorm, self-attention of the one new token over a 448-token cache, LayerNorm,
    cross-attention over 1500 encoder states (keys and values computed once, outside the
    step), LayerNorm and a GELU MLP (1024 -> 4096 -> 1024)."""
    import torch
    f = torch.nn.functional
    d, heads, batch, ctx, enc = 1024, 16, 4, 448, 1500
    hd = d // heads
    dt = torch.float16
    with torch.device("cuda"):
        layers = [dict(
            norms=[torch.nn.LayerNorm(d, dtype=dt) for _ in range(3)],
            qkv=torch.randn(3 * d, d, dtype=dt) * 0.02,
            self_out=torch.randn(d, d, dtype=dt) * 0.02,
            q=torch.randn(d, d, dtype=dt) * 0.02,
            cross_out=torch.randn(d, d, dtype=dt) * 0.02,
            up=torch.randn(4 * d, d, dtype=dt) * 0.02,
            down=torch.randn(d, 4 * d, dtype=dt) * 0.02,
            k_self=torch.randn(batch, heads, ctx, hd, dtype=dt),
            v_self=torch.randn(batch, heads, ctx, hd, dtype=dt),
            k_enc=torch.randn(batch, heads, enc, hd, dtype=dt),
            v_enc=torch.randn(batch, heads, enc, hd, dtype=dt)) for _ in range(12)]
        x = torch.randn(batch, 1, d, dtype=dt)

    def heads_of(t):
        return t.view(batch, 1, heads, hd).transpose(1, 2)

    def merged(t):
        return t.transpose(1, 2).reshape(batch, 1, d)

    def step():
        with torch.no_grad():
            y = x
            for p in layers:
                n1, n2, n3 = p["norms"]
                q, k, v = f.linear(n1(y), p["qkv"]).chunk(3, dim=-1)
                p["k_self"][:, :, ctx - 1] = heads_of(k)[:, :, 0]
                p["v_self"][:, :, ctx - 1] = heads_of(v)[:, :, 0]
                a = f.scaled_dot_product_attention(heads_of(q), p["k_self"], p["v_self"])
                y = y + f.linear(merged(a), p["self_out"])
                q = heads_of(f.linear(n2(y), p["q"]))
                a = f.scaled_dot_product_attention(q, p["k_enc"], p["v_enc"])
                y = y + f.linear(merged(a), p["cross_out"])
                y = y + f.linear(f.gelu(f.linear(n3(y), p["up"])), p["down"])
            return y
    return step


def ssm_decode_step():
    """The decode step of a Mamba-shaped state-space model at batch 1 in fp32: 24 layers of
    hidden 768 (inner 1536, state 16, a causal depthwise convolution of width 4), each an
    RMSNorm, an input projection, the convolution's state rolled and updated in place, SiLU,
    the step sizes and the selective state update (exp, outer products, a reduction over the
    state), the gate and the output projection; the states live across steps."""
    import torch
    f = torch.nn.functional
    d, inner, state, width, rank = 768, 1536, 16, 4, 48
    with torch.device("cuda"):
        layers = [dict(
            norm=torch.nn.RMSNorm(d),
            in_proj=torch.randn(2 * inner, d) * 0.02,
            conv=torch.randn(inner, width) * 0.1,
            x_proj=torch.randn(rank + 2 * state, inner) * 0.02,
            dt_proj=torch.randn(inner, rank) * 0.02,
            a_log=torch.log(torch.arange(1, state + 1).float()).repeat(inner, 1),
            skip=torch.ones(inner),
            out_proj=torch.randn(d, inner) * 0.02,
            conv_state=torch.zeros(1, inner, width),
            ssm_state=torch.zeros(1, inner, state)) for _ in range(24)]
        x = torch.randn(1, d)

    def step():
        with torch.no_grad():
            y = x
            for p in layers:
                xz = f.linear(p["norm"](y), p["in_proj"])
                u, z = xz.chunk(2, dim=-1)
                cs = p["conv_state"]
                cs.copy_(torch.roll(cs, shifts=-1, dims=-1))
                cs[:, :, -1] = u
                u = f.silu((cs * p["conv"]).sum(-1))
                dbc = f.linear(u, p["x_proj"])
                dt, b, c = dbc.split([rank, state, state], dim=-1)
                dt = f.softplus(f.linear(dt, p["dt_proj"]))
                da = torch.exp(dt.unsqueeze(-1) * -torch.exp(p["a_log"]))
                p["ssm_state"].copy_(p["ssm_state"] * da
                                     + (dt * u).unsqueeze(-1) * b.unsqueeze(1))
                out = (p["ssm_state"] * c.unsqueeze(1)).sum(-1) + p["skip"] * u
                y = y + f.linear(out * f.silu(z), p["out_proj"])
            return y
    return step


def parallel_block_step():
    """Twelve bf16 decoder layers at decode batch 8 (hidden 2048, 16 heads of 128, a
    1024-token KV cache per layer) whose attention and MLP run side by side, as GPT-J's and
    Falcon's parallel blocks can: each layer's LayerNorm on the main stream, then attention
    (QKV projection, the cache written, `scaled_dot_product_attention`, output projection) on
    one side stream beside the GELU MLP (2048 -> 8192 -> 2048) on another, joined back on the
    main stream for the residual add: a fork and a join in every layer. Written after the
    group's first run."""
    import torch
    f = torch.nn.functional
    d, heads, batch, ctx = 2048, 16, 8, 1024
    hd = d // heads
    dt = torch.bfloat16
    with torch.device("cuda"):
        layers = [dict(
            norm=torch.nn.LayerNorm(d, dtype=dt),
            qkv=torch.randn(3 * d, d, dtype=dt) * 0.02,
            out=torch.randn(d, d, dtype=dt) * 0.02,
            up=torch.randn(4 * d, d, dtype=dt) * 0.02,
            down=torch.randn(d, 4 * d, dtype=dt) * 0.02,
            k=torch.randn(batch, heads, ctx, hd, dtype=dt),
            v=torch.randn(batch, heads, ctx, hd, dtype=dt)) for _ in range(12)]
        x = torch.randn(batch, 1, d, dtype=dt)
    attn_stream, mlp_stream = torch.cuda.Stream(), torch.cuda.Stream()

    def attention(p, h):
        q, k, v = (t.view(batch, 1, heads, hd).transpose(1, 2)
                   for t in f.linear(h, p["qkv"]).chunk(3, dim=-1))
        p["k"][:, :, ctx - 1] = k[:, :, 0]
        p["v"][:, :, ctx - 1] = v[:, :, 0]
        a = f.scaled_dot_product_attention(q, p["k"], p["v"])
        return f.linear(a.transpose(1, 2).reshape(batch, 1, d), p["out"])

    def step():
        with torch.no_grad():
            main = torch.cuda.current_stream()
            y = x
            for p in layers:
                h = p["norm"](y)
                attn_stream.wait_stream(main)
                mlp_stream.wait_stream(main)
                with torch.cuda.stream(attn_stream):
                    a = attention(p, h)
                with torch.cuda.stream(mlp_stream):
                    m = f.linear(f.gelu(f.linear(h, p["up"])), p["down"])
                main.wait_stream(attn_stream)
                main.wait_stream(mlp_stream)
                y = y + a + m
            return y
    return step


build = builder(31, {
    "fp8_gemm_chain_b64": fp8_gemm_chain_step,
    "dense_moe_b8": dense_moe_step,
    "vit_b16_b1": vit_step,
    "sampling_b32_v128k": sampling_step,
    "h2d_beside_gemms": h2d_beside_gemms_step,
    "cross_attention_decode_b4": cross_attention_step,
    "ssm_decode_b1": ssm_decode_step,
    "parallel_block_decode_b8": parallel_block_step,
})
