"""The package without a GPU or PyTorch: offline pricing of the committed traces, the result
object, and the errors (ValueError for bad input, LaunchEconError for failures)."""

import json
import math
import pathlib
import shutil

import pytest

import launch_econ

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "launch-econ" / "tests" / "fixtures"
STEP = FIXTURES / "kineto_step.json"
DECODE = FIXTURES / "torch_decode_small.json"


def test_offline_price_of_a_recorded_step():
    r = launch_econ.price_trace(STEP)
    assert r.graph_source == "model"
    assert r.eager_source == "trace"
    # What the estimate read the profiler's cost from, and that it read none here.
    assert r.profiler_readings["per_event_samples"] == 0
    assert "not taken out (estimate high)" in repr(r)
    assert (r.kernels, r.copies, r.memsets) == (2, 1, 1)
    assert r.graph_ms > 0 and r.eager_ms > 0
    assert math.isclose(r.saving_ms, r.eager_ms - r.graph_ms, rel_tol=1e-9)
    assert r.break_even_steps == pytest.approx(r.build_ms / r.saving_ms)
    # Offline, copies are priced at their recorded time: nothing says how they would replay.
    assert not any("pageable" in w or "device-to-device" in w for w in r.warnings)
    assert not r.partial
    assert r.document["result"]["kind"] == "replay-summary"


def test_a_loop_of_leaf_operators_reads_the_gaps_between_them():
    # A stored H200 recording of 128 one-element adds: no operator only calls operators.
    root = pathlib.Path(__file__).resolve().parents[4]
    r = launch_econ.price_trace(root / "docs" / "stored" / "all-93-5687dc7" / "short"
                                / "adds_768.eager.json.gz")
    readings = r.profiler_readings
    assert readings["per_event_from"] == "gaps-between-operators"
    assert readings["per_event_samples"] > 100 and readings["per_event_us"] > 0
    assert "gaps between operators (reads high)" in repr(r)
    # How far off the stored walks of as many launch calls (128) came.
    a = readings["stored_accuracy"]
    assert (a["launch_calls_from"], a["launch_calls_below"]) == (50, 200)
    assert 0 < a["within_25"] <= a["walks"]
    assert "the stored walks of 50 to 199 launch calls came within 25%" in repr(r)


def test_a_program_without_operators_is_read_at_its_launch_cadence():
    # A stored H200 recording of a CuPy program: launch calls only, no framework operators.
    root = pathlib.Path(__file__).resolve().parents[4]
    r = launch_econ.price_trace(root / "docs" / "stored" / "heldout-29-44-bd3f33f" / "heldout35"
                                / "ik_cupy_prefix_sums.eager.json.gz")
    readings = r.profiler_readings
    assert readings["basis"] == "no-operators" and readings["operators"] == 0
    assert readings["launch_interval_samples"] == readings["launch_calls"] - 1
    # The step is its launch calls at that interval (above the GPU's busy time here).
    assert r.eager_ms == pytest.approx(
        readings["launch_calls"] * readings["launch_interval_us"] / 1e3, rel=1e-6)
    assert "launch cadence" in repr(r) and "the lower tenth of" in repr(r)


def test_the_users_eager_step_is_used_and_named():
    r = launch_econ.price_trace(DECODE, eager_step_ms=5.0)
    assert r.eager_source == "user"
    assert r.profiler_readings is None
    assert r.eager_ms == 5.0
    assert r.saving_ms == pytest.approx(5.0 - r.graph_ms)


def test_no_saving_is_said_and_never_breaks_even():
    r = launch_econ.price_trace(STEP, eager_step_ms=1e-6)
    assert r.saving_ms < 0
    assert r.break_even_steps is None
    assert "no saving" in repr(r)
    assert "never" in repr(r)


def test_result_object_shows_itself():
    r = launch_econ.price_trace(DECODE)
    d = r.to_dict()
    assert d["graph_ms"] == r.graph_ms and d["kernels"] == r.kernels
    assert d["real_graph_ms"] is None and d["real_saving_ms"] is None
    # Offline, nothing is added for memory the trace does not say (the model prices it).
    assert d["graph_unknown_memory_ms"] is None
    # The shipped profile holds the step between the two levels of graph node cost: the
    # lower level is reported beside the price, and below it.
    assert d["graph_quiet_ms"] is not None and d["graph_quiet_ms"] < r.graph_ms
    # ... and so is the saving a process at the lower level would make.
    assert abs(d["saving_quiet_ms"] - (r.eager_ms - d["graph_quiet_ms"])) < 1e-9
    text = repr(r)
    assert text.startswith("launch_econ.Price:") and "graph step" in text
    assert "lower level" in text
    page = r._repr_html_()
    assert "<table>" in page and "<svg" in page and "</svg>" in page


def test_profile_loads_the_shipped_one_and_rejects_others(tmp_path):
    p = launch_econ.profile()
    assert p["model_inputs"]["graph_node_gpu_us"] > 0
    assert p["device"]["name"]
    with pytest.raises(ValueError, match="cannot read profile"):
        launch_econ.profile(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(ValueError):
        launch_econ.profile(bad)
    with pytest.raises(ValueError):
        launch_econ.price_trace(STEP, profile=bad)


@pytest.mark.parametrize("ms", [0.0, -1.0, float("inf"), float("nan")])
def test_bad_eager_step_is_a_value_error(ms):
    with pytest.raises(ValueError, match="eager_step_ms"):
        launch_econ.price_trace(STEP, eager_step_ms=ms)


def test_bad_traces_are_value_errors_with_the_clis_message(tmp_path):
    with pytest.raises(ValueError, match="no/such.json"):
        launch_econ.price_trace("no/such.json")
    junk = tmp_path / "junk.json"
    junk.write_text("not json at all")
    with pytest.raises(ValueError):
        launch_econ.price_trace(junk)
    empty = tmp_path / "empty.json"
    empty.write_text('{"traceEvents": []}')
    with pytest.raises(ValueError):
        launch_econ.price_trace(empty)


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a GPU is present")
def test_gpu_pricing_without_a_gpu_is_a_clear_error():
    with pytest.raises(launch_econ.LaunchEconError, match="starting the engine"):
        launch_econ.price_trace(STEP, gpu=True)


def test_version_is_the_librarys():
    assert launch_econ.version().count(".") == 2


def test_waits_read_forks_side_by_side_unless_told_otherwise():
    trace = FIXTURES / "kineto_serial_forks.json"
    join = launch_econ.price_trace(trace)
    every = launch_econ.price_trace(trace, waits="all")
    # 40 + 10 us side by side against 40 + 40 + 10 one after the other.
    assert join.graph_ms < every.graph_ms - 0.03
    # Side by side, the price says what the streams one after another would cost.
    assert join.graph_serial_ms == pytest.approx(every.graph_ms, rel=0.05)
    assert "streams in series" in repr(join)
    with pytest.raises(ValueError, match="waits must be"):
        launch_econ.price_trace(trace, waits="some")
    with pytest.raises(ValueError, match='gemms must be "auto", "real" or "stand-in"'):
        launch_econ.price_trace(trace, gemms="some")
    with pytest.raises(ValueError, match='gemm_operands must be "fresh" or "recycled"'):
        launch_econ.price_trace(trace, gemm_operands="shared")
    with pytest.raises(ValueError, match='graph_step must be "auto", "mean" or "replay"'):
        launch_econ.price_trace(trace, graph_step="both")
    # Offline the model is the price either way.
    assert launch_econ.price_trace(trace, graph_step="replay").graph_source == "model"


def test_one_marked_step_of_several_is_priced():
    trace = FIXTURES / "kineto_profiler_steps.json"
    last = launch_econ.price_trace(trace)
    assert last.kernels == 28
    assert last.step.startswith("ProfilerStep#4, one of 3 marked steps")
    assert launch_econ.price_trace(trace, profiler_step=2).kernels == 28
    assert launch_econ.price_trace(trace, profiler_step="all").kernels == 84
    with pytest.raises(ValueError, match="no ProfilerStep#9"):
        launch_econ.price_trace(trace, profiler_step=9)
    with pytest.raises(ValueError, match="profiler_step"):
        launch_econ.price_trace(trace, profiler_step="first")
    assert launch_econ.price_trace(STEP).step is None


def test_a_trace_of_two_devices_is_priced_one_device_at_a_time():
    trace = FIXTURES / "kineto_array.json"
    both = launch_econ.price_trace(trace)
    assert any("operations of 2 devices (0, 1)" in w for w in both.warnings), both.warnings
    one = launch_econ.price_trace(trace, trace_device=1)
    assert one.kernels == 1
    assert not any("devices" in w for w in one.warnings), one.warnings
    assert launch_econ.price_trace(trace, stream=7).kernels == 1
    with pytest.raises(ValueError, match="no operations left after the filters"):
        launch_econ.price_trace(trace, trace_device=5)


def test_streams_without_recorded_waits_are_priced_between_two_bounds(tmp_path):
    # The forks fixture without its waits: one after another, and never waiting.
    d = json.loads((FIXTURES / "kineto_serial_forks.json").read_text())
    d["traceEvents"] = [e for e in d["traceEvents"] if e.get("cat") != "cuda_sync"]
    trace = tmp_path / "no_waits.json"
    trace.write_text(json.dumps(d))
    r = launch_econ.price_trace(trace)
    assert r.graph_serial_ms is None
    assert r.graph_independent_ms < r.graph_ms
    assert "streams unordered" in repr(r)
    assert r.to_dict()["graph_independent_ms"] == r.graph_independent_ms
    # waits="none" prices that bound as the step, for this trace or one with waits.
    assert launch_econ.price_trace(trace, waits="none").graph_ms == r.graph_independent_ms
    forks = FIXTURES / "kineto_serial_forks.json"
    assert (launch_econ.price_trace(forks, waits="none").graph_ms
            <= launch_econ.price_trace(forks).graph_ms)
    assert launch_econ.price_trace(FIXTURES / "kineto_serial_forks.json").graph_independent_ms is None


def test_the_saving_at_the_lower_level_shows_where_it_differs():
    from launch_econ._result import Price

    def price(eager, graph, quiet):
        doc = {"result": {
            "prediction": {"eager_step_ms": eager, "eager_source": "user",
                           "graph_step_ms": graph, "graph_source": "replay",
                           "graph_step_quiet_ms": quiet, "saving_ms": eager - graph,
                           "saving_quiet_ms": eager - quiet, "build_ms": 1.0,
                           "break_even_steps": 1.0 / (eager - graph)},
            "trace": {"summary": {"kernels": 3, "copies": 0, "memsets": 0,
                                  "kernel_gpu_ns": 1e5, "copy_gpu_ns": 0.0}}}}
        return dict((r[0], r[1]) for r in Price(doc)._rows())

    # A small saving the level step moves by a third: both are shown.
    rows = price(0.725, 0.685, 0.665)
    assert rows["saving"] == "0.0400 ms" and rows["  lower level"] == "0.0600 ms"
    # Without the error in the document (an older export) nothing is said of it.
    assert "  small saving" not in rows
    # A large one it moves by 1%: only the priced saving.
    rows = price(8.0, 0.80, 0.74)
    assert rows["saving"] == "7.2000 ms" and "0.7400 ms" in rows.values()
    assert "7.2600 ms" not in rows.values()


def test_a_walk_with_streams_side_by_side_carries_their_wider_error():
    one = launch_econ.price_trace(STEP)
    assert not one.branches
    r = launch_econ.price_trace(FIXTURES / "kineto_two_streams.json")
    assert r.branches
    assert r.graph_error_ms == pytest.approx(0.39 * r.graph_ms)


def test_a_saving_within_the_graph_steps_error_says_so():
    graph = launch_econ.price_trace(STEP).graph_ms
    # The offline model's graph step may be off by 10% of itself.
    r = launch_econ.price_trace(STEP, eager_step_ms=graph * 1.02)
    assert r.graph_error_ms == pytest.approx(0.1 * r.graph_ms)
    # A user's eager step 2% over the graph step: the error is five times the saving.
    rows = dict((row[0], row[1]) for row in r._rows())
    assert rows["  small saving"] == f"±{r.graph_error_ms:.4f} ms"
    # Ten times the graph step: the error is a hundredth of the saving, nothing said.
    r = launch_econ.price_trace(STEP, eager_step_ms=graph * 10)
    assert "  small saving" not in dict((row[0], row[1]) for row in r._rows())
    # An eager step 2% under the graph step: no saving, but within the error one may remain.
    r = launch_econ.price_trace(STEP, eager_step_ms=graph * 0.98)
    rows = dict((row[0], row[1]) for row in r._rows())
    assert rows["saving"] == "no saving"
    assert rows["  may save"] == f"up to {r.graph_error_ms + r.saving_ms:.4f} ms"
    # Half the graph step: beyond its error, nothing more said.
    r = launch_econ.price_trace(STEP, eager_step_ms=graph * 0.5)
    assert "  may save" not in dict((row[0], row[1]) for row in r._rows())


def test_kernels_that_fill_the_gpu_share_it_side_by_side(tmp_path):
    # Two branches of 40 us whose kernels each fill every SM with one round of fat blocks:
    # the second finds room only as the first's blocks retire, and from then on they share
    # the GPU, each holding what the profile's widest GEMM pair held: longer than one branch
    # (overlapped at recorded durations), less than one after the other.
    full = launch_econ.price_trace(FIXTURES / "kineto_two_streams_full_gpu.json")
    assert full.graph_unshared_ms + 0.01 < full.graph_ms < full.graph_serial_ms - 0.002
    assert "unshared" in repr(full)
    assert full.kernels_waiting_for_room == 1
    assert "waiting for room" in repr(full)
    # The same kernels named as cuBLAS's, without shapes to judge them by, hold every SM:
    # as long as one after the other.
    text = (FIXTURES / "kineto_two_streams_full_gpu.json").read_text()
    renamed = tmp_path / "cublas.json"
    renamed.write_text(text.replace('"branch_a"', '"nvjet_branch_a"')
                       .replace('"branch_b"', '"nvjet_branch_b"'))
    blas = launch_econ.price_trace(renamed)
    assert blas.graph_ms == pytest.approx(blas.graph_serial_ms, rel=0.02)


def test_small_kernels_beside_whole_sm_blocks_are_not_confined_to_the_sms_they_leave(tmp_path):
    # The full-GPU fixture's first branch cut to 128 whole-SM blocks, its second an add of
    # 512 blocks of 128 threads whose block does not fit beside them: priced as one whose
    # block does (held-out batch 56: such chains take turns rather than crowd onto the free
    # SMs), with no count of confined kernels.
    def add_beside_gemv(registers):
        trace = json.loads((FIXTURES / "kineto_two_streams_full_gpu.json").read_text())
        for e in trace["traceEvents"]:
            if e.get("name") == "branch_a":
                e["args"]["grid"] = [128, 1, 1]
            elif e.get("name") == "branch_b":
                e.update(name="vectorized_elementwise_kernel<add>", dur=10.0)
                e["args"].update({"grid": [512, 1, 1], "block": [128, 1, 1],
                                  "registers per thread": registers, "shared memory": 0})
        path = tmp_path / f"add-{registers}.json"
        path.write_text(json.dumps(trace))
        return launch_econ.price_trace(path)
    crowded, fits = add_beside_gemv(32), add_beside_gemv(8)
    assert "kernels_confined" not in crowded.to_dict()
    assert "confined" not in repr(crowded)
    assert crowded.graph_ms == pytest.approx(fits.graph_ms, rel=1e-9)


def test_the_model_s_graph_step_is_exported_as_a_trace(tmp_path):
    out = tmp_path / "model.json"
    r = launch_econ.price_trace(FIXTURES / "kineto_two_streams.json", export_trace=out)
    events = json.loads(out.read_text())["traceEvents"]
    names = [e["args"]["name"] for e in events if e.get("name") == "process_name"]
    assert names == ["recorded walk (as read)", "graph step, offline model"]
    nodes = [e for e in events if e.get("pid") == 1 and e["ph"] == "X"]
    assert len(nodes) == r.kernels
    assert max(e["ts"] + e["dur"] for e in nodes) <= r.graph_ms * 1e3


def test_a_trace_with_nowhere_to_go_is_refused_before_pricing(tmp_path):
    with pytest.raises(ValueError, match="export_trace: cannot write .*: directory .* does not exist"):
        launch_econ.price_trace(STEP, export_trace=tmp_path / "missing" / "t.json")
    with pytest.raises(ValueError, match="export_trace: .* is a directory, not a file"):
        launch_econ.price_trace(STEP, export_trace=tmp_path)


def test_lanes_past_the_l2_are_floored_at_their_bytes_from_device_memory():
    # Two f32 lanes of addcmul whose data (64 MiB together) pass the H200's 60 MiB L2 (a stored
    # run): no shorter than their kernels' bytes at device memory's bandwidth, which is above
    # the streams one after another; four lanes within the L2 get no floor.
    run = FIXTURES.parents[3] / "docs" / "stored" / "heldout-68-73-96-127a3bf" / "heldout96"
    past = launch_econ.price_trace(run / "lv_two_lanes_of_addcmuls_f32_2m.eager.json.gz",
                                   eager_step_ms=0.484)
    assert past.graph_streamed_floor_ms == past.graph_ms
    assert past.graph_ms > past.graph_serial_ms
    assert past.to_dict()["graph_streamed_floor_ms"] == past.graph_ms
    assert "past the L2" in repr(past)
    within = launch_econ.price_trace(run / "lv_four_lanes_of_scale_adds_fp16_2m.eager.json.gz",
                                     eager_step_ms=1.7)
    assert within.graph_streamed_floor_ms is None
