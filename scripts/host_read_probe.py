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
out, only = sys.argv[1], sys.argv[2]
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

for name, step in [("reads_mid_step", reads_mid_step), ("offloads", offloads)]:
    if name != only:
        continue
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            step()
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            step()
        captured = "captured"
    except Exception as e:
        captured = "capture failed: " + str(e).splitlines()[0][:160]
    torch.cuda.synchronize()
    print(name, captured)
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as p:
        step()
        torch.cuda.synchronize()
    p.export_chrome_trace(os.path.join(out, name + ".json"))
