#!/usr/bin/env python3
"""Where does the two-stream validation walk's graph time go: one chain, two chains side by
side, or the same two chains one after the other?

The walk (`scripts/validate.py`, `two_streams`): two chains of 16 × (fp16 8 × 1024 @ 1024 ×
1024, then relu / tanh), forked from the main stream and joined back, then one add. Each
variant is captured with `torch.cuda.CUDAGraph` and replayed unprofiled, interleaved (medians
of batches), at the level the process starts at and again after kernels on another stream
(the upper level of per-node graph cost, see `crates/launch-econ/src/other_stream.rs`):

* `one chain`: chain A alone on a side stream;
* `two chains side by side`: the walk as validated;
* `two chains one after the other`: both chains on one side stream;
* `A + spin B`, `A + spin B, no smem`, `spin A + spin B`, `spin A`: one or both chains made of
  globaltimer spin kernels of the real kernels' grid, block, dynamic shared memory (or none)
  and graph node costs (a spin chain alone about as long as the real one), as `launch-econ
  replay` stands them in;
* `A + napping spin B`: the spins sleep 0.5 us between reads of the clock (they leave the
  SMs' issue slots to others); `A + one-block spin B`: one 32-thread block per spin;
* `touch A ...`: chain A made of spins that load one 16-byte word per thread before they
  spin and store one after, as an element-wise kernel would;
* `A + B gemms only`, `A + B elementwise only`: half of chain B;
* `gemm A`, `gemm A + gemm B`: the chains' real GEMMs with spins for their element-wise
  kernels (a replay that runs recorded GEMMs for real and spins the rest);
* `small: ...`: the same for the smaller two-stream walk (`scripts/more_walks.py`), real and
  with real GEMMs and spins for every element-wise kernel;
* `... shared weights`: chain B multiplies by chain A's weights, so the walk reads 32 MiB of
  weights, not 64 (the H200's 50 MB L2 holds one set, not both).

With `--profile`, a torch.profiler session after all timing reports the mean duration of each
kernel kind per chain in eleven of the variants, to see which kernels the other chain slows.

Compare with `launch-econ replay TRACE --stream S` (one recorded chain) and the full replay.

    python3 scripts/two_stream_probe.py [--out FILE.json]
"""
import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import capture_torch, launch_on_other_stream, replay_ms  # noqa: E402

D, LAYERS = 1024, 16
# The real chain's kernels in an unprofiled graph on an otherwise idle H200 (see the module
# doc): cuBLAS nvjet 64x8 GEMM, 4 x 4 blocks of 384 threads, 164308 B dynamic shared memory;
# torch's vectorized elementwise kernel, 8 blocks of 128 threads.
# Spin lengths: a spin kernel's graph node costs ~0.85 us more than its spin (H200), so these
# make a spin chain about as long as the real one alone (3.9 and 1.15 us nodes).
GEMM = dict(grid=(4, 4, 1), block=(384, 1, 1), smem=164308, ns=3050)
ELT = dict(grid=(8, 1, 1), block=(128, 1, 1), smem=0, ns=300)

SPIN_SRC = r"""
extern "C" __global__ void spin(unsigned long long ns, unsigned int nap, unsigned int* sink) {
    extern __shared__ unsigned char pad[];
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        if (nap) { __nanosleep(nap); }
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
    if (threadIdx.x == 0 && blockIdx.x == 0 && blockIdx.y == 0) { *sink = (unsigned int)(now - start); }
}

// The spin with an element-wise kernel's memory traffic around it: every thread loads one
// 16-byte word before it spins and stores one after (a 64 KiB buffer each way).
extern "C" __global__ void touch(unsigned long long ns, const float4* in, float4* out) {
    extern __shared__ unsigned char pad[];
    const unsigned int i = (blockIdx.x + gridDim.x * blockIdx.y) * blockDim.x + threadIdx.x;
    float4 v = in[i % 4096u];
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
    v.x += 1.0f;
    out[i % 4096u] = v;
}
"""


class Spinner:
    """Globaltimer spin kernels launched with CuPy on torch's current stream."""

    def __init__(self):
        import cupy as cp
        self.cp = cp
        self.kernel = cp.RawKernel(SPIN_SRC, "spin")
        self.kernel.max_dynamic_shared_size_bytes = GEMM["smem"]
        self.touch_kernel = cp.RawKernel(SPIN_SRC, "touch")
        self.touch_kernel.max_dynamic_shared_size_bytes = GEMM["smem"]
        self.sink = cp.zeros(1, dtype=cp.uint32)
        self.bufs = [cp.zeros(4096 * 4, dtype=cp.float32) for _ in range(2)]
        self.flip = 0

    def touch(self, shape):
        """A touching spin; consecutive calls read what the one before wrote."""
        cp = self.cp
        src, dst = self.bufs[self.flip], self.bufs[1 - self.flip]
        self.flip = 1 - self.flip
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            self.touch_kernel(shape["grid"], shape["block"], (cp.uint64(shape["ns"]), src, dst),
                              shared_mem=shape["smem"])

    def __call__(self, shape, smem=True, nap=0, one_block=False):
        cp = self.cp
        grid, block = ((1, 1, 1), (32, 1, 1)) if one_block else (shape["grid"], shape["block"])
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            self.kernel(grid, block, (cp.uint64(shape["ns"]), cp.uint32(nap), self.sink),
                        shared_mem=shape["smem"] if smem and not one_block else 0)


def variants():
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    wa = [torch.randn(D, D, device="cuda", dtype=torch.float16) * 0.03 for _ in range(LAYERS)]
    wb = [torch.randn(D, D, device="cuda", dtype=torch.float16) * 0.03 for _ in range(LAYERS)]
    x = torch.randn(8, D, device="cuda", dtype=torch.float16)

    def chain(ws, act):
        y = x
        for w in ws:
            y = act(y @ w)
        return y

    def fork(work):
        main = torch.cuda.current_stream()
        for s in (s1, s2):
            s.wait_stream(main)
        out = work()
        for s in (s1, s2):
            main.wait_stream(s)
        return out

    spinner = Spinner()

    def spin_chain(smem=True, nap=0, one_block=False):
        for _ in range(LAYERS):
            spinner(GEMM, smem, nap, one_block)
            spinner(ELT, smem, nap, one_block)

    def touch_chain():
        for _ in range(LAYERS):
            spinner.touch(GEMM)
            spinner.touch(ELT)

    def pair(work_a, work_b):
        """work_a on one side stream beside work_b on the other, joined by an add where both
        give a tensor (as the validated walk joins its chains)."""
        def step():
            def work():
                with torch.cuda.stream(s1):
                    a = work_a()
                with torch.cuda.stream(s2):
                    b = work_b()
                return a, b
            a, b = fork(work)
            return a + b if a is not None and b is not None else None
        return step

    def serial(ws_b):
        def step():
            def work():
                with torch.cuda.stream(s1):
                    return chain(wa, torch.relu) + chain(ws_b, torch.tanh)
            return fork(work)
        return step

    def real_a():
        return chain(wa, torch.relu)

    def gemms_b():
        y = x
        for w in wb:
            y = y @ w
        return y

    def elementwise_b():
        y = x
        for _ in range(2 * LAYERS):
            y = torch.tanh(y)
        return y

    def gemm_chain(ws):
        """Real GEMMs, each followed by a spin standing in for its element-wise kernel: what a
        replay that ran the recorded GEMMs and spun the rest would run."""
        y = x
        for w in ws:
            y = y @ w
            spinner(ELT)
        return y

    # The smaller two-stream walk (`scripts/more_walks.py`, two_streams_small): 24 x (fp16
    # 4 x 512 @ 512 x 512, gelu) beside 24 x (sigmoid, x 1.5).
    ws_small = [torch.randn(512, 512, device="cuda", dtype=torch.float16) * 0.05
                for _ in range(24)]
    x_small = torch.randn(4, 512, device="cuda", dtype=torch.float16)

    def small_a(spin_elt=False):
        def run():
            y = x_small
            for w in ws_small:
                y = y @ w
                if spin_elt:
                    spinner(ELT)
                else:
                    y = torch.nn.functional.gelu(y)
            return y
        return run

    def small_b(spin=False):
        def run():
            y = x_small
            for _ in range(24):
                if spin:
                    spinner(ELT)
                    spinner(ELT)
                else:
                    y = torch.sigmoid(y) * 1.5
            return None if spin else y
        return run

    return {"one chain": pair(real_a, lambda: None),
            "gemm A": pair(lambda: gemm_chain(wa), lambda: None),
            "gemm A + gemm B": pair(lambda: gemm_chain(wa), lambda: gemm_chain(wb)),
            "small: A": pair(small_a(), lambda: None),
            "small: A + B": pair(small_a(), small_b()),
            "small: gemm A": pair(small_a(True), lambda: None),
            "small: gemm A + spin B": pair(small_a(True), small_b(True)),
            "two chains side by side": pair(real_a, lambda: chain(wb, torch.tanh)),
            "side by side, shared weights": pair(real_a, lambda: chain(wa, torch.tanh)),
            "one after the other, shared weights": serial(wa),
            "two chains one after the other": serial(wb),
            "A + spin B": pair(real_a, spin_chain),
            "A + spin B, no smem": pair(real_a, lambda: spin_chain(False)),
            "A + napping spin B": pair(real_a, lambda: spin_chain(nap=500)),
            "A + one-block spin B": pair(real_a, lambda: spin_chain(one_block=True)),
            "spin A + spin B": pair(spin_chain, spin_chain),
            "touch A": pair(touch_chain, lambda: None),
            "touch A + spin B": pair(touch_chain, spin_chain),
            "touch A + one-block spin B": pair(touch_chain, lambda: spin_chain(one_block=True)),
            "spin A": pair(spin_chain, lambda: None),
            "A + B gemms only": pair(real_a, gemms_b),
            "A + B elementwise only": pair(real_a, elementwise_b)}


def profile(graphs, names):
    """Mean kernel duration (us) per (variant, stream, kernel kind) over three replays."""
    from torch.profiler import ProfilerActivity, profile as prof
    out = {}
    for name in names:
        with prof(activities=[ProfilerActivity.CUDA]) as p:
            for _ in range(3):
                graphs[name].replay()
            torch.cuda.synchronize()
        path = f"/tmp/two_stream_{len(out)}.json"
        p.export_chrome_trace(path)
        with open(path) as f:
            events = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel"]
        streams = sorted({e["args"]["stream"] for e in events})
        kinds = {}
        for e in events:
            kind = "gemm" if "nvjet" in e["name"] or "gemm" in e["name"] else (
                f"{e['name']} {e['args'].get('grid')}" if e["name"] in ("spin", "touch")
                else "elementwise")
            key = f"stream {streams.index(e['args']['stream'])} {kind}"
            kinds.setdefault(key, []).append(e["dur"])
        out[name] = {k: round(statistics.mean(v), 3) for k, v in sorted(kinds.items())}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    stream = torch.cuda.Stream()
    graphs = {}
    for name, step in variants().items():
        for _ in range(3):
            step()
        torch.cuda.synchronize()
        graphs[name] = capture_torch(step, stream)
    res = {}
    for level in ("first", "upper"):
        if level == "upper":
            launch_on_other_stream("torch")
        samples = {k: [] for k in graphs}
        for _ in range(5):
            for k, g in graphs.items():
                samples[k].append(replay_ms(g.replay, reps=20, batches=3))
        for k, v in samples.items():
            res.setdefault(k, {})[level + "_ms"] = statistics.median(v)
    for k, v in res.items():
        print(f"{k:>32}: first {v['first_ms']:.4f} ms, upper {v['upper_ms']:.4f} ms")
    doc = {"device": torch.cuda.get_device_name(0), "variants": res}
    if args.profile:
        doc["kernel_means_us"] = profile(graphs, ["two chains side by side", "A + spin B",
                                                  "A + napping spin B", "A + one-block spin B",
                                                  "touch A", "touch A + spin B",
                                                  "touch A + one-block spin B",
                                                  "spin A + spin B", "spin A", "one chain",
                                                  "side by side, shared weights"])
        for k, v in doc["kernel_means_us"].items():
            print(f"{k:>32}: {v}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
