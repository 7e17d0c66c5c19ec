"""Real PyTorch graphs of small-kernel lanes (24 f32 multiplies over 64 Ki floats) on the capture
stream, forked onto one side stream, and forked onto two, timed unprofiled in a process that first
took N streams from PyTorch's pool and ran a kernel on each: does the real graph move with the
process's stream history as the replay does with --prior-streams?"""
import json, sys, torch
n = int(sys.argv[1])
prior = []
for _ in range(n):
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.ones(1, device="cuda").add_(1)
    s.synchronize()
    prior.append(s)

def lane():
    x = torch.randn(64 * 1024, device="cuda")
    def run():
        y = x
        for _ in range(24):
            y = y * 1.0001
        return y
    return run

def forked(k):
    lanes = [lane() for _ in range(k)]
    streams = [torch.cuda.Stream() for _ in range(k)]
    def run():
        main = torch.cuda.current_stream()
        outs = []
        for s, l in zip(streams, lanes):
            s.wait_stream(main)
            with torch.cuda.stream(s):
                outs.append(l())
        for s in streams:
            main.wait_stream(s)
        return sum(o[:1] for o in outs)
    return run

walks = {"unforked": lane(), "forked1": forked(1), "forked2": forked(2)}
graphs = {}
for name, step in walks.items():
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    graphs[name] = g
torch.cuda.synchronize()

def time(g, reps=20):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    g.replay(); torch.cuda.synchronize()
    a.record()
    for _ in range(reps):
        g.replay()
    b.record(); b.synchronize()
    return a.elapsed_time(b) / reps * 1000

def medians(batches):
    got = {k: [] for k in graphs}
    for i in range(batches):
        for k in list(graphs)[i % 3:] + list(graphs)[:i % 3]:
            got[k].append(time(graphs[k]))
    return {k: sorted(v)[len(v) // 2] for k, v in got.items()}

fresh = medians(15)
other = torch.cuda.Stream()
with torch.cuda.stream(other):
    t = torch.ones(1, device="cuda")
    for _ in range(32):
        t.add_(1)
torch.cuda.synchronize()
upper = medians(7)
print(json.dumps({"prior": n, "fresh_us": fresh, "after_other_stream_us": upper}))
