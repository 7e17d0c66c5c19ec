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
