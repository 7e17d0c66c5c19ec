"""Parts the validation walks are built from (`scripts/validate.py` and the walk modules):
transformers decoders with random weights and their step, and two branches forked onto side
streams. PyTorch and transformers are imported when a part is used, so the harness and its
tables load without them."""
import os

# Llama-shaped configs of the later held-out batches: four layers of hidden 1024, and six of
# hidden 2048 (grouped-query attention, 32000-token vocabulary).
LLAMA_SMALL = dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                   num_attention_heads=16, num_key_value_heads=4, vocab_size=32000,
                   max_position_embeddings=2048)
LLAMA_MID = dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=6,
                 num_attention_heads=16, num_key_value_heads=4, vocab_size=32000,
                 max_position_embeddings=2048)

LLAMA = dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=22,
             num_attention_heads=32, num_key_value_heads=4, vocab_size=32000,
             max_position_embeddings=2048)


def hf_model(arch, dtype, head="ForCausalLM", **config):
    """A transformers model of architecture `arch` (`Llama`, `GPT2`, ...) with random weights,
    made on the GPU from `arch`Config(**config) as `arch` + `head`, in `dtype` (a torch dtype's
    name) and in eval mode. Nothing is downloaded."""
    import torch
    import transformers
    with torch.device("cuda"):
        cfg = getattr(transformers, arch + "Config")(**config)
        model = getattr(transformers, arch + head)(cfg).to(getattr(torch, dtype))
    model.eval()
    return model


def hf_decoder_step(arch, dtype, batch, seq, head="ForCausalLM", mask_2d=False, **config):
    """The step of [`hf_model`] over `batch` sequences of `seq` tokens (see [`hf_step`])."""
    import torch
    return hf_step(torch, hf_model(arch, dtype, head, **config), batch, seq, mask_2d)


def decoder(arch, dtype, batch, seq, mask_2d=False, **config):
    """What a walk registry holds for a transformers decoder's step: a function that makes
    [`hf_decoder_step`] of a model with a 32000-token vocabulary."""
    return lambda: hf_decoder_step(arch, dtype, batch, seq, mask_2d=mask_2d, vocab_size=32000,
                                   **config)


def hf_step(torch, model, batch, seq, mask_2d=False):
    """The step of `model` over `batch` random sequences of `seq` tokens: its logits, no cache.
    `mask_2d`: pass a 2-D mask of ones instead, for models that build their own from it
    (Bloom's ALiBi biases take positions from a 2-D mask and refuse a 4-D one)."""
    ids = torch.randint(0, model.config.vocab_size, (batch, seq), device="cuda")
    # A prepared 4-D causal mask: transformers uses it as given. Without one, the mask code
    # makes a data-dependent choice in an eager step (skip the mask, flash attention) that it
    # cannot make under capture (materialise it, another SDPA kernel), so the captured graph
    # would run a different, longer walk than the recorded one — a walk no trace of the eager
    # step can price. The table's "same walk" column checks that the graph replays the
    # recorded kernels.
    mask = torch.ones(batch, 1, seq, seq, dtype=torch.bool, device="cuda").tril()
    if mask_2d:
        mask = torch.ones(batch, seq, dtype=torch.long, device="cuda")

    def step():
        with torch.no_grad():
            return model(input_ids=ids, attention_mask=mask, use_cache=False).logits
    return step


def fork_join(side_a, side_b):
    """A step on two side streams: forked from the current stream, `side_a()` on one beside
    `side_b()` on the other, joined back and their results added on the current stream."""
    import torch
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()

    def step():
        main = torch.cuda.current_stream()
        s1.wait_stream(main)
        s2.wait_stream(main)
        with torch.cuda.stream(s1):
            a = side_a()
        with torch.cuda.stream(s2):
            b = side_b()
        main.wait_stream(s1)
        main.wait_stream(s2)
        return a + b
    return step


def linear_lane(k, n, tokens, layers, dtype):
    """A lane of `layers` linear layers of `k` inputs and `n` outputs (no bias) over `tokens`
    rows, each on the same input (so widths need not chain): what a step's projections ask of
    the GPU beside another lane, without the activations between them."""
    import torch
    with torch.device("cuda"):
        ws = [torch.randn(n, k, dtype=dtype) * 0.01 for _ in range(layers)]
        x = torch.randn(tokens, k, dtype=dtype)

    def run():
        y = None
        for w in ws:
            y = torch.nn.functional.linear(x, w)
        return y
    return run


def rms_norm(y, g):
    """RMSNorm as Llama-style decoders write it out (no fused kernel): `y` over the root of its
    mean square (in f32, eps 1e-6), scaled by `g`: a reduction, then element-wise kernels."""
    import torch
    return y * torch.rsqrt(y.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(y.dtype) * g


def no_grad_step(run):
    """`run` as a step called under `torch.no_grad()` (an inference walk's)."""
    import torch

    def step():
        with torch.no_grad():
            return run()
    return step


def fork_lanes(parts):
    """A function that forks `parts` from the current stream onto a stream each (each stream
    waits for the current stream's work, then runs its part with the arguments the function
    was given), joins them back and adds the corners of their results on the current stream:
    [`fork_join`] for any number of lanes, issued lane by lane."""
    import torch
    streams = [torch.cuda.Stream() for _ in parts]

    def run(*args):
        main = torch.cuda.current_stream()
        outs = []
        for s, f in zip(streams, parts):
            s.wait_stream(main)
            with torch.cuda.stream(s):
                outs.append(corner(f(*args)))
        for s in streams:
            main.wait_stream(s)
        return sum(outs)
    return run


def stage_pipeline(stages, micro):
    """A step that runs the micro-batches `micro` through `stages` (modules) as a pipeline: a
    stream a stage, each stage's stream waiting on the stage before's for every micro-batch,
    the results concatenated on the current stream, under `torch.no_grad()`."""
    import torch
    streams = [torch.cuda.Stream() for _ in stages]

    def run():
        main = torch.cuda.current_stream()
        streams[0].wait_stream(main)
        outs = []
        for x in micro:
            for k, (stage, s) in enumerate(zip(stages, streams)):
                if k:
                    s.wait_stream(streams[k - 1])
                with torch.cuda.stream(s):
                    x = stage(x)
            outs.append(x)
        for s in streams:
            main.wait_stream(s)
        return torch.cat(outs)
    return no_grad_step(run)


def lanes_step(count, make, *others):
    """A step of `count` lanes `make()` (each a function issuing its work) and the `others`
    lanes, forked and joined by [`fork_lanes`], under `torch.no_grad()`."""
    return no_grad_step(fork_lanes([make() for _ in range(count)] + list(others)))


def beside_linear_lanes(part, lanes, k, n, tokens, layers, dtype):
    """The step of the held-out walks' commonest shape: `part` on a stream of its own beside
    `lanes` lanes of [`linear_lane`] (`layers` linear layers `k` -> `n` over `tokens` rows in
    `dtype`), each on its own, forked and joined by [`fork_lanes`], under `torch.no_grad()`."""
    return no_grad_step(fork_lanes([part] + [linear_lane(k, n, tokens, layers, dtype)
                                             for _ in range(lanes)]))


def side_by_side(parts):
    """A step that forks each of `parts` (functions issuing work on the current stream) onto
    a stream of its own off the current stream and joins them back, returning nothing: what
    [`fork_lanes`] does without adding the lanes' results (probes that time lanes as they
    are)."""
    import torch
    streams = [torch.cuda.Stream() for _ in parts]

    def step():
        main = torch.cuda.current_stream()
        for s in streams:
            s.wait_stream(main)
        for s, f in zip(streams, parts):
            with torch.cuda.stream(s):
                f()
        for s in streams:
            main.wait_stream(s)
    return step


def capture(step, warmups=3):
    """`step` warmed up `warmups` times on a side stream (as PyTorch asks before capture),
    then captured into a `torch.cuda.CUDAGraph`: (the graph, the captured step's output,
    which the graph's replays write and the caller keeps alive)."""
    import torch
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmups):
            step()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        kept = step()
    return g, kept


def replay_ms(torch, graphs, reps, trials):
    """Milliseconds of one replay of each of `graphs` (name to `torch.cuda.CUDAGraph`), one
    sample a trial: `reps` replays between two events after one warm replay, the graphs
    interleaved trial by trial so that drift falls on all of them alike."""
    times = {k: [] for k in graphs}
    for _ in range(trials):
        for k, g in graphs.items():
            g.replay()
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(reps):
                g.replay()
            b.record()
            torch.cuda.synchronize()
            times[k].append(a.elapsed_time(b) / reps)
    return times


def gemm_kernels(d, tokens, n=None):
    """The kernels PyTorch runs for one fp16 `tokens` x `d` by `d` x `n` matmul (`n` = `d`
    by default): see `kernels_of`."""
    import torch
    w = torch.randn(d, n or d, dtype=torch.float16, device="cuda")
    x = torch.randn(tokens, d, dtype=torch.float16, device="cuda")
    return kernels_of(lambda: torch.mm(x, w))


def kernels_of(call):
    """The kernels `call()` runs, as one profiled call records them (name, grid, block, shared
    memory, registers, µs), after one unprofiled call. Profile only after every unprofiled
    timing of the process: an active CUPTI session slows launches."""
    import json
    import tempfile
    import torch
    call()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        events = json.load(open(f.name))["traceEvents"]
    return [{"name": e["name"][:80], "grid": e["args"].get("grid"),
             "block": e["args"].get("block"), "shared_memory": e["args"].get("shared memory"),
             "registers": e["args"].get("registers per thread"), "us": e["dur"]}
            for e in events if e.get("cat") == "kernel"]


def chain(fn, n):
    """A step that applies `fn(i, y)` for i in 0..n, each given the previous result (None
    first), and returns the last."""
    def run():
        y = None
        for i in range(n):
            y = fn(i, y)
        return y
    return run


def repeated(x, passes, f):
    """A lane that applies `f` `passes` times, starting from `x`, and returns the last result:
    a chain of one operator (norms, softmax, reductions) beside other lanes."""
    def run():
        y = x
        for _ in range(passes):
            y = f(y)
        return y
    return run


def lane_of(shape, dtype, passes, f):
    """A [`repeated`] lane of `passes` applications of `f` to a random tensor of `shape` of its own."""
    import torch
    with torch.device("cuda"):
        x = torch.randn(*shape, dtype=dtype)
    return repeated(x, passes, f)


def corner(t):
    """A scalar from one corner of `t`, so that branches of any shape can be added."""
    return t.flatten()[:1].float().sum()


def linear_chain(layers, x, act):
    """A step of `act(layer(y))` through `layers`, from `x`."""
    return chain(lambda i, y: act(layers[i](x if y is None else y)), len(layers))


def attention_chain(q, k, v, n, **kw):
    """A step of `n` scaled-dot-product attentions over keys `k` and values `v`, each one's
    output the next one's query (`q` first); `kw` goes to every call (`is_causal`, ...)."""
    import torch
    f = torch.nn.functional

    def run():
        y = q
        for _ in range(n):
            y = f.scaled_dot_product_attention(y, k, v, **kw)
        return y
    return run


def randn(*shape, dtype=None):
    """`torch.randn` of `shape` in `dtype` (fp16 where None), on the current default device."""
    import torch
    return torch.randn(*shape, dtype=torch.float16 if dtype is None else dtype)


# A CuPy clock spin: every block spins `ns` of the global timer from its own start and touches
# its dynamic shared memory, so a launch asking 213268 bytes holds a whole H200 SM a block.
CUPY_SPIN_SRC = r'''
extern "C" __global__ void spin(unsigned long long ns, float* out){
  extern __shared__ float sm[];
  unsigned long long t0, now; asm volatile("mov.u64 %0, %%globaltimer;":"=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;":"=l"(now)); } while(now-t0<ns);
  sm[threadIdx.x]=1.f; __syncthreads(); if(threadIdx.x==0 && sm[1]<0) out[0]=1.f; }
'''


def cupy_spin_module(extra_src=""):
    """(module, spin): a CuPy module of `CUPY_SPIN_SRC` and `extra_src`, and its `spin`
    allowed a whole SM's dynamic shared memory (213268 bytes on an H200)."""
    import cupy as cp
    mod = cp.RawModule(code=CUPY_SPIN_SRC + extra_src)
    spin = mod.get_function("spin")
    spin.max_dynamic_shared_size_bytes = 213268
    return mod, spin


# A one-block CuPy kernel that writes the global timer into one slot of a record.
STAMP_SRC = r'''
extern "C" __global__ void stamp(unsigned long long* rec, int slot){
  unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;":"=l"(t));
  if (threadIdx.x == 0) rec[slot] = t; }
'''


def lane_stamps(slots=8):
    """(mark, rec): `mark(slot)` stamps %globaltimer (ns) into `rec[slot]` from the current
    PyTorch stream, in order with the kernels around it (captured into a graph as a node of
    its own); `rec` is the CuPy array of `slots` stamps, read with `rec.get()`."""
    import cupy as cp
    import torch
    stamp = cp.RawKernel(STAMP_SRC, "stamp")
    rec = cp.zeros(slots, dtype=cp.uint64)

    def mark(slot):
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            stamp((1,), (32,), (rec, cp.int32(slot)))
    return mark, rec


def sync_events_config(torch):
    """The `torch.profiler.profile` keywords that record which event each stream waited on
    (cuda_sync events, which `launch-econ replay` orders streams by), where this PyTorch
    supports them; none where it does not."""
    try:
        return {"experimental_config": torch._C._profiler._ExperimentalConfig(
            enable_cuda_sync_events=True)}
    except (AttributeError, TypeError):
        return {}


def record_step(torch, step, path):
    """One eager `step` (after one untimed call) recorded with the profiler into `path` (Chrome
    trace), CPU and CUDA activity with the operators' shapes and the sync events `validate.py`
    records (without shapes `--summary` knows no kernel's memory load)."""
    from torch.profiler import ProfilerActivity, profile
    step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                 **sync_events_config(torch)) as prof:
        step()
        torch.cuda.synchronize()
    prof.export_chrome_trace(path)


def record_steps(torch, steps, folder):
    """Each (name, step) of `steps` recorded by [`record_step`] into `folder`/NAME.eager.json,
    under `torch.no_grad()`: what a probe with `--traces` does once all its timing is done
    (a profiler session slows later launches)."""
    os.makedirs(folder, exist_ok=True)
    with torch.no_grad():
        for name, step in steps:
            record_step(torch, step, os.path.join(folder, f"{name}.eager.json"))


def whole_numbers(text):
    """An argparse type: comma-separated whole numbers (`1024,2048`), refused with a message
    that names the argument otherwise."""
    import argparse
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"comma-separated whole numbers, not {text!r}")


def timed_ms(fn, reps, batches):
    """`fn`'s wall time, ms: the median over `batches` batches of `reps` back-to-back calls,
    each batch synchronised before and after, and every batch's figure."""
    import statistics
    import time

    import torch
    out = []
    for _ in range(batches):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t) * 1e3 / reps)
    return statistics.median(out), out


def probe_args(doc, trials, traces=False, extra=None, argv=None):
    """The arguments of a probe that times graphs and writes one JSON: `--out` and
    `--trials` (default `trials`), with `doc`'s first paragraph as the description; with
    `traces`, also `--traces DIR` (where the probe writes profiler traces of its steps);
    `extra(parser)` adds a probe's own options. `argv`: the arguments (default the command
    line's)."""
    import argparse
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--trials", type=int, default=trials)
    if traces:
        ap.add_argument("--traces", default="")
    if extra:
        extra(ap)
    return ap.parse_args(argv)


def graph_times(torch, graphs, trials):
    """Each of `graphs` (name to what [`capture`] returned) replayed 20 times a trial for
    `trials` interleaved trials ([`replay_ms`]), printed, and as a probe's record: the
    device, each graph's median µs and its spread."""
    import statistics
    times = replay_ms(torch, {k: g for k, (g, _) in graphs.items()}, 20, trials)
    out = {"device": torch.cuda.get_device_name(),
           "us": {k: statistics.median(v) * 1e3 for k, v in times.items()},
           "spread_us": {k: [min(v) * 1e3, max(v) * 1e3] for k, v in times.items()}}
    for k, v in out["us"].items():
        print(f"{k}: {v:.1f} us ({out['spread_us'][k][0]:.1f}-{out['spread_us'][k][1]:.1f})",
              flush=True)
    return out
