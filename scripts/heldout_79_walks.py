"""Six walks written after ab1a0d1 (a replay prices the mean of the replayed graph and the
offline model wherever a device profile describes the GPU; `--l2-resident work` held to its
kernels' nodes), before any run: a test of the mean on a GPU with a profile of its own on
walks of the kinds users price, not lanes of element-wise kernels. On one stream: an
OLMo-2-shaped decode at batch 4 (bf16, 1536 wide, GQA 12/4, 6 layers); a Helium-shaped
prefill of 256 tokens (fp16, 1024 wide, 4 layers); a Qwen3-shaped decode at batch 16 (bf16,
1024 wide, head dim 64, 6 layers); a GPT-NeoX-shaped decode at batch 1 (fp16, 768 wide, 6
layers). On several streams: two SiLU-gated MLP branches (bf16, 2048 -> 5632 -> 2048 over 4
tokens, 3 layers each) beside a lane of written-out RMSNorms over the same rows. Not
PyTorch: a CuPy program that layer-normalises the rows of a 256 x 4096 f32 matrix through a
ReductionKernel and an ElementwiseKernel, then a RawKernel GELU, 6 passes.

    python3 scripts/validate_all.py --out DIR --groups heldout79
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import decoder, fork_lanes, no_grad_step, rms_norm  # noqa: E402
from walk_registry import builder  # noqa: E402


def two_gated_mlps_beside_norm_lane_bf16():
    import torch
    f = torch.nn.functional

    def mlp():
        with torch.device("cuda"):
            x = torch.randn(4, 2048, dtype=torch.bfloat16)
            layers = [(torch.randn(5632, 2048, dtype=torch.bfloat16) * 0.01,
                       torch.randn(5632, 2048, dtype=torch.bfloat16) * 0.01,
                       torch.randn(2048, 5632, dtype=torch.bfloat16) * 0.01) for _ in range(3)]

        def run():
            y = x
            for gate, up, down in layers:
                y = f.linear(f.silu(f.linear(y, gate)) * f.linear(y, up), down)
            return y
        return run

    with torch.device("cuda"):
        h = torch.randn(4, 2048, dtype=torch.bfloat16)
        g = torch.randn(2048, dtype=torch.bfloat16)

    def norms():
        y = h
        for _ in range(6):
            y = rms_norm(y, g)
        return y
    return no_grad_step(fork_lanes([mlp(), mlp(), norms]))


def cupy_row_layernorm_gelu():
    import cupy as cp
    rows, cols = 256, 4096
    mean = cp.ReductionKernel("float32 x", "float32 m", "x", "a + b", "m = a / (_in_ind.size() / _out_ind.size())",
                              "0", "row_mean")
    var = cp.ReductionKernel("float32 x, float32 m", "float32 v", "(x - m) * (x - m)", "a + b",
                             "v = a / (_in_ind.size() / _out_ind.size())", "0", "row_var")
    norm = cp.ElementwiseKernel("float32 x, float32 m, float32 v", "float32 y",
                                "y = (x - m) * rsqrtf(v + 1e-5f)", "row_norm")
    gelu = cp.RawKernel(r"""
    extern "C" __global__ void gelu(const float* x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) { float v = x[i]; y[i] = 0.5f * v * (1.f + erff(v * 0.70710678f)); }
    }""", "gelu")
    x = cp.random.standard_normal((rows, cols), dtype=cp.float32)
    y = cp.empty_like(x)
    n = rows * cols

    def step():
        h = x
        for _ in range(6):
            m = mean(h, axis=1, keepdims=True)
            v = var(h, m, axis=1, keepdims=True)
            z = norm(h, m, v)
            gelu(((n + 255) // 256,), (256,), (z, y, cp.int32(n)))
            h = y
        return h
    return step


build = builder(131_79, {
    "ld_olmo2_1536_decode_b4": decoder("Olmo2", "bfloat16", 4, 1, hidden_size=1536,
                                       intermediate_size=4096, num_hidden_layers=6,
                                       num_attention_heads=12, num_key_value_heads=4,
                                       max_position_embeddings=2048),
    "ld_helium_1024_prefill_256": decoder("Helium", "float16", 1, 256, hidden_size=1024,
                                          intermediate_size=2816, num_hidden_layers=4,
                                          num_attention_heads=8, num_key_value_heads=8,
                                          head_dim=128, max_position_embeddings=2048),
    "ld_qwen3_1024_decode_b16": decoder("Qwen3", "bfloat16", 16, 1, hidden_size=1024,
                                        intermediate_size=3072, num_hidden_layers=6,
                                        num_attention_heads=16, num_key_value_heads=8,
                                        head_dim=64, max_position_embeddings=2048),
    "ld_gptneox_768_decode_b1": decoder("GPTNeoX", "float16", 1, 1, hidden_size=768,
                                        intermediate_size=3072, num_hidden_layers=6,
                                        num_attention_heads=12, max_position_embeddings=2048),
    "ld_two_gated_mlps_beside_norm_lane_bf16": two_gated_mlps_beside_norm_lane_bf16,
    "ld_cupy_row_layernorm_gelu": (cupy_row_layernorm_gelu, "cupy"),
})
