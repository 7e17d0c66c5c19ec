"""Two f32 walks with TF32 matmuls on (`torch.backends.cuda.matmul.allow_tf32 = True`, as
`torch.set_float32_matmul_precision("high")` sets it), for `scripts/validate.py
--walk-module`: PyTorch records their GEMMs as `float`, but cuBLAS runs them on TF32 tensor
cores, several times faster than IEEE f32 math. The replay tells them by their recorded time
against the measured f32 peak (`crates/launch-econ/src/roofline.rs`) and runs them on TF32
where it runs GEMMs for real; before, it ran them as f32 GEMMs, 3.6-4.6x the real graph step
(docs/validation-h200.md, "f32 GEMMs on TF32").

    python3 scripts/validate.py --out DIR --walk-module scripts/tf32_walks.py \
        --walks tf32_mlp_prefill,tf32_two_branches

`tf32_mlp_prefill`: four f32 layers of 2048 → 5632 → 2048 over 512 tokens on one stream (the
up and down projections `aten::mm`, math-bound: they would run for real). `tf32_two_branches`:
two chains of three 2048 × 2048 f32 projections over 256 tokens, forked onto two streams and
joined (every recorded GEMM would run for real).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def relu_chain(x, ws):
    """A step of GEMMs with ReLUs: `x` through each weight of `ws` in turn."""
    import torch

    def run():
        y = x
        for w in ws:
            y = torch.relu(y @ w)
        return y
    return run


def build(name):
    import torch
    from walk_parts import fork_join
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.manual_seed(17)
    dev = "cuda"
    if name == "tf32_mlp_prefill":
        x = torch.randn(512, 2048, device=dev)
        layers = [(torch.randn(2048, 5632, device=dev) * 0.02,
                   torch.randn(5632, 2048, device=dev) * 0.02) for _ in range(4)]

        def step():
            y = x
            for up, down in layers:
                y = y + torch.nn.functional.gelu(y @ up) @ down
            return y
        return step, "torch"
    if name == "tf32_two_branches":
        x = torch.randn(256, 2048, device=dev)
        wa = [torch.randn(2048, 2048, device=dev) * 0.02 for _ in range(3)]
        wb = [torch.randn(2048, 2048, device=dev) * 0.02 for _ in range(3)]

        return fork_join(relu_chain(x, wa), relu_chain(x, wb)), "torch"
    raise KeyError(name)
