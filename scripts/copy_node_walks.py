"""Walks that tell what a device-to-device copy node costs a real graph, for `scripts/validate.py
--walk-module`: the same chain of small element-wise kernels without and with a
`cudaMemcpyAsync` device-to-device copy after each (PyTorch's `Tensor.copy_` of a contiguous
tensor of the same type), small (1.5 KiB, as a decode step's cache writes) and large (1 MiB).
The difference of two real graph steps, divided by the copies, is a copy node's cost in a
real graph; the same difference of the replayed steps is what the replay charges for one.

    python3 scripts/validate.py --out DIR --walk-module scripts/copy_node_walks.py \
        --walks adds_only,adds_small_copies,adds_large_copies
"""
NODES = 128
# fp16 values each copy moves (none: the walk without copies).
COPY_VALUES = {"adds_only": 0, "adds_small_copies": 768, "adds_large_copies": 1 << 19}


def build(name):
    import torch
    dev = "cuda"
    if name not in COPY_VALUES:
        raise KeyError(name)
    n = COPY_VALUES[name]
    x = torch.zeros(768, device=dev, dtype=torch.float16)
    src = torch.zeros(max(n, 1), device=dev, dtype=torch.float16)
    dst = [torch.empty_like(src) for _ in range(NODES)]

    def step():
        y = x
        for i in range(NODES):
            y = y + 1
            if n:
                dst[i].copy_(src)
        return y
    return step, "torch"
