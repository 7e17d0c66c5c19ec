"""Price what capturing a PyTorch step into a CUDA graph saves, before building it.

    import launch_econ
    r = launch_econ.price(step)          # step: a function that runs one step on the GPU
    print(r)                             # eager, predicted graph, saving, build, break-even

``price`` times the step unprofiled, records one step with ``torch.profiler`` and prices it
with the launch-econ library (a replay on the current GPU, or the offline model with
``gpu=False``); ``validate=True`` also captures it with ``torch.cuda.CUDAGraph`` and reports
the real graph step beside the prediction. ``price_trace`` prices a trace already on disk,
``profile`` loads a device profile. Errors are ``ValueError`` for bad input and
``LaunchEconError`` for failures while measuring, with the CLI's messages.
"""

from ._native import LaunchEconError
from ._result import Price
from ._api import price, price_trace, profile, version

__all__ = ["price", "price_trace", "profile", "version", "Price", "LaunchEconError"]
