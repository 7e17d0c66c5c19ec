"""The GPU probes check their arguments before any GPU work, so a bad run fails at once with a
message that names the bad argument, on any machine (these tests need neither a GPU nor
PyTorch).

    python3 -m pytest scripts/tests -q
"""
import os
import sys

import pytest

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)

import small_kernel_kind_probe as probe  # noqa: E402


def rejects(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        probe.parse_args(["--out", "o.json", *argv])
    assert stop.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("elems", ["0", "4096,x", "-5", "4096,,8192"])
def test_add_elems_must_be_positive_whole_numbers(elems, capsys):
    assert "--add-elems" in rejects(["--stamped-only", "--add-elems", elems], capsys)


def test_layernorm_rows_need_elements_in_whole_rows_of_1024(capsys):
    err = rejects(["--stamped-only", "--small-kernel", "layernorm", "--add-elems", "4096,1000"],
                  capsys)
    assert "multiples of 1024" in err
    _, elems = probe.parse_args(["--out", "o", "--stamped-only", "--small-kernel", "layernorm",
                                 "--add-elems", "4096,16384"])
    assert elems == [4096, 16384]


@pytest.mark.parametrize("beside", ["stream", "spins"])
def test_block_count_lanes_need_stamped_only(beside, capsys):
    assert "--stamped-only" in rejects(["--beside", beside, "--sizes", "128"], capsys)


@pytest.mark.parametrize("sizes,stamped_only", [("1024x", True), ("0", True), ("2x3x4", True),
                                                 ("1024x4096", False), ("big", False)])
def test_sizes_must_be_d_or_kxn_with_stamped_only(sizes, stamped_only, capsys):
    argv = ["--sizes", sizes] + (["--stamped-only"] if stamped_only else [])
    assert "--sizes" in rejects(argv, capsys)


def test_good_arguments_pass_with_their_sizes_read():
    args, elems = probe.parse_args(["--out", "o", "--stamped-only", "--beside", "spins",
                                    "--sizes", "66,128", "--add-elems", "4096,65536"])
    assert (args.beside, args.sizes, elems) == ("spins", "66,128", [4096, 65536])


@pytest.mark.parametrize("args", [["--sizes", "32"], ["--lanes", "1"], ["--sizes", "1k"]])
def test_gemm_lanes_l2_probe_refuses_bad_sizes_and_lanes_before_any_gpu_work(args):
    import gemm_lanes_l2_probe
    with pytest.raises(SystemExit) as e:
        gemm_lanes_l2_probe.parse_args(["--out", "x.json", *args])
    assert e.value.code == 2
    ok = gemm_lanes_l2_probe.parse_args(["--out", "x.json"])
    assert ok.sizes == [1024, 2048] and ok.lanes == [2, 4]


@pytest.mark.parametrize("args", [["--elems", "0"], ["--lanes", "2,4"], ["--elems", "4k"],
                                  ["--lanes", "1,0"]])
def test_elementwise_lanes_probe_refuses_bad_elems_and_lanes_before_any_gpu_work(args):
    import elementwise_lanes_probe
    with pytest.raises(SystemExit) as e:
        elementwise_lanes_probe.parse_args(["out.json", *args])
    assert e.value.code == 2
    ok = elementwise_lanes_probe.parse_args(["out.json", "--elems", "4096", "--lanes", "1,2"])
    assert (ok.elems, ok.lanes, ok.traces) == ([4096], [1, 2], "")


def test_lane_overlap_stamps_probe_takes_one_of_its_case_sets_before_any_gpu_work(capsys):
    import lane_overlap_stamps_probe as stamps
    with pytest.raises(SystemExit) as e:
        stamps.parse_args(["--out", "o.json", "--cases", "gemm"])
    assert e.value.code == 2 and "--cases" in capsys.readouterr().err
    args = stamps.parse_args(["--out", "o.json", "--cases", "elementwise", "--traces", "t"])
    assert (args.cases, args.traces, args.trials) == ("elementwise", "t", 9)
    assert stamps.parse_args(["--out", "o.json"]).cases == "beside-gemv"


@pytest.mark.parametrize("argv,names", [
    (["--walk", "heldout74:ky_four_lanes_of_tiny_adds_f32"], "--walk"),
    (["--case", "three_lanes_of_rmsnorm_fp16"], "--case"),
    (["--walk", "g:n:t", "--kinds", "empty,spin"], "--kinds"),
    ([], "--walk or a --case"),
])
def test_stand_in_lanes_probe_refuses_bad_arguments_before_any_gpu_work(argv, names, capsys):
    import stand_in_lanes_probe
    with pytest.raises(SystemExit) as stop:
        stand_in_lanes_probe.parse_args(["--out", "o.json", *argv])
    assert stop.value.code == 2
    assert names in capsys.readouterr().err


def test_stand_in_lanes_probe_reads_lanes_and_bytes_from_a_stored_trace():
    import stand_in_lanes_probe as probe
    trace = os.path.join(SCRIPTS, "..", "docs", "cross-device", "h100-heldout-74-da66077",
                         "heldout74", "ky_four_lanes_of_tiny_adds_f32.eager.json.gz")
    lanes, tail = probe.kernels_by_stream(probe.load(trace))
    # four lanes of twelve adds of 1 Ki f32 elements and the corner's sum, then the adds of
    # the four corners on the stream they were forked from
    assert [len(ks) for _, ks in lanes] == [13, 13, 13, 13]
    assert len(tail) == 4
    first = lanes[0][1][0]
    assert (first["grid"], first["block"], first["read"], first["write"]) == (
        (1, 1, 1), (128, 1, 1), 8192, 4096)
    args = probe.parse_args(["--out", "o", "--walk", f"heldout74:w:{trace}", "--kinds", "ew"])
    assert args.walk == [["heldout74", "w", trace]] and args.kinds == ["ew"]


@pytest.mark.parametrize("argv,named", [(["--elems", "0"], "--elems"),
                                        (["--trials", "-1"], "--trials"),
                                        (["--dtype", "int8"], "--dtype")])
def test_self_compare_probe_rejects_bad_sizes_and_types(argv, named, capsys):
    import self_compare_probe
    with pytest.raises(SystemExit) as stop:
        self_compare_probe.parse_args(["o.json", *argv])
    assert stop.value.code == 2
    assert named in capsys.readouterr().err
    assert self_compare_probe.parse_args(["o.json", "--elems", "64"]).elems == [64]
