"""Nine walks written after 7fd2b30 (the offline model's arithmetic shared between kernels
side by side), then run once with the version of their day (docs/validation-h200.md,
"Held-out batch 13"): transformers GPTBigCode (multi-query, decode batch 4) and Llama (bf16
decode batch 128) shapes, an IEEE f32 MLP over 512 tokens, and on several streams: two chains
of IEEE f32 linear layers, f32 batched matmuls beside f32 GEMMs, TF32 GEMMs beside bf16 GEMMs,
fp16 LayerNorms beside f32 GEMMs, SiLU over activations beside bf16 GEMVs, and three streams
of f32 GEMMs.

    python3 scripts/validate.py --out DIR --walk-module scripts/heldout_13_walks.py \\
        --walks hm_gptbigcode_decode_b4,hm_llama_decode_b128,...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build(name):
    """(step, kind) of walk `name`; a KeyError for a name it does not know."""
    import torch
    from walk_parts import chain, fork_join, hf_decoder_step, randn
    f = torch.nn.functional
    torch.manual_seed(113)
    # IEEE f32 matmuls unless a walk asks for TF32 (PyTorch's default, said explicitly).
    torch.backends.cuda.matmul.allow_tf32 = False
    if name == "hm_gptbigcode_decode_b4":
        return hf_decoder_step("GPTBigCode", "float16", 4, 1, n_embd=1536, n_layer=12,
                               n_head=24, multi_query=True, vocab_size=32000,
                               n_positions=2048), "torch"
    if name == "hm_llama_decode_b128":
        return hf_decoder_step("Llama", "bfloat16", 128, 1, hidden_size=2048,
                               intermediate_size=5632, num_hidden_layers=4,
                               num_attention_heads=16, num_key_value_heads=4,
                               vocab_size=32000, max_position_embeddings=2048), "torch"

    f32 = torch.float32
    with torch.device("cuda"):
        if name == "hm_f32_mlp_b512":
            up = [torch.nn.Linear(2048, 8192) for _ in range(3)]
            down = [torch.nn.Linear(8192, 2048) for _ in range(3)]
            x = randn(512, 2048, dtype=f32)
            return chain(lambda i, y: down[i](f.relu(up[i](x if y is None else y))), 3), "torch"
        if name == "hm_f32_linear_pair_b128":
            a = [torch.nn.Linear(3072, 3072) for _ in range(4)]
            b = [torch.nn.Linear(3072, 3072) for _ in range(4)]
            xa = randn(128, 3072, dtype=f32)
            xb = randn(128, 3072, dtype=f32)
            return fork_join(chain(lambda i, y: torch.tanh(a[i](xa if y is None else y)), 4),
                             chain(lambda i, y: torch.tanh(b[i](xb if y is None else y)), 4)), "torch"
        if name == "hm_f32_bmm_beside_gemm":
            p = randn(32, 256, 64, dtype=f32)
            k = randn(32, 64, 256, dtype=f32)
            w = [randn(1024, 1024, dtype=f32) for _ in range(6)]
            x = randn(64, 1024, dtype=f32)
            bmms = chain(lambda i, y: torch.bmm(torch.bmm(p if y is None else y, k), p), 3)
            gemms = chain(lambda i, y: (x if y is None else y) @ w[i], 6)
            return fork_join(lambda: bmms().sum(), lambda: gemms().sum()), "torch"
        if name == "hm_tf32_beside_bf16":
            torch.backends.cuda.matmul.allow_tf32 = True
            wt = [randn(2048, 2048, dtype=f32) for _ in range(4)]
            xt = randn(512, 2048, dtype=f32)
            wb = [randn(4096, 4096, dtype=torch.bfloat16) for _ in range(4)]
            xb = randn(256, 4096, dtype=torch.bfloat16)
            return fork_join(chain(lambda i, y: (xt if y is None else y) @ wt[i], 4),
                             lambda: chain(lambda i, y: (xb if y is None else y) @ wb[i], 4)()
                             .float()[:, :2048].sum()), "torch"
        if name == "hm_layernorm_beside_f32_gemm":
            ln = torch.nn.LayerNorm(1024).half()
            acts = randn(16384, 1024)
            w = [randn(2048, 2048, dtype=f32) for _ in range(4)]
            x = randn(256, 2048, dtype=f32)
            norms = chain(lambda i, y: ln(acts if y is None else y), 4)
            gemms = chain(lambda i, y: (x if y is None else y) @ w[i], 4)
            return fork_join(lambda: norms()[:1].float().sum(), lambda: gemms().sum()), "torch"
        if name == "hm_silu_beside_gemv":
            acts = randn(4096, 8192)
            w = [randn(8192, 8192, dtype=torch.bfloat16) for _ in range(4)]
            v = randn(1, 8192, dtype=torch.bfloat16)
            silus = chain(lambda i, y: f.silu(acts if y is None else y), 4)
            gemvs = chain(lambda i, y: (v if y is None else y) @ w[i], 4)
            return fork_join(lambda: silus()[:1].float().sum(),
                             lambda: gemvs().float().sum()), "torch"
        if name == "hm_three_streams_f32":
            w = [[randn(1024, 1024, dtype=f32) for _ in range(4)] for _ in range(3)]
            x = [randn(256, 1024, dtype=f32) for _ in range(3)]

            def lane_gemms(j):
                return chain(lambda i, y: (x[j] if y is None else y) @ w[j][i], 4)
            side = fork_join(lambda: lane_gemms(1)().sum(), lambda: lane_gemms(2)().sum())
            return fork_join(lambda: lane_gemms(0)().sum(), side), "torch"
    raise KeyError(name)
