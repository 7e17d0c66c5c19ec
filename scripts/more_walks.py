"""Eight more walks for `scripts/validate.py --walk-module`, written after the method was fixed
and run once with it unchanged, to check it on walks it was not developed on (results:
docs/validation-h200.md, "Walks the method was not developed on"; numbers:
docs/validation-more-walks-h200.json). Also an example of a walk module: `build(name)` returns
(step, kind) and raises KeyError for names it does not know.

    python3 scripts/validate.py --out DIR --walk-module scripts/more_walks.py \
        --walks mistral_decode_b2,gpt2_small_decode_b8,qwen2_prefill_128,cnn_b1,\
fp16_decode_4096,two_streams_small,cupy_reduce,cuda_cpp

The first seven were run once with the method unchanged; `cuda_cpp` (plain CUDA C++ kernels,
scripts/cuda_walk.cu) was added after, also run with the method unchanged.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build(name):
    import torch
    torch.manual_seed(1)
    from walk_parts import fork_join, hf_decoder_step
    if name == "mistral_decode_b2":
        return hf_decoder_step("Mistral", "bfloat16", 2, 1, hidden_size=1024,
                               intermediate_size=3584, num_hidden_layers=16,
                               num_attention_heads=16, num_key_value_heads=4,
                               vocab_size=32000), "torch"
    if name == "gpt2_small_decode_b8":
        return hf_decoder_step("GPT2", "float16", 8, 1, "LMHeadModel", n_embd=768, n_layer=12,
                               n_head=12), "torch"
    if name == "qwen2_prefill_128":
        return hf_decoder_step("Qwen2", "bfloat16", 1, 128, hidden_size=896,
                               intermediate_size=4864, num_hidden_layers=24,
                               num_attention_heads=14, num_key_value_heads=2,
                               vocab_size=32000), "torch"
    if name == "cnn_b1":
        import torch.nn as nn
        layers = []
        for _ in range(12):
            layers += [nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU()]
        net = nn.Sequential(*layers).cuda().half().eval()
        x = torch.randn(1, 64, 56, 56, device="cuda", dtype=torch.float16)

        def step():
            with torch.no_grad():
                return net(x)
        return step, "torch"
    if name == "fp16_decode_4096":
        d, layers = 4096, 8
        ws = [(torch.randn(2 * 11008, d, device="cuda", dtype=torch.float16) * 0.01,
               torch.randn(d, 11008, device="cuda", dtype=torch.float16) * 0.01,
               torch.ones(d, device="cuda", dtype=torch.float16)) for _ in range(layers)]
        x = torch.randn(1, d, device="cuda", dtype=torch.float16)

        def step():
            y = x
            for up, down, g in ws:
                h = torch.nn.functional.rms_norm(y, (d,), g)
                a, b = torch.nn.functional.linear(h, up).chunk(2, dim=-1)
                y = y + torch.nn.functional.linear(torch.nn.functional.silu(a) * b, down)
            return y
        return step, "torch"
    if name == "two_streams_small":
        d, layers = 512, 24
        wa = [torch.randn(d, d, device="cuda", dtype=torch.float16) * 0.05 for _ in range(layers)]
        x = torch.randn(4, d, device="cuda", dtype=torch.float16)

        def gemms():
            a = x
            for w in wa:
                a = torch.nn.functional.gelu(a @ w)
            return a

        def elementwise():
            b = x
            for _ in range(layers):
                b = torch.sigmoid(b) * 1.5
            return b
        return fork_join(gemms, elementwise), "torch"
    if name == "cupy_reduce":
        import cupy as cp
        n = 1 << 20
        a = cp.random.random(n, dtype=cp.float32)
        ws = [cp.random.random(n, dtype=cp.float32) for _ in range(40)]

        def step():
            y = a
            for w in ws:
                y = cp.sqrt(y * w + 1.0)
                y = y / (cp.max(y) + 1.0)
            return y
        return step, "cupy"
    if name == "cuda_cpp":
        # Plain CUDA C++ kernels (scripts/cuda_walk.cu) launched through ctypes on torch's
        # current stream, so that capture and the profiler see them as any step's.
        import ctypes
        import subprocess
        import tempfile
        lib = os.path.join(tempfile.mkdtemp(), "libcuda_walk.so")
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda_walk.cu")
        subprocess.run(["nvcc", "-O2", "-arch=sm_90", "-shared", "-Xcompiler", "-fPIC",
                        "-o", lib, src], check=True)
        walk = ctypes.CDLL(lib)
        walk.cuda_walk_step.argtypes = [ctypes.c_void_p]
        if walk.cuda_walk_init() != 0:
            raise RuntimeError("cuda_walk_init failed")

        def step():
            err = walk.cuda_walk_step(torch.cuda.current_stream().cuda_stream)
            if err != 0:
                raise RuntimeError(f"cuda_walk_step: CUDA error {err}")
        return step, "torch"
    raise KeyError(name)
