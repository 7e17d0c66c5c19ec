"""The README's three-line example of the Python package, on a small fp16 MLP step."""
import torch
import launch_econ

ws = [torch.randn(1024, 1024, device="cuda", dtype=torch.float16) * 0.02 for _ in range(24)]
x = torch.randn(1, 1024, device="cuda", dtype=torch.float16)


def step():
    h = x
    for w in ws:
        h = torch.nn.functional.gelu(h @ w) + h
    return h


r = launch_econ.price(step, validate=True)
print(r)
