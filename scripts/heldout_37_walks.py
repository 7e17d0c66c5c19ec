"""Four walks written after held-out batch 36's run (no change to either graph price since
89f45ba), before any run of them: a Mamba-shaped selective-state-space model over 16 tokens at
batch 2 (transformers, bf16; without the fused scan kernels its scan is a loop of small
element-wise kernels per token and layer) and an Arcee-shaped decode at batch 4 (Llama-like
attention, squared-ReLU MLP without a gate; transformers, fp16), each on one stream; a CuPy
Jacobi relaxation (24 sweeps of a five-point stencil over a 1024 x 1024 float32 grid, written
back into the interior); a shared trunk (three bf16 linear layers over 64 tokens of hidden
1024) that forks into four task heads of different widths, each on a stream of its own.

    python3 scripts/validate_all.py --out DIR --groups heldout37
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def mamba_scan_b2_s16():
    import torch
    from walk_parts import hf_model
    model = hf_model("Mamba", "bfloat16", hidden_size=768, state_size=16, expand=2,
                     num_hidden_layers=4, vocab_size=32000)
    ids = torch.randint(0, 32000, (2, 16), device="cuda")

    def step():
        with torch.no_grad():
            return model(input_ids=ids, use_cache=False).logits
    return step


def arcee_decode_b4():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Arcee", "float16", 4, 1, hidden_size=2048, intermediate_size=8192,
                           num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=4,
                           vocab_size=32000, max_position_embeddings=2048)


def cupy_jacobi_sweeps():
    import cupy as cp
    start = cp.random.random((1024, 1024), dtype=cp.float32)
    grid = start.copy()

    def step():
        grid[...] = start
        for _ in range(24):
            interior = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2]
                               + grid[1:-1, 2:])
            grid[1:-1, 1:-1] = interior
        return grid
    return step


def trunk_into_four_heads():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn
    with torch.device("cuda"):
        trunk = nn.Sequential(*[nn.Sequential(nn.Linear(1024, 1024), nn.GELU())
                                for _ in range(3)]).to(torch.bfloat16)
        heads = [nn.Sequential(nn.Linear(1024, width), nn.GELU(), nn.Linear(width, out))
                 .to(torch.bfloat16)
                 for width, out in ((256, 2), (1024, 16), (2048, 128), (4096, 1000))]
        x = torch.randn(64, 1024, dtype=torch.bfloat16)

    run = fork_lanes(list(heads))

    def step():
        with torch.no_grad():
            return run(trunk(x))
    return step


build = builder(131_37, {
    "im_mamba_scan_b2_s16": mamba_scan_b2_s16,
    "im_arcee_decode_b4": arcee_decode_b4,
    "im_cupy_jacobi_sweeps": (cupy_jacobi_sweeps, "cupy"),
    "im_trunk_into_four_heads": trunk_into_four_heads,
})
