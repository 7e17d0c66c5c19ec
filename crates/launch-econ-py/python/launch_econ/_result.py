"""The result of pricing a step: the prediction, the walk, the warnings, and how to show them."""

import html


class Price:
    """What capturing a step would save.

    Attributes (ms unless named otherwise): ``eager_ms`` and ``eager_source`` (``user``: your
    unprofiled step; ``trace``: the trace's host side; ``engine-floor``: the lean engine's own
    cost, a lower bound), ``graph_ms`` and ``graph_source`` (``replay`` on this GPU,
    ``model``, or ``replay-and-model``: the mean of the two, with ``graph_replayed_ms`` and
    ``graph_model_ms`` beside it; priced at the upper level of graph node cost),
    ``graph_quiet_ms`` (the same at
    the lower level: a lower bound; ``None`` where not measured), ``graph_serial_ms`` (the
    offline model with the step's streams one after another, for a step whose streams it runs
    side by side: the real step lies between; ``None`` otherwise), ``graph_streamed_floor_ms``
    (where the step's streams together hold more data than the whole L2 and that set the
    step: its kernels' recorded bytes at device memory's bandwidth, the least such lanes take;
    ``None`` otherwise), ``graph_independent_ms``
    (for a step of several streams whose trace records no waits between them, priced one after
    another: the offline model with them side by side, never waiting on each other, a lower
    bound; ``None`` otherwise), ``graph_unshared_ms`` (the
    offline model with every kernel at its recorded duration, where it let kernels side by side
    share the SMs: perfect overlap; ``None`` otherwise), ``kernels_waiting_for_room`` (how many
    kernels the offline model had wait for room beside a kernel whose blocks fill every SM;
    ``None`` where none did), ``graph_unknown_memory_ms`` (the part
    of ``graph_ms`` added for memory a trace without shapes does not say, half the larger
    per-node step; ``None`` where nothing was added), ``saving_ms`` (not positive:
    no saving), ``saving_quiet_ms`` (the saving at the lower level; ``None`` where not
    measured), ``build_ms``, ``break_even_steps``
    (``None`` without a saving), ``graph_error_ms`` (how far the graph step may be off, what
    the H200 validation walks of its kind came within: on one stream 10% of it from the replay,
    10% from the model and 6% from their mean, with streams side by side 41%, 39% and 35%; the
    saving carries the same), ``profiler_readings`` (for an eager step from the trace: what it read the
    profiler's cost from, a dict of ``per_event_us`` outside each event from
    ``per_event_samples`` operators that only call operators, or where there are none from
    as many gaps between operators (``per_event_from``: ``wrapper-operators`` or
    ``gaps-between-operators``, which reads high), ``inside_op_us`` inside each
    operator from ``inside_op_samples`` views, ``operators``, ``launch_calls``,
    ``stored_accuracy`` (how the stored H200 validation walks of as many launch calls came
    out: ``launch_calls_from``, ``launch_calls_below`` (``None``: no end), ``walks``,
    ``within_25``, ``median_abs_error_pct``), ``basis``: ``read``,
    ``rough`` (fewer than ten of either), ``missing`` (none of one: not taken out) or
    ``no-operators``, and for a trace with no operators ``launch_interval_us``, the interval
    its launch calls were read at (the lower tenth of ``launch_interval_samples`` intervals
    between them; ``None`` where none was read); ``None`` otherwise),
    ``branches`` (whether the walk runs streams side by side), ``kernels``, ``copies``, ``memsets``, ``recorded_gpu_ms``,
    ``warnings``, ``partial`` (interrupted), ``device`` (name), ``step`` (which step the
    profiler marked, ``ProfilerStep#N``, was priced, in words; ``None`` for a trace that marks
    none), and after ``price(...,
    validate=True)`` ``real_eager_ms``, ``real_graph_ms`` and ``real_saving_ms``.
    ``document`` is the full result document (the CLI's JSON export).
    """

    def __init__(self, document):
        self.document = document
        r = document["result"]
        p = r["prediction"]
        s = r["trace"]["summary"]
        self.eager_ms = p["eager_step_ms"]
        self.eager_source = p["eager_source"]
        self.graph_ms = p["graph_step_ms"]
        self.graph_source = p["graph_source"]
        self.graph_quiet_ms = p.get("graph_step_quiet_ms")
        self.graph_serial_ms = p.get("graph_step_serial_ms")
        self.graph_streamed_floor_ms = p.get("graph_step_streamed_floor_ms")
        self.graph_replayed_ms = p.get("graph_step_replayed_ms")
        self.graph_model_ms = p.get("graph_step_model_ms")
        self.graph_independent_ms = p.get("graph_step_independent_ms")
        self.graph_unshared_ms = p.get("graph_step_unshared_ms")
        self.kernels_waiting_for_room = p.get("kernels_waiting_for_room")
        self.graph_unknown_memory_ms = p.get("graph_step_unknown_memory_ms")
        self.saving_ms = p["saving_ms"]
        self.saving_quiet_ms = p.get("saving_quiet_ms")
        self.graph_error_ms = p.get("graph_step_error_ms")
        self.branches = bool(p.get("branches", False))
        self.profiler_readings = p.get("profiler_readings")
        self.build_ms = p["build_ms"]
        self.break_even_steps = p["break_even_steps"]
        self.kernels = s["kernels"]
        self.copies = s["copies"]
        self.memsets = s["memsets"]
        self.recorded_gpu_ms = (s["kernel_gpu_ns"] + s["copy_gpu_ns"]) / 1e6
        self.step = r["trace"].get("steps")
        self.warnings = list(document.get("warnings", []))
        self.partial = bool(document.get("partial", False))
        dev = document.get("device") or {}
        self.device = dev.get("name")
        self.real_eager_ms = None
        self.real_graph_ms = None

    @property
    def real_saving_ms(self):
        """The measured saving, after ``price(..., validate=True)``."""
        if self.real_eager_ms is None or self.real_graph_ms is None:
            return None
        return self.real_eager_ms - self.real_graph_ms

    def to_dict(self):
        """The figures as a plain dict (the full document is ``self.document``)."""
        keys = ["eager_ms", "eager_source", "graph_ms", "graph_source", "graph_quiet_ms",
                "graph_serial_ms", "graph_streamed_floor_ms", "graph_replayed_ms", "graph_model_ms",
                "graph_independent_ms", "graph_unshared_ms",
                "kernels_waiting_for_room",
                "graph_unknown_memory_ms", "saving_ms",
                "saving_quiet_ms", "build_ms", "break_even_steps", "graph_error_ms",
                "profiler_readings", "kernels",
                "copies", "memsets", "recorded_gpu_ms", "step", "warnings", "partial", "device",
                "real_eager_ms", "real_graph_ms", "real_saving_ms"]
        return {k: getattr(self, k) for k in keys}

    def _rows(self):
        saving = (f"{self.saving_ms:.4f} ms" if self.saving_ms > 0 else "no saving")
        even = ("never" if self.break_even_steps is None
                else f"{self.break_even_steps:.1f} steps")
        rows = [
            ("eager step", f"{self.eager_ms:.4f} ms", _EAGER.get(self.eager_source, "")),
        ]
        r = self.profiler_readings
        if r and r["basis"] != "no-operators":
            note = {"missing": ": none of one kind, not taken out (estimate high)",
                    "rough": ": few, may be far off"}.get(r["basis"], "")
            rows.append(("  profiler cost",
                         f"{r['per_event_us']:.2f}+{r['inside_op_us']:.2f} us",
                         f"an event outside + inside, read from {r['per_event_samples']}"
                         f" {_OUTSIDE_FROM.get(r.get('per_event_from'), 'operators')}"
                         f" and {r['inside_op_samples']} views{note}"))
        if r and r["basis"] == "no-operators" and r.get("launch_interval_us") is not None:
            rows.append(("  launch cadence", f"{r['launch_interval_us']:.2f} us",
                         f"no operators recorded: the step read as its {r['launch_calls']}"
                         f" launch calls that far apart, the lower tenth of"
                         f" {r['launch_interval_samples']} intervals"))
        a = r.get("stored_accuracy") if r else None
        if a:
            rows.append(("  as traces of", f"{r['launch_calls']} launches",
                         f"the stored walks of {_launch_range(a)} launch calls came within 25%"
                         f" on {a['within_25']} of {a['walks']}, a median error of"
                         f" {a['median_abs_error_pct']}%"))
        rows.append(("graph step", f"{self.graph_ms:.4f} ms", _GRAPH.get(self.graph_source, "")))
        # The graph step's other readings, each where the price has it.
        for label, value, unit, note in (
                ("  lower level", self.graph_quiet_ms, "ms",
                 "graph nodes at the lower of their two costs: a lower bound"),
                ("  replayed", self.graph_replayed_ms, "ms",
                 "the walk replayed as a graph on this GPU"),
                ("  offline model", self.graph_model_ms, "ms",
                 "the offline model over this GPU's profile"),
                ("  streams in series", self.graph_serial_ms, "ms",
                 "the streams one after another: the step lies between"),
                ("  past the L2", self.graph_streamed_floor_ms, "ms",
                 "the streams' data pass the L2: their bytes from device memory, the least"),
                ("  streams unordered", self.graph_independent_ms, "ms",
                 "no waits recorded: the streams never waiting on each other, a lower bound"),
                ("  unshared", self.graph_unshared_ms, "ms",
                 "every kernel at its recorded duration, streams overlapping"),
                ("  waiting for room", self.kernels_waiting_for_room, "kernels",
                 "beside kernels whose blocks fill every SM")):
            if value is not None:
                shown = f"{value:.4f} ms" if unit == "ms" else f"{value} kernels"
                rows.append((label, shown, note))
        rows.append(("saving", saving, "per step"))
        err = self.graph_error_ms
        # As the CLI does: where the graph step's error is a tenth of the saving or more.
        if err and self.saving_ms > 0 and err >= 0.1 * self.saving_ms:
            rows.append(("  small saving", f"±{err:.4f} ms",
                         f"the graph step's validated error: {100 * err / self.saving_ms:.0f}%"
                         " of the saving"))
        # As the CLI does: a graph step longer by less than its error may still save.
        if err and self.saving_ms <= 0 and err > -self.saving_ms:
            rows.append(("  may save", f"up to {err + self.saving_ms:.4f} ms",
                         "the graph step is longer by less than its validated error"))
        q = self.saving_quiet_ms
        # As the CLI does: only where it differs from the priced saving by 5% or more.
        if q is not None and q > 0 and abs(q - self.saving_ms) >= 0.05 * abs(self.saving_ms):
            rows.append(("  lower level", f"{q:.4f} ms",
                         "the saving with graph nodes at the lower level"))
        rows += [
            ("build", f"{self.build_ms:.3f} ms", "capture + instantiate + upload"),
            ("break-even", even, "steps of replay that pay back the build"),
        ]
        if self.real_graph_ms is not None:
            rows.append(("real graph step", f"{self.real_graph_ms:.4f} ms",
                         "torch.cuda.CUDAGraph replay, measured"))
            rows.append(("real saving", f"{self.real_saving_ms:.4f} ms", "measured"))
        return rows

    def __repr__(self):
        head = (f"launch_econ.Price: {self.kernels} kernels, {self.copies} copies, "
                f"{self.memsets} memsets; recorded GPU {self.recorded_gpu_ms:.4f} ms"
                + ((f" on {self.device}" if self.graph_source != "model"
                    else f"; model of {self.device}") if self.device else "")
                + (" (partial)" if self.partial else ""))
        lines = [head] + [f"  {a:<16} {b:>14}  {c}" for a, b, c in self._rows()]
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def _repr_html_(self):
        cells = "".join(
            f"<tr><td>{html.escape(a)}</td><td style='text-align:right'>{html.escape(b)}</td>"
            f"<td>{html.escape(c)}</td></tr>" for a, b, c in self._rows())
        warn = "".join(f"<li>{html.escape(w)}</li>" for w in self.warnings)
        return (f"<div><b>{html.escape(repr(self).splitlines()[0])}</b>"
                f"<table>{cells}</table>{self.timeline_svg()}"
                + (f"<ul>{warn}</ul>" if warn else "") + "</div>")

    def timeline_svg(self, width=480):
        """One step eager and as a graph, drawn to scale, and the build beside them (SVG)."""
        bars = [("eager", self.eager_ms, "#d9822b"), ("graph", self.graph_ms, "#2b7bd9")]
        if self.real_graph_ms is not None:
            bars.append(("real graph", self.real_graph_ms, "#2bb37b"))
        bars.append(("build", self.build_ms, "#999999"))
        top = max(v for _, v, _ in bars) or 1.0
        h, label = 22, 80
        out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' "
               f"height='{h * len(bars) + 6}' font-family='sans-serif' font-size='12'>"]
        for i, (name, v, color) in enumerate(bars):
            w = (width - label - 90) * v / top
            y = 3 + i * h
            out.append(f"<text x='0' y='{y + 14}'>{name}</text>")
            out.append(f"<rect x='{label}' y='{y + 2}' width='{w:.1f}' height='{h - 6}' "
                       f"fill='{color}'/>")
            out.append(f"<text x='{label + w + 4:.1f}' y='{y + 14}'>{v:.3f} ms</text>")
        out.append("</svg>")
        return "".join(out)


_EAGER = {
    "user": "your step, timed without a profiler",
    "trace": "the trace's host side, less the profiler's inflation",
    "engine-floor": "the lean engine's own cost: a lower bound",
}
def _launch_range(a):
    """A launch class's range in words, as the report writes it: `50 to 199`."""
    lo, below = a["launch_calls_from"], a["launch_calls_below"]
    if below is None:
        return f"{lo} or more"
    return f"fewer than {below}" if lo == 0 else f"{lo} to {below - 1}"


# Where the profiler's cost outside each event was read (`per_event_from`).
_OUTSIDE_FROM = {
    "wrapper-operators": "operators",
    "gaps-between-operators": "gaps between operators (reads high)",
}
_GRAPH = {
    "replay": "the walk replayed as a graph on this GPU",
    "model": "the offline model over the device profile",
    "replay-and-model": "the mean of the replayed graph and the offline model",
}
