// Device-side control of a conditional WHILE graph: the last node of the loop body. NVRTC knows
// cudaGraphSetConditional as a device runtime builtin; it is declared here as the CUDA headers
// declare it, so no toolkit include path is needed.
typedef __device_builtin__ unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                                     unsigned int value);

// state[0]: iterations run so far in this launch; state[1]: iterations the last finished launch
// ran; state[2]: iterations over all launches. Runs once, single-threaded, after each body.
// The loop goes on while fewer than `limit` iterations have run and `stop[0]` (if given) is 0.
// On exit it records the count, resets state[0] and clears stop[0], so the next launch of the
// graph starts clean without a host write.
extern "C" __global__ void loop_next(unsigned long long handle, unsigned int* __restrict__ state,
                                     unsigned int* __restrict__ stop, unsigned int limit) {
    pdl_enter();
    unsigned int done = state[0] + 1;
    bool more = done < limit && !(stop && *stop);
    if (more) {
        state[0] = done;
    } else {
        state[0] = 0;
        state[1] = done;
        state[2] += done;
        if (stop) {
            *stop = 0;
        }
    }
    cudaGraphSetConditional(handle, more ? 1u : 0u);
}

// One loop step that decides on the device when the loop ends: counts itself in counter[0] and
// sets stop[0] when the count reaches a multiple of `every` (0: never). Stands in for a step
// whose result ends the loop, like a speculative-decoding verify step rejecting a draft token.
extern "C" __global__ void count_step(unsigned int* __restrict__ counter, unsigned int* __restrict__ stop,
                                      unsigned int every) {
    pdl_enter();
    unsigned int c = counter[0] + 1;
    counter[0] = c;
    if (stop && every != 0 && c % every == 0) {
        *stop = 1;
    }
}
