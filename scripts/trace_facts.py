"""What a validation run reads of its Kineto traces: the kernels, copies and memsets each
recording ran, whether the graph replay ran the work the eager step recorded, and how the
graph's nodes were spaced. Used by `validate.py` (each walk's record) and `validate_all.py`
(a stored run's walks checked again)."""
import json
import re
import statistics


def trace_events(path):
    """The events of a Kineto trace."""
    with open(path) as f:
        return json.load(f).get("traceEvents", [])


def kernels_of(events):
    """(name, start us, duration us, stream) of every kernel of a trace's events, in start
    order."""
    ks = [(e["name"], float(e["ts"]), float(e.get("dur", 0)), e.get("args", {}).get("stream"))
          for e in events if e.get("cat") == "kernel" and e.get("ph") == "X"]
    return sorted(ks, key=lambda k: k[1])


def work_of(events):
    """(what, start us) of every kernel, copy and memset of a trace's events, in start order:
    a kernel by its name, a copy as "copy" and a memset as "memset" whichever way it ran. A
    graph's copy and memset nodes can run as kernels of the driver's (`memcpy32_post`,
    `memcpy128`, `memset32`) where the eager step's ran on the copy engine."""
    out = []
    for e in events:
        cat, name = e.get("cat"), e.get("name", "")
        if e.get("ph") != "X":
            continue
        if cat == "gpu_memcpy" or (cat == "kernel" and re.fullmatch(r"memcpy\d*(_post)?", name)):
            what = "copy"
        elif cat == "gpu_memset" or (cat == "kernel" and re.fullmatch(r"memset\d*", name)):
            what = "memset"
        elif cat == "kernel":
            what = name
        else:
            continue
        out.append((what, float(e["ts"]), e.get("args", {}).get("stream")))
    return sorted(out, key=lambda k: k[1])


def same_walk(eager, graph):
    """Do two recordings ([`work_of`]) run the same kernels, copies and memsets? In order where
    the eager step ran on one stream; as a multiset where it ran on several, whose work
    interleaves differently in a graph, and whose join lands on one of the graph's branch
    streams, not the one it was issued on."""
    if len({k[2] for k in eager}) == 1:
        return [k[0] for k in eager] == [k[0] for k in graph]
    return sorted(k[0] for k in eager) == sorted(k[0] for k in graph)


def graph_facts(eager_path, graph_path):
    """Does the graph replay run the recorded kernels, and how are its nodes spaced?"""
    ee, ge = trace_events(eager_path), trace_events(graph_path)
    ek, gk = kernels_of(ee), kernels_of(ge)
    gaps = [b[1] - (a[1] + a[2]) for a, b in zip(gk, gk[1:])]
    return {
        "graph_kernels": len(gk),
        "same_walk": same_walk(work_of(ee), work_of(ge)),
        "eager_kernel_sum_ms": sum(k[2] for k in ek) / 1e3,
        "graph_kernel_sum_ms": sum(k[2] for k in gk) / 1e3,
        "graph_gap_median_us": statistics.median(gaps) if gaps else None,
    }
