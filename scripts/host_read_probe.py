"""Two small steps recorded by torch.profiler: one whose host reads a value mid-step (.item():
a device-to-host copy and a synchronize between launches), one that offloads into page-locked
memory without waiting. Writes the named step's trace to DIR and says whether it can be captured
(one process per step: a failed capture leaves the process's CUDA state unusable).

    python3 scripts/host_read_probe.py DIR reads_mid_step   # then: launch-econ replay DIR/reads_mid_step.json --summary
    python3 scripts/host_read_probe.py DIR offloads
"""
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture  # noqa: E402

out, name = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
x = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
w = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
host = torch.empty(256, 256, dtype=torch.bfloat16).pin_memory()

def reads_mid_step():
    a = torch.relu(x @ w)
    if a.amax().item() > 0:          # the host reads the GPU's value before launching more
        a = a * 0.5
    return torch.tanh(a @ w)

def offloads():
    a = torch.relu(x @ w)
    host.copy_(a, non_blocking=True)  # nothing waits on it inside the step
    return torch.tanh(a @ w)

step = {"reads_mid_step": reads_mid_step, "offloads": offloads}[name]
for _ in range(3):
    step()
torch.cuda.synchronize()
try:
    graph, kept = capture(step, warmups=1)
    captured = "captured"
except Exception as e:
    captured = "capture failed: " + str(e).splitlines()[0][:160]
torch.cuda.synchronize()
print(name, captured)
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as p:
    step()
    torch.cuda.synchronize()
p.export_chrome_trace(os.path.join(out, name + ".json"))
