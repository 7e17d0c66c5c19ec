"""The `build(name)` that `scripts/validate.py --walk-module` calls, for walk modules whose
walks are each one function: seeds PyTorch's generator (so a walk's weights are the same in
every run of its module), then returns the named walk's step and its kind ("torch" or "cupy").

    build = builder(11, {"four_gemv_chains": four_gemv_chains,
                         "cupy_raw_kernels": (cupy_raw_kernels_step, "cupy")})
"""


def builder(seed, steps):
    """`build(name)` over `steps`: a walk's name to the function that makes its step, or to
    (that function, kind) for a walk that is not PyTorch's. An unknown name is a KeyError, as
    validate.py expects."""
    def build(name):
        import torch
        torch.manual_seed(seed)
        if name not in steps:
            raise KeyError(name)
        entry = steps[name]
        make, kind = entry if isinstance(entry, tuple) else (entry, "torch")
        return make(), kind
    return build
