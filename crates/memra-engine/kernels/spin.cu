// Busy-waits for `ns` nanoseconds of the GPU's global timer, in every thread, then writes one
// word so the work is observable. Stands in for a recorded kernel of known duration: the launch
// has the recorded grid and block shape and occupies the GPU for about the recorded time.
extern "C" __global__ void spin_ns(unsigned long long ns, unsigned int* __restrict__ sink) {
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    unsigned long long now = start;
    while (now - start < ns) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    }
    if (threadIdx.x == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && sink) {
        *sink = (unsigned int)(now - start);
    }
}
