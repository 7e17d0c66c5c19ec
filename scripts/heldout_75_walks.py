"""Six CuPy walks written after 0149d6f (the trace-only eager step of a program that records no
framework operators read at its launch calls' cadence), before any run: programs with no
operators, each on one stream, at cadences of their own. A RawKernel SAXPY over 64 Ki floats
launched 48 times; columns of three matrices standardised and clipped (means, deviations,
element-wise arithmetic); eight layers of a hand-written GEMV RawKernel (1024 square, one
block a row) each followed by a bias-and-tanh ElementwiseKernel; low-pass filters of three
signal sizes through cuFFT (forward, the high band zeroed, inverse); inverse-CDF sampling of
32 rows of 32000 logits (softmax, cumulative sums, counts under fixed uniforms); an
ElementwiseKernel applied 24 times alternating over 4 Ki, 256 Ki and 4 Mi floats.

    python3 scripts/validate_all.py --out DIR --groups heldout75
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def cupy_saxpy_raw_loop():
    import cupy as cp
    n = 1 << 16
    saxpy = cp.RawKernel(r"""
    extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + y[i];
    }""", "saxpy")
    x = cp.random.random(n, dtype=cp.float32)
    y = cp.zeros(n, dtype=cp.float32)
    blocks = ((n + 255) // 256,)

    def step():
        for _ in range(48):
            saxpy(blocks, (256,), (cp.float32(0.5), x, y, cp.int32(n)))
        return y
    return step


def cupy_standardise_columns():
    import cupy as cp
    xs = [cp.random.standard_normal(shape, dtype=cp.float32)
          for shape in ((2048, 256), (512, 1024), (64, 4096))]

    def step():
        out = []
        for x in xs:
            z = (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-5)
            out.append(cp.clip(z, -3.0, 3.0))
        return out
    return step


def cupy_raw_gemv_layers():
    import cupy as cp
    n = 1024
    gemv = cp.RawKernel(r"""
    extern "C" __global__ void gemv(const float* w, const float* x, float* y, int n) {
        __shared__ float part[256];
        const float* row = w + (size_t)blockIdx.x * n;
        float s = 0.f;
        for (int j = threadIdx.x; j < n; j += blockDim.x) s += row[j] * x[j];
        part[threadIdx.x] = s;
        __syncthreads();
        for (int k = blockDim.x / 2; k > 0; k >>= 1) {
            if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
            __syncthreads();
        }
        if (threadIdx.x == 0) y[blockIdx.x] = part[0];
    }""", "gemv")
    bias_tanh = cp.ElementwiseKernel("float32 y, float32 b", "float32 h", "h = tanhf(y + b)",
                                     "bias_tanh")
    ws = [cp.random.standard_normal((n, n), dtype=cp.float32) * 0.03 for _ in range(8)]
    bs = [cp.random.standard_normal(n, dtype=cp.float32) * 0.1 for _ in range(8)]
    x = cp.random.standard_normal(n, dtype=cp.float32)
    y = cp.empty(n, dtype=cp.float32)

    def step():
        h = x
        for w, b in zip(ws, bs):
            gemv((n,), (256,), (w, h, y, cp.int32(n)))
            h = bias_tanh(y, b)
        return h
    return step


def cupy_fft_lowpass():
    import cupy as cp
    signals = [cp.random.standard_normal(shape, dtype=cp.float32)
               for shape in ((16, 8192), (64, 2048), (4, 65536))]

    def step():
        out = []
        for x in signals:
            spectrum = cp.fft.rfft(x, axis=1)
            spectrum[:, spectrum.shape[1] // 8:] = 0
            out.append(cp.fft.irfft(spectrum, n=x.shape[1], axis=1))
        return out
    return step


def cupy_inverse_cdf_sampling():
    import cupy as cp
    logits = cp.random.standard_normal((32, 32000), dtype=cp.float32)
    uniforms = cp.random.random((32, 1), dtype=cp.float32)

    def step():
        p = cp.exp(logits - logits.max(axis=1, keepdims=True))
        cdf = cp.cumsum(p, axis=1)
        cdf = cdf / cdf[:, -1:]
        return (cdf < uniforms).sum(axis=1)
    return step


def cupy_elementwise_ladder():
    import cupy as cp
    k = cp.ElementwiseKernel("float32 x", "float32 y", "y = x * 0.75f + tanhf(x)", "ladder")
    xs = [cp.random.standard_normal(n, dtype=cp.float32) for n in (1 << 12, 1 << 18, 1 << 22)]

    def step():
        ys = list(xs)
        for i in range(24):
            ys[i % 3] = k(ys[i % 3])
        return ys
    return step


build = builder(131_75, {
    "kz_cupy_saxpy_raw_loop": (cupy_saxpy_raw_loop, "cupy"),
    "kz_cupy_standardise_columns": (cupy_standardise_columns, "cupy"),
    "kz_cupy_raw_gemv_layers": (cupy_raw_gemv_layers, "cupy"),
    "kz_cupy_fft_lowpass": (cupy_fft_lowpass, "cupy"),
    "kz_cupy_inverse_cdf_sampling": (cupy_inverse_cdf_sampling, "cupy"),
    "kz_cupy_elementwise_ladder": (cupy_elementwise_ladder, "cupy"),
})
