//! The host side of a recorded walk: the CPU operators and runtime calls around its GPU work,
//! from which the eager step is estimated when the user gives none.
//!
//! The reader keeps each CPU event as a `HostEvent` and sums them over an interval at the
//! end, so that the whole trace and each step the profiler marked (see [`super::steps`]) get
//! a host side of their own.
//!
//! The profiler slows the host down: every event it records costs its callbacks, outside the
//! event's own interval, so an operator's own time (its duration less its nested events')
//! holds that cost once per nested event, beside the operator's own work. Operators that only
//! call other operators (`aten::linear` → `aten::t`, `aten::matmul`) do no work of their own
//! beyond dispatch, so the median of their own time per nested operator measures the cost in
//! each trace ([`HostSide::profiler_per_event_ns`]). It reads low rather than high: part of the
//! callbacks' cost falls inside the events' recorded intervals, where it cannot be told apart
//! (on the H200 validation walks the eager step estimated with it stayed above the real one
//! on all but one). Where no operator only calls operators, the gaps between operators stand
//! in for it, reading high ([`HostSide::profiler_between_ops_ns`], `trace::callbacks`).
//!
//! The part inside an event's interval shows where an event does no work of its own: a leaf
//! operator that only makes a view or an empty tensor (`aten::view`, `aten::as_strided`,
//! `aten::empty`, …) records about a microsecond that an unprofiled step spends in dispatch
//! only, and a runtime call that only reads state (`cudaGetDevice`,
//! `cudaStreamIsCapturing`, …) a fraction of that. Their median durations
//! ([`HostSide::profiler_inside_op_ns`], [`HostSide::profiler_inside_call_ns`]) stand for that
//! part of every operator and every call that issues no GPU work (a launch's is in its
//! inflation over the launch floor); they read high by the view's own dispatch.
//!
//! A step recorded right after the profiler started also pays costs once: the first call of
//! each kind runs longer than its later ones (`trace::first_calls`).

use serde::{Deserialize, Serialize};

use super::callbacks::callback_costs;
use super::first_calls::first_call_excess_ns;

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
    /// Runtime and driver calls of any kind.
    #[serde(default)]
    pub runtime_calls: usize,
    /// What recording one host event cost outside its own interval, ns (see the module
    /// docs); 0 where no operator has nested events.
    #[serde(default)]
    pub profiler_per_event_ns: f64,
    /// The operators whose nested events are all operators, whose median own time per nested
    /// event [`Self::profiler_per_event_ns`] is: few make it a rough reading.
    #[serde(default)]
    pub profiler_per_event_samples: usize,
    /// The same cost read where no operator only calls operators: the lower tenth of the gaps
    /// between consecutive top-level operators of a thread, ns, which hold the program's own
    /// work between them as well (`trace::callbacks`); 0 where no two operators follow one
    /// another.
    #[serde(default)]
    pub profiler_between_ops_ns: f64,
    /// The gaps [`Self::profiler_between_ops_ns`] is read from.
    #[serde(default)]
    pub profiler_between_ops_samples: usize,
    /// What recording one operator cost inside its own interval, ns: the median duration of
    /// the leaf operators that only make a view or an empty tensor (see the module docs); 0
    /// where the trace has none.
    #[serde(default)]
    pub profiler_inside_op_ns: f64,
    /// The leaf view operators [`Self::profiler_inside_op_ns`] is the median of.
    #[serde(default)]
    pub profiler_inside_op_samples: usize,
    /// The same for a runtime call that issues no GPU work: the median duration of the calls
    /// that only read state; 0 where the trace has none.
    #[serde(default)]
    pub profiler_inside_call_ns: f64,
    /// The lower tenth of the intervals from one call that issues GPU work to the next of its
    /// thread, start to start, ns: the cadence at which a program that records no operators
    /// issued its work, with the profiler's cost in its least-inflated intervals (see
    /// `crate::trace_eager`); 0 where no thread made two such calls.
    #[serde(default)]
    pub issue_interval_ns: f64,
    /// The intervals [`Self::issue_interval_ns`] is read from.
    #[serde(default)]
    pub issue_interval_samples: usize,
    /// What the first calls of the step ran beyond the same calls later, ns: costs paid once
    /// (see `trace::first_calls`).
    #[serde(default)]
    pub first_call_excess_ns: f64,
    /// Calls that held the host until the GPU caught up (a synchronize, a blocking copy)
    /// before the step's last call that issues GPU work: the host read the GPU's results
    /// mid-step, which a graph cannot hold. A wait after the last launch ends the step.
    #[serde(default)]
    pub blocking_waits_mid_step: usize,
}

/// What a recorded CPU event was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostKind {
    /// A framework operator (`cpu_op`).
    Operator,
    /// A framework operator that only makes a view or an empty tensor ([`VIEW_OPERATORS`]).
    ViewOperator,
    /// A runtime or driver call that issues GPU work.
    Issue,
    /// A runtime call that only reads state ([`QUERY_CALLS`]).
    QueryCall,
    /// Any other runtime or driver call.
    OtherCall,
}

/// Operators that do no work of their own beyond dispatch: views and empty tensors.
const VIEW_OPERATORS: [&str; 14] = [
    "aten::view",
    "aten::as_strided",
    "aten::_unsafe_view",
    "aten::alias",
    "aten::empty",
    "aten::empty_strided",
    "aten::result_type",
    "aten::resolve_conj",
    "aten::resolve_neg",
    "aten::lift_fresh",
    "aten::detach",
    "aten::squeeze",
    "aten::unsqueeze",
    "aten::expand",
];

/// Runtime calls that only read state.
const QUERY_CALLS: [&str; 9] = [
    "cudaGetDevice",
    "cudaGetDeviceCount",
    "cudaGetLastError",
    "cudaPeekAtLastError",
    "cudaGetErrorString",
    "cudaStreamIsCapturing",
    "cudaStreamGetCaptureInfo",
    "cudaDeviceGetAttribute",
    "cudaPointerGetAttributes",
];

/// One recorded CPU event, ns on the profiler's clock, on host thread `thread`. Kept for
/// every CPU event of a trace, so kept small (32 bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct HostEvent {
    pub ts_ns: f64,
    pub dur_ns: f32,
    pub kind: HostKind,
    /// Whether the call waits for the GPU (a synchronize, a blocking copy, a query).
    pub waits: bool,
    /// Whether the call holds the host until the GPU is done (see
    /// [`HostKind::blocks_on_gpu`]).
    pub blocks: bool,
    pub thread: u64,
    /// The call's signature: a hash of its name and recorded input shapes (see
    /// `trace::first_calls`).
    pub call: u64,
}

impl HostEvent {
    pub(crate) fn end_ns(&self) -> f64 {
        self.ts_ns + f64::from(self.dur_ns)
    }
}

impl HostKind {
    /// The kind of a Kineto CPU event of category `cat` (lower case) named `name`; `None` for
    /// categories that are not the step's own work (annotations, flows, the profiler's).
    pub(crate) fn of(cat: &str, name: &str) -> Option<HostKind> {
        match cat {
            "cpu_op" if VIEW_OPERATORS.contains(&name) => Some(HostKind::ViewOperator),
            "cpu_op" => Some(HostKind::Operator),
            "cuda_runtime" | "cuda_driver" => Some(
                if ["LaunchKernel", "Memcpy", "Memset", "GraphLaunch"]
                    .iter()
                    .any(|k| name.contains(k))
                {
                    HostKind::Issue
                } else if QUERY_CALLS.contains(&name) {
                    HostKind::QueryCall
                } else {
                    HostKind::OtherCall
                },
            ),
            _ => None,
        }
    }

    /// Whether a runtime or driver call named `name` waits for the GPU: a synchronize, a
    /// query of work's completion, or a copy that is not asynchronous.
    pub(crate) fn waits_for_gpu(name: &str) -> bool {
        Self::blocks_on_gpu(name) || name.contains("Query")
    }

    /// Whether a runtime or driver call named `name` holds the host until the GPU has done
    /// the work before it: a synchronize or a copy that is not asynchronous (a query only
    /// reads where the GPU is).
    pub(crate) fn blocks_on_gpu(name: &str) -> bool {
        let copy = name.starts_with("cudaMemcpy") || name.starts_with("cuMemcpy");
        name.contains("Synchronize") || (copy && !name.contains("Async"))
    }

    /// Whether the event is a framework operator (of any kind).
    pub(crate) fn is_operator(self) -> bool {
        matches!(self, HostKind::Operator | HostKind::ViewOperator)
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
    let inside = |e: &&HostEvent| e.ts_ns >= from && e.ts_ns < to;
    let overhead = by_start(overhead);
    let (mut last_issue_ns, mut blocking) = (f64::NEG_INFINITY, Vec::new());
    for e in events.iter().filter(inside) {
        h.start_ns = h.start_ns.min(e.ts_ns);
        match e.kind {
            HostKind::Operator | HostKind::ViewOperator => h.cpu_ops += 1,
            HostKind::Issue => {
                h.launch_calls += 1;
                // The profiler's own work inside a call (a buffer request can hold up the
                // first launch for milliseconds) is counted once, as its overhead.
                h.launch_call_ns +=
                    f64::from(e.dur_ns) - covered_ns(&overhead, e.ts_ns, e.end_ns());
                h.runtime_calls += 1;
                last_issue_ns = last_issue_ns.max(e.ts_ns);
            }
            HostKind::QueryCall | HostKind::OtherCall => h.runtime_calls += 1,
        }
        if e.blocks {
            blocking.push(e.ts_ns);
        }
    }
    if !h.start_ns.is_finite() {
        return None;
    }
    h.blocking_waits_mid_step = blocking.iter().filter(|&&t| t < last_issue_ns).count();
    h.profiler_overhead_ns = covered_ns(&overhead, h.start_ns, gpu_end_ns);
    let order: Vec<u32> = (0..events.len() as u32)
        .filter(|&i| inside(&&events[i as usize]))
        .collect();
    let costs = callback_costs(events, order);
    h.profiler_per_event_ns = costs.per_event.value.unwrap_or(0.0);
    h.profiler_per_event_samples = costs.per_event.samples;
    h.profiler_between_ops_ns = costs.between_ops.value.unwrap_or(0.0);
    h.profiler_between_ops_samples = costs.between_ops.samples;
    h.profiler_inside_op_ns = costs.inside_op.value.unwrap_or(0.0);
    h.profiler_inside_op_samples = costs.inside_op.samples;
    h.profiler_inside_call_ns = costs.inside_call.value.unwrap_or(0.0);
    h.issue_interval_ns = costs.issue_interval.value.unwrap_or(0.0);
    h.issue_interval_samples = costs.issue_interval.samples;
    h.first_call_excess_ns = first_call_excess_ns(events, &overhead, (from, to));
    Some(h)
}

/// `intervals` sorted by their starts, as [`covered_ns`] takes them.
pub(super) fn by_start(intervals: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut v = intervals.to_vec();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// How long `sorted` (intervals by their starts, [`by_start`]) cover `[from, to)` (overlaps
/// counted once), ns. Sorted once by the caller, so that covering many spans (every first
/// call's) reads the intervals and does not sort them again.
pub(super) fn covered_ns(sorted: &[(f64, f64)], from: f64, to: f64) -> f64 {
    debug_assert!(sorted.windows(2).all(|w| w[0].0 <= w[1].0));
    let (mut total, mut reach) = (0.0, from);
    for &(a, b) in sorted.iter().take_while(|&&(a, _)| a < to) {
        let (a, b) = (a.max(reach), b.min(to));
        if b > a {
            total += b - a;
            reach = b;
        }
    }
    total
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A host event of `kind` on thread 1 that waits for nothing (the trace modules' tests).
    pub(in crate::trace) fn ev(ts_ns: f64, dur_ns: f32, kind: HostKind) -> HostEvent {
        HostEvent {
            ts_ns,
            dur_ns,
            kind,
            waits: false,
            blocks: false,
            thread: 1,
            call: 0,
        }
    }

    #[test]
    fn only_blocking_waits_before_the_last_launch_are_mid_step() {
        let blocking = |ts_ns: f64| HostEvent {
            waits: true,
            blocks: true,
            ..ev(ts_ns, 1.0, HostKind::OtherCall)
        };
        let query = HostEvent {
            waits: true,
            ..ev(15.0, 1.0, HostKind::QueryCall)
        };
        // A synchronize between launches (the host reading a copy's result), a query, and the
        // synchronize that ends the step after its last launch.
        let events = [
            ev(0.0, 2.0, HostKind::Issue),
            blocking(10.0),
            query,
            ev(20.0, 2.0, HostKind::Issue),
            blocking(30.0),
        ];
        let h = host_side(&events, &[], (0.0, 100.0), 100.0).unwrap();
        assert_eq!(h.blocking_waits_mid_step, 1);
        let h = host_side(&events[3..], &[], (0.0, 100.0), 100.0).unwrap();
        assert_eq!(h.blocking_waits_mid_step, 0);
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
        assert_eq!((h.launch_calls, h.cpu_ops, h.runtime_calls), (2, 0, 3));
        // The launch at 102 lies inside the profiler's own work (90..120): its 4 are that
        // work's, counted once, as overhead; the launch at 150 keeps its 6.
        assert_eq!(h.launch_call_ns, 6.0);
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
        assert!(HostKind::blocks_on_gpu("cudaStreamSynchronize"));
        assert!(HostKind::blocks_on_gpu("cuMemcpyDtoH_v2"));
        assert!(!HostKind::blocks_on_gpu("cudaEventQuery"));
        assert!(!HostKind::blocks_on_gpu("cudaMemcpyAsync"));
        assert_eq!(HostKind::of("user_annotation", "ProfilerStep#3"), None);
    }

    #[test]
    fn the_cost_inside_events_is_read_from_leaf_views_and_query_calls() {
        // An operator of 10 holding a view of 2 (a leaf) and a view of 6 that holds an
        // operator (not a leaf); leaf views of 1 and 3; query calls of 0.5, 0.3, 0.4; a launch.
        let events = [
            ev(0.0, 10.0, HostKind::Operator),
            ev(1.0, 2.0, HostKind::ViewOperator),
            ev(3.0, 6.0, HostKind::ViewOperator),
            ev(4.0, 1.0, HostKind::Operator),
            ev(20.0, 1.0, HostKind::ViewOperator),
            ev(30.0, 3.0, HostKind::ViewOperator),
            ev(40.0, 0.5, HostKind::QueryCall),
            ev(41.0, 0.3, HostKind::QueryCall),
            ev(42.0, 0.4, HostKind::QueryCall),
            ev(43.0, 4.0, HostKind::Issue),
        ];
        let h = host_side(&events, &[], (0.0, 100.0), 100.0).unwrap();
        // Leaf views 2, 1, 3: median 2; query calls: median 0.4 (f32 durations).
        assert_eq!(h.profiler_inside_op_ns, 2.0);
        assert!((h.profiler_inside_call_ns - 0.4).abs() < 1e-6);
        // Views are operators, query calls runtime calls.
        assert_eq!((h.cpu_ops, h.runtime_calls, h.launch_calls), (6, 4, 1));
        // The operator holding two views (own 2, 1 each) and the view holding one (own 5):
        // the outside cost reads them as before.
        assert_eq!(h.profiler_per_event_ns, 3.0);
        assert_eq!(
            HostKind::of("cpu_op", "aten::as_strided"),
            Some(HostKind::ViewOperator)
        );
        assert_eq!(
            HostKind::of("cuda_runtime", "cudaStreamIsCapturing"),
            Some(HostKind::QueryCall)
        );
    }

    #[test]
    fn the_profilers_work_inside_a_launch_call_is_not_its_inflation() {
        // A first launch held 2.9 ms by a buffer request, as Kineto records CuPy's first
        // launch: its recorded 2.904 ms, less the 2.9 ms of overhead inside it, is 4 us.
        let events = [
            ev(0.0, 2_904_000.0, HostKind::Issue),
            ev(3_000_000.0, 4_000.0, HostKind::Issue),
        ];
        let h = host_side(&events, &[(1_000.0, 2_901_000.0)], (0.0, 1e7), 3_010_000.0).unwrap();
        assert_eq!(h.launch_call_ns, 8_000.0);
        assert_eq!(h.profiler_overhead_ns, 2_900_000.0);
    }

    #[test]
    fn overlapping_overhead_counts_once() {
        assert_eq!(
            covered_ns(
                &by_start(&[(20.0, 30.0), (0.0, 10.0), (5.0, 15.0)]),
                2.0,
                25.0
            ),
            18.0
        );
    }

    #[test]
    fn the_profilers_cost_per_event_is_wrapper_operators_own_time_per_nested_operator() {
        // Thread 1: an operator of 10 holding two operators of 2 and 3 (own time 5, 2.5 per
        // nested operator); an operator of 6 holding one of 4 (own 2), which holds a call of
        // 1 (own work beside the call: not counted); an operator of 9 holding three of 1
        // (own 6, 2 each); a leaf operator. Thread 2 overlaps and nests nothing.
        let mut events = vec![
            ev(0.0, 10.0, HostKind::Operator),
            ev(1.0, 2.0, HostKind::Operator),
            ev(5.0, 3.0, HostKind::Operator),
            ev(20.0, 6.0, HostKind::Operator),
            ev(21.0, 4.0, HostKind::Operator),
            ev(22.0, 1.0, HostKind::Issue),
            ev(40.0, 9.0, HostKind::Operator),
            ev(41.0, 1.0, HostKind::Operator),
            ev(43.0, 1.0, HostKind::Operator),
            ev(45.0, 1.0, HostKind::Operator),
            ev(60.0, 1.0, HostKind::Operator),
        ];
        events.push(HostEvent {
            thread: 2,
            ..ev(2.0, 50.0, HostKind::Operator)
        });
        let h = host_side(&events, &[], (0.0, 100.0), 100.0).unwrap();
        // Own time per nested operator: 2.5, 2, 2 -> median 2.
        assert_eq!(h.profiler_per_event_ns, 2.0);
        assert_eq!((h.cpu_ops, h.runtime_calls), (11, 1));
        // Nothing nested: nothing measured.
        let flat = [
            ev(0.0, 1.0, HostKind::Operator),
            ev(2.0, 1.0, HostKind::Issue),
        ];
        assert_eq!(
            host_side(&flat, &[], (0.0, 9.0), 9.0)
                .unwrap()
                .profiler_per_event_ns,
            0.0
        );
        // Leaf operators in a row, each holding its launch: the gaps between them stand in.
        let in_a_row = [
            ev(0.0, 3.0, HostKind::Operator),
            ev(1.0, 1.0, HostKind::Issue),
            ev(5.0, 3.0, HostKind::Operator),
            ev(6.0, 1.0, HostKind::Issue),
        ];
        let h = host_side(&in_a_row, &[], (0.0, 9.0), 9.0).unwrap();
        assert_eq!(h.profiler_per_event_samples, 0);
        assert_eq!(
            (h.profiler_between_ops_ns, h.profiler_between_ops_samples),
            (2.0, 1)
        );
    }
}
