#!/usr/bin/env python3
"""Which kernels a real graph ran longer than its eager recording, and beside what.

`scripts/validate.py` records each walk twice with torch.profiler: one eager step
(WALK.eager.json) and one replay of its CUDA graph (WALK.graph.json). In the eager recording
the profiled launches keep the streams apart; in the graph the streams' kernels run side by
side and slow each other. This lists, per kernel of the graph, its recorded and in-graph
durations and how much of it overlapped kernels of other streams, then the stretch summed by
kernel name: where a multi-stream walk's real graph time went, to read beside `launch-econ
replay --export-trace`'s replayed graph. A graph kernel is matched to the recorded kernel of
its name, in order, on the recorded stream whose kernels its stream's are most alike (a
graph runs its branches on streams of its own); copies and memsets, which a graph may run as
driver kernels, are left out.

    python3 scripts/graph_stretch.py DIR/WALK            (reads DIR/WALK.eager.json and .graph.json)
    python3 scripts/graph_stretch.py EAGER.json GRAPH.json [--min-us 2]

Needs only the traces (no GPU, no PyTorch).
"""
import argparse
import json
import re
import signal
import sys
from collections import Counter, defaultdict


# A graph runs copy and memset nodes as driver kernels (`memcpy128`, `memcpy32_post`,
# `memset32`) where the eager step ran them on a copy engine: not kernels of the walk here.
DRIVER_KERNEL = re.compile(r"^(memcpy|memset)\d+(_post)?$")


def kernels(path):
    """The trace's kernels as (name, stream, start µs, duration µs), by start."""
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    out = [(e["name"], e.get("args", {}).get("stream"), float(e["ts"]), float(e["dur"]))
           for e in events if e.get("cat") == "kernel" and e.get("ph") == "X"
           and not DRIVER_KERNEL.match(e["name"])]
    return sorted(out, key=lambda k: k[2])


def overlap_us(k, others):
    """How long kernel `k` ran beside kernels of other streams (overlaps counted once)."""
    _, stream, start, dur = k
    end = start + dur
    spans = sorted((max(start, s), min(end, s + d)) for _, st, s, d in others
                   if st != stream and s < end and s + d > start)
    covered, reach = 0.0, start
    for a, b in spans:
        if b > reach:
            covered += b - max(a, reach)
            reach = b
    return covered


def match(eager, graph):
    """For each graph kernel, the duration of the recorded kernel it runs (`None`: none left).
    Each graph stream is paired with the unpaired recorded stream whose kernel names overlap
    its own most; within a pair kernels match by name in order, the rest by name in order
    over the whole recording."""
    def by_stream(ks):
        out = defaultdict(list)
        for i, k in enumerate(ks):
            out[k[1]].append(i)
        return out
    e_streams, g_streams = by_stream(eager), by_stream(graph)
    used = [False] * len(eager)
    paired = {}
    free = set(e_streams)
    for g in sorted(g_streams, key=lambda s: -len(g_streams[s])):
        names = Counter(graph[i][0] for i in g_streams[g])
        best = max(free, default=None, key=lambda e: (
            sum((names & Counter(eager[i][0] for i in e_streams[e])).values()),
            -abs(len(e_streams[e]) - len(g_streams[g]))))
        if best is not None:
            paired[g] = best
            free.discard(best)
    queues = {}
    for g, e in paired.items():
        q = defaultdict(list)
        for i in e_streams[e]:
            q[eager[i][0]].append(i)
        queues[g] = q
    out = []
    for name, stream, _, _ in graph:
        q = queues.get(stream, {}).get(name, [])
        while q and used[q[0]]:
            q.pop(0)
        if not q:
            q = [i for i, k in enumerate(eager) if k[0] == name and not used[i]][:1]
        if q:
            i = q.pop(0)
            used[i] = True
            out.append(eager[i][3])
        else:
            out.append(None)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+", help="DIR/WALK, or EAGER.json GRAPH.json")
    ap.add_argument("--min-us", type=float, default=2.0,
                    help="list kernels recorded at least this long (default 2 µs)")
    args = ap.parse_args()
    if len(args.traces) == 1:
        eager_path, graph_path = args.traces[0] + ".eager.json", args.traces[0] + ".graph.json"
    elif len(args.traces) == 2:
        eager_path, graph_path = args.traces
    else:
        ap.error("give DIR/WALK or EAGER.json GRAPH.json")
    try:
        eager, graph = kernels(eager_path), kernels(graph_path)
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"error: cannot read the traces: {e}")
    pairs = match(eager, graph)
    by_name = defaultdict(lambda: [0, 0.0, 0.0])
    unmatched = 0
    print(f"{'stream':>7} {'recorded':>9} {'graph':>9} {'beside':>7}  kernel (µs; beside: "
          "share of its graph time other streams' kernels ran too)")
    for k, rec in zip(graph, pairs):
        name, stream, _, dur = k
        if rec is None:
            unmatched += 1
            continue
        row = by_name[name]
        row[0] += 1
        row[1] += rec
        row[2] += dur
        if rec >= args.min_us:
            beside = overlap_us(k, graph) / dur if dur > 0 else 0.0
            print(f"{str(stream):>7} {rec:9.2f} {dur:9.2f} {beside:7.0%}  {name[:90]}")
    print(f"\n{'count':>5} {'recorded':>10} {'graph':>10} {'stretch':>8}  kernel (sums, µs)")
    for name, (n, rec, dur) in sorted(by_name.items(), key=lambda kv: kv[1][1] - kv[1][2]):
        print(f"{n:5d} {rec:10.1f} {dur:10.1f} {dur / rec if rec else float('nan'):7.2f}x  "
              f"{name[:90]}")
    total_rec = sum(r[1] for r in by_name.values())
    total_graph = sum(r[2] for r in by_name.values())
    print(f"\nkernel time: recorded {total_rec:.1f} µs, in the graph {total_graph:.1f} µs "
          f"({total_graph / total_rec if total_rec else float('nan'):.2f}x)")
    if unmatched:
        print(f"{unmatched} graph kernels had no recorded kernel of their name left to match "
              "(the graph ran another walk: see validate.py's 'same walk' column)")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    main()
