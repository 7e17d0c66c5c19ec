"""Twelve walks written after aa4970e and run once with that version unchanged, a second check
on walks the method was not developed on (docs/validation-h200.md, "Twelve more walks held
out, after aa4970e"): transformers Cohere (decode batch 2), Granite (decode batch 4) and MPT
(decode batch 1) shapes, fp16 ResNet bottleneck blocks with BatchNorm, a two-layer cuDNN LSTM
(which runs on five streams of cuDNN's own), a bf16 MLP over 512 tokens, `index_add_` into
64 Ki bins, CuPy max / exp / sum reductions, and on several streams: a KV-cache copy beside
decode attention, 3 x 3 beside 1 x 1 convolution branches, two bf16 expert MLPs at 64 tokens,
and two chains of f32 SIMT GEMMs at 256 tokens.

    python3 scripts/validate.py --out DIR --walk-module scripts/heldout_2_walks.py \
        --walks hb_cohere_decode_b2,hb_lstm_b16,...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build(name):
    """(step, kind) of walk `name`; a KeyError for a name it does not know."""
    import torch
    from walk_parts import fork_join, hf_decoder_step
    f = torch.nn.functional
    torch.manual_seed(31)
    if name == "hb_cohere_decode_b2":
        return hf_decoder_step("Cohere", "float16", 2, 1, hidden_size=2048, intermediate_size=5632,
                               num_hidden_layers=12, num_attention_heads=16, num_key_value_heads=4,
                               vocab_size=32000, max_position_embeddings=2048), "torch"
    if name == "hb_granite_decode_b4":
        return hf_decoder_step("Granite", "bfloat16", 4, 1, hidden_size=2048, intermediate_size=8192,
                               num_hidden_layers=14, num_attention_heads=16, num_key_value_heads=8,
                               vocab_size=32000, max_position_embeddings=2048), "torch"
    if name == "hb_mpt_decode_b1":
        return hf_decoder_step("Mpt", "float16", 1, 1, d_model=2048, n_heads=16, n_layers=12,
                               vocab_size=32000, max_seq_len=2048), "torch"
    if name == "hb_cupy_reductions":
        import cupy as cp
        a = cp.random.random((2048, 1024), dtype=cp.float32)

        def step():
            y = a
            acc = None
            for _ in range(12):
                m = y.max(axis=1, keepdims=True)
                y = cp.exp(y - m)
                s = y.sum(axis=0)
                acc = s if acc is None else acc + s
            return acc
        return step, "cupy"
    with torch.device("cuda"):
        if name == "hb_bottlenecks_b8":
            def block(c):
                return [torch.nn.Conv2d(c, c // 4, 1).half(), torch.nn.BatchNorm2d(c // 4).half(),
                        torch.nn.Conv2d(c // 4, c // 4, 3, padding=1).half(),
                        torch.nn.BatchNorm2d(c // 4).half(), torch.nn.Conv2d(c // 4, c, 1).half(),
                        torch.nn.BatchNorm2d(c).half()]
            blocks = [block(512) for _ in range(6)]
            for b in blocks:
                for m in b:
                    m.eval()
            x = torch.randn(8, 512, 28, 28, dtype=torch.float16).to(memory_format=torch.channels_last)

            def step():
                y = x
                with torch.no_grad():
                    for c1, b1, c2, b2, c3, b3 in blocks:
                        h = f.relu(b1(c1(y)))
                        h = f.relu(b2(c2(h)))
                        y = f.relu(b3(c3(h)) + y)
                return y
            return step, "torch"
        if name == "hb_lstm_b16":
            lstm = torch.nn.LSTM(1024, 1024, num_layers=2).half()
            x = torch.randn(32, 16, 1024, dtype=torch.float16)

            def step():
                with torch.no_grad():
                    return lstm(x)[0]
            return step, "torch"
        if name == "hb_mlp_prefill_512_bf16":
            ws = [(torch.randn(4096, 11008, dtype=torch.bfloat16) * 0.01,
                   torch.randn(11008, 4096, dtype=torch.bfloat16) * 0.01) for _ in range(3)]
            x = torch.randn(512, 4096, dtype=torch.bfloat16)

            def step():
                y = x
                for a, b in ws:
                    y = f.layer_norm(y + f.gelu(y @ a) @ b, (4096,))
                return y
            return step, "torch"
        if name == "hb_scatter_index_b64":
            src = torch.randn(1 << 20)
            idx = torch.randint(0, 1 << 16, (1 << 20,))
            base = torch.zeros(1 << 16)

            def step():
                out = base.clone()
                for i in range(8):
                    out.index_add_(0, idx, src * (1.0 + i))
                    out = torch.tanh(out)
                return out
            return step, "torch"
        if name == "hb_kv_copy_beside_attention":
            q = torch.randn(4, 32, 1, 128, dtype=torch.float16)
            k = torch.randn(4, 32, 4096, 128, dtype=torch.float16)
            v = torch.randn(4, 32, 4096, 128, dtype=torch.float16)
            kc = torch.zeros(4, 32, 4096, 128, dtype=torch.float16)
            newk = torch.randn(4, 32, 256, 128, dtype=torch.float16)

            def side():
                for i in range(8):
                    kc[:, :, i * 256:(i + 1) * 256].copy_(newk * (1.0 + i))
                return kc[:, :, :1, :]

            def attn():
                y = q
                for _ in range(8):
                    y = f.scaled_dot_product_attention(y, k, v)
                return y
            return fork_join(attn, side), "torch"
        if name == "hb_inception_branches":
            c3 = torch.nn.Conv2d(256, 256, 3, padding=1).half()
            c1 = torch.nn.Conv2d(256, 256, 1).half()
            x = torch.randn(4, 256, 56, 56, dtype=torch.float16)

            def branch_3x3():
                y = x
                for _ in range(4):
                    y = f.relu(c3(y))
                return y

            def branch_1x1():
                y = x
                for _ in range(4):
                    y = f.relu(c1(y))
                return y
            return fork_join(branch_3x3, branch_1x1), "torch"
        if name == "hb_two_experts_b64":
            ex = [[(torch.randn(2048, 4096, dtype=torch.bfloat16) * 0.01,
                    torch.randn(2048, 4096, dtype=torch.bfloat16) * 0.01,
                    torch.randn(4096, 2048, dtype=torch.bfloat16) * 0.01) for _ in range(3)]
                  for _ in range(2)]
            x = torch.randn(64, 2048, dtype=torch.bfloat16)

            def expert(e):
                def run():
                    y = x
                    for g, u, d in ex[e]:
                        y = y + (f.silu(y @ g) * (y @ u)) @ d
                    return y
                return run
            return fork_join(expert(0), expert(1)), "torch"
        if name == "hb_fp32_pair_b256":
            torch.backends.cuda.matmul.allow_tf32 = False
            wa = [torch.randn(1024, 1024) * 0.03 for _ in range(4)]
            wb = [torch.randn(1024, 1024) * 0.03 for _ in range(4)]
            x = torch.randn(256, 1024)

            def ch(ws):
                def run():
                    y = x
                    for w in ws:
                        y = torch.relu(y @ w)
                    return y
                return run
            return fork_join(ch(wa), ch(wb)), "torch"
    raise KeyError(name)
