"""Chains of 128 short element-wise kernels on one stream, for `scripts/validate.py
--walk-module`: the shortest kernels a walk has, one after another with nothing longer to
hide the per-node cost between them (decode steps' element-wise kernels, alone).

    python3 scripts/validate.py --out DIR --walk-module scripts/short_kernel_walks.py \
        --walks adds_768,adds_64k,adds_1m,mixed_768,adds_768_f32

`adds_768`: `y = y + 1` over 768 fp16 values (one block, ~1.1 µs recorded); `adds_64k` and
`adds_1m` the same over 64 Ki and 1 Mi values; `mixed_768` relu, multiply and add in turn;
`adds_768_f32` the first in f32.
"""
NODES = 128
SIZES = {"adds_768": 768, "adds_64k": 1 << 16, "adds_1m": 1 << 20, "mixed_768": 768,
         "adds_768_f32": 768}


def build(name):
    import torch
    if name not in SIZES:
        raise KeyError(name)
    dtype = torch.float32 if name.endswith("f32") else torch.float16
    x = torch.zeros(SIZES[name], device="cuda", dtype=dtype)
    mixed = name.startswith("mixed")

    def step():
        y = x
        for i in range(NODES):
            if mixed and i % 3 == 0:
                y = torch.relu(y)
            elif mixed and i % 3 == 1:
                y = y * 1.5
            else:
                y = y + 1
        return y
    return step, "torch"
