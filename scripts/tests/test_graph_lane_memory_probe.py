"""The lanes probe's broadcast layouts, issued against a stand-in for torch that logs which
kernel each stream runs: no GPU, no PyTorch."""
import contextlib
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import graph_lane_memory_probe as probe  # noqa: E402
from fake_cuda import Log, fake_cuda  # noqa: E402


class Tensor:
    def __init__(self, row=False, transposed=False):
        self.row = row
        self.transposed = transposed

    @property
    def T(self):
        return Tensor(transposed=True)

    def reshape(self, *_):
        return self

    def __getitem__(self, _):
        return self

    def __add__(self, _):
        return self

    __radd__ = __add__


def fake_torch(log):
    def add(a, b, out):
        kind = ("row" if getattr(b, "row", False)
                else "transposed" if getattr(b, "transposed", False) else "scalar")
        log.calls.append((log.current, "kernel", kind))
        return out

    return types.SimpleNamespace(cuda=fake_cuda(log), add=add, no_grad=contextlib.nullcontext)


def kernels_by_stream(lanes, layout, kernels=3):
    log = Log()
    torch = fake_torch(log)
    mats = [[Tensor(), Tensor()] for _ in range(lanes)]
    rows = [Tensor(row=True) for _ in range(lanes)]
    steps = probe.broadcast_layouts(torch, lanes, kernels, mats, rows)
    steps[f"{lanes}_lanes_{layout}"]()
    by = {}
    for stream, call, kind in log.calls:
        if call == "kernel":
            by.setdefault(stream, []).append(kind)
    assert "main" not in by, by
    return sorted(by.values())


def test_one_lane_has_no_mixed_layout():
    steps = probe.broadcast_layouts(fake_torch(Log()), 1, 2, [[Tensor(), Tensor()]],
                                    [Tensor(row=True)])
    assert sorted(steps) == ["1_lanes_row_adds", "1_lanes_scalar_adds"]


def test_each_lane_runs_its_chain_on_a_stream_of_its_own():
    assert kernels_by_stream(2, "row_adds") == [["row"] * 3] * 2
    assert kernels_by_stream(2, "scalar_adds") == [["scalar"] * 3] * 2


def test_the_mixed_layout_runs_half_the_lanes_strided_and_half_contiguous():
    assert kernels_by_stream(4, "row_beside_scalar_adds") == [["row"] * 3] * 2 + [["scalar"] * 3] * 2


def test_transposed_lanes_read_a_transpose_and_square_lanes_read_two_matrices():
    log = Log()
    torch = fake_torch(log)
    squares = [[Tensor(), Tensor(), Tensor()] for _ in range(2)]
    steps = probe.transposed_layouts(torch, 2, 3, squares)
    assert sorted(steps) == ["2_lanes_square_adds", "2_lanes_transposed_adds"]
    for name, kind in [("2_lanes_transposed_adds", "transposed"),
                       ("2_lanes_square_adds", "scalar")]:
        log.calls.clear()
        steps[name]()
        by = {}
        for stream, call, k in log.calls:
            if call == "kernel":
                by.setdefault(stream, []).append(k)
        assert "main" not in by, by
        assert sorted(by.values()) == [[kind] * 3] * 2
