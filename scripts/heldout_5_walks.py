"""Nine walks written after 16a49a6 and run once with that version unchanged, a fifth check
on walks the method was not developed on (docs/validation-h200.md, "Nine more walks held out,
after 16a49a6"): transformers Phi3 (decode batch 4) and GPT-NeoX (decode batch 2) shapes, a
foreach Adam step, and on several streams: large fp16 element-wise passes beside bf16
projections, grouped-query decode attention beside an MLP, f32/bf16 casts beside fp16
convolutions, a hand-written RMSNorm over large rows beside GEMMs, log-softmax over a
vocabulary beside an MLP, and three streams (projections, element-wise passes, decode
attention).

    python3 scripts/validate.py --out DIR --walk-module scripts/heldout_5_walks.py \
        --walks he_phi3_decode_b4,he_gptneox_decode_b2,...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build(name):
    """(step, kind) of walk `name`; a KeyError for a name it does not know."""
    import torch
    from walk_parts import chain, fork_join, hf_decoder_step
    f = torch.nn.functional
    torch.manual_seed(53)
    if name == "he_phi3_decode_b4":
        return hf_decoder_step("Phi3", "bfloat16", 4, 1, hidden_size=2048, intermediate_size=5632,
                               num_hidden_layers=12, num_attention_heads=16,
                               num_key_value_heads=16, vocab_size=32064,
                               max_position_embeddings=2048, pad_token_id=0), "torch"
    if name == "he_gptneox_decode_b2":
        return hf_decoder_step("GPTNeoX", "float16", 2, 1, hidden_size=2048,
                               intermediate_size=8192, num_hidden_layers=12,
                               num_attention_heads=16, vocab_size=32000,
                               max_position_embeddings=2048), "torch"
    with torch.device("cuda"):
        if name == "he_adam_foreach_step":
            params = [torch.nn.Parameter(torch.randn(n)) for n in
                      [1 << 20, 1 << 18, 1 << 22, 4096, 1 << 16, 1 << 21]]
            for p in params:
                p.grad = torch.randn_like(p) * 1e-3
            opt = torch.optim.Adam(params, lr=1e-4, foreach=True, capturable=True)

            def step():
                opt.step()
                return params[0]
            return step, "torch"
        if name == "he_elementwise_beside_proj":
            big = torch.randn(1 << 24, dtype=torch.float16)
            x = torch.randn(32, 4096, dtype=torch.bfloat16)
            w = [torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(6)]

            def passes():
                y = big
                for _ in range(5):
                    y = y * 0.99 + 0.01
                return y[:32 * 4096].view(32, 4096).to(torch.bfloat16)
            return fork_join(passes, chain(lambda i, y: (x if y is None else y) @ w[i], 6)), \
                "torch"
        if name == "he_gqa_decode_beside_mlp":
            q = torch.randn(8, 32, 1, 128, dtype=torch.bfloat16)
            k = torch.randn(8, 8, 4096, 128, dtype=torch.bfloat16)
            v = torch.randn(8, 8, 4096, 128, dtype=torch.bfloat16)
            h = torch.randn(8, 4096, dtype=torch.bfloat16)
            up = torch.randn(4096, 14336, dtype=torch.bfloat16) * 0.01
            down = torch.randn(14336, 4096, dtype=torch.bfloat16) * 0.01

            def attention():
                y = q
                for _ in range(3):
                    y = f.scaled_dot_product_attention(y, k, v, enable_gqa=True)
                return y.reshape(8, 4096)

            def mlp():
                y = h
                for _ in range(2):
                    y = f.silu(y @ up) @ down
                return y
            return fork_join(attention, mlp), "torch"
        if name == "he_casts_beside_conv":
            a = torch.randn(4096, 4096)
            convs = [torch.nn.Conv2d(128, 128, 3, padding=1).half() for _ in range(3)]
            img = torch.randn(4, 128, 28, 28, dtype=torch.float16)

            def casts():
                y = a
                for _ in range(3):
                    y = y.to(torch.bfloat16).float() * 1.0001
                return y[:512, :784].reshape(4, 128, 28, 28).half()

            def conv_lane():
                y = img
                for cv in convs:
                    y = f.relu(cv(y))
                return y
            return fork_join(casts, conv_lane), "torch"
        if name == "he_rmsnorm_rows_beside_gemm":
            rows = torch.randn(4096, 4096, dtype=torch.bfloat16)
            g = torch.ones(4096, dtype=torch.bfloat16)
            x = torch.randn(64, 4096, dtype=torch.bfloat16)
            w = [torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(4)]

            def rmsnorm():
                y = rows
                for _ in range(2):
                    v = y.float().pow(2).mean(-1, keepdim=True)
                    y = (y.float() * torch.rsqrt(v + 1e-6)).to(torch.bfloat16) * g
                return y[:64]
            return fork_join(rmsnorm, chain(lambda i, y: (x if y is None else y) @ w[i], 4)), \
                "torch"
        if name == "he_log_softmax_beside_mlp":
            logits = torch.randn(256, 32000)
            h = torch.randn(256, 2048, dtype=torch.bfloat16)
            up = torch.randn(2048, 8192, dtype=torch.bfloat16) * 0.01
            down = torch.randn(8192, 2048, dtype=torch.bfloat16) * 0.01

            def sampling():
                y = logits
                for _ in range(3):
                    y = f.log_softmax(y * 0.9, dim=-1)
                return y[:, :2048].to(torch.bfloat16)

            def mlp():
                y = h
                for _ in range(2):
                    y = f.gelu(y @ up) @ down
                return y
            return fork_join(sampling, mlp), "torch"
        if name == "he_three_streams_mixed":
            x = torch.randn(16, 4096, dtype=torch.bfloat16)
            w = [torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(4)]
            big = torch.randn(1 << 23, dtype=torch.bfloat16)
            q = torch.randn(16, 16, 1, 128, dtype=torch.bfloat16)
            k = torch.randn(16, 16, 2048, 128, dtype=torch.bfloat16)
            v = torch.randn(16, 16, 2048, 128, dtype=torch.bfloat16)
            side = [torch.cuda.Stream() for _ in range(3)]

            def proj():
                y = x
                for wi in w:
                    y = y @ wi
                return y

            def passes():
                y = big
                for _ in range(4):
                    y = torch.sigmoid(y) * 1.5
                return y[:16 * 4096].view(16, 4096)

            def attention():
                y = q
                for _ in range(3):
                    y = f.scaled_dot_product_attention(y, k, v)
                return y.reshape(16, 2048).repeat(1, 2)

            def step():
                main = torch.cuda.current_stream()
                outs = []
                for s, lane in zip(side, (proj, passes, attention)):
                    s.wait_stream(main)
                    with torch.cuda.stream(s):
                        outs.append(lane())
                for s in side:
                    main.wait_stream(s)
                return outs[0] + outs[1] + outs[2]
            return step, "torch"
    raise KeyError(name)
