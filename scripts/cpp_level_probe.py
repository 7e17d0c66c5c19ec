#!/usr/bin/env python3
"""Does a graph of plain CUDA C++ kernels (scripts/cuda_walk.cu, driven through ctypes and
captured by PyTorch, as validate.py's `cuda_cpp` walk) move to the upper level of per-node
graph cost (docs/validation-h200.md, "Two levels") when kernels run on another stream, and
does it matter whose CUDA runtime launched them?

In one process per `--cudart` (the library linked with its own static runtime, or with the
shared one): the graph, and beside it a graph of PyTorch kernels over the same sizes (60 ×
scale of 64 Ki floats, a sum of shifted copies of 1 Mi floats, a reshape-sum), are timed as
captured, again after 32 kernels that the library launches on a stream of its own runtime, and
again after 32 kernels PyTorch launches on a new stream. Unprofiled; median ms per replay of
9 batches of 20.

    python3 scripts/cpp_level_probe.py --cudart static --out /tmp/static.json
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import capture_torch, launch_on_other_stream, replay_ms  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cudart", choices=["static", "shared"], required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import torch
    lib = os.path.join(tempfile.mkdtemp(), "libcuda_walk.so")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda_walk.cu")
    subprocess.run(["nvcc", "-O2", "-arch=sm_90", "-shared", "-Xcompiler", "-fPIC",
                    f"-cudart={a.cudart}", "-o", lib, src], check=True)
    walk = ctypes.CDLL(lib)
    walk.cuda_walk_step.argtypes = [ctypes.c_void_p]
    if walk.cuda_walk_init() != 0:
        raise RuntimeError("cuda_walk_init failed")

    def step():
        if walk.cuda_walk_step(torch.cuda.current_stream().cuda_stream) != 0:
            raise RuntimeError("cuda_walk_step failed")

    small = torch.zeros(1 << 16, device="cuda")
    big = torch.zeros(1 << 20, device="cuda")

    def torch_step():
        for _ in range(60):
            small.mul(1.0001).add_(0.5)
            big.add(big).view(-1, 256).sum(1)

    graphs = {"cuda_cpp": capture_torch(step, torch.cuda.Stream()),
              "torch": capture_torch(torch_step, torch.cuda.Stream())}
    for g in graphs.values():
        for _ in range(5):
            g.replay()
    res = {"cudart": a.cudart, "device": torch.cuda.get_device_name(0)}

    def time_all(label):
        for name, g in graphs.items():
            res[f"{name}_{label}_ms"] = replay_ms(g.replay, batches=9)

    time_all("as_captured")
    if walk.cuda_walk_other_stream(32) != 0:
        raise RuntimeError("cuda_walk_other_stream failed")
    time_all("after_library_other_stream")
    launch_on_other_stream("torch")
    time_all("after_torch_other_stream")
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
