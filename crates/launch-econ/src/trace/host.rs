//! The host side of a recorded walk: the CPU operators and runtime calls around its GPU work,
//! from which the eager step is estimated when the user gives none.
//!
//! The reader keeps each CPU event as a [`HostEvent`] and sums them over an interval at the
//! end, so that the whole trace and each step the profiler marked (see [`super::steps`]) get
//! a host side of their own.

use serde::{Deserialize, Serialize};

/// The host side of a recorded step, for estimating the eager step from the trace alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct HostSide {
    /// The first CPU operator or runtime call, ns on the profiler's clock.
    pub start_ns: f64,
    /// Runtime or driver calls that issue GPU work (kernel launches, async copies, memsets).
    pub launch_calls: usize,
    /// Their total recorded duration, ns (profiled: the profiler's callbacks inflate it).
    pub launch_call_ns: f64,
    /// CPU operators (framework ops) recorded.
    pub cpu_ops: usize,
    /// Time the profiler spent on its own work while recording (Kineto `overhead` events,
    /// e.g. "Activity Buffer Request": 2.2 ms inside one 0.2 ms step on the H200), ns.
    #[serde(default)]
    pub profiler_overhead_ns: f64,
}

/// What a recorded CPU event was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostKind {
    /// A framework operator (`cpu_op`).
    Operator,
    /// A runtime or driver call that issues GPU work.
    Issue,
    /// Any other runtime or driver call.
    OtherCall,
}

/// One recorded CPU event, ns on the profiler's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct HostEvent {
    pub ts_ns: f64,
    pub dur_ns: f64,
    pub kind: HostKind,
}

impl HostKind {
    /// The kind of a Kineto CPU event of category `cat` (lower case) named `name`; `None` for
    /// categories that are not the step's own work (annotations, flows, the profiler's).
    pub(crate) fn of(cat: &str, name: &str) -> Option<HostKind> {
        match cat {
            "cpu_op" => Some(HostKind::Operator),
            "cuda_runtime" | "cuda_driver" => Some(
                if ["LaunchKernel", "Memcpy", "Memset", "GraphLaunch"]
                    .iter()
                    .any(|k| name.contains(k))
                {
                    HostKind::Issue
                } else {
                    HostKind::OtherCall
                },
            ),
            _ => None,
        }
    }
}

/// The host side of the events that start in `[from, to)` ns, with the profiler's own work
/// (`overhead`, intervals in ns) counted from the first of them to `gpu_end_ns`, the end of
/// the GPU work they issued; `None` when no event starts there.
pub(crate) fn host_side(
    events: &[HostEvent],
    overhead: &[(f64, f64)],
    (from, to): (f64, f64),
    gpu_end_ns: f64,
) -> Option<HostSide> {
    let mut h = HostSide {
        start_ns: f64::INFINITY,
        ..HostSide::default()
    };
    for e in events.iter().filter(|e| e.ts_ns >= from && e.ts_ns < to) {
        h.start_ns = h.start_ns.min(e.ts_ns);
        match e.kind {
            HostKind::Operator => h.cpu_ops += 1,
            HostKind::Issue => {
                h.launch_calls += 1;
                h.launch_call_ns += e.dur_ns;
            }
            HostKind::OtherCall => {}
        }
    }
    if !h.start_ns.is_finite() {
        return None;
    }
    h.profiler_overhead_ns = covered_ns(overhead.to_vec(), h.start_ns, gpu_end_ns);
    Some(h)
}

/// How long the intervals cover `[from, to)` (overlaps counted once), ns.
fn covered_ns(mut intervals: Vec<(f64, f64)>, from: f64, to: f64) -> f64 {
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut total, mut reach) = (0.0, from);
    for (a, b) in intervals {
        let (a, b) = (a.max(reach), b.min(to));
        if b > a {
            total += b - a;
            reach = b;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(ts_ns: f64, dur_ns: f64, kind: HostKind) -> HostEvent {
        HostEvent {
            ts_ns,
            dur_ns,
            kind,
        }
    }

    #[test]
    fn sums_only_the_events_of_the_interval() {
        let events = [
            ev(100.0, 9.0, HostKind::Operator),
            ev(102.0, 4.0, HostKind::Issue),
            ev(150.0, 6.0, HostKind::Issue),
            ev(160.0, 1.0, HostKind::OtherCall),
            ev(300.0, 5.0, HostKind::Issue),
        ];
        let h = host_side(&events, &[(90.0, 120.0)], (101.0, 300.0), 250.0).unwrap();
        assert_eq!(h.start_ns, 102.0);
        assert_eq!((h.launch_calls, h.cpu_ops), (2, 0));
        assert_eq!(h.launch_call_ns, 10.0);
        // Overhead counts from the first event (102) on, not from the interval's start.
        assert_eq!(h.profiler_overhead_ns, 18.0);
        assert!(host_side(&events, &[], (400.0, 500.0), 600.0).is_none());
    }

    #[test]
    fn kinds_by_category_and_name() {
        assert_eq!(HostKind::of("cpu_op", "aten::mm"), Some(HostKind::Operator));
        assert_eq!(
            HostKind::of("cuda_runtime", "cudaLaunchKernel"),
            Some(HostKind::Issue)
        );
        assert_eq!(
            HostKind::of("cuda_driver", "cuGraphLaunch"),
            Some(HostKind::Issue)
        );
        assert_eq!(
            HostKind::of("cuda_runtime", "cudaStreamSynchronize"),
            Some(HostKind::OtherCall)
        );
        assert_eq!(HostKind::of("user_annotation", "ProfilerStep#3"), None);
    }

    #[test]
    fn overlapping_overhead_counts_once() {
        assert_eq!(
            covered_ns(vec![(0.0, 10.0), (5.0, 15.0), (20.0, 30.0)], 2.0, 25.0),
            18.0
        );
    }
}
