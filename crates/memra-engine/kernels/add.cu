// Element-wise y[i] = a[i] + b[i]. The seed's "trivial but real" kernel: small enough that GPU
// time is not the story, real enough that the driver cannot skip it.
extern "C" __global__ void add_f32(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ y, unsigned int n) {
    pdl_enter();
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a[i] + b[i];
    }
}

// y[i] = a[off + i] + b[i] for i < n, where off = win[0] and n = win[1] are read from device
// memory when the kernel runs: a graph captured once follows a window that the host moves
// between replays by writing two words, with no update of the graph. Reads and writes stay
// inside a[0..a_len) and b, y[0..y_len) whatever the window says.
extern "C" __global__ void add_f32_window(const float* __restrict__ a, unsigned int a_len,
                                          const float* __restrict__ b, float* __restrict__ y,
                                          unsigned int y_len, const unsigned int* __restrict__ win) {
    pdl_enter();
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int off = win[0];
    unsigned int n = win[1];
    if (i < n && i < y_len && off < a_len && i < a_len - off) {
        y[i] = a[off + i] + b[i];
    }
}

// y[i] = a[i] + b[i] for i < n, four elements a thread through 16-byte loads and stores (the
// thread past the last whole four takes the rest one by one): as a framework's vectorised
// element-wise kernel moves data. Within the L2, lanes of one-float-a-thread adds side by side
// move little more than half of what these do. Every buffer is its own cuMemAlloc block, aligned
// for any type, so the float4 accesses are aligned.
extern "C" __global__ void add_f32x4(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ y, unsigned int n) {
    pdl_enter();
    unsigned long long q = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long i = q * 4ull;
    if (i + 3ull < n) {
        float4 p = reinterpret_cast<const float4*>(a)[q];
        float4 r = reinterpret_cast<const float4*>(b)[q];
        reinterpret_cast<float4*>(y)[q] = make_float4(p.x + r.x, p.y + r.y, p.z + r.z, p.w + r.w);
    } else {
        for (; i < n; ++i) {
            y[i] = a[i] + b[i];
        }
    }
}
