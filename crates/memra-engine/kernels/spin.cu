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

// One timed span for the whole grid, however many waves it takes. Block 0 stamps the start
// into slot[0]; every block that sees the stamp spins until `ns` have passed since it (a block
// that runs before the stamp is visible spins from its own start, which is nearly the same);
// the block with the highest index — dispatched last — writes the span (stamp to its end) into
// slot[2], the end into slot[3], and clears slot[0] for the next launch (or graph replay). A
// grid too large to be resident at once therefore still runs for about `ns`, as the recorded
// kernel did. No atomics: thousands of blocks updating one word would serialise at the L2 and
// make a short, wide kernel unreachable (it once put a 2048-block stand-in's floor at ~4 us).
// slot: 4 words, zeroed before first use, used by one launch at a time.
__device__ __forceinline__ unsigned long long spin_load(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void spin_store(unsigned long long* p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

// This block's index in its grid, this thread's in its block, and their counts, flattened.
__device__ __forceinline__ unsigned long long flat_block() {
    return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
}
__device__ __forceinline__ unsigned long long flat_blocks() {
    return (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
}
__device__ __forceinline__ unsigned long long flat_lane() {
    return threadIdx.x + (unsigned long long)blockDim.x * (threadIdx.y + (unsigned long long)blockDim.y * threadIdx.z);
}
__device__ __forceinline__ unsigned long long flat_width() {
    return (unsigned long long)blockDim.x * blockDim.y * blockDim.z;
}

// The start of a grid's span on `slot` (see above): block 0 stamps its start into slot[0];
// every other block takes that stamp once it is visible, else its own start (nearly the same).
// `seen`: whether the block found the stamp (every thread of the block sees the same).
struct GridSpan {
    unsigned long long start;
    bool seen;
};

__device__ __forceinline__ GridSpan grid_span_begin(unsigned long long* __restrict__ slot) {
    __shared__ unsigned long long start;
    __shared__ bool seen;
    const bool lead = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
    const unsigned long long block = flat_block();
    if (lead) {
        unsigned long long stamp = slot && block != 0 ? spin_load(slot) : 0ull;
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (slot && block == 0) {
            spin_store(slot, now);
        }
        seen = block == 0 || stamp != 0ull;
        start = stamp != 0ull && stamp <= now ? stamp : now;
    }
    __syncthreads();
    return GridSpan{start, seen};
}

// The end of a grid's span: after every thread of the block is done, the block with the
// highest index writes span and end into slot[2..4] and clears slot[0] for the next launch.
// The clear must come after block 0's stamp: a stamp landing after it would be the next
// launch's start for blocks that read it before that launch's block 0 stamps (a span a whole
// launch long, and spins that end at once). So slot[0] is 0 whenever a launch begins, any stamp
// a block finds is its own launch's, and a highest block that found none waits until block 0's
// stamp is visible before clearing it (rare: block 0 is dispatched first; the stamp is not
// read otherwise, so the wait costs nothing in the common case).
__device__ __forceinline__ void grid_span_end(unsigned long long* __restrict__ slot, GridSpan span) {
    __syncthreads();
    const bool lead = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
    const unsigned long long block = flat_block();
    const unsigned long long blocks = flat_blocks();
    if (lead && slot && block == blocks - 1) {
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (!span.seen) {
            while (spin_load(slot) == 0ull) {
            }
        }
        // No fences: nothing else is published, and the next launch sees these stores by
        // stream order. Fences here would lengthen every kernel past its measured span.
        slot[2] = now - span.start;
        slot[3] = now;
        spin_store(slot, 0ull);
    }
}

// The body of spin_grid_ns, on a given slot; with a null slot every block just spins `ns`.
__device__ __forceinline__ void spin_grid_body(unsigned long long ns, unsigned long long* __restrict__ slot) {
    const GridSpan span = grid_span_begin(slot);
    unsigned long long now;
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while ((long long)(now - span.start) < (long long)ns);
    grid_span_end(slot, span);
}

extern "C" __global__ void spin_grid_ns(unsigned long long ns, unsigned long long* __restrict__ slot) {
    pdl_enter();
    spin_grid_body(ns, slot);
}

// Every block busy for `ns` from its own start (not the grid's), the grid's span recorded in
// `slot` as spin_grid_ns does. A grid that fits the GPU at once runs as long as spin_grid_ns;
// one that does not — or that finds SMs held by other streams' kernels — runs a wave of `ns`
// for each round of blocks, as a real kernel whose blocks each take that long does.
extern "C" __global__ void spin_blocks_ns(unsigned long long ns, unsigned long long* __restrict__ slot) {
    pdl_enter();
    const GridSpan span = grid_span_begin(slot);
    unsigned long long t0, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while ((long long)(now - t0) < (long long)ns);
    grid_span_end(slot, span);
}

// spin_grid_ns on the slot that `win[0]` names among `slot_count` 4-word slots, read from device
// memory when the kernel runs (device-side parameters); a slot out of range records nothing.
extern "C" __global__ void spin_grid_window(unsigned long long ns, unsigned long long* __restrict__ slots,
                                            unsigned int slot_count, const unsigned int* __restrict__ win) {
    pdl_enter();
    unsigned int s = win[0];
    spin_grid_body(ns, s < slot_count ? slots + 4ull * s : nullptr);
}

// Reads `n16` 16-byte words of `src` and records the grid's span in `slot` as spin_grid_ns
// does; every block also raises slot[1] to the time it ended (one atomic per block), so that
// slot[1] - (slot[3] - slot[2]) is the span to the block that ended last: blocks that stream
// end over a spread the highest-index block does not mark. Each block reads its own contiguous
// share (equal to a word), its threads side by side with eight loads in flight each, so a wide
// grid streams at the memory's speed. Stands in for a recorded kernel that streams its
// operands from memory (a decode step's weights): it occupies the GPU for about the recorded
// time *and* keeps the memory system as busy, which a spin does not. Should the words read
// sum to -1.5 (zeroed memory never does), slot[1] is raised to all ones: the loads cannot be
// dropped, and a test can see what was read.
//
// Where the read starts: with a null `cursor`, at `src`. Otherwise at word `*cursor` taken
// modulo the room `src_words - n16 + 1` (so the read always lies inside `src`, whatever the
// cursor holds), and the highest-index block, once done, leaves the cursor just past the
// read: launches that share a cursor read on through `src` one after another, wrapping, so a
// word is read again only after all of `src` has been (a graph replay reads fresh memory, as
// a decode step reads weights that do not fit in L2). Blocks that start after the cursor moved
// read from its new place, equally inside `src`.
// The body of stream_grid and stream_paced. PACED: after each round of loads (LOADS words a
// thread) a block waits until its share of `ns` for the words read so far has passed since the
// grid's start, and at the end until all of `ns` has, so the grid reads its `n16` words evenly
// over about `ns` (longer where memory cannot keep that pace) instead of as fast as it can.
//
// LOADS: 16-byte loads in flight per thread; stream_grid keeps eight. stream_paced keeps four, so that it
// needs at most 32 registers a thread (its launch bounds; ptxas for sm_90 gave it 40 with eight): a paced read stands in beside other
// streams' kernels for one that an SM held up to 2048 threads of, and a stand-in needing more
// registers than its kernel would fit fewer blocks an SM than the kernel did (a grid planned
// as one round of blocks would run in two, its first round holding its SMs to its end).
template <bool PACED, int LOADS>
__device__ __forceinline__ void stream_body(const float4* __restrict__ src, unsigned long long src_words,
                                            unsigned long long n16, unsigned long long* __restrict__ cursor,
                                            unsigned long long ns, unsigned long long* __restrict__ slot) {
    const GridSpan span = grid_span_begin(slot);
    const unsigned long long start = span.start;
    const unsigned long long blocks = flat_blocks();
    const unsigned long long block = flat_block();
    const unsigned long long width = flat_width();
    const unsigned long long lane = flat_lane();
    __shared__ unsigned long long base;
    if (lane == 0) {
        base = cursor && n16 <= src_words ? spin_load(cursor) % (src_words - n16 + 1) : 0ull;
    }
    __syncthreads();
    const float4* from = src + base;
    const unsigned long long first = n16 * block / blocks;
    const unsigned long long end = n16 * (block + 1) / blocks;
    unsigned long long i = first + lane;
    float acc = 0.f;
    for (; i + (LOADS - 1) * width < end; i += LOADS * width) {
        float4 v[LOADS];
#pragma unroll
        for (int k = 0; k < LOADS; k++) v[k] = from[i + k * width];
#pragma unroll
        for (int k = 0; k < LOADS; k++) acc += v[k].x + v[k].y + v[k].z + v[k].w;
        if (PACED) {
            // The loads' values are used above, so the wait starts once they arrived.
            const unsigned long long done = i + LOADS * width - lane - first;
            const unsigned long long due = start + (unsigned long long)((double)ns * (double)done / (double)(end - first));
            unsigned long long now;
            do {
                asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
            } while ((long long)(now - due) < 0);
        }
    }
    for (; i < end; i += width) {
        float4 v = from[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (PACED) {
        unsigned long long now;
        do {
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        } while ((long long)(now - start) < (long long)ns);
    }
    __syncthreads();
    if (lane == 0) {
        if (slot) {
            unsigned long long now;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
            atomicMax(slot + 1, now);
        }
        if (cursor && block == blocks - 1) {
            spin_store(cursor, base + n16);
        }
    }
    if (acc == -1.5f && slot) {
        atomicMax(slot + 1, ~0ull);
    }
    grid_span_end(slot, span);
}

extern "C" __global__ void stream_grid(const float4* __restrict__ src, unsigned long long src_words,
                                       unsigned long long n16, unsigned long long* __restrict__ cursor,
                                       unsigned long long* __restrict__ slot) {
    pdl_enter();
    stream_body<false, 8>(src, src_words, n16, cursor, 0ull, slot);
}

// stream_grid reading its words paced over `ns` of the global timer (see stream_body), and
// lasting at least that long: stands in for a kernel whose bytes and duration are both known,
// asking of the memory system what that kernel asked, spread as it spread it, and no more.
extern "C" __global__ void __launch_bounds__(1024, 2) stream_paced(const float4* __restrict__ src, unsigned long long src_words,
                                        unsigned long long n16, unsigned long long* __restrict__ cursor,
                                        unsigned long long ns, unsigned long long* __restrict__ slot) {
    pdl_enter();
    stream_body<true, 4>(src, src_words, n16, cursor, ns, slot);
}

// stream_paced with sixteen loads in flight a thread, in at most 96 registers a thread
// (__maxnreg__): it stands in for a kernel whose blocks are few threads of many registers each
// (an H200's decode attention: 128 blocks of 128 threads, 183 registers each, reading 4.4 TB/s),
// which a grid of as few threads with four loads each cannot read as fast as, while holding no
// more registers than that kernel did.
extern "C" __global__ void __maxnreg__(96) stream_paced_deep(const float4* __restrict__ src, unsigned long long src_words,
                                        unsigned long long n16, unsigned long long* __restrict__ cursor,
                                        unsigned long long ns, unsigned long long* __restrict__ slot) {
    pdl_enter();
    stream_body<true, 16>(src, src_words, n16, cursor, ns, slot);
}

// The end both chases share: a spin of `ns` more of the global timer, then the line the
// thread reached written to `sink` (a word per thread, modulo its length; none where it is
// empty), so the reads cannot be dropped, and the grid's span closed in `slot`.
__device__ __forceinline__ void chase_end(unsigned long long ns, unsigned line,
                                          unsigned int* __restrict__ sink, unsigned int sink_len,
                                          unsigned long long thread,
                                          unsigned long long* __restrict__ slot, GridSpan span) {
    unsigned long long t0, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while ((long long)(now - t0) < (long long)ns);
    if (sink_len) {
        sink[thread % sink_len] = line;
    }
    grid_span_end(slot, span);
}

// A latency-bound stand-in. Each warp takes `loads` dependent steps through `ring` — lines of
// 32 words, every word of a line naming the next line, so a step is one coalesced 128-byte
// read whose result the next step needs — then spins `ns` more of the global timer, writes
// the line it reached to `sink` (one word per thread), and records the grid's span in `slot`
// as spin_grid_ns does. Alone it runs as long as its steps and spin; beside kernels that keep
// the memory system busy each step takes as long as a memory round trip takes there, so it
// stretches as a real kernel made of launch, loads and stores does, which a clock spin does
// not. Every index is taken modulo its length, so no ring contents can read or write outside
// `ring` or `sink`.
extern "C" __global__ void chase_grid(unsigned long long ns, const unsigned int* __restrict__ ring,
                                      unsigned int lines, unsigned int loads,
                                      unsigned int* __restrict__ sink, unsigned int sink_len,
                                      unsigned long long* __restrict__ slot) {
    pdl_enter();
    const GridSpan span = grid_span_begin(slot);
    const unsigned long long width = flat_width();
    const unsigned long long block = flat_block();
    const unsigned long long lane_in_block = flat_lane();
    const unsigned long long thread = block * width + lane_in_block;
    const unsigned lane = (unsigned)(lane_in_block % 32ull);
    unsigned line = lines ? (unsigned)((thread / 32ull) % lines) : 0u;
    if (lines) {
        for (unsigned k = 0; k < loads; ++k) {
            line = ring[(unsigned long long)line * 32ull + lane] % lines;
        }
    }
    chase_end(ns, line, sink, sink_len, thread, slot, span);
}

// A chase whose every step is a round of a block-wide reduction, as a normalisation's or a
// reduction's is: each warp takes its dependent read through `ring` (as chase_grid), sums it
// across the warp by shuffles, puts the sum in shared memory, and after a barrier every warp
// sums the partials and takes its next line from the block's total, after a second barrier.
// Beside other streams' traffic the reads stretch as chase_grid's do; the shuffles and
// barriers, which a real normalisation's time also holds, do not, so a step lasts longer alone
// and a stand-in of a given length holds fewer reads. `ns`, `sink` and `slot` as chase_grid.
// Every index is taken modulo its length; shuffles name only the lanes present
// (`__activemask()` where every thread of the block arrives, before any branch).
extern "C" __global__ void barrier_chase_grid(unsigned long long ns,
                                              const unsigned int* __restrict__ ring,
                                              unsigned int lines, unsigned int loads,
                                              unsigned int* __restrict__ sink,
                                              unsigned int sink_len,
                                              unsigned long long* __restrict__ slot) {
    pdl_enter();
    __shared__ unsigned int partial[32];
    const GridSpan span = grid_span_begin(slot);
    const unsigned long long width = flat_width();
    const unsigned long long lane_in_block = flat_lane();
    const unsigned long long thread = flat_block() * width + lane_in_block;
    const unsigned lane = (unsigned)(lane_in_block % 32ull);
    const unsigned warp = (unsigned)(lane_in_block / 32ull);
    const unsigned warps = (unsigned)((width + 31ull) / 32ull);
    const unsigned mask = __activemask();
    unsigned line = lines ? (unsigned)((thread / 32ull) % lines) : 0u;
    if (lines) {
        for (unsigned k = 0; k < loads; ++k) {
            unsigned v = ring[(unsigned long long)line * 32ull + lane] % lines;
            for (int o = 16; o > 0; o >>= 1) {
                v += __shfl_xor_sync(mask, v, o);
            }
            if (lane == 0) {
                partial[warp % 32u] = v;
            }
            __syncthreads();
            unsigned s = lane < warps ? partial[lane] : 0u;
            for (int o = 16; o > 0; o >>= 1) {
                s += __shfl_xor_sync(mask, s, o);
            }
            __syncthreads();
            line = (s + warp) % lines;
        }
    }
    chase_end(ns, line, sink, sink_len, thread, slot, span);
}

// An element-wise kernel over data the L2 keeps, then a wait: each result word of `dst` (the
// first `n_out`) is the sum of the words at its index in each of the `inputs` arrays packed
// one after another at the start of `src`, every block taking its contiguous share of the
// results and every thread issuing the loads of four results (all their inputs) before any
// sum or store, as a vectorised element-wise kernel does; then every block waits until `ns`
// of the global timer have passed since the grid's start, and the grid's span is recorded in
// `slot` as spin_grid_ns does (no atomics: a short, wide grid stays short). Stands in for an
// element-wise kernel beside other streams: it moves the recorded kernel's bytes within about
// its time, which is what such kernels cost each other, and lasts as long as it did.
// The caller guarantees src holds n_out * inputs words and dst n_out.
extern "C" __global__ void __launch_bounds__(1024, 2) elementwise_l2(
        const float4* __restrict__ src, float4* __restrict__ dst, unsigned long long n_out,
        unsigned int inputs, unsigned long long ns, unsigned long long* __restrict__ slot) {
    pdl_enter();
    const GridSpan span = grid_span_begin(slot);
    const unsigned long long width = flat_width();
    const unsigned long long blocks = flat_blocks();
    const unsigned long long block = flat_block();
    const unsigned long long first = n_out * block / blocks;
    const unsigned long long end = n_out * (block + 1) / blocks;
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
    for (unsigned long long base = first + flat_lane(); base < end; base += 4 * width) {
        float4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const unsigned long long i = base + u * width;
            v[u] = i < end ? src[i] : zero;
        }
        for (unsigned int j = 1; j < inputs; ++j) {
            float4 w[4];
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                const unsigned long long i = base + u * width;
                w[u] = i < end ? src[i + j * n_out] : zero;
            }
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                v[u].x += w[u].x;
                v[u].y += w[u].y;
                v[u].z += w[u].z;
                v[u].w += w[u].w;
            }
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const unsigned long long i = base + u * width;
            if (i < end) {
                dst[i] = v[u];
            }
        }
    }
    unsigned long long now;
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while ((long long)(now - span.start) < (long long)ns);
    grid_span_end(slot, span);
}
