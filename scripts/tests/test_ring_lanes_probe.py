"""The ring probe's layouts, issued against a stand-in for torch that logs what each stream
is asked to do: no GPU, no PyTorch."""
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ring_lanes_probe as probe  # noqa: E402
from fake_cuda import Log, fake_cuda  # noqa: E402


def fake_torch(log):
    class Event:
        def record(self, stream):
            self.stream = stream.name

    class Tensor:
        def __mul__(self, _):
            log.calls.append((log.current, "kernel", "mul"))
            return Tensor()

        def __add__(self, _):
            log.calls.append((log.current, "kernel", "add"))
            return Tensor()

    cuda = fake_cuda(log, Event=Event)
    return types.SimpleNamespace(cuda=cuda, stack=lambda xs: xs), Tensor


def issued(layout, rounds=2):
    log = Log()
    torch, tensor = fake_torch(log)
    probe.ring_step(torch, [tensor() for _ in range(probe.LANES)], rounds, layout)()
    return log.calls


def test_ring_lanes_wait_on_the_lane_before_each_round_and_apart_lanes_do_not():
    ring, apart = issued("ring"), issued("apart")
    waits = [c for c in ring if c[1] == "wait_event"]
    # Two rounds of four lanes, each waiting on the lane before (s1 on s4, s2 on s1, ...).
    assert len(waits) == 2 * probe.LANES
    lane = {f"s{i + 1}": i for i in range(probe.LANES)}
    assert all(lane[w[2]] == (lane[w[0]] - 1) % probe.LANES for w in waits), waits
    assert not [c for c in apart if c[1] == "wait_event"]
    for calls in (ring, apart):
        kernels = [c for c in calls if c[1] == "kernel"]
        assert len(kernels) == 2 * 2 * probe.LANES
        assert len({c[0] for c in kernels}) == probe.LANES


def test_one_lane_runs_one_lane_and_serial_runs_every_lane_on_one_stream():
    one = [c for c in issued("one") if c[1] == "kernel"]
    assert len(one) == 2 * 2 and len({c[0] for c in one}) == 1
    serial = [c for c in issued("serial") if c[1] == "kernel"]
    assert len(serial) == 2 * 2 * probe.LANES and len({c[0] for c in serial}) == 1
