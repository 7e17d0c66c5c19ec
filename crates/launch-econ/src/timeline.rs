//! The replayed walks as a Chrome trace (`replay --export-trace`), to open in Perfetto or
//! `chrome://tracing` beside the recording: one process for the recording as read, one for
//! the replayed eager walk and one for the replayed graph, a thread per stream. With
//! `--summary`, the recording and the offline model's graph step
//! ([`chrome_trace_offline`]).
//!
//! Replayed times are the GPU's own: each timed stand-in stamps its start and end from
//! `%globaltimer` (the first block's start, the last block's end), so the trace shows the
//! stand-ins and the gaps between them as they ran, without a profiler. Ops that stamp
//! nothing (the empty kernel, copies, memsets, GEMMs run for real) are placed in the gap they
//! left on their stream — those that lead a stream, before its first stamp, back to back at
//! their recorded durations up to it — and marked `"timing": "inferred"`.

use serde_json::{json, Value};

use crate::trace::Walk;

/// One replayed walk: each op's lane and (start, end) on the GPU clock, ns, in walk order.
pub type Stamps = Vec<(usize, Option<(u64, u64)>)>;

/// The last replayed eager walk and graph replay of a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Timeline {
    pub eager: Stamps,
    pub graph: Stamps,
    /// The recorded stream of each lane (`None`: the walk ran serialised on one lane).
    pub lane_streams: Vec<Option<u64>>,
}

fn lane_name(streams: &[Option<u64>], lane: usize) -> String {
    match streams.get(lane).copied().flatten() {
        Some(s) => format!("stream {s}"),
        None => "one stream (recorded streams serialised)".into(),
    }
}

/// `stamps` with every start that lies before the start of an earlier op of its lane moved
/// to the latest end before it on that lane, and which were moved. Ops on one stream start in
/// order, so such a start is stale: a multi-block stand-in's first block stamps the start and
/// its last block clears it, and before the engine made the clear wait for the stamp
/// (`grid_span_end` in `spin.cu`) a stamp beside other streams' kernels now and then landed
/// after the clear and became the next launch's start. Its end is its own.
fn clamp_stale_starts(stamps: &Stamps) -> (Stamps, Vec<bool>) {
    let mut out = stamps.clone();
    let mut stale = vec![false; stamps.len()];
    // Per lane: the latest start and the latest end stamped so far.
    let mut last: std::collections::HashMap<usize, (u64, u64)> = Default::default();
    for (i, (lane, s)) in out.iter_mut().enumerate() {
        let Some((a, b)) = s else { continue };
        if let Some(&(start, end)) = last.get(lane) {
            if *a < start {
                *a = end.min(*b);
                stale[i] = true;
            }
        }
        let e = last.entry(*lane).or_insert((*a, *b));
        *e = (e.0.max(*a), e.1.max(*b));
    }
    (out, stale)
}

/// Each op's lane and (start, end) in ns after `origin`, as `f64`. The GPU clock counts ns
/// since the epoch (~1.8e18): an `f64` holds such a value only to the nearest 256 ns, so
/// stamps are made relative while they are still integers.
type RelativeStamps = Vec<(usize, Option<(f64, f64)>)>;

fn relative(stamps: &Stamps, origin: u64) -> RelativeStamps {
    let rel = |t: u64| (i128::from(t) - i128::from(origin)) as f64;
    stamps
        .iter()
        .map(|&(lane, s)| (lane, s.map(|(a, b)| (rel(a), rel(b)))))
        .collect()
}

/// Where the unstamped ops that lead each lane (before its first stamp) start, ns after the
/// stamps' origin: back to back at their recorded durations, the last ending where the lane's
/// first stamped op starts. Nothing stamps them (a GEMM run for real often leads a lane), and
/// laid forward from that stamp they would have no room. `None` for every other op.
fn leading_starts(
    walk: &Walk,
    stamps: &RelativeStamps,
    by_lane: &[Vec<usize>],
) -> Vec<Option<f64>> {
    let mut out = vec![None; stamps.len()];
    for idx in by_lane {
        let Some(first) = idx.iter().position(|&i| stamps[i].1.is_some()) else {
            continue;
        };
        let mut t = stamps[idx[first]].1.map_or(0.0, |(a, _)| a);
        for &i in idx[..first].iter().rev() {
            t -= walk.ops[i].duration_ns.max(0.0);
            out[i] = Some(t);
        }
    }
    out
}

/// Complete events of one replayed walk under process `pid`, times relative to its first
/// op, µs.
fn replayed(walk: &Walk, stamps: &Stamps, pid: u32, streams: &[Option<u64>]) -> Vec<Value> {
    let (stamps, stale) = &clamp_stale_starts(stamps);
    // Each lane's ops, in walk order.
    let lanes = stamps.iter().map(|(l, _)| l + 1).max().unwrap_or(0);
    let mut by_lane = vec![Vec::new(); lanes];
    for (i, (lane, _)) in stamps.iter().enumerate() {
        by_lane[*lane].push(i);
    }
    let origin = stamps
        .iter()
        .filter_map(|(_, s)| s.map(|(a, _)| a))
        .min()
        .unwrap_or(0);
    let stamps = &relative(stamps, origin);
    let leading = leading_starts(walk, stamps, &by_lane);
    let base = leading.iter().flatten().copied().fold(0.0, f64::min);
    let rel = |t: f64| (t - base) / 1e3;
    let mut out = Vec::new();
    for (lane, idx) in by_lane.iter().enumerate() {
        let mut prev_end = 0.0;
        for (k, &i) in idx.iter().enumerate() {
            let op = &walk.ops[i];
            let recorded_us = op.duration_ns / 1e3;
            let (ts, dur, timing) = match (stamps[i].1, leading[i]) {
                (Some((a, b)), _) => {
                    let (a, b) = (rel(a), rel(b));
                    let timing = if stale[i] {
                        "end stamped, start clamped"
                    } else {
                        "stamped"
                    };
                    (a, b - a, timing)
                }
                (None, Some(start)) => (rel(start), recorded_us.max(0.0), "inferred"),
                (None, None) => {
                    let next = idx[k + 1..]
                        .iter()
                        .find_map(|&j| stamps[j].1.map(|(a, _)| rel(a)));
                    let room = next.map_or(recorded_us, |n| (n - prev_end).max(0.0));
                    (prev_end, room.min(recorded_us), "inferred")
                }
            };
            prev_end = ts + dur;
            out.push(json!({
                "ph": "X", "pid": pid, "tid": lane, "name": op.name,
                "ts": ts, "dur": dur,
                "args": {"recorded_dur_us": recorded_us, "timing": timing},
            }));
        }
        out.push(
            json!({"ph": "M", "pid": pid, "tid": lane, "name": "thread_name",
                        "args": {"name": lane_name(streams, lane)}}),
        );
    }
    out
}

/// The recording as read, as process 0: a thread per recorded stream, times from its first
/// op, µs.
fn recorded(walk: &Walk) -> Vec<Value> {
    let t0 = walk
        .ops
        .iter()
        .map(|o| o.start_ns)
        .fold(f64::INFINITY, f64::min);
    let mut events = vec![
        json!({"ph": "M", "pid": 0, "name": "process_name", "args": {"name": "recorded walk (as read)"}}),
    ];
    for o in &walk.ops {
        events.push(json!({
            "ph": "X", "pid": 0, "tid": o.stream.unwrap_or(0), "name": o.name,
            "ts": (o.start_ns - t0) / 1e3, "dur": o.duration_ns / 1e3,
        }));
    }
    events
}

/// The Chrome trace of the recording and both replayed walks.
pub fn chrome_trace(walk: &Walk, t: &Timeline) -> Value {
    let mut events = recorded(walk);
    events.push(json!({"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "replayed eager walk"}}));
    events.push(
        json!({"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "replayed graph"}}),
    );
    events.extend(replayed(walk, &t.eager, 1, &t.lane_streams));
    events.extend(replayed(walk, &t.graph, 2, &t.lane_streams));
    json!({"displayTimeUnit": "ns", "traceEvents": events})
}

/// Writes a Chrome trace to `path` (`--export-trace`), whole or not at all.
pub fn write(path: &std::path::Path, trace: &Value) -> anyhow::Result<()> {
    let bytes = serde_json::to_vec(trace)?;
    crate::export::write_atomically(path, &bytes)
}

/// Writes the recording and the replayed walks of `timeline` (`--export-trace` of a GPU
/// replay) to `path`; an error that says so where the replay was interrupted before it
/// recorded them, so that a trace asked for is never silently missing.
pub fn write_replayed(
    path: &std::path::Path,
    walk: &Walk,
    timeline: Option<&Timeline>,
) -> anyhow::Result<()> {
    match timeline {
        Some(t) => write(path, &chrome_trace(walk, t)),
        None => Err(anyhow::anyhow!(
            "no replay trace written to {}: the run was interrupted before it",
            path.display()
        )),
    }
}

/// The Chrome trace of the recording and of where the offline model (`replay --summary`) puts
/// each node of the graph step (`spans`: each op's lane, start and end, ns, by op index; see
/// [`crate::offline::ModelledWalk::spans`]), as process 1, a thread per lane: a node spans the
/// graph's own per-node cost and its kernel, stretched where the model slows it beside other
/// lanes. Beside the recording (and a real graph's profile) it shows which nodes the model
/// takes to overlap and how long it makes each; `alone_ns` (by op index, see
/// [`crate::offline::ModelledWalk::alone_ns`]) gives each node's time with the GPU to itself
/// (`alone_us`), so the stretch the model lays on it beside other lanes reads off the event.
pub fn chrome_trace_offline(
    walk: &Walk,
    lane_streams: &[Option<u64>],
    spans: &[Option<crate::lanes::Span>],
    alone_ns: &[Option<f64>],
) -> Value {
    let mut events = recorded(walk);
    events.push(json!({"ph": "M", "pid": 1, "name": "process_name",
                       "args": {"name": "graph step, offline model"}}));
    for lane in 0..lane_streams.len() {
        events.push(
            json!({"ph": "M", "pid": 1, "tid": lane, "name": "thread_name",
                           "args": {"name": lane_name(lane_streams, lane)}}),
        );
    }
    for (i, (op, span)) in walk.ops.iter().zip(spans).enumerate() {
        let Some((lane, start, end)) = *span else {
            continue;
        };
        let mut args = json!({"recorded_dur_us": op.duration_ns / 1e3, "timing": "model"});
        if let Some(alone) = alone_ns.get(i).copied().flatten() {
            args["alone_us"] = json!(alone / 1e3);
        }
        events.push(json!({
            "ph": "X", "pid": 1, "tid": lane, "name": op.name,
            "ts": start / 1e3, "dur": (end - start) / 1e3, "args": args,
        }));
    }
    json!({"displayTimeUnit": "ns", "traceEvents": events})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Op;

    /// The complete event `name` of process `pid` in `ev`.
    fn event(ev: &[Value], pid: u64, name: &str) -> Value {
        ev.iter()
            .find(|e| e["pid"] == pid && e["name"] == name && e["ph"] == "X")
            .unwrap()
            .clone()
    }

    /// A timeline whose eager walk and graph replay stamped the same.
    fn both(stamps: Stamps, lane_streams: Vec<Option<u64>>) -> Timeline {
        Timeline {
            eager: stamps.clone(),
            graph: stamps,
            lane_streams,
        }
    }

    fn k(name: &str, start: f64, dur: f64) -> Op {
        Op {
            device: Some(0),
            stream: Some(7),
            ..Op::kernel(name, start, dur)
        }
    }

    #[test]
    fn a_replay_trace_is_written_or_its_absence_said() {
        let dir = std::env::temp_dir().join(format!("le-timeline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("replay.json");
        let walk = Walk {
            ops: vec![k("a", 1000.0, 2000.0)],
            ..Walk::default()
        };
        let err = write_replayed(&path, &walk, None).unwrap_err().to_string();
        assert!(err.contains("interrupted before it"), "{err}");
        assert!(!path.exists());
        write_replayed(&path, &walk, Some(&Timeline::default())).unwrap();
        let v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let events = v["traceEvents"].as_array().unwrap();
        assert_eq!(event(events, 0, "a")["dur"], 2.0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stamped_ops_keep_their_gpu_times_and_others_fill_the_gap() {
        let walk = Walk {
            ops: vec![
                k("a", 1000.0, 2000.0),
                k("tiny", 4000.0, 500.0),
                k("b", 6000.0, 3000.0),
            ],
            ..Walk::default()
        };
        let t = Timeline {
            eager: vec![
                (0, Some((10_000, 12_000))),
                (0, None),
                (0, Some((15_000, 18_000))),
            ],
            graph: vec![
                (0, Some((50_000, 52_000))),
                (0, None),
                (0, Some((52_300, 55_300))),
            ],
            lane_streams: vec![Some(7)],
        };
        let v = chrome_trace(&walk, &t);
        let ev = v["traceEvents"].as_array().unwrap();
        let of = |pid: u64, name: &str| event(ev, pid, name);
        // Recorded: relative to the first op.
        assert_eq!(of(0, "b")["ts"], 5.0);
        // Eager: stamps relative to the walk's first stamp; the unstamped op sits after `a`,
        // no longer than recorded.
        assert_eq!(
            (of(1, "a")["ts"].clone(), of(1, "a")["dur"].clone()),
            (json!(0.0), json!(2.0))
        );
        assert_eq!(of(1, "tiny")["ts"], 2.0);
        assert_eq!(of(1, "tiny")["dur"], 0.5);
        assert_eq!(of(1, "tiny")["args"]["timing"], "inferred");
        assert_eq!(of(1, "b")["ts"], 5.0);
        // Graph: the unstamped op gets only the 0.3 us gap there was.
        assert!((of(2, "tiny")["dur"].as_f64().unwrap() - 0.3).abs() < 1e-9);
        assert_eq!(of(2, "b")["args"]["timing"], "stamped");
        assert!(ev
            .iter()
            .any(|e| e["name"] == "thread_name" && e["args"]["name"] == "stream 7"));
    }

    #[test]
    fn stamps_on_the_epoch_clock_keep_their_nanoseconds() {
        // The GPU clock near 1.8e18 ns: an f64 of the absolute stamp rounds to 256 ns.
        let t0: u64 = 1_764_842_000_123_456_789;
        let walk = Walk {
            ops: vec![k("a", 0.0, 1000.0), k("b", 1000.0, 900.0)],
            ..Walk::default()
        };
        let stamps = vec![
            (0, Some((t0, t0 + 1_032))),
            (0, Some((t0 + 1_100, t0 + 2_004))),
        ];
        let v = chrome_trace(&walk, &both(stamps, vec![Some(7)]));
        let ev = v["traceEvents"].as_array().unwrap();
        let us = |name: &str, key: &str| event(ev, 2, name)[key].as_f64().unwrap();
        assert!((us("a", "dur") - 1.032).abs() < 1e-9);
        assert!((us("b", "ts") - 1.1).abs() < 1e-9);
        assert!((us("b", "dur") - 0.904).abs() < 1e-9);
    }

    #[test]
    fn unstamped_ops_leading_a_lane_end_where_its_first_stamp_starts() {
        // Lane 1 starts with a GEMM nothing stamps (3 us recorded), then a stamped kernel at
        // 20 us; lane 0's stamped kernel at 10 us. The GEMM runs 17..20 us, and the walk's
        // origin is lane 0's stamp, not the GEMM squeezed to nothing at 20 us.
        let walk = Walk {
            ops: vec![
                k("first", 0.0, 1000.0),
                k("gemm", 0.0, 3000.0),
                k("after", 4000.0, 1000.0),
            ],
            ..Walk::default()
        };
        let stamps = vec![
            (0, Some((10_000, 11_000))),
            (1, None),
            (1, Some((20_000, 21_000))),
        ];
        let v = chrome_trace(&walk, &both(stamps, vec![Some(7), Some(13)]));
        let ev = v["traceEvents"].as_array().unwrap();
        let of = |name: &str| event(ev, 2, name);
        assert_eq!(of("first")["ts"], 0.0);
        assert_eq!(
            (of("gemm")["ts"].clone(), of("gemm")["dur"].clone()),
            (json!(7.0), json!(3.0))
        );
        assert_eq!(of("gemm")["args"]["timing"], "inferred");
        assert_eq!(of("after")["ts"], 10.0);
    }

    #[test]
    fn a_start_before_an_earlier_op_of_its_lane_is_clamped_and_marked() {
        let walk = Walk {
            ops: vec![
                k("a", 1000.0, 2000.0),
                k("b", 4000.0, 1000.0),
                k("c", 6000.0, 1000.0),
            ],
            ..Walk::default()
        };
        // `b` carries a start from a launch before this one (100 us earlier than `a`).
        let stamps = vec![
            (0, Some((200_000, 202_000))),
            (0, Some((100_000, 203_500))),
            (0, Some((203_700, 204_700))),
        ];
        let v = chrome_trace(&walk, &both(stamps, vec![Some(7)]));
        let ev = v["traceEvents"].as_array().unwrap();
        let of = |name: &str| event(ev, 2, name);
        // The stale start neither sets the walk's origin nor stretches `b`.
        assert_eq!(of("a")["ts"], 0.0);
        assert_eq!(of("b")["ts"], 2.0);
        assert_eq!(of("b")["dur"], 1.5);
        assert_eq!(of("b")["args"]["timing"], "end stamped, start clamped");
        assert_eq!(of("c")["args"]["timing"], "stamped");
        assert_eq!(of("c")["ts"], 3.7);
    }

    #[test]
    fn the_model_s_nodes_sit_on_their_lanes_in_us_and_unplaced_ops_are_left_out() {
        let walk = Walk {
            ops: vec![
                k("a", 1000.0, 2000.0),
                Op {
                    stream: Some(9),
                    ..k("b", 1500.0, 1000.0)
                },
                k("c", 4000.0, 500.0),
            ],
            ..Walk::default()
        };
        let spans = vec![Some((0, 0.0, 2400.0)), Some((1, 0.0, 1300.0)), None];
        let alone = vec![Some(2200.0), Some(1100.0), None];
        let v = chrome_trace_offline(&walk, &[Some(7), Some(9)], &spans, &alone);
        let ev = v["traceEvents"].as_array().unwrap();
        let model: Vec<&Value> = ev
            .iter()
            .filter(|e| e["pid"] == 1 && e["ph"] == "X")
            .collect();
        assert_eq!(model.len(), 2);
        let b = event(ev, 1, "b");
        assert_eq!((b["tid"].as_u64(), b["ts"].as_f64()), (Some(1), Some(0.0)));
        assert_eq!(b["dur"], 1.3);
        assert_eq!(b["args"]["recorded_dur_us"], 1.0);
        assert_eq!(b["args"]["alone_us"], 1.1);
        assert_eq!(event(ev, 1, "a")["dur"], 2.4);
        // The recording keeps every op; each lane is named by its stream.
        assert_eq!(
            ev.iter()
                .filter(|e| e["pid"] == 0 && e["ph"] == "X")
                .count(),
            3
        );
        assert!(ev
            .iter()
            .any(|e| e["pid"] == 1 && e["tid"] == 1 && e["args"]["name"] == "stream 9"));
    }
}
