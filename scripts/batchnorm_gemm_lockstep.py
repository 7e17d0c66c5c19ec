"""Where does held-out walk hk_batchnorm_beside_gemm's real graph spend its time, unprofiled?
(docs/validation-h200.md, "A profiled graph's late second branch".) The walk's shapes: four fp16 BatchNorm2d (eval) passes over 32 x 256 x 32 x 32
on one side stream beside four bf16 GEMMs 256 x 4096 @ 4096 x 4096 on another. Captured as
torch.cuda.CUDAGraph: each chain alone, both in either order, both after a kernel before the
fork (one root instead of two), and both with one-block CuPy kernels stamping %globaltimer
before each step of each chain. Prints replay times (3 interleaved rounds of
validate.replay_ms), then the marks' medians over 22 replays, us from the earlier first mark.

    python3 scripts/batchnorm_gemm_lockstep.py      (PyTorch and CuPy on a CUDA GPU)
"""
import sys

import cupy as cp
import numpy as np
import torch

sys.path.insert(0, 'scripts')
from validate import capture_torch, replay_ms  # noqa: E402
from walk_parts import fork_join, randn  # noqa: E402

MARK = cp.RawKernel(r'''
extern "C" __global__ void m(unsigned long long* rec, int slot){
  unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;":"=l"(t)); rec[slot]=t; }
''', 'm')
REC = cp.zeros(64, dtype=cp.uint64)


def mark(slot):
    with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
        MARK((1,), (32,), (REC, cp.int32(slot)))


def main():
    with torch.device('cuda'):
        bn = torch.nn.BatchNorm2d(256).half().eval()
        feats = randn(32, 256, 32, 32)
        w = [randn(4096, 4096, dtype=torch.bfloat16) for _ in range(4)]
        x = randn(256, 4096, dtype=torch.bfloat16)

    def norms(marked=False):
        y = feats
        for i in range(4):
            if marked:
                mark(i)
            y = bn(y)
        if marked:
            mark(4)
        return y[:1, :1].float().sum()

    def gemms(marked=False):
        y = x
        for i in range(4):
            if marked:
                mark(10 + i)
            y = y @ w[i]
        if marked:
            mark(14)
        return y

    def after_a_kernel(step):
        def run():
            feats.view(-1)[:1].add_(0)
            return step()
        return run

    variants = {
        'bn only': norms,
        'gemms only': gemms,
        'bn | gemms': fork_join(norms, gemms),
        'gemms | bn': fork_join(gemms, norms),
        'pre, bn | gemms': after_a_kernel(fork_join(norms, gemms)),
        'marked bn | gemms': fork_join(lambda: norms(True), lambda: gemms(True)),
        'marked pre, bn | gemms': after_a_kernel(
            fork_join(lambda: norms(True), lambda: gemms(True))),
    }
    s = torch.cuda.Stream()
    graphs = {k: capture_torch(v, s) for k, v in variants.items()}
    for rnd in range(3):
        print('round', rnd, '  '.join(f'{k}: {replay_ms(g.replay) * 1e3:.1f}'
                                      for k, g in graphs.items()))
    for k in ('marked bn | gemms', 'marked pre, bn | gemms'):
        rows = []
        for _ in range(25):
            REC.fill(0)
            torch.cuda.synchronize()
            graphs[k].replay()
            torch.cuda.synchronize()
            h = REC.get().astype('int64')
            t0 = min(h[0], h[10])
            rows.append([(h[j] - t0) / 1e3 for j in (0, 1, 2, 3, 4, 10, 11, 12, 13, 14)])
        med = np.median(np.array(rows[3:]), axis=0)
        print(k, 'bn marks', ' '.join(f'{v:.1f}' for v in med[:5]),
              '| gemm marks', ' '.join(f'{v:.1f}' for v in med[5:]))


if __name__ == '__main__':
    main()
