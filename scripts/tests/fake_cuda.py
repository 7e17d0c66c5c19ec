"""A stand-in for `torch.cuda`'s streams for the probes' layout tests: streams named s1, s2,
… in the order made (the current one at first "main"), `torch.cuda.stream(s)` making `s`
current, and every wait on a stream logged as (stream, "wait_stream" or "wait_event",
the other stream's name). No GPU, no PyTorch."""
import contextlib
import types


class Log:
    """What the streams were asked to do (`calls`) and which stream is current."""
    def __init__(self):
        self.calls, self.current = [], "main"


def fake_cuda(log, **extra):
    """A `torch.cuda` namespace logging into `log` (a `Log`); `extra` joins it (`Event`)."""
    class Stream:
        count = 0

        def __init__(self):
            Stream.count += 1
            self.name = f"s{Stream.count}"

        def wait_stream(self, other):
            log.calls.append((self.name, "wait_stream", other.name))

        def wait_event(self, event):
            log.calls.append((self.name, "wait_event", event.stream))

    @contextlib.contextmanager
    def on(stream):
        before, log.current = log.current, stream.name
        yield
        log.current = before

    main = Stream()
    main.name, Stream.count = "main", 0
    return types.SimpleNamespace(Stream=Stream, stream=on, current_stream=lambda: main, **extra)
