"""Eleven walks written after 9e481d2 and run once with that version unchanged, a fourth check
on walks the method was not developed on (docs/validation-h200.md, "Ten more walks held
out, after 9e481d2"): transformers Falcon (decode batch 2), Gemma2 (decode batch 1) and OLMo2
(prefill of 32 tokens) shapes, a UNet-style fp16 block (GroupNorm, convolution, SiLU and
attention over its pixels), CuPy raw kernels, and on several streams: bf16 GEMMs beside large
reductions, two chains of TF32 GEMMs, element-wise chains of four sizes on four streams, fp16
convolutions beside bf16 projections, multi-query decode attention beside an FFN, and two
LayerNorm chains of different shapes.

    python3 scripts/validate.py --out DIR --walk-module scripts/heldout_4_walks.py \
        --walks hd_falcon_decode_b2,hd_tf32_pair_b128,...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build(name):
    """(step, kind) of walk `name`; a KeyError for a name it does not know."""
    import torch
    from walk_parts import chain, fork_join, hf_decoder_step
    f = torch.nn.functional
    torch.manual_seed(41)
    if name == "hd_falcon_decode_b2":
        return hf_decoder_step("Falcon", "bfloat16", 2, 1, hidden_size=2048, num_hidden_layers=12,
                               num_attention_heads=32, num_kv_heads=8,
                               new_decoder_architecture=True, vocab_size=32000), "torch"
    if name == "hd_gemma2_decode_b1":
        return hf_decoder_step("Gemma2", "bfloat16", 1, 1, hidden_size=2048, intermediate_size=8192,
                               num_hidden_layers=10, num_attention_heads=8, num_key_value_heads=4,
                               head_dim=256, vocab_size=32000, max_position_embeddings=2048), \
            "torch"
    if name == "hd_olmo2_prefill_32":
        return hf_decoder_step("Olmo2", "float16", 1, 32, hidden_size=2048, intermediate_size=5632,
                               num_hidden_layers=12, num_attention_heads=16,
                               vocab_size=32000, max_position_embeddings=2048), "torch"
    if name == "hd_cupy_raw_kernels":
        import cupy as cp
        axpy = cp.RawKernel(r"""
        extern "C" __global__ void axpy(const float* x, float* y, float a, int n) {
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
                 i += gridDim.x * blockDim.x)
                y[i] = a * x[i] + y[i];
        }""", "axpy")
        sizes = [1 << 12, 1 << 16, 1 << 20, 1 << 22]
        xs = [cp.random.random(n, dtype=cp.float32) for n in sizes]
        ys = [cp.zeros(n, dtype=cp.float32) for n in sizes]

        def step():
            for _ in range(6):
                for x, y in zip(xs, ys):
                    n = x.size
                    axpy(((n + 255) // 256 if n < (1 << 20) else 528,), (256,),
                         (x, y, cp.float32(0.5), cp.int32(n)))
            return ys[-1]
        return step, "cupy"
    with torch.device("cuda"):
        if name == "hd_unet_block_b2":
            c = 320
            gn1, gn2 = torch.nn.GroupNorm(32, c).half(), torch.nn.GroupNorm(32, c).half()
            conv1 = torch.nn.Conv2d(c, c, 3, padding=1).half()
            conv2 = torch.nn.Conv2d(c, c, 3, padding=1).half()
            qkv, proj = torch.nn.Linear(c, 3 * c).half(), torch.nn.Linear(c, c).half()
            x = torch.randn(2, c, 32, 32, dtype=torch.float16)

            def step():
                y = x
                for _ in range(2):
                    h = conv1(f.silu(gn1(y)))
                    y = y + conv2(f.silu(gn2(h)))
                    t = y.flatten(2).transpose(1, 2)
                    q, k, v = qkv(t).view(2, -1, 3, 5, 64).permute(2, 0, 3, 1, 4)
                    a = f.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(2, -1, c)
                    y = y + proj(a).transpose(1, 2).reshape(y.shape)
                return y
            return step, "torch"
        if name == "hd_reductions_beside_gemm":
            x = torch.randn(64, 4096, dtype=torch.bfloat16)
            w = [torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(5)]
            big = torch.randn(4096, 2048)

            def reductions():
                y = big
                for _ in range(4):
                    y = y - y.mean(dim=1, keepdim=True)
                    y = y / (y.abs().amax(dim=0, keepdim=True) + 1.0)
                return y[:64, :].repeat(1, 2).to(torch.bfloat16)
            return fork_join(chain(lambda i, y: (x if y is None else y) @ w[i], 5),
                             reductions), "torch"
        if name == "hd_tf32_pair_b128":
            torch.backends.cuda.matmul.allow_tf32 = True
            xa, xb = torch.randn(128, 2048), torch.randn(128, 2048)
            wa = [torch.randn(2048, 2048) * 0.02 for _ in range(4)]
            wb = [torch.randn(2048, 2048) * 0.02 for _ in range(4)]
            return fork_join(chain(lambda i, y: torch.relu((xa if y is None else y) @ wa[i]), 4),
                             chain(lambda i, y: torch.tanh((xb if y is None else y) @ wb[i]), 4)), \
                "torch"
        if name == "hd_elementwise_four_streams":
            sizes = [1 << 16, 1 << 18, 1 << 20, 1 << 22]
            xs = [torch.randn(n) for n in sizes]
            side = [torch.cuda.Stream() for _ in range(3)]

            def lane(x):
                y = x
                for _ in range(5):
                    y = f.gelu(y) * 0.9 + 0.1
                return y[:1 << 16]

            def step():
                main = torch.cuda.current_stream()
                outs = []
                for s, x in zip(side, xs[1:]):
                    s.wait_stream(main)
                    with torch.cuda.stream(s):
                        outs.append(lane(x))
                y = lane(xs[0])
                for s in side:
                    main.wait_stream(s)
                return y + outs[0] + outs[1] + outs[2]
            return step, "torch"
        if name == "hd_conv_beside_linear":
            convs = [torch.nn.Conv2d(64, 64, 3, padding=1).half() for _ in range(4)]
            img = torch.randn(8, 64, 56, 56, dtype=torch.float16)
            x = torch.randn(16, 2048, dtype=torch.bfloat16)
            w = [torch.randn(2048, 2048, dtype=torch.bfloat16) * 0.02 for _ in range(6)]

            def convs_lane():
                y = img
                for cv in convs:
                    y = f.relu(cv(y))
                return y.mean(dim=(2, 3)).repeat(2, 32)[:16].to(torch.bfloat16)
            return fork_join(convs_lane,
                             chain(lambda i, y: f.gelu((x if y is None else y) @ w[i]), 6)), "torch"
        if name == "hd_mqa_decode_beside_ffn":
            q = torch.randn(16, 32, 1, 128, dtype=torch.bfloat16)
            k = torch.randn(16, 1, 2048, 128, dtype=torch.bfloat16)
            v = torch.randn(16, 1, 2048, 128, dtype=torch.bfloat16)
            h = torch.randn(16, 4096, dtype=torch.bfloat16)
            up = torch.randn(4096, 11008, dtype=torch.bfloat16) * 0.01
            down = torch.randn(11008, 4096, dtype=torch.bfloat16) * 0.01

            def attention():
                y = q
                for _ in range(4):
                    y = f.scaled_dot_product_attention(y, k.expand(-1, 32, -1, -1),
                                                       v.expand(-1, 32, -1, -1))
                return y.reshape(16, 4096)

            def ffn():
                y = h
                for _ in range(2):
                    y = f.silu(y @ up) @ down
                return y
            return fork_join(attention, ffn), "torch"
        if name == "hd_layernorm_pair":
            a = torch.randn(64, 4096, dtype=torch.float16)
            b = torch.randn(256, 1024, dtype=torch.float16)
            wa, wb = torch.ones(4096, dtype=torch.float16), torch.ones(1024, dtype=torch.float16)

            def norms(x, w, n):
                y = x
                for _ in range(n):
                    y = f.layer_norm(y, w.shape, w) * 1.01
                return y.reshape(64, 4096)
            return fork_join(lambda: norms(a, wa, 10), lambda: norms(b, wb, 14)), "torch"
    raise KeyError(name)
