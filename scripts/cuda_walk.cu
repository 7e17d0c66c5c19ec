// A walk of plain CUDA C++ kernels, no framework: `scripts/more_walks.py` (walk `cuda_cpp`)
// builds it as a shared library, and `scripts/validate.py --walk-module scripts/more_walks.py`
// drives it through ctypes like any other step: times it eager and as a CUDA graph captured
// from the stream it is given, records it with the PyTorch profiler (CUPTI sees every kernel
// of the process) and prices the recording.
//
// One step: 60 rounds of (scale 64 Ki floats, 3-point stencil over 1 Mi floats, block sums of
// 1 Mi floats) on the caller's stream, 180 kernels.
//
//     nvcc -O2 -arch=sm_90 -shared -Xcompiler -fPIC -o libcuda_walk.so scripts/cuda_walk.cu
#include <cuda_runtime.h>

#include <utility>

constexpr int kSmall = 1 << 16;
constexpr int kLarge = 1 << 20;
constexpr int kRounds = 60;

__global__ void scale(const float* x, float* y, int n, float a, float b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}

__global__ void stencil(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float l = i > 0 ? x[i - 1] : 0.f, r = i + 1 < n ? x[i + 1] : 0.f;
        y[i] = (l + x[i] + r) * (1.f / 3.f);
    }
}

__global__ void block_sums(const float* x, float* out, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

struct Buffers {
    float *small_in, *small_out, *a, *b, *sums;
};

static void step(Buffers& m, cudaStream_t s) {
    for (int r = 0; r < kRounds; ++r) {
        scale<<<kSmall / 256, 256, 0, s>>>(m.small_in, m.small_out, kSmall, 1.0001f, 0.5f);
        stencil<<<kLarge / 256, 256, 0, s>>>(m.a, m.b, kLarge);
        block_sums<<<kLarge / 256, 256, 0, s>>>(m.b, m.sums, kLarge);
        std::swap(m.a, m.b);
    }
}

static Buffers bufs;

// Allocates and zeroes the walk's buffers; 0 or a cudaError_t.
extern "C" int cuda_walk_init() {
    cudaError_t e = cudaSuccess;
    for (auto [p, n] : {std::pair{&bufs.small_in, kSmall}, std::pair{&bufs.small_out, kSmall},
                        std::pair{&bufs.a, kLarge}, std::pair{&bufs.b, kLarge},
                        std::pair{&bufs.sums, kLarge / 256}}) {
        if (e == cudaSuccess) e = cudaMalloc(p, n * sizeof(float));
        if (e == cudaSuccess) e = cudaMemset(*p, 0, n * sizeof(float));
    }
    return e;
}

// One step on `stream` (a cudaStream_t); 0 or the first launch error. kRounds is even, so
// the buffers are back where they started: a graph captured from one step replays the next.
extern "C" int cuda_walk_step(void* stream) {
    step(bufs, static_cast<cudaStream_t>(stream));
    return cudaGetLastError();
}

__global__ void touch(float* x) { x[threadIdx.x] += 1.f; }

// Launches `n` one-block kernels on a stream of this library's own and waits for them (for
// scripts/cpp_level_probe.py: work on another stream from this runtime, not the caller's);
// 0 or the first error.
extern "C" int cuda_walk_other_stream(int n) {
    cudaStream_t s;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess) return e;
    for (int i = 0; i < n; ++i) touch<<<1, 32, 0, s>>>(bufs.sums);
    e = cudaStreamSynchronize(s);
    cudaError_t d = cudaStreamDestroy(s);
    return e != cudaSuccess ? e : d;
}
