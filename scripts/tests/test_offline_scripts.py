"""Tests of the validation scripts that need neither a GPU nor PyTorch: storing a run, reading
what ran beside each kernel, and the accuracy table. Run by `.ci/run`:

    python3 -m pytest scripts/tests -q
"""
import gzip
import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_runner import SCRIPTS, run_script  # noqa: E402

import reprice_summary  # noqa: E402
import stretch_by_class  # noqa: E402
import validate_all  # noqa: E402


def record(walk, trace):
    return {"walk": walk, "eager_trace": f"/elsewhere/{trace}", "eager_step_ms": 1.0,
            "eager_samples_ms": [1.0, 1.1], "graph_samples_ms": [0.5], "graph_step_ms": 0.5}


def test_store_run_keeps_records_without_samples_and_gzips_their_eager_traces(tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    (run / "g1").mkdir(parents=True)
    (run / "g1" / "validation.json").write_text(json.dumps(
        [dict(record("a", "a.eager.json"), graph_trace="/elsewhere/a.graph.json"),
         dict(record("b", "b.eager.json"), graph_trace="/elsewhere/b.graph.json")]))
    trace = {"traceEvents": [{"ph": "X", "name": "k", "ts": 0, "dur": 1}]}
    (run / "g1" / "a.eager.json").write_text(json.dumps(trace))
    graph = {"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k2", "ts": 105.5, "dur": 2, "args": {"stream": 9}},
        {"ph": "X", "cat": "kernel", "name": "k1", "ts": 100, "dur": 1.25, "args": {"stream": 7}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 90, "dur": 30},
        {"ph": "X", "cat": "kernel", "name": "k1", "ts": 104, "dur": 1, "args": {"stream": 7}}]}
    (run / "g1" / "a.graph.json").write_text(json.dumps(graph))  # only its kernels are kept
    (run / "notes").mkdir()  # a directory without a validation.json is not a group
    p = run_script("store_run.py", run, out)
    assert p.returncode == 0, p.stderr
    assert "1 eager traces stored" in p.stdout  # b's trace is missing: its record is kept alone
    records = json.loads((out / "g1" / "validation.json").read_text())
    assert [r["walk"] for r in records] == ["a", "b"]
    assert all(not k.endswith("samples_ms") for r in records for k in r)
    assert records[0]["graph_step_ms"] == 0.5
    with gzip.open(out / "g1" / "a.eager.json.gz") as f:
        assert json.load(f) == trace
    assert sorted(os.listdir(out)) == ["g1"]
    assert sorted(os.listdir(out / "g1")) == [
        "a.eager.json.gz", "a.graph.kernels.json.gz", "validation.json"]
    with gzip.open(out / "g1" / "a.graph.kernels.json.gz") as f:
        assert json.load(f) == {"names": ["k1", "k2"],
                                "kernels": [[0, 7, 0.0, 1.25], [0, 7, 4.0, 1.0], [1, 9, 5.5, 2.0]]}


def test_store_run_refuses_what_is_not_a_run(tmp_path):
    p = run_script("store_run.py", tmp_path / "missing", tmp_path / "out")
    assert p.returncode == 2 and "is not a directory" in p.stderr
    (tmp_path / "empty").mkdir()
    p = run_script("store_run.py", tmp_path / "empty", tmp_path / "out")
    assert p.returncode == 1 and "no group directory with a validation.json" in p.stderr
    assert not (tmp_path / "out").exists()


def kernel(name, lane, ts, dur):
    return {"name": name, "lane": lane, "ts": ts, "dur": dur}


def test_neighbours_say_what_covered_each_kernel_and_leave_partial_overlaps_out():
    events = [
        kernel("vectorized_elementwise_kernel", 0, 0, 10),   # a GEMM covers all of it
        kernel("nvjet_sm90_gemm", 1, 0, 20),                 # beside two small kernels
        kernel("reduce_kernel", 0, 10, 10),                  # beside the GEMM, whole
        kernel("layer_norm_kernel", 2, 15, 10),              # covered 5 of 10 only
        kernel("elementwise_kernel", 1, 30, 5),              # two small kernels side by side
        kernel("elementwise_kernel", 0, 30, 5),
        kernel("elementwise_kernel", 0, 50, 5),              # nothing beside it
    ]
    got = stretch_by_class.neighbours(events, lambda e: e["lane"], 0.8)
    assert got == ["big", "small", "big", "partial", "small", "small", None]
    # Two other lanes that together cover a kernel count, however they split it.
    events = [kernel("add_kernel", 0, 0, 10), kernel("add_kernel", 1, 0, 4),
              kernel("gemv_kernel", 2, 4, 6)]
    assert stretch_by_class.neighbours(events, lambda e: e["lane"], 0.8)[0] == "big"
    assert stretch_by_class.neighbours([kernel("add", 0, 0, 1)], lambda e: e["lane"], 0.8) \
        == [None]


@pytest.mark.parametrize("name,cls", [
    ("nvjet_sm90_hsh_64x8_64x16_4x2_h_bz_NNT", "gemm"),
    ("pytorch_flash::flash_fwd_kernel", "attention"),
    ("void at::native::vectorized_layer_norm_kernel", "norm"),
    ("void cublasLt::splitKreduce_kernel", "reduce"),
    ("void at::native::reduce_kernel<512, 1>", "reduce"),
    ("void at::native::vectorized_elementwise_kernel<4>", "element-wise"),
    ("void cudnn::conv_kernel", "other"),
])
def test_kernel_classes(name, cls):
    assert stretch_by_class.kernel_class(name) == cls


def row(walk, replay_err, summary_err, saving_err, same_walk=True):
    return {"group": "g", "walk": walk, "same_walk": same_walk, "kernels": 3, "streams": 1,
            "real_graph_ms": 1.0, "replay_ms": 1.0, "replay_err": replay_err,
            "summary_ms": 1.0, "summary_err": summary_err, "saving_ms": 1.0,
            "replay_saving_ms": 1.0, "saving_err": saving_err, "trace_eager_ms": 1.0,
            "trace_eager_err": 0.0}


def test_the_table_counts_each_target_and_leaves_walks_that_ran_another_graph_out():
    text = validate_all.table([
        row("a", 4.9, -9.9, None),        # no saving: left out of the savings line
        row("b", -5.1, 10.1, 9.0),
        row("c", 0.0, 0.0, -20.0, same_walk=False),
    ])
    assert "| `replay` graph step (5%) | 1 of 2 | -5.1% … +4.9% |" in text
    assert "| saving with `--eager-step-ms` (10%) | 1 of 1 |" in text
    assert "| `--summary` graph step (10%) | 1 of 2 |" in text
    assert "**+10.1%**" in text and "**-5.1%**" in text
    assert "c (graph ran another walk)" in text
    assert "Not counted: 1 walk(s)" in text


def test_the_reprice_summary_line_counts_both_targets_and_both_medians():
    line = reprice_summary.summary_line([-12.0, -4.0, 1.0, 6.0, 9.0], 10)
    assert line == "4 of 5 within 10%, 2 within 5%, median |error| 6.0%, median +1.0%"
    # Where the target is 5% itself, the count is given once.
    assert reprice_summary.summary_line([4.0, -6.0], 5).startswith("1 of 2 within 5%, median")


def test_stored_walks_say_how_many_streams_each_ran_on(tmp_path):
    group = tmp_path / "g"
    group.mkdir()
    records = [dict(record("a", "a.eager.json"), walk_summary={"streams": [7, 13]}),
               record("b", "b.eager.json")]
    (group / "validation.json").write_text(json.dumps(records))
    for w in "ab":
        (group / f"{w}.eager.json").write_text("{}")
    got = {w[0]: w[4] for w in reprice_summary.stored_walks(str(tmp_path))}
    assert got == {"a": 2, "b": None}


def test_a_walk_whose_graph_ran_another_walk_is_judged_on_its_eager_step_only(tmp_path):
    group = tmp_path / "g"
    group.mkdir()
    records = [record("a", "a.eager.json"), dict(record("b", "b.eager.json"), same_walk=False)]
    (group / "validation.json").write_text(json.dumps(records))
    for w in "ab":
        (group / f"{w}.eager.json").write_text("{}")
    assert [w[0] for w in reprice_summary.stored_walks(str(tmp_path))] == ["a"]
    assert [w[0] for w in reprice_summary.stored_walks(str(tmp_path), trace_eager=True)] == ["a", "b"]


@pytest.mark.parametrize("wrapped", [True, False])
def test_a_trace_without_its_waits_keeps_every_other_event(tmp_path, wrapped):
    events = [{"cat": "kernel", "name": "k"}, {"cat": "cuda_sync", "name": "Stream Wait Event"},
              {"cat": "CUDA_SYNC", "name": "Context Sync"}, {"cat": "cpu_op", "name": "aten::mm"}]
    trace = tmp_path / "t.json.gz"
    with gzip.open(trace, "wt") as f:
        json.dump({"traceEvents": events} if wrapped else events, f)
    path = reprice_summary.without_waits(str(trace))
    try:
        with open(path) as f:
            doc = json.load(f)
    finally:
        os.unlink(path)
    kept = doc["traceEvents"] if wrapped else doc
    assert [e["name"] for e in kept] == ["k", "aten::mm"]


def test_a_trace_without_its_shapes_keeps_its_other_args(tmp_path):
    events = [{"cat": "cpu_op", "name": "aten::mm",
               "args": {"External id": 3, "Input Dims": [[8, 8], [8, 8]], "Input type": ["float"],
                        "Input Strides": [[8, 1]], "Concrete Inputs": ["", ""]}},
              {"cat": "kernel", "name": "k", "args": {"stream": 7}}]
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    assert reprice_summary.has_shapes(str(trace))
    path = reprice_summary.rewritten(str(trace), reprice_summary.drop_shapes)
    try:
        assert not reprice_summary.has_shapes(path)
        with open(path) as f:
            kept = json.load(f)["traceEvents"]
    finally:
        os.unlink(path)
    assert kept[0]["args"] == {"External id": 3} and kept[1]["args"] == {"stream": 7}


def test_stretch_by_class_refuses_a_cover_share_outside_zero_to_one(tmp_path):
    for full in ("0", "1.5", "-0.2"):
        p = run_script("stretch_by_class.py", "--runs", tmp_path, "--launch-econ", "x",
                       "--by-neighbour", "--full", full)
        assert p.returncode == 2 and "--full" in p.stderr and "is not in (0, 1]" in p.stderr


@pytest.mark.parametrize("args, says", [
    (["--beside", "stream"], "--beside stream reads --sizes as block counts"),
    (["--beside", "spins", "--sizes", "16"], "--beside spins reads --sizes as block counts"),
    (["--stamped-only", "--sizes", "1024x0"], "is not D or (with --stamped-only) KxN"),
    (["--sizes", "1024x1024"], "is not D or (with --stamped-only) KxN"),
])
def test_small_kernel_kind_probe_refuses_bad_input_before_touching_the_gpu(tmp_path, args, says):
    # The probe imports PyTorch at load; an empty stand-in package lets it reach its argument
    # checks here, which must end the run (exit 2) before anything would use it.
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("")
    p = subprocess.run(
        [sys.executable, os.path.join(SCRIPTS, "small_kernel_kind_probe.py"),
         "--out", str(tmp_path / "x.json"), *args],
        capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert p.returncode == 2, p.stderr
    assert says in p.stderr, p.stderr
    assert not (tmp_path / "x.json").exists()


def traced_kernel(name, ts, dur, stream, grid=(1, 1, 1), block=(128, 1, 1), regs=32, smem=0):
    return {"cat": "kernel", "name": name, "ts": ts, "dur": dur,
            "args": {"stream": stream, "grid": list(grid), "block": list(block),
                     "registers per thread": regs, "shared memory": smem}}


def test_small_kernels_beside_one_fat_gemm_are_read_against_those_that_ran_alone():
    import stretch_by_held_sms as held
    add = "void at::native::vectorized_elementwise_kernel<add>"
    gemm = "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT"
    eager = [traced_kernel(add, 0, 1.0, 7), traced_kernel(add, 10, 1.0, 7), traced_kernel(gemm, 20, 6.0, 13)]
    graph = [
        traced_kernel(add, 0, 1.2, 7),  # alone: the profiler's cost on the graph (x1.2)
        traced_kernel(gemm, 2, 10.0, 13, grid=(2, 64, 1), block=(384, 1, 1), regs=168),
        traced_kernel(add, 3, 3.0, 7),  # wholly beside the GEMM: x3.0 / x1.2
        traced_kernel(add, 11, 1.8, 7),  # covered 1.0 of 1.8 us: not counted
    ]
    rows = held.walk_rows(eager, graph, 0.8)
    assert len(rows) == 1
    stretch, sms, blocks, name, _ = rows[0]
    assert abs(stretch - 2.5) < 1e-9 and (sms, blocks, name) == (128, 128, gemm)
    # Blocks that leave room for others on their SM hold none whole.
    assert held.held_sms({"grid": [96, 1, 1], "block": [128, 1, 1],
                          "registers per thread": 64, "shared memory": 0}) is None
    assert held.held_sms({"grid": [200, 1, 1], "block": [128, 1, 1],
                          "registers per thread": 32, "shared memory": 200 * 1024}) == 132
    # No small kernel ran alone: nothing to read the profiler's cost against.
    assert held.walk_rows(eager, graph[1:3], 0.8) == []


def test_graph_kernels_diff_sets_each_kernel_name_beside_model_and_real_graph(tmp_path):
    import graph_kernels_diff as diff
    eager = [("gemv", 10.0), ("norm", 2.0), ("norm", 2.0)]
    timeline = {"traceEvents": [
        {"ph": "X", "pid": 0, "name": "gemv", "dur": 10.0, "args": {}},  # the recording
        {"ph": "X", "pid": 1, "name": "gemv", "dur": 11.0,
         "args": {"recorded_dur_us": 10.0, "alone_us": 10.5}},
        {"ph": "X", "pid": 1, "name": "norm", "dur": 3.5,
         "args": {"recorded_dur_us": 2.0, "alone_us": 2.5}},
        {"ph": "X", "pid": 1, "name": "norm", "dur": 2.5,
         "args": {"recorded_dur_us": 2.0, "alone_us": 2.5}}]}
    model = diff.model_kernels(timeline)
    assert model == [("gemv", 10.5), ("norm", 3.0), ("norm", 2.0)]
    graph = diff.graph_kernels({"names": ["norm", "gemv"],
                                "kernels": [[1, 7, 0.0, 12.0], [0, 9, 0.5, 4.0], [0, 9, 5.0, 3.0]]})
    rows = diff.by_name(eager, model, graph)
    # The norms: 7 us in the real graph against the model's 5: the widest gap, first.
    assert rows == [("norm", 2, 4.0, 5.0, 7.0), ("gemv", 1, 10.0, 10.5, 12.0)]


def test_graph_kernels_diff_spans_a_stored_replay_first_start_to_last_end():
    import graph_kernels_diff as diff
    # Two lanes' kernels: 0-2 and 1-4 side by side, then 10-11: 11 us.
    stored = {"names": ["k"], "kernels": [[0, 7, 1.0, 3.0], [0, 9, 0.0, 2.0], [0, 7, 10.0, 1.0]]}
    assert diff.profiled_span_us(stored) == pytest.approx(11.0)
    assert diff.profiled_span_us({"names": [], "kernels": []}) == 0.0


def test_graph_kernels_diff_pools_stretches_by_recorded_length_without_gemms():
    import graph_kernels_diff as diff
    rows = [("add", 4, 4.0, 5.0, 4.4),        # 1 us kernels: model +25%, graph +10%
            ("softmax", 2, 16.0, 20.0, 16.0),  # 8 us: +25%, +0%
            ("norm", 1, 7.0, 7.0, 14.0),       # 7 us: +0%, +100%
            ("nvjet_sm90_tst", 3, 30.0, 60.0, 30.0),  # a GEMM: left out
            ("empty", 0, 0.0, 0.0, 1.0)]       # nothing recorded: left out
    buckets = diff.length_buckets(rows)
    assert buckets[0] == (1.5, 1, 4, 0.25, pytest.approx(0.1))
    assert buckets[1] is None and buckets[2] is None
    upper, names, kernels, model, real = buckets[3]
    assert (names, kernels) == (2, 3)
    assert model == pytest.approx(0.125) and real == pytest.approx(0.5)


def test_graph_kernels_diff_reads_a_stored_run_with_the_binary_it_is_given(tmp_path):
    group = tmp_path / "run" / "g1"
    group.mkdir(parents=True)
    (group / "validation.json").write_text(json.dumps(
        [dict(record("a", "a.eager.json"), graph_trace="/x/a.graph.json"),
         dict(record("b", "b.eager.json"), graph_trace="/x/b.graph.json")]))
    for w in "ab":
        (group / f"{w}.eager.json").write_text(json.dumps({"traceEvents": [
            {"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 2.0}]}))
    with gzip.open(group / "a.graph.kernels.json.gz", "wt") as f:  # b's were not kept
        json.dump({"names": ["k"], "kernels": [[0, 7, 0.0, 2.5]]}, f)
    fake = tmp_path / "launch-econ"
    fake.write_text("#!/usr/bin/env python3\nimport json, sys\n"
                    "out = sys.argv[sys.argv.index('--export-trace') + 1]\n"
                    "json.dump({'traceEvents': [{'ph': 'X', 'pid': 1, 'name': 'k', 'dur': 2.6,"
                    " 'args': {'recorded_dur_us': 2.0, 'alone_us': 2.3}}]}, open(out, 'w'))\n")
    fake.chmod(0o755)
    p = run_script("graph_kernels_diff.py", "--runs", tmp_path / "run", "--launch-econ", fake)
    assert p.returncode == 0, p.stderr
    assert "g1/a: real graph 500.0 us; kernels recorded 2.0 us, model 2.3, real graph (profiled) 2.5" in p.stdout
    assert "the profiled replay spans 0.01x the real graph step" in p.stdout
    assert "ran further apart" not in p.stdout
    assert "g1/b" not in p.stdout
    p = run_script("graph_kernels_diff.py", "--runs", tmp_path / "run", "--launch-econ", fake,
                   "--walk", "b")
    assert p.returncode == 1 and "no stored walk with its graph kernels kept" in p.stderr


def test_a_validation_run_stopped_midway_keeps_the_walks_it_finished(tmp_path, monkeypatch):
    # validate.py's parent writes validation.json after every walk: a device call's time
    # limit that stops it during the third walk leaves the first two (one failed) on disk.
    import types
    import validate
    calls = []

    def child(cmd, **_):
        calls.append(cmd[cmd.index("--child") + 1])
        if len(calls) == 3:
            raise KeyboardInterrupt  # what the time limit's signal does mid-walk
        if calls[-1] == "bad":
            return types.SimpleNamespace(returncode=1, stdout="", stderr="ImportError")
        line = json.dumps({"walk": calls[-1], "eager_trace": "e.json", "graph_trace": "g.json",
                           "eager_step_ms": 2.0, "graph_step_ms": 1.0})
        return types.SimpleNamespace(returncode=0, stdout=line + "\n", stderr="")

    monkeypatch.setattr(validate.subprocess, "run", child)
    monkeypatch.setattr(validate, "graph_facts", lambda *a: {})
    monkeypatch.setattr(validate, "offline_prices", lambda *a: {"summary": {}})
    monkeypatch.setattr(validate, "run_json", lambda cmd: (_ for _ in ()).throw(
        RuntimeError("no GPU here")))
    args = types.SimpleNamespace(out=str(tmp_path), walks="bad,good,third", batches=1, reps=1,
                                 walk_module="", launch_econ="le", profile="",
                                 also_grid_nodes="")
    with pytest.raises(KeyboardInterrupt):
        validate.parent(args)
    saved = json.load(open(tmp_path / "validation.json"))
    assert [r["walk"] for r in saved] == ["bad", "good"]
    assert saved[0]["error"] == "ImportError"
    assert saved[1]["summary"] == {} and saved[1]["error"] == "no GPU here"
    assert not (tmp_path / "validation.json.part").exists()


def test_the_shipped_per_lane_cost_is_the_lane_probes_empty_kernels():
    import lane_throughput_probe
    root = os.path.dirname(SCRIPTS)
    with open(os.path.join(root, "docs", "lane-throughput-h200.json")) as f:
        probe = json.load(f)
    with open(os.path.join(root, "profiles", "h200.json")) as f:
        profile = json.load(f)
    shipped = profile["result"]["model_inputs"]["graph_node_beside"]["per_lane_us"]
    assert shipped == lane_throughput_probe.per_lane_us(probe)
    # Four lanes of 256 empty kernels against one: 262.5 - 186.6 us over 3 x 256 nodes.
    assert abs(shipped - 0.0988) < 1e-4


def test_readme_pastes_are_brought_up_to_what_a_build_prints():
    import refresh_readme_pastes as r
    assert r.offline(["predict"]) and r.offline(["replay", "t.json", "--summary"])
    assert not r.offline(["replay", "t.json"]) and not r.offline([])
    block = ["prediction:", "  graph step  0.2371 ms   from the model", "", "  saving 1.0 ms",
             "  gone entirely"]
    printed = ["trace t.json", "prediction:", "  graph step  0.2383 ms   from the model",
               "  (a new figure per lane)", "  saving 1.0 ms", ""]
    new, changed, unplaced = r.refresh(block, printed, add=["per lane"])
    assert new == ["prediction:", "  graph step  0.2383 ms   from the model", "",
                   "  (a new figure per lane)", "  saving 1.0 ms", "  gone entirely"]
    assert changed == [("  graph step  0.2371 ms   from the model",
                        "  graph step  0.2383 ms   from the model"),
                       (None, "  (a new figure per lane)")]
    assert unplaced == ["  gone entirely"]
    # A paste that is current comes back as it was.
    assert r.refresh(new[:-1], printed, add=["per lane"]) == (new[:-1], [], [])


def test_every_script_passes_pyflakes():
    # The probes and walk modules run only on a GPU machine: a name that shadows another or is
    # never defined would first show there (l2_reuse_probe called itself from d57782c on).
    from pyflakes.api import checkPath
    from pyflakes.reporter import Reporter
    import glob
    import io
    out = io.StringIO()
    paths = sorted(glob.glob(os.path.join(SCRIPTS, "*.py"))
                   + glob.glob(os.path.join(SCRIPTS, "tests", "*.py")))
    found = sum(checkPath(p, Reporter(out, out)) for p in paths)
    assert found == 0, out.getvalue()


def test_price_probe_traces_sets_each_layout_beside_its_real_graph(tmp_path):
    fake = tmp_path / "launch-econ"
    # Prices every trace at 100 µs, or 90 with a profile.
    fake.write_text("#!/usr/bin/env python3\nimport json, sys\n"
                    "ms = 0.09 if '--profile' in sys.argv else 0.1\n"
                    "json.dump({'result': {'prediction': {'graph_step_ms': ms}}}, sys.stdout)\n")
    fake.chmod(0o755)
    traces = tmp_path / "traces"
    traces.mkdir()
    for stem in ("add_16384_x1", "add_16384_x2", "d1024_beyond_1", "ring", "2_lanes_row_adds"):
        (traces / f"{stem}.eager.json").write_text("{}")
    probes = {
        "ew.json": {"rows": [{"buffer_bytes": 16384, "lanes": n, "step_us": 80.0 * n}
                             for n in (1, 2, 4)]},
        "gemm.json": {"sizes": {"1024": {"us": {"beyond_1": 125.0}}}},
        "ring.json": {"rounds": [2, 6], "us": {"ring_2": 20.0, "ring_6": 50.0}},
        "memory.json": {"graphs": {"us": {"2_lanes_row_adds": 80.0, "2_lanes_adds": 70.0}}},
    }
    for name, probe in probes.items():
        (tmp_path / name).write_text(json.dumps(probe))
    p = run_script("price_probe_traces.py", tmp_path / "ew.json", traces, "--launch-econ", fake,
                   "--baseline", fake, "--profile", "p.json", "--out", tmp_path / "out.json")
    assert p.returncode == 0, p.stderr
    assert "16384x2: real     160.0 us, --summary      90.0 (-43.8%)" in p.stdout
    assert "no trace for 1 layout(s): add_16384_x4" in p.stderr
    rows = json.loads((tmp_path / "out.json").read_text())["rows"]
    assert [r["layout"] for r in rows] == ["16384x1", "16384x2"]
    assert rows[0]["base_err_pct"] == pytest.approx(12.5)
    p = run_script("price_probe_traces.py", tmp_path / "gemm.json", traces, "--launch-econ", fake)
    assert "d1024_beyond_1: real     125.0 us, --summary     100.0 (-20.0%)" in p.stdout
    p = run_script("price_probe_traces.py", tmp_path / "ring.json", traces, "--launch-econ", fake)
    assert "ring: real      50.0 us, --summary     100.0 (+100.0%)" in p.stdout
    p = run_script("price_probe_traces.py", tmp_path / "memory.json", traces, "--launch-econ", fake)
    assert "2_lanes_row_adds: real      80.0 us, --summary     100.0 (+25.0%)" in p.stdout
    assert "no trace for 1 layout(s): 2_lanes_adds" in p.stderr
    (tmp_path / "bad.json").write_text("{}")
    p = run_script("price_probe_traces.py", tmp_path / "bad.json", traces, "--launch-econ", fake)
    assert p.returncode != 0 and "not a lanes probe's JSON" in p.stderr


def test_a_run_is_priced_with_the_profile_stored_in_it_or_beside_it(tmp_path):
    batch = tmp_path / "h100-heldout-99"
    (batch / "heldout99").mkdir(parents=True)
    (batch / "profile-h100.json").write_text("{}")
    group = str(batch / "heldout99")
    assert reprice_summary.profile_beside(str(batch), "profile-h100.json") == str(
        batch / "profile-h100.json")
    assert reprice_summary.profile_beside(group, "profile-h100.json") == str(
        batch / "profile-h100.json")
    (batch / "heldout99" / "profile-h100.json").write_text("{}")
    assert reprice_summary.profile_beside(group + "/", "profile-h100.json") == os.path.join(
        group, "profile-h100.json")
    with pytest.raises(FileNotFoundError, match="profile-h100.json is neither in"):
        reprice_summary.profile_beside(str(tmp_path), "profile-h100.json")


def test_reprice_refuses_a_run_without_the_profile_it_is_told_to_find_beside_it(tmp_path):
    group = tmp_path / "g"
    group.mkdir()
    (group / "validation.json").write_text(json.dumps([record("a", "a.eager.json")]))
    (group / "a.eager.json").write_text("{}")
    p = run_script("reprice_summary.py", "--runs", tmp_path, "--launch-econ", "unused",
                   "--profile-beside", "profile-h100.json")
    assert p.returncode != 0
    assert "--profile-beside: profile-h100.json is neither in" in p.stderr


def one_walk_timed(monkeypatch):
    """validate.py with its walk's timing and its graph's facts stubbed: one walk `w`, eager
    2 ms and graph 1 ms, as its child process would report them; `validate` returned."""
    import types
    import validate
    line = json.dumps({"walk": "w", "eager_trace": "e.json", "graph_trace": "g.json",
                       "eager_step_ms": 2.0, "graph_step_ms": 1.0})
    monkeypatch.setattr(validate.subprocess, "run", lambda cmd, **_: types.SimpleNamespace(
        returncode=0, stdout=line + "\n", stderr=""))
    monkeypatch.setattr(validate, "graph_facts", lambda *a: {})
    monkeypatch.setattr(validate, "offline_prices", lambda *a: {"summary": {}})
    return validate


def test_a_validation_run_given_a_grid_table_prices_every_walk_again_with_it(tmp_path,
                                                                           monkeypatch):
    # --also-grid-nodes FILE: after the default prices, the replay and the offline price
    # again with `--grid-nodes FILE`, kept beside them as with_grid_nodes.
    import types
    validate = one_walk_timed(monkeypatch)
    seen = []

    def run_json(cmd):
        seen.append(cmd)
        table = cmd[cmd.index("--grid-nodes") + 1] if "--grid-nodes" in cmd else None
        step = 0.9 if table else 1.1
        return {"result": {"prediction": {"graph_step_ms": step},
                           "replay": {"summary": [], "fidelity": {}}}}
    monkeypatch.setattr(validate, "run_json", run_json)
    monkeypatch.setattr(validate, "write_table", lambda *a: None)
    args = types.SimpleNamespace(out=str(tmp_path), walks="w", batches=1, reps=1,
                                 walk_module="", launch_econ="le", profile="p.json",
                                 also_grid_nodes="/x/grid-nodes-h100.json")
    validate.parent(args)
    r = json.load(open(tmp_path / "validation.json"))[0]
    assert "error" not in r, r.get("error")
    assert r["replay"]["graph_step_ms"] == 1.1
    g = r["with_grid_nodes"]
    assert g["table"] == "grid-nodes-h100.json"
    assert g["replay"]["graph_step_ms"] == 0.9 and g["summary"]["graph_step_ms"] == 0.9
    with_table = [c for c in seen if "--grid-nodes" in c]
    assert len(with_table) == 2
    assert any("--summary" in c for c in with_table)
    assert all(c[c.index("--profile") + 1] == "p.json" for c in with_table)


def test_a_grid_table_that_fails_leaves_the_walks_default_prices_standing(tmp_path, monkeypatch):
    import types
    validate = one_walk_timed(monkeypatch)
    monkeypatch.setattr(validate, "write_table", lambda *a: None)

    def run_json(cmd):
        if "--grid-nodes" in cmd:
            raise RuntimeError("is not a grid table")
        return {"result": {"prediction": {"graph_step_ms": 1.1},
                           "replay": {"summary": [], "fidelity": {}}}}
    monkeypatch.setattr(validate, "run_json", run_json)
    args = types.SimpleNamespace(out=str(tmp_path), walks="w", batches=1, reps=1,
                                 walk_module="", launch_econ="le", profile="",
                                 also_grid_nodes="/x/t.json")
    validate.parent(args)
    r = json.load(open(tmp_path / "validation.json"))[0]
    assert "error" not in r and r["replay"]["graph_step_ms"] == 1.1
    assert r["with_grid_nodes"] == {"table": "t.json", "error": "is not a grid table"}


@pytest.mark.parametrize("script", ["validate.py", "validate_all.py"])
def test_a_missing_grid_table_is_refused_before_any_walk_runs(tmp_path, script):
    p = run_script(script, "--out", tmp_path / "o", "--also-grid-nodes", tmp_path / "none.json")
    assert p.returncode == 2
    assert "--also-grid-nodes" in p.stderr and "no such file" in p.stderr
    assert not (tmp_path / "o").exists()


def test_linear_node_probe_groups_a_launchs_kernels_and_parts_launches_at_a_gap():
    import linear_node_probe
    # Two launches of a split-K matmul (kernel + reduction back to back), then one of one
    # kernel; launches 20 us apart, as one at a time with a sync between.
    ev = [{"ts": 0.0, "dur": 10.0}, {"ts": 10.5, "dur": 2.0},
          {"ts": 32.0, "dur": 10.0}, {"ts": 42.4, "dur": 2.0},
          {"ts": 65.0, "dur": 4.0}]
    groups = linear_node_probe.launch_groups(ev)
    assert [len(g) for g in groups] == [2, 2, 1]
    assert [sum(e["dur"] for e in g) for g in groups] == [12.0, 12.0, 4.0]


def test_linear_node_probe_refuses_a_missing_output_before_importing_torch():
    r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "linear_node_probe.py")],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "the following arguments are required: out" in r.stderr
