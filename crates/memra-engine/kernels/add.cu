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
