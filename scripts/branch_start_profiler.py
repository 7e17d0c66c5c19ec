"""Does a PyTorch-captured graph start its second branch late, or only under the profiler?
(docs/validation-h200.md, "A profiled graph's late second branch".) Two branches of CuPy kernels that stamp their own first block's start
(%globaltimer) into slots: A = 4 x (one-block T, one-block T, BIG: 8192 blocks of 2 us) on one
side stream, B = 4 whole-SM spins (128 blocks of 384 threads, 213 KB dynamic shared memory, as
cuBLAS's GEMMs) on another, forked from the capture stream either at once (both branches the
graph's roots, as a PyTorch step forked at its start) or after a one-block kernel there
("pre 1"). Captured by torch.cuda.graph and by CuPy's own stream capture, and run eagerly.
Prints medians over 30 runs of BIG#1's and W#1's start, us from A's first kernel: first with
no profiler in the process, then the same runs inside one torch.profiler session.

    python3 scripts/branch_start_profiler.py      (PyTorch and CuPy on a CUDA GPU)
"""
import statistics

import cupy as cp
import numpy as np
import torch

SRC = r'''
extern "C" __global__ void k(unsigned long long ns, unsigned long long* rec, int slot){
  extern __shared__ float sm[];
  unsigned long long t0, now; asm volatile("mov.u64 %0, %%globaltimer;":"=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;":"=l"(now)); } while(now-t0<ns);
  sm[threadIdx.x]=1.f; __syncthreads();
  if(threadIdx.x==0){ atomicMin(&rec[slot],t0); if(sm[1]<0) rec[63]=1; } }
'''
KERNEL = cp.RawKernel(SRC, 'k')
KERNEL.max_dynamic_shared_size_bytes = 213268
REC = cp.zeros(64, dtype=cp.uint64)
UNSET = cp.asarray(np.full(64, np.iinfo(np.uint64).max, dtype=np.uint64))


def one_block(slot):
    KERNEL((1,), (128,), (cp.uint64(1000), REC, cp.int32(slot)), shared_mem=512)


def branch_a():
    for u in range(4):
        one_block(0 if u == 0 else 60)
        one_block(60)
        KERNEL((8192,), (256,), (cp.uint64(2000), REC, cp.int32(1 + u)), shared_mem=1024)


def branch_b():
    for i in range(4):
        KERNEL((128,), (384,), (cp.uint64(16000), REC, cp.int32(20 + i)), shared_mem=213268)


def forked(pre, streams):
    main = torch.cuda.current_stream()
    if pre:
        with cp.cuda.ExternalStream(main.cuda_stream):
            one_block(61)
    s1, s2 = streams
    s1.wait_stream(main)
    s2.wait_stream(main)
    with torch.cuda.stream(s1), cp.cuda.ExternalStream(s1.cuda_stream):
        branch_a()
    with torch.cuda.stream(s2), cp.cuda.ExternalStream(s2.cuda_stream):
        branch_b()
    main.wait_stream(s1)
    main.wait_stream(s2)


def starts(launch, sync, runs=30):
    """Medians of BIG#1's and W#1's start, us from A's first kernel (3 runs of warm-up)."""
    big, w = [], []
    for i in range(runs + 3):
        REC[:] = UNSET
        cp.cuda.Device().synchronize()
        launch()
        sync()
        h = REC.get().astype('int64')
        if i >= 3:
            big.append((h[1] - h[0]) / 1e3)
            w.append((h[20] - h[0]) / 1e3)
    return statistics.median(big), statistics.median(w)


def main():
    streams = (torch.cuda.Stream(), torch.cuda.Stream())
    cases = []
    for pre in (0, 1):
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            forked(pre, streams)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            forked(pre, streams)
        cases.append((f'pre {pre} torch capture', g.replay, torch.cuda.synchronize))
        cs = cp.cuda.Stream(non_blocking=True)
        with torch.cuda.stream(torch.cuda.ExternalStream(cs.ptr)):
            cs.begin_capture()
            forked(pre, streams)
            cg = cs.end_capture()
        cg.upload(cs)
        cases.append((f'pre {pre} cupy capture', (lambda cg=cg, cs=cs: cg.launch(cs)),
                      cs.synchronize))

        def eager(pre=pre, s=s):
            with torch.cuda.stream(s):
                forked(pre, streams)
        cases.append((f'pre {pre} eager', eager, torch.cuda.synchronize))
    for name, launch, sync in cases:
        b1, w1 = starts(launch, sync)
        print(f'{name:24s} BIG#1 {b1:6.1f}  W#1 {w1:6.1f} us  (no profiler)')
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
        for name, launch, sync in cases:
            b1, w1 = starts(launch, sync, 10)
            print(f'{name:24s} BIG#1 {b1:6.1f}  W#1 {w1:6.1f} us  (profiler on)')


if __name__ == '__main__':
    main()
