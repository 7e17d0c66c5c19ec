"""The package's functions over the native library."""

import json
import os
import statistics
import tempfile
import time

from . import _native
from ._result import Price


def version():
    """The launch-econ library version inside this package."""
    return _native.version()


def profile(path=None):
    """The device profile at ``path`` (a ``launch-econ --export-json`` document), or the H200
    profile shipped with launch-econ, as a dict: ``profile``, ``device``, ``model_inputs``."""
    return json.loads(_native.profile(None if path is None else os.fspath(path)))


def price_trace(path, eager_step_ms=None, gpu=False, device=0, profile=None, max_time=None,
                trials=None, pdl=False, waits="join", gemms="auto", profiler_step="last",
                gemm_operands="fresh", export_trace=None, trace_device=None, stream=None,
                graph_step="auto"):
    """Prices the step recorded in ``path`` (Kineto JSON from ``torch.profiler`` or nsys CSV).

    With ``gpu=True`` the walk is replayed on CUDA device ``device``, eagerly and as one
    graph; otherwise the offline model over ``profile`` (default: the shipped H200 profile)
    prices it. ``eager_step_ms`` is your step timed without a profiler; without it the eager
    step comes from the trace's host side. ``waits``, ``gemms`` and ``gemm_operands`` are the
    CLI's ``--waits`` (``"join"``, ``"all"`` or ``"none"``), ``--gemms`` (``"auto"``, ``"real"`` or
    ``"stand-in"``) and ``--gemm-operands`` (``"fresh"`` or ``"recycled"``). Of a
    trace that marks several steps (``prof.step()``), ``profiler_step`` picks one: N of
    ``ProfilerStep#N``, ``"last"`` (default) or ``"all"`` (the whole trace). ``export_trace``:
    a path to write, as a Chrome trace to open in Perfetto, the recording and the replayed
    eager walk and graph (``gpu=True``) or where the offline model puts each node of the graph
    step (the CLI's ``--export-trace``). ``trace_device`` and ``stream`` keep only the
    operations recorded on that device or stream (``--trace-device``, ``--stream``): a graph
    runs on one device, so a trace of several is priced one device at a time. With ``gpu=True``
    ``graph_step`` is the CLI's ``--graph-step``: ``"auto"`` (default) and ``"mean"`` price the
    mean of the replayed graph and the offline model where the shipped profile (the H200's)
    or ``profile`` describes this GPU (``graph_replayed_ms`` and ``graph_model_ms`` hold the
    two), ``"replay"`` the replay alone.
    Ctrl-C during a replay raises ``KeyboardInterrupt``
    with what was measured in its ``partial`` attribute (and, where the replay stopped before
    its trace was recorded, a message that says none was written).
    """
    try:
        doc = _native.price_trace(
            os.fspath(path), eager_step_ms, gpu, device,
            None if profile is None else os.fspath(profile), max_time, trials, pdl, waits,
            gemms, str(profiler_step), gemm_operands,
            None if export_trace is None else os.fspath(export_trace), trace_device, stream,
            graph_step)
    except KeyboardInterrupt as e:
        if len(e.args) == 2 and isinstance(e.args[1], str):
            e.partial = Price(json.loads(e.args[1]))
        raise
    return Price(json.loads(doc))


def _median_ms(fn, sync, n, per_batch=10):
    """Median ms per call of ``fn`` over batches of ``per_batch`` back-to-back calls, each
    batch synchronized once (at least 3 batches, about ``n`` calls): the way the replay times
    its walks, so a real graph and its prediction are compared like for like (synchronizing
    every call would add the launch latency and the host's wake-up, ~10-20 us, to each)."""
    times = []
    for _ in range(max(3, -(-n // per_batch))):
        t = time.perf_counter()
        for _ in range(per_batch):
            fn()
        sync()
        times.append((time.perf_counter() - t) * 1e3 / per_batch)
    return statistics.median(times)


def price(step, warmup=3, validate=False, gpu=True, iters=20, max_time=None, waits="join",
          gemms="auto", gemm_operands="fresh", graph_step="auto"):
    """Prices ``step`` (a callable that runs one step on the current CUDA device).

    1. Runs ``step`` ``warmup`` times, then times ``iters`` steps without a profiler (the
       eager step: the median over batches of back-to-back steps, each batch synchronized).
    2. With ``validate``, captures the step with ``torch.cuda.CUDAGraph`` and times ``iters``
       replays the same way (before any profiler runs in the process, which would slow them).
    3. Records one step with ``torch.profiler`` (with shapes and, where supported, the waits
       between streams) and prices the trace with ``price_trace``
       (replayed on this GPU, or the offline model with ``gpu=False``; ``waits``, ``gemms``,
       ``gemm_operands`` and ``graph_step`` as there).

    Returns a ``Price``; with ``validate`` its ``real_graph_ms`` and ``real_saving_ms`` stand
    beside the prediction.
    """
    import torch

    if not torch.cuda.is_available():
        raise _native.LaunchEconError("price() needs a CUDA device visible to PyTorch")
    sync = torch.cuda.synchronize
    for _ in range(max(warmup, 1)):
        step()
    sync()
    eager_ms = _median_ms(step, sync, iters)
    real_graph_ms = None
    if validate:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        graph.replay()
        sync()
        real_graph_ms = _median_ms(graph.replay, sync, iters)
        del graph
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    # Shapes let the replay run a multi-stream step's GEMMs for real; CUDA sync events record
    # the waits between its streams (where this PyTorch has them).
    extra = {"record_shapes": True}
    try:
        extra["experimental_config"] = torch._C._profiler._ExperimentalConfig(
            enable_cuda_sync_events=True)
    except (AttributeError, TypeError):
        pass
    fd, path = tempfile.mkstemp(suffix=".json", prefix="launch_econ_step_")
    os.close(fd)
    try:
        with torch.profiler.profile(activities=acts, **extra) as prof:
            step()
            sync()
        prof.export_chrome_trace(path)
        result = price_trace(path, eager_step_ms=eager_ms, gpu=gpu,
                             device=torch.cuda.current_device(), max_time=max_time,
                             waits=waits, gemms=gemms, gemm_operands=gemm_operands,
                             graph_step=graph_step)
    finally:
        os.unlink(path)
    result.real_eager_ms = eager_ms
    result.real_graph_ms = real_graph_ms
    return result

