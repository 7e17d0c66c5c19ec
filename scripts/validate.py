#!/usr/bin/env python3
"""Checks launch-econ's prices against real walks on the GPU at hand.

For each walk (one process per walk, so that no profiler has run before the reference
timings are taken):
  1. build it and warm it up;
  2. time the eager step and a torch.cuda.CUDAGraph (or CuPy graph) replay of it, unprofiled,
     interleaved, as medians over several batches;
  3. record one eager step with torch.profiler (Kineto trace), and one graph replay;
then run `launch-econ replay TRACE --eager-step-ms <measured>` and `launch-econ replay TRACE
--summary` on the eager trace and compare their predictions with the measured figures.

    python3 scripts/validate.py --out DIR [--launch-econ PATH] [--walks a,b,...]
                                [--walk-module FILE.py]
    python3 scripts/validate.py --reprice validation.json --traces DIR --out DIR   (no GPU)

Your own walks: `--walk-module FILE.py --walks mine,...`, where FILE.py defines
`build(name) -> (step, kind)` as `build` below does (kind 'torch' or 'cupy'; `step()` runs one
step on the current stream and can be captured); names it does not know fall through to the
walks here.

Writes DIR/validation.json (every number) and DIR/validation.md (the table). Needs PyTorch and
transformers (CuPy for the CuPy walk); downloads nothing: models are built from configs with
random weights.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback

from walk_parts import LLAMA, fork_join, hf_model, hf_step, sync_events_config, timed_ms
from trace_facts import graph_facts

WALKS = [
    "llama_decode_b1",
    "llama_decode_b16",
    "llama_prefill_512",
    "gpt2_decode_b1",
    "qwen2_decode_b4",
    "fp16_mlp_1024",
    "two_streams",
    "cupy_chain",
    "pinned_copies",  # host-to-device and device-to-host copies inside the step
]


# --------------------------------------------------------------------------- walks (child)

def build(name):
    """Returns (step, kind): kind is 'torch' or 'cupy'."""
    import torch
    torch.manual_seed(0)
    if name.startswith("llama") or name.startswith("gpt2") or name.startswith("qwen2"):
        if name.startswith("llama"):
            model = hf_model("Llama", "bfloat16", **LLAMA)
        elif name.startswith("gpt2"):
            model = hf_model("GPT2", "float16", "LMHeadModel", n_embd=1024, n_layer=24,
                             n_head=16, n_positions=1024)
        else:
            model = hf_model("Qwen2", "bfloat16", hidden_size=1536, intermediate_size=8960,
                             num_hidden_layers=28, num_attention_heads=12,
                             num_key_value_heads=2, vocab_size=32000)
        batch, seq = {"llama_decode_b1": (1, 1), "llama_decode_b16": (16, 1),
                      "llama_prefill_512": (1, 512), "gpt2_decode_b1": (1, 1),
                      "qwen2_decode_b4": (4, 1)}[name]
        return hf_step(torch, model, batch, seq), "torch"
    if name == "fp16_mlp_1024":
        d, layers = 1024, 24
        ws = [(torch.randn(4 * d, d, device="cuda", dtype=torch.float16) * 0.02,
               torch.randn(d, 4 * d, device="cuda", dtype=torch.float16) * 0.02,
               torch.ones(d, device="cuda", dtype=torch.float16)) for _ in range(layers)]
        x = torch.randn(1, d, device="cuda", dtype=torch.float16)

        def step():
            y = x
            for up, down, g in ws:
                h = torch.nn.functional.layer_norm(y, (d,), g)
                y = y + torch.nn.functional.linear(torch.nn.functional.gelu(
                    torch.nn.functional.linear(h, up)), down)
            return y
        return step, "torch"
    if name == "two_streams":
        d, layers = 1024, 16
        wa = [torch.randn(d, d, device="cuda", dtype=torch.float16) * 0.03 for _ in range(layers)]
        wb = [torch.randn(d, d, device="cuda", dtype=torch.float16) * 0.03 for _ in range(layers)]
        x = torch.randn(8, d, device="cuda", dtype=torch.float16)

        def side(ws, act):
            def run():
                y = x
                for w in ws:
                    y = act(y @ w)
                return y
            return run
        return fork_join(side(wa, torch.relu), side(wb, torch.tanh)), "torch"
    if name == "pinned_copies":
        # A step that stages its input in and its output out through page-locked host memory,
        # as a server feeding a graph does; both copies are captured as graph copy nodes.
        d, layers, rows = 4096, 8, 64
        ws = [torch.randn(d, d, device="cuda", dtype=torch.float16) * 0.01 for _ in range(layers)]
        x_host = torch.randn(rows, d, dtype=torch.float16).pin_memory()
        y_host = torch.empty(rows, d, dtype=torch.float16).pin_memory()
        x_dev = torch.empty(rows, d, device="cuda", dtype=torch.float16)

        def step():
            x_dev.copy_(x_host, non_blocking=True)
            y = x_dev
            for w in ws:
                y = torch.relu(y @ w)
            y_host.copy_(y, non_blocking=True)
            return y
        return step, "torch"
    if name == "cupy_chain":
        # Element-wise only: CuPy refuses cuBLAS calls during stream capture.
        import cupy as cp
        n = 1 << 18
        a = cp.random.random(n, dtype=cp.float32)
        ws = [cp.random.random(n, dtype=cp.float32) for _ in range(100)]
        scale = cp.ElementwiseKernel("float32 y, float32 w", "float32 z",
                                     "z = tanhf(y * w) + 0.5f", "scale_tanh")

        def step():
            y = a
            for w in ws:
                y = scale(y, w)
                y = y * 0.5 + w
            return y
        return step, "cupy"
    raise ValueError(f"unknown walk {name}")


def launch_on_other_stream(kind, launches=32):
    """Launches small kernels on a new stream of this process and waits for them."""
    if kind == "cupy":
        import cupy as cp
        s = cp.cuda.Stream(non_blocking=True)
        z = cp.zeros(1, dtype=cp.float32)
        with s:
            for _ in range(launches):
                z += 1
        s.synchronize()
    else:
        import torch
        s = torch.cuda.Stream()
        z = torch.zeros(1, device="cuda")
        with torch.cuda.stream(s):
            for _ in range(launches):
                z.add_(1)
        s.synchronize()


def capture_torch(step, stream):
    """Warms `step` up on `stream` (caches, autotuning), then captures it there as a
    torch.cuda.CUDAGraph, not yet launched."""
    import torch
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(5):
            step()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        step()
    torch.cuda.synchronize()
    return graph


def replay_ms(replay, reps=20, batches=7):
    """Median wall time of one `replay()`, ms, over `batches` batches of `reps` (unprofiled)."""
    return timed_ms(replay, reps, batches)[0]


def build_from(module_path, name):
    """`build(name)` of a user's walk module, else of the walks here."""
    if module_path:
        import importlib.util
        spec = importlib.util.spec_from_file_location("user_walks", module_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        try:
            return module.build(name)
        except (KeyError, ValueError):
            pass
    return build(name)


def sm_clock_mhz(torch):
    """The SM clock NVML reports now, MHz; None where it cannot be read (no pynvml)."""
    try:
        return torch.cuda.clock_rate()
    except Exception:  # noqa: BLE001 - a diagnostic only: never fail a walk for it
        return None


def child(name, out, batches, reps, walk_module=""):
    import torch
    step, kind = build_from(walk_module, name)
    res = {"walk": name, "kind": kind}
    if kind == "cupy":
        import cupy as cp
        stream = cp.cuda.Stream(non_blocking=True)
        sync = stream.synchronize
    else:
        stream = torch.cuda.Stream()
        sync = torch.cuda.synchronize
    # Warm-up on the stream the graph will use (also fills caches and autotuning).
    if kind == "cupy":
        with stream:
            for _ in range(5):
                step()
        sync()
        with stream:
            stream.begin_capture()
            step()
            graph = stream.end_capture()
        graph.upload(stream)

        def replay():
            graph.launch(stream)

        def eager():
            with stream:
                step()
    else:
        graph = capture_torch(step, stream)

        def replay():
            graph.replay()

        def eager():
            step()
    for _ in range(5):
        eager()
        replay()
    sync()
    # Unprofiled timings, interleaved batch by batch. After each batch (outside its timing)
    # the SM clock NVML reports, where torch can read it: a GPU at its power limit lowers it
    # under sustained math (the TF32 prefill's graph ran 3-5% slower after its first batches).
    e_ms, g_ms, clocks = [], [], []
    for i in range(batches):
        for which in ((0, 1) if i % 2 == 0 else (1, 0)):
            fn = eager if which == 0 else replay
            sync()
            t = time.perf_counter()
            for _ in range(reps):
                fn()
            sync()
            (e_ms if which == 0 else g_ms).append((time.perf_counter() - t) * 1e3 / reps)
            clocks.append(sm_clock_mhz(torch))
    res["eager_step_ms"] = statistics.median(e_ms)
    res["sm_clock_mhz_samples"] = clocks
    res["graph_step_ms"] = statistics.median(g_ms)
    res["eager_samples_ms"] = e_ms
    res["graph_samples_ms"] = g_ms
    # The same graph once a stream it has never used launches kernels: on the H200 a graph
    # node then costs more and keeps costing more, whatever state the process was in before.
    # `launch-econ replay` measures its replayed graph the same way last.
    launch_on_other_stream(kind)
    o_ms = []
    for _ in range(max(batches // 2, 3)):
        sync()
        t = time.perf_counter()
        for _ in range(reps):
            replay()
        sync()
        o_ms.append((time.perf_counter() - t) * 1e3 / reps)
    res["graph_step_other_stream_ms"] = statistics.median(o_ms)
    res["graph_other_stream_samples_ms"] = o_ms
    # Only now the profiler: one eager step, then one graph replay.
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    extra = sync_events_config(torch)
    for label, fn in (("eager", eager), ("graph", replay)):
        fn()
        sync()
        # Shapes let `launch-econ replay` run the recorded GEMMs for real where streams overlap.
        with profile(activities=acts, record_shapes=True, **extra) as prof:
            fn()
            sync()
        path = os.path.join(out, f"{name}.{label}.json")
        prof.export_chrome_trace(path)
        res[f"{label}_trace"] = path
    print(json.dumps(res))


# --------------------------------------------------------------------------- parent

def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr[-2000:]}")
    return json.loads(p.stdout)


def pct(pred, real):
    return 100.0 * (pred - real) / real


def parent(args):
    os.makedirs(args.out, exist_ok=True)
    results = []
    names = args.walks.split(",") if args.walks else WALKS
    for name in names:
        t0 = time.time()
        p = subprocess.run([sys.executable, __file__, "--child", name, "--out", args.out,
                            "--batches", str(args.batches), "--reps", str(args.reps),
                            "--walk-module", args.walk_module],
                           capture_output=True, text=True)
        if p.returncode != 0:
            results.append({"walk": name, "error": p.stderr[-3000:]})
            save(results, args.out)
            print(f"{name}: FAILED\n{p.stderr[-1500:]}", file=sys.stderr)
            continue
        r = json.loads(p.stdout.strip().splitlines()[-1])
        trace = r["eager_trace"]
        try:
            # Priced offline first: a replay that fails keeps the walk's offline price.
            r.update(graph_facts(trace, r["graph_trace"]))
            r.update(offline_prices(args.launch_econ, trace, r["eager_step_ms"], args.profile))
            # The replayed graph alone: the mean `replay` prints by default is formed from it
            # and the offline price above (the same model over the same profile) downstream.
            rep = run_json([args.launch_econ, "replay", trace, "--graph-step", "replay",
                            "--eager-step-ms", f"{r['eager_step_ms']:.6f}", "--export-json", "-",
                            *profile_args(args.profile)])
            r["replay"] = rep["result"]["prediction"]
            r["replay_summary_table"] = rep["result"]["replay"]["summary"]
            r["replay_graph_gpu_other_stream"] = rep["result"]["replay"].get(
                "graph_gpu_other_stream_ms")
            # The plan the replay made on this machine (spin calibration, the node gap, the
            # planned nodes, the memory its stand-ins touch, which sets the step it takes to
            # the upper node level): what to compare when one walk's replay moves between
            # machines.
            r["replay_plan"] = {k: rep["result"]["replay"].get(k) for k in (
                "calibration", "node_gap_us", "node_gap_source", "planned_nodes_ms", "touched_bytes",
                "streams", "warnings")}
            spins = run_json([args.launch_econ, "replay", trace, "--graph-step", "replay",
                              "--stream-from-us", "off",
                              "--gemms", "stand-in", "--concurrent-stand-ins", "spin",
                              "--eager-step-ms", f"{r['eager_step_ms']:.6f}",
                              "--export-json", "-", *profile_args(args.profile)])
            r["replay_spins_only"] = spins["result"]["prediction"]
            fid = rep["result"]["replay"]["fidelity"]
            r["streaming_stand_ins"] = fid.get("streaming_stand_ins", 0)
            r["real_gemm_kernels"] = fid.get("real_gemm_kernels", 0)
            r["chase_stand_ins"] = fid.get("chase_stand_ins", 0)
            r["block_spin_stand_ins"] = fid.get("block_spin_stand_ins", 0)
            r["paced_stand_ins"] = fid.get("paced_stand_ins", 0)
        except Exception as e:  # keep the other walks
            r["error"] = str(e)
        if args.also_grid_nodes and "error" not in r:
            try:  # a table that fails leaves the walk's default prices standing
                r["with_grid_nodes"] = grid_table_prices(
                    args.launch_econ, trace, r["eager_step_ms"], args.profile,
                    args.also_grid_nodes)
            except Exception as e:
                r["with_grid_nodes"] = {"table": os.path.basename(args.also_grid_nodes),
                                        "error": str(e)}
        r["seconds"] = time.time() - t0
        results.append(r)
        save(results, args.out)
        print(f"{name}: done in {r['seconds']:.0f} s", file=sys.stderr)
    save(results, args.out)
    write_table(results, os.path.join(args.out, "validation.md"))


def save(results, out):
    """Writes the walks done so far to OUT/validation.json, whole or not at all (a temporary
    file renamed over it): a run stopped by a time limit keeps every walk it finished."""
    path = os.path.join(out, "validation.json")
    with open(path + ".part", "w") as f:
        json.dump(results, f, indent=1)
    os.replace(path + ".part", path)


def profile_args(profile):
    """`--profile FILE` for launch-econ where a device profile was given, else nothing (the
    shipped H200 profile)."""
    return ["--profile", profile] if profile else []


def grid_table_prices(launch_econ, trace, eager_step_ms, profile, table):
    """The replayed graph alone and the offline price again, with wide kernels' nodes priced
    by the grid table `table` (`--grid-nodes FILE`): a table not the default on this GPU,
    tried beside the default on the same walks, in the same process state."""
    grid = ["--grid-nodes", table, "--eager-step-ms", f"{eager_step_ms:.6f}",
            "--export-json", "-", *profile_args(profile)]
    rep = run_json([launch_econ, "replay", trace, "--graph-step", "replay", *grid])
    summ = run_json([launch_econ, "replay", trace, "--summary", *grid])
    return {"table": os.path.basename(table), "replay": rep["result"]["prediction"],
            "summary": summ["result"]["prediction"]}


def offline_prices(launch_econ, trace, eager_step_ms, profile=None):
    """`replay --summary` of a trace (no GPU): with the measured eager step, and from the trace
    alone; over `profile` where given."""
    summ = run_json([launch_econ, "replay", trace, "--summary",
                     "--eager-step-ms", f"{eager_step_ms:.6f}", "--export-json", "-",
                     *profile_args(profile)])
    trace_only = run_json([launch_econ, "replay", trace, "--summary", "--export-json", "-",
                           *profile_args(profile)])
    walk_summary = summ["result"]["trace"]["summary"]
    del walk_summary["top"]
    return {"summary": summ["result"]["prediction"],
            "trace_only": trace_only["result"]["prediction"],
            "walk_summary": walk_summary}


def reprice(args):
    """Recomputes the columns of a validation.json that come from its traces (in --traces) alone
    — the offline prices, with this launch-econ and its shipped profile, and the graph facts —
    for a changed model, profile or check: no GPU needed."""
    with open(args.reprice) as f:
        results = json.load(f)
    for r in results:
        if "error" in r or "eager_trace" not in r:
            continue
        trace = os.path.join(args.traces, os.path.basename(r["eager_trace"]))
        graph = os.path.join(args.traces, os.path.basename(r["graph_trace"]))
        r.update(graph_facts(trace, graph))
        r.update(offline_prices(args.launch_econ, trace, r["eager_step_ms"], args.profile))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "validation.json"), "w") as f:
        json.dump(results, f, indent=1)
    write_table(results, os.path.join(args.out, "validation.md"))


def priced(value, real):
    """A predicted figure with its error against the real one, for the tables."""
    return f"{value:.3f} ({pct(value, real):+.1f}%)"


def write_table(results, path):
    """The tables of docs/validation-h200.md. The graph step is priced at the upper level of
    per-node graph cost (see crates/launch-econ/src/other_stream.rs), so it is compared with
    the real graph timed again after kernels on a new stream (every walk at the upper level);
    the lower-level ("quiet") figures with the graph as first timed."""
    rows = ["| walk | kernels | same walk in graph | kernel sum ms | eager ms | graph ms | "
            "graph ms, upper level | replay graph ms (err) | summary graph ms (err) | "
            "replay quiet ms (err) | real saving ms | replay saving ms (err) | "
            "trace-only eager ms (err) |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        if "error" in r or "replay" not in r:
            rows.append(f"| {r['walk']} | failed: {r.get('error', '?')[:80]!r} ||||||||||||")
            continue
        e, g = r["eager_step_ms"], r["graph_step_ms"]
        go = r.get("graph_step_other_stream_ms", g)
        rp, sm, to = r["replay"], r["summary"], r["trace_only"]
        quiet = rp.get("graph_step_quiet_ms") or rp["graph_step_ms"]
        ws = r["walk_summary"]
        saving = e - g
        rows.append(
            f"| {r['walk']} | {ws['kernels']} | "
            f"{'yes' if r['same_walk'] else 'no (%d kernels)' % r['graph_kernels']} | "
            f"{ws['kernel_gpu_ns'] / 1e6:.3f} | {e:.3f} | {g:.3f} | {go:.3f} | "
            f"{priced(rp['graph_step_ms'], go)} | "
            f"{priced(sm['graph_step_ms'], go)} | "
            f"{priced(quiet, g)} | {saving:.3f} | "
            f"{priced(rp['saving_ms'], saving)} | "
            f"{priced(to['eager_step_ms'], e)} |")
    rows += ["", "Stand-ins: kernels recorded at 2 us or more stream memory and, on walks whose "
             "streams overlap, recorded GEMMs run for real, long kernels with recorded inputs read "
             "them paced and element-wise kernels chase (the default), or every kernel spins (`--stream-from-us off --gemms stand-in "
             "--concurrent-stand-ins spin`); graph step vs the real graph at the upper level.", "",
             "| walk | streaming stand-ins | real GEMM kernels | paced stand-ins | "
             "chase stand-ins | replay graph ms (err) | spins only ms (err) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        so = r.get("replay_spins_only")
        if "error" in r or "replay" not in r or not so:
            continue
        go = r.get("graph_step_other_stream_ms", r["graph_step_ms"])
        rp = r["replay"]["graph_step_ms"]
        rows.append(f"| {r['walk']} | {r['streaming_stand_ins']} | "
                    f"{r.get('real_gemm_kernels', 0)} | {r.get('paced_stand_ins', 0)} | "
                    f"{r.get('chase_stand_ins', 0)} | "
                    f"{priced(rp, go)} | "
                    f"{priced(so['graph_step_ms'], go)} |")
    rows += ["", "| walk | real graph ms | real graph, upper level ms | "
             "replay graph GPU ms (err) | replay graph GPU, upper level ms (err) |",
             "|---|---:|---:|---:|---:|"]
    for r in results:
        o = r.get("replay_graph_gpu_other_stream")
        if "error" in r or "replay" not in r or not o:
            continue
        g, go = r["graph_step_ms"], r["graph_step_other_stream_ms"]
        gpu = r["replay_summary_table"]["graph_gpu_ms"]["median"]
        rows.append(f"| {r['walk']} | {g:.3f} | {go:.3f} | {priced(gpu, g)} | "
                    f"{priced(o['median'], go)} |")
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")
    print("\n".join(rows))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--launch-econ", default="launch-econ")
    ap.add_argument("--profile", default="",
                    help="a device profile (`launch-econ --export-json`) for every price: on a GPU "
                         "other than the H200, this GPU's; default the shipped H200 profile")
    ap.add_argument("--also-grid-nodes", default="",
                    help="a grid table (scripts/grid_node_probe.py) to price every walk with "
                         "again, replay and offline, beside the default (kept as "
                         "with_grid_nodes)")
    ap.add_argument("--walks", default="",
                    help="comma-separated; default: every walk (" + ", ".join(WALKS) + ")")
    ap.add_argument("--walk-module", default="",
                    help="a Python file whose build(name) returns (step, kind) for walks of "
                         "your own (raise KeyError/ValueError for names it does not know)")
    ap.add_argument("--batches", type=int, default=15)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--child", default="")
    ap.add_argument("--retable", default="",
                    help="only rewrite the tables from a validation.json (into --out)")
    ap.add_argument("--reprice", default="",
                    help="recompute the columns of a validation.json that come from its traces "
                         "in --traces (offline prices, graph facts), then rewrite JSON and "
                         "tables into --out")
    ap.add_argument("--traces", default="", help="with --reprice: where the traces are")
    args = ap.parse_args()
    if args.also_grid_nodes and not os.path.isfile(args.also_grid_nodes):
        ap.error(f"--also-grid-nodes {args.also_grid_nodes}: no such file")
    if args.reprice:
        reprice(args)
    elif args.retable:
        os.makedirs(args.out, exist_ok=True)
        with open(args.retable) as f:
            write_table(json.load(f), os.path.join(args.out, "validation.md"))
    elif args.child:
        try:
            child(args.child, args.out, args.batches, args.reps, args.walk_module)
        except Exception:
            traceback.print_exc()
            sys.exit(1)
    else:
        parent(args)


if __name__ == "__main__":
    main()
