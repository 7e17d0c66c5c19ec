"""Eight walks written after 320b1ea and run once with that version unchanged, a third check on
walks the method was not developed on, after the errors the price carries were widened to
the first two batches (docs/validation-h200.md, "Eight more walks held out, after
320b1ea"): a transformers Phi shape at decode batch 8, fp16 transposed-convolution upsampling,
bf16 attention written out as matmul + softmax + matmul over 1024 tokens, GNN-style message
passing (`index_select`, GEMM, `index_add_` over 400k edges), CuPy row norms through a
`ReductionKernel`, and on several streams: three decode requests of bf16 GEMVs on three
streams, a causal SDPA prefill beside RMSNorms, and GEMMs beside device-to-device copies.
(A GPT-Neo decode was tried too: its attention copies a host scalar to the GPU, which graph
capture refuses.)

    python3 scripts/validate.py --out DIR --walk-module scripts/heldout_3_walks.py \
        --walks hc_phi_decode_b8,hc_gemm_beside_copies,...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build(name):
    """(step, kind) of walk `name`; a KeyError for a name it does not know."""
    import torch
    from walk_parts import chain, fork_join, hf_decoder_step
    f = torch.nn.functional
    torch.manual_seed(37)
    if name == "hc_phi_decode_b8":
        return hf_decoder_step("Phi", "float16", 8, 1, hidden_size=2048, intermediate_size=8192,
                               num_hidden_layers=12, num_attention_heads=32, vocab_size=32000,
                               max_position_embeddings=2048), "torch"
    if name == "hc_cupy_row_norms":
        import cupy as cp
        a = cp.random.random((4096, 512), dtype=cp.float32)
        sq = cp.ReductionKernel("float32 x", "float32 y", "x * x", "a + b", "y = sqrtf(a)", "0",
                                "l2norm")

        def step():
            y = a
            for _ in range(10):
                n = sq(y, axis=1)
                y = y / (n[:, None] + 1e-6) * 1.01
            return y
        return step, "cupy"
    with torch.device("cuda"):
        if name == "hc_conv_transpose_b4":
            ups = [torch.nn.ConvTranspose2d(256 // (2 ** i), 256 // (2 ** (i + 1)), 4, stride=2,
                                            padding=1).half() for i in range(4)]
            x = torch.randn(4, 256, 16, 16, dtype=torch.float16)

            def step():
                y = x
                for u in ups:
                    y = f.silu(u(y))
                return y
            return step, "torch"
        if name == "hc_math_attention_b2_s1024":
            q = torch.randn(2, 16, 1024, 64, dtype=torch.bfloat16)
            k = torch.randn(2, 16, 1024, 64, dtype=torch.bfloat16)
            v = torch.randn(2, 16, 1024, 64, dtype=torch.bfloat16)

            def step():
                y = q
                for _ in range(4):
                    s = (y @ k.transpose(-1, -2)) * 0.125
                    y = torch.softmax(s.float(), dim=-1).to(torch.bfloat16) @ v
                return y
            return step, "torch"
        if name == "hc_gnn_message_passing":
            n, e = 50000, 400000
            src = torch.randint(0, n, (e,))
            dst = torch.randint(0, n, (e,))
            h = torch.randn(n, 64)
            w = torch.randn(64, 64) * 0.1

            def step():
                x = h
                for _ in range(3):
                    m = x.index_select(0, src) @ w
                    agg = torch.zeros_like(x).index_add_(0, dst, m)
                    x = torch.relu(agg * 0.1 + x)
                return x
            return step, "torch"
        if name == "hc_three_decode_requests":
            xs = [torch.randn(1, 4096, dtype=torch.bfloat16) for _ in range(3)]
            ws = [[torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(4)]
                  for _ in range(3)]
            s3 = torch.cuda.Stream()
            pair = fork_join(chain(lambda i, y: f.silu((xs[0] if y is None else y) @ ws[0][i]), 4),
                             chain(lambda i, y: f.silu((xs[1] if y is None else y) @ ws[1][i]), 4))

            def step():
                main = torch.cuda.current_stream()
                s3.wait_stream(main)
                with torch.cuda.stream(s3):
                    c = chain(lambda i, y: f.silu((xs[2] if y is None else y) @ ws[2][i]), 4)()
                ab = pair()
                main.wait_stream(s3)
                return ab + c
            return step, "torch"
        if name == "hc_norm_beside_prefill_attention":
            q = torch.randn(1, 16, 512, 128, dtype=torch.float16)
            k = torch.randn(1, 16, 512, 128, dtype=torch.float16)
            v = torch.randn(1, 16, 512, 128, dtype=torch.float16)
            h = torch.randn(512, 2048, dtype=torch.float16)
            nw = torch.ones(2048, dtype=torch.float16)

            def attn():
                y = q
                for _ in range(6):
                    y = f.scaled_dot_product_attention(y, k, v, is_causal=True)
                return y.reshape(512, 2048)

            def norms():
                y = h
                for _ in range(12):
                    y = f.rms_norm(y, (2048,), nw) * 1.01
                return y
            return fork_join(attn, norms), "torch"
        if name == "hc_gemm_beside_copies":
            x = torch.randn(32, 4096, dtype=torch.bfloat16)
            w = [torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(6)]
            src = [torch.randn(2048, 2048, dtype=torch.bfloat16) for _ in range(6)]
            dst = [torch.empty(2048, 2048, dtype=torch.bfloat16) for _ in range(6)]

            def copies():
                for s, d in zip(src, dst):
                    d.copy_(s)
                return dst[-1][:32, :].repeat(1, 2)
            return fork_join(chain(lambda i, y: (x if y is None else y) @ w[i], 6), copies), "torch"
    raise KeyError(name)
