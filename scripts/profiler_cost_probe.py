#!/usr/bin/env python3
"""What `torch.profiler` adds to an eager step, measured: a step's unprofiled time against
the span of the same step recorded the way `scripts/validate.py` records it, for steps made
of one kind of host event each and for stored walks.

The eager step that `launch-econ replay` estimates from a trace alone takes the profiler's
cost out of the recorded span, read per event from the trace itself. This probe gives the
true figure beside it: per case, in a fresh process, the unprofiled step (15 batches of 20
steps, median), then `--recordings` single steps each recorded in a profiler session of its
own (CPU and CUDA activity, shapes, CUDA sync events, as validate.py), then the unprofiled
step again (an ended CUPTI session may leave launches slower). Each recording's trace is
written, so that `launch-econ replay TRACE --summary` can be compared with the measured step.

    python3 scripts/profiler_cost_probe.py --out DIR [--cases views,adds,linears] \\
        [--walks heldout_16_walks.py:hq_persimmon_decode_b4,...] [--recordings 5]

Cases: `views` (400 views of one tensor, one add at the end), `unbind` (one `unbind` into 400
rows: nested operators under one), `adds` (400 one-element adds, each an operator and a
launch), `linears` (200 bf16 `F.linear`s of 64 x 64, each a wrapper operator over a GEMM),
`cupy_adds` (400 CuPy element-wise launches, no operators), `forked_adds` and
`switching_adds` (the 400 adds on two side streams forked and joined, each stream's half in
one block or alternating add by add: what a stream switch costs a recorded step beside an
unprofiled one). `--activities cpu` records
without CUDA activity (no CUPTI), which leaves the operators' cost alone; `--no-shapes` without
the operators' shapes. `--steps K`
also records one session over K steps, each marked with `prof.step()`, the way a profiler
schedule marks them (DIR/CASE.steps.json). Writes DIR/results.json (results.cpu.json,
results.noshapes.json; one record a case) and DIR/CASE.N.json (.cpu.N, .noshapes.N).
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from walk_parts import sync_events_config, timed_ms  # noqa: E402

SYNTHETIC = {"views": 400, "unbind": 400, "adds": 400, "linears": 200, "cupy_adds": 400,
             "forked_adds": 400, "switching_adds": 400}


def synthetic_step(name):
    """The step of a synthetic case: (step, events of its kind a step)."""
    import torch
    n = SYNTHETIC[name]
    if name == "views":
        x, y = torch.ones(64, device="cuda"), torch.empty(64, device="cuda")

        def step():
            for _ in range(n):
                x.view(-1)
            torch.add(x, 1, out=y)
    elif name == "adds":
        a, b, c = (torch.ones(1, device="cuda") for _ in range(3))

        def step():
            for _ in range(n):
                torch.add(a, b, out=c)
    elif name == "unbind":
        x, y = torch.ones(n, 4, device="cuda"), torch.empty(4, device="cuda")

        def step():
            x.unbind(0)
            torch.add(y, 1, out=y)
    elif name in ("forked_adds", "switching_adds"):
        # The adds case on two side streams forked from the current one and joined back:
        # each stream's half in one block (two stream switches), or every add on the other
        # stream from the one before (one switch an add). Beside `adds`, what a stream switch
        # costs a recorded step against an unprofiled one.
        a, b, c = (torch.ones(1, device="cuda") for _ in range(3))
        sides = [torch.cuda.Stream(), torch.cuda.Stream()]
        order = ([i * 2 // n for i in range(n)] if name == "forked_adds"
                 else [i % 2 for i in range(n)])

        def step():
            main = torch.cuda.current_stream()
            for s in sides:
                s.wait_stream(main)
            for i in order:
                with torch.cuda.stream(sides[i]):
                    torch.add(a, b, out=c)
            for s in sides:
                main.wait_stream(s)
    elif name == "cupy_adds":
        import cupy as cp
        a = cp.ones(1, dtype=cp.float32)
        add = cp.ElementwiseKernel("T x", "T y", "y = x + 1", "one_add")

        def step():
            for _ in range(n):
                add(a, a)
    else:
        x = torch.randn(1, 64, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)

        def step():
            for _ in range(n):
                torch.nn.functional.linear(x, w)
    return step


def walk_step(spec):
    """The step of a stored walk, `MODULE.py:NAME` (a module with a `build(name)`)."""
    module, name = spec.split(":")
    loaded = importlib.util.spec_from_file_location("walks", os.path.join(HERE, module))
    mod = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(mod)
    step, kind = mod.build(name)
    return step


def child(case, out, recordings, activities, steps, shapes=True):
    """Measures one case in this process and prints its record as JSON (`shapes` false: the
    recordings without the operators' shapes)."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    step = synthetic_step(case) if case in SYNTHETIC else walk_step(case)
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    before, before_samples = timed_ms(step, 20, 15)
    extra = sync_events_config(torch)
    label = (case.replace(":", "_").replace(".py", "") + ("" if activities == "cpu,cuda" else ".cpu")
             + ("" if shapes else ".noshapes"))
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if "cuda" in activities else [])
    traces, spans = [], []
    for i in range(recordings):
        step()
        torch.cuda.synchronize()
        t = time.perf_counter()
        with profile(activities=acts, record_shapes=shapes, **extra) as prof:
            step()
            torch.cuda.synchronize()
        spans.append((time.perf_counter() - t) * 1e3)
        path = os.path.join(out, f"{label}.{i}.json")
        prof.export_chrome_trace(path)
        traces.append(path)
    if steps > 1:
        # One session over `steps` steps, each marked (`prof.step()`: ProfilerStep#N).
        step()
        torch.cuda.synchronize()
        with profile(activities=acts, record_shapes=shapes, **extra) as prof:
            for _ in range(steps):
                step()
                torch.cuda.synchronize()
                prof.step()
        path = os.path.join(out, f"{label}.steps.json")
        prof.export_chrome_trace(path)
        traces.append(path)
    after, after_samples = timed_ms(step, 20, 15)
    print(json.dumps({"case": case, "activities": activities, "shapes": shapes, "unprofiled_ms": before, "unprofiled_samples_ms": before_samples,
                      "unprofiled_after_ms": after, "unprofiled_after_samples_ms": after_samples,
                      "session_wall_ms": spans, "traces": traces}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for the traces and results.json")
    ap.add_argument("--cases", default="views,adds,linears", help="synthetic cases, comma-separated")
    ap.add_argument("--walks", default="", help="MODULE.py:NAME walks, comma-separated")
    ap.add_argument("--recordings", type=int, default=5, help="single-step recordings a case")
    ap.add_argument("--activities", default="cpu,cuda", choices=["cpu,cuda", "cpu"],
                    help="what the profiler records (cpu: no CUPTI, the operators' cost alone)")
    ap.add_argument("--steps", type=int, default=0,
                    help="then also one session over this many steps, each marked (prof.step())")
    ap.add_argument("--no-shapes", action="store_true",
                    help="record without the operators' shapes (record_shapes=False)")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.child:
        child(args.child, args.out, args.recordings, args.activities, args.steps,
              not args.no_shapes)
        return
    cases = [c for c in args.cases.split(",") if c] + [w for w in args.walks.split(",") if w]
    unknown = [c for c in cases if ":" not in c and c not in SYNTHETIC]
    if unknown:
        ap.error(f"unknown cases {unknown}: synthetic cases are {sorted(SYNTHETIC)}")
    results = []
    for case in cases:
        p = subprocess.run([sys.executable, __file__, "--out", args.out, "--recordings",
                            str(args.recordings), "--activities", args.activities, "--steps", str(args.steps),
                            "--child", case] + (["--no-shapes"] if args.no_shapes else []),
                           capture_output=True, text=True)
        if p.returncode != 0:
            results.append({"case": case, "error": p.stderr.strip().splitlines()[-3:]})
        else:
            results.append(json.loads(p.stdout.strip().splitlines()[-1]))
        print(json.dumps({k: v for k, v in results[-1].items() if not k.endswith("samples_ms")}),
              flush=True)
    name = ("results" + ("" if args.activities == "cpu,cuda" else ".cpu")
            + ("" if not args.no_shapes else ".noshapes") + ".json")
    with open(os.path.join(args.out, name), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
