// Busy-waits for `ns` nanoseconds of the GPU's global timer, in every thread, then writes one
// word so the work is observable. Stands in for a recorded kernel of known duration: the launch
// has the recorded grid and block shape and occupies the GPU for about the recorded time.
extern "C" __global__ void spin_ns(unsigned long long ns, unsigned int* __restrict__ sink) {
    pdl_enter();
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

// One timed span for the whole grid, however many waves it takes: the first block to run
// stamps the start into slot[0], every block spins until `ns` have passed since that stamp,
// and the last block to finish writes the span (first start to last end) into slot[2] and
// resets slot[0..2] so the next launch (or graph replay) starts clean. A grid too large to be
// resident at once therefore still runs for about `ns`, as the recorded kernel did.
// slot: 4 words, zeroed before first use, used by one launch at a time.
// The body of spin_grid_ns, on a given slot; with a null slot every block just spins `ns`.
__device__ __forceinline__ void spin_grid_body(unsigned long long ns, unsigned long long* __restrict__ slot) {
    __shared__ unsigned long long start;
    const bool lead = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
    if (lead) {
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (slot) {
            unsigned long long old = atomicCAS(slot, 0ull, now);
            start = old == 0ull ? now : old;
        } else {
            start = now;
        }
    }
    __syncthreads();
    unsigned long long now;
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while ((long long)(now - start) < (long long)ns);
    __syncthreads();
    if (lead && slot) {
        // No fences: nothing else is published, and the next launch sees these stores by
        // stream order. Fences here would lengthen every kernel past its measured span.
        unsigned long long blocks = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
        if (atomicAdd(slot + 1, 1ull) == blocks - 1) {
            unsigned long long end;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(end));
            slot[2] = end - start;
            slot[0] = 0ull;
            slot[1] = 0ull;
        }
    }
}

extern "C" __global__ void spin_grid_ns(unsigned long long ns, unsigned long long* __restrict__ slot) {
    pdl_enter();
    spin_grid_body(ns, slot);
}

// spin_grid_ns on the slot that `win[0]` names among `slot_count` 4-word slots, read from device
// memory when the kernel runs (device-side parameters); a slot out of range records nothing.
extern "C" __global__ void spin_grid_window(unsigned long long ns, unsigned long long* __restrict__ slots,
                                            unsigned int slot_count, const unsigned int* __restrict__ win) {
    pdl_enter();
    unsigned int s = win[0];
    spin_grid_body(ns, s < slot_count ? slots + 4ull * s : nullptr);
}
