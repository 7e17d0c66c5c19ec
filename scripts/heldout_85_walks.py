"""Six walks written after 50281e7 (no pricing change since batch 80), before any run. On one
stream: the Llama shape of the issue's first walk (2048 wide, 22 layers, bf16) decoding at
batch 1 over a 2048-token static cache holding 100 tokens; a Qwen2-shaped decode at batch 16
over a static cache (bf16, 1536 wide, 4 layers). On several streams: a top-2 router and four
gated-MLP experts over 8 tokens, each expert on a stream of its own (bf16, 1024 -> 2816); an
`embedding_bag` lane (a 100k x 256 table, 4096 indices in 512 bags) beside a Llama-shaped
static-cache decode at batch 2; two lanes of rotary position embeddings and RMSNorms over a
prefill's queries and keys (fp16, 32 heads of 128 over 256 tokens) beside each other. Not
PyTorch: a CuPy `RawKernel` tiled transpose through shared memory (32 x 32 tiles) of a
2048 x 2048 f32 matrix, each round followed by CuPy's row sum, six rounds.

    python3 scripts/validate_all.py --out DIR --groups heldout85
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from heldout_82_walks import static_cache_decode  # noqa: E402
from walk_parts import LLAMA, LLAMA_SMALL  # noqa: E402
from walk_registry import builder  # noqa: E402


def routed_experts(tokens=8, hidden=1024, inner=2816, experts=4):
    """A router (a linear layer, softmax, top-2) on the current stream, then each expert's
    gated MLP on a stream of its own over every token, weighted by its routing weight (zero
    where a token did not pick it), the experts' outputs summed back on the current stream."""
    import torch
    from walk_parts import fork_lanes, no_grad_step
    bf = dict(device="cuda", dtype=torch.bfloat16)
    x = torch.randn(tokens, hidden, **bf)
    router = torch.randn(experts, hidden, **bf) * 0.02
    ws = [(torch.randn(inner, hidden, **bf) * 0.02, torch.randn(inner, hidden, **bf) * 0.02,
           torch.randn(hidden, inner, **bf) * 0.02) for _ in range(experts)]
    weights = torch.empty(tokens, experts, **bf)

    def expert(k):
        gate, up, down = ws[k]

        def run():
            f = torch.nn.functional
            h = f.silu(f.linear(x, gate)) * f.linear(x, up)
            return f.linear(h, down) * weights[:, k:k + 1]
        return run

    lanes = fork_lanes([expert(k) for k in range(experts)])

    def run():
        probs = torch.softmax(torch.nn.functional.linear(x, router).float(), dim=-1)
        top, idx = probs.topk(2, dim=-1)
        dense = torch.zeros_like(probs).scatter(-1, idx, top / top.sum(-1, keepdim=True))
        weights.copy_(dense)
        return lanes()
    return no_grad_step(run)


def embedding_bags_beside_decode():
    import torch
    from walk_parts import corner, fork_join
    decode = static_cache_decode("Llama", "bfloat16", 2, 2048, 96, **LLAMA_SMALL)
    table = torch.randn(100_000, 256, device="cuda")
    idx = torch.randint(0, 100_000, (4096,), device="cuda")
    offsets = torch.arange(0, 4096, 8, device="cuda")

    def bags():
        with torch.no_grad():
            return torch.nn.functional.embedding_bag(idx, table, offsets, mode="mean")
    return fork_join(lambda: corner(decode()), lambda: corner(bags()))


def rotary_norm_lanes(heads=32, dim=128, seq=256):
    """Queries on one lane and keys on another: each RMSNorm'd over the head dimension, then
    rotated by position (the rotate-half form), as a prefill's attention prepares them."""
    import torch
    from walk_parts import fork_lanes, no_grad_step, rms_norm
    h = dict(device="cuda", dtype=torch.float16)
    pos = torch.arange(seq, device="cuda", dtype=torch.float32)[:, None]
    freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, device="cuda") / dim))
    ang = torch.cat([pos * freq, pos * freq], dim=-1)
    cos, sin = ang.cos().half(), ang.sin().half()

    def lane():
        t = torch.randn(heads, seq, dim, **h)
        g = torch.randn(dim, **h)

        def run():
            y = rms_norm(t, g)
            half = dim // 2
            rot = torch.cat([-y[..., half:], y[..., :half]], dim=-1)
            return y * cos + rot * sin
        return run
    return no_grad_step(fork_lanes([lane(), lane()]))


TRANSPOSE_SRC = r'''
extern "C" __global__ void tile_transpose(const float* in, float* out, int n) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
'''


def cupy_tiled_transpose(n=2048, rounds=6):
    import cupy as cp
    kernel = cp.RawKernel(TRANSPOSE_SRC, "tile_transpose")
    a = cp.random.standard_normal((n, n), dtype=cp.float32)
    bufs = [cp.empty_like(a), cp.empty_like(a)]

    def step():
        src, total = a, None
        for r in range(rounds):
            dst = bufs[r % 2]
            kernel((n // 32, n // 32), (32, 8), (src, dst, cp.int32(n)))
            s = dst.sum(axis=1)
            total = s if total is None else total + s
            src = dst
        return total
    return step


build = builder(131_85, {
    "lj_llama_2048_22_layers_static_cache_decode_b1": lambda: static_cache_decode(
        "Llama", "bfloat16", 1, 2048, 100, **LLAMA),
    "lj_qwen2_1536_static_cache_decode_b16": lambda: static_cache_decode(
        "Qwen2", "bfloat16", 16, 2048, 128, vocab_size=32000, hidden_size=1536,
        intermediate_size=8960, num_hidden_layers=4, num_attention_heads=12,
        num_key_value_heads=2, max_position_embeddings=4096),
    "lj_routed_expert_lanes_bf16": routed_experts,
    "lj_embedding_bags_beside_static_decode": embedding_bags_beside_decode,
    "lj_rotary_norm_lanes_fp16": rotary_norm_lanes,
    "lj_cupy_tiled_transpose": (cupy_tiled_transpose, "cupy"),
})
