"""Six walks written after 4f5a849 (no pricing change since batch 80), before any run. On one
stream: an OLMo-2-shaped decode at batch 1 over a static cache (bf16, 2048 wide, 8192 inner,
4 layers; its query and key norms); a Granite-shaped decode at batch 16 over a static cache
(bf16, 2048 wide, 4 layers); a RoBERTa-shaped encoder over 8 sequences of 128 tokens (fp16, 768
wide, 6 layers, no mask), the first encoder-only walk. On several streams: four replicas of a
small Qwen3-shaped static-cache decode at batch 1, each on a stream of its own; a lane of four
large fp16 GEMMs (2048 x 4096 by 4096 x 4096) beside a lane of 24 LayerNorm, GELU and add
rounds over 64 x 4096, many small kernels beside few long ones. Not PyTorch: a CuPy `RawKernel`
three-point smoothing of a 4M-element f32 vector, ping-ponged 16 times, then CuPy's maximum of
the absolute change.

    python3 scripts/validate_all.py --out DIR --groups heldout88
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_82_walks import static_cache_decode  # noqa: E402
from walk_registry import builder  # noqa: E402

QWEN3_SMALL = dict(vocab_size=32000, hidden_size=1024, intermediate_size=3072,
                   num_hidden_layers=2, num_attention_heads=16, num_key_value_heads=8,
                   head_dim=64, max_position_embeddings=2048)


def roberta_encoder(batch=8, seq=128, layers=6):
    """A RoBERTa-shaped encoder (`RobertaModel`, fp16) over `batch` random sequences of `seq`
    tokens with no padding and so no mask: bidirectional attention, LayerNorms, GELU MLPs."""
    import torch
    from walk_parts import hf_model
    model = hf_model("Roberta", "float16", head="Model", vocab_size=32000, hidden_size=768,
                     intermediate_size=3072, num_hidden_layers=layers, num_attention_heads=12,
                     max_position_embeddings=seq + 2)
    # Ids from 3 up: none is the padding id (1), so every position counts.
    ids = torch.randint(3, 32000, (batch, seq), device="cuda")

    def step():
        with torch.no_grad():
            return model(input_ids=ids).last_hidden_state
    return step


def four_qwen3_replicas():
    from walk_parts import corner, fork_lanes
    replicas = [static_cache_decode("Qwen3", "bfloat16", 1, 1024, 32, **QWEN3_SMALL)
                for _ in range(4)]
    return fork_lanes([lambda r=r: corner(r()) for r in replicas])


def gemms_beside_norm_gelu_lane(tokens=2048, width=4096, gemms=4, rows=64, rounds=24):
    """A lane of `gemms` fp16 GEMMs (`tokens` x `width` by `width` x `width`) beside a lane
    of `rounds` LayerNorm, GELU and residual-add rounds over `rows` x `width`."""
    import torch
    from walk_parts import corner, fork_join, no_grad_step
    with torch.device("cuda"):
        x = torch.randn(tokens, width, dtype=torch.float16)
        ws = [torch.randn(width, width, dtype=torch.float16) * 0.01 for _ in range(gemms)]
        h = torch.randn(rows, width, dtype=torch.float16)
        ln = torch.nn.LayerNorm(width).to(torch.float16)

    def big():
        y = x
        for w in ws:
            y = y @ w
        return y

    def small():
        y = h
        for _ in range(rounds):
            y = y + torch.nn.functional.gelu(ln(y))
        return y
    return no_grad_step(fork_join(lambda: corner(big()), lambda: corner(small())))


SMOOTH_SRC = r'''
extern "C" __global__ void smooth3(const float* x, float* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float l = x[i > 0 ? i - 1 : i];
    float r = x[i + 1 < n ? i + 1 : i];
    y[i] = 0.25f * l + 0.5f * x[i] + 0.25f * r;
}
'''


def cupy_smoothing(n=1 << 22, passes=16, threads=256):
    import cupy as cp
    kernel = cp.RawKernel(SMOOTH_SRC, "smooth3")
    x = cp.random.standard_normal(n, dtype=cp.float32)
    bufs = [cp.empty_like(x), cp.empty_like(x)]
    blocks = (n + threads - 1) // threads

    def step():
        src = x
        for p in range(passes):
            dst = bufs[p % 2]
            kernel((blocks,), (threads,), (src, dst, cp.int64(n)))
            src = dst
        return cp.abs(src - x).max()
    return step


build = builder(131_88, {
    "ln_olmo2_2048_static_cache_decode_b1": lambda: static_cache_decode(
        "Olmo2", "bfloat16", 1, 2048, 300, vocab_size=32000, hidden_size=2048,
        intermediate_size=8192, num_hidden_layers=4, num_attention_heads=16,
        num_key_value_heads=16, max_position_embeddings=4096),
    "ln_granite_2048_static_cache_decode_b16": lambda: static_cache_decode(
        "Granite", "bfloat16", 16, 2048, 120, vocab_size=32000, hidden_size=2048,
        intermediate_size=8192, num_hidden_layers=4, num_attention_heads=32,
        num_key_value_heads=8, max_position_embeddings=4096),
    "ln_roberta_768_encoder_b8_seq128_fp16": roberta_encoder,
    "ln_four_qwen3_static_decode_replicas_b1": four_qwen3_replicas,
    "ln_gemms_beside_norm_gelu_lane_fp16": gemms_beside_norm_gelu_lane,
    "ln_cupy_raw_smoothing": (cupy_smoothing, "cupy"),
})
