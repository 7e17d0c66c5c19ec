//! One-time costs in a recorded step: the first call of each kind in a trace runs longer than
//! the same call later, by costs a step repeated in a loop does not pay again.
//!
//! A profiler started for one step records that step's calls while its own per-name state,
//! and the host's caches, are cold: in the H200 validation traces (one step each, recorded
//! right after the profiler started) the first `aten::matmul` of a walk of eight identical
//! ones took 162 µs against a median of 21 for the other seven, the first
//! `cudaEventRecordWithFlags` 7.4 µs against 0.6. The walk's unprofiled step was 200 µs in
//! all, so those first calls cannot cost that much every step.
//!
//! A call's signature is its name and, where the trace recorded them, its inputs' shapes: the
//! first `aten::mm` of a large GEMM is not compared with later small ones. Only calls on top
//! of their thread (not nested in another recorded event) count, so that nothing is counted
//! twice, and none that holds a call waiting for the GPU (a synchronize, a blocking copy),
//! whose duration is the GPU's. The one-time cost of a signature is how much longer its first
//! call ran than the median of its later calls in the same interval, never below zero, less
//! the profiler's own work (`overhead` events) during it; a signature first called before the
//! interval (an earlier marked step) paid it there. A launch call on top of its thread (a
//! program without operators, as CuPy's) does not count either: all it ran over the launch
//! floor is taken out of the step as the profiler's inflation already (`crate::trace_eager`),
//! and taking its first call's excess out again counted it twice (a CuPy trace's first launch
//! call, 343 µs outside the profiler's buffer request, once brought a 0.47 ms step's estimate
//! down to the launch floor). Inside an operator a first call's launch is left in its excess:
//! taking it out as well read the stored walks higher (H200: 126 of 250 within 25% against
//! 127, the signed median +15.2% against +10.9; H100: 58 of 138 against 60).

use std::collections::HashMap;

use super::host::{covered_ns, HostEvent, HostKind};
use crate::stats::median;

/// The one-time costs of the first calls in `[from, to)` of `events`, ns (see the module
/// docs); `overhead`: the profiler's own work, (start, end) ns, sorted by start.
pub(crate) fn first_call_excess_ns(
    events: &[HostEvent],
    overhead: &[(f64, f64)],
    (from, to): (f64, f64),
) -> f64 {
    let roots = top_level(events);
    // The first call of each signature over the whole trace, by start.
    let mut by_start: Vec<usize> = roots.iter().map(|r| r.index).collect();
    by_start.sort_by(|&a, &b| events[a].ts_ns.total_cmp(&events[b].ts_ns));
    let mut first: HashMap<u64, usize> = HashMap::new();
    for &i in &by_start {
        first.entry(events[i].call).or_insert(i);
    }
    let waits: HashMap<usize, bool> = roots.iter().map(|r| (r.index, r.waits)).collect();
    let mut calls: HashMap<u64, Vec<(usize, f64)>> = HashMap::new();
    for &i in &by_start {
        let e = &events[i];
        if e.ts_ns < from || e.ts_ns >= to || waits[&i] || e.kind == HostKind::Issue {
            continue;
        }
        let own = f64::from(e.dur_ns) - covered_ns(overhead, e.ts_ns, e.end_ns());
        calls.entry(e.call).or_default().push((i, own));
    }
    calls
        .iter()
        .filter(|(call, v)| v.len() >= 2 && first.get(*call) == Some(&v[0].0))
        .map(|(_, v)| {
            let later = median(&v[1..].iter().map(|&(_, ns)| ns).collect::<Vec<_>>());
            (v[0].1 - later).max(0.0)
        })
        .sum()
}

/// A call on top of its thread, and whether it or a call nested in it waits for the GPU.
struct Root {
    index: usize,
    waits: bool,
}

/// The events not nested in another of their thread, with what they hold.
fn top_level(events: &[HostEvent]) -> Vec<Root> {
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&events[a], &events[b]);
        (a.thread.cmp(&b.thread))
            .then(a.ts_ns.total_cmp(&b.ts_ns))
            .then(b.dur_ns.total_cmp(&a.dur_ns))
    });
    let mut roots: Vec<Root> = Vec::new();
    let mut reach = (u64::MAX, f64::NEG_INFINITY);
    for i in order {
        let e = &events[i];
        let nested = e.thread == reach.0 && e.ts_ns < reach.1;
        match roots.last_mut() {
            Some(root) if nested => root.waits |= e.waits,
            _ => {
                roots.push(Root {
                    index: i,
                    waits: e.waits,
                });
                reach = (e.thread, e.end_ns());
            }
        }
    }
    roots
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::host::HostKind;

    fn call(ts_ns: f64, dur_ns: f32, call: u64) -> HostEvent {
        HostEvent {
            ts_ns,
            dur_ns,
            kind: HostKind::Operator,
            waits: false,
            blocks: false,
            thread: 1,
            call,
        }
    }

    #[test]
    fn the_first_call_of_a_signature_costs_what_it_ran_beyond_the_later_ones() {
        // Signature 1: 10, then 2 and 3 (median 2.5): 7.5 once. Signature 2: 5, 5: nothing.
        // Signature 3, called once: nothing to compare with. A call nested in the first one
        // (signature 1 again) is not a call of its own.
        let events = [
            call(0.0, 10.0, 1),
            call(1.0, 4.0, 1),
            call(20.0, 2.0, 1),
            call(30.0, 5.0, 2),
            call(40.0, 3.0, 1),
            call(50.0, 5.0, 2),
            call(60.0, 9.0, 3),
        ];
        assert_eq!(first_call_excess_ns(&events, &[], (0.0, 100.0)), 7.5);
        // A first call faster than the later ones costs nothing.
        let events = [call(0.0, 1.0, 1), call(5.0, 4.0, 1)];
        assert_eq!(first_call_excess_ns(&events, &[], (0.0, 100.0)), 0.0);
    }

    #[test]
    fn calls_that_wait_for_the_gpu_and_signatures_seen_before_the_interval_do_not_count() {
        let sync = HostEvent {
            kind: HostKind::OtherCall,
            waits: true,
            ..call(2.0, 1.0, 9)
        };
        // Signature 1's first call holds a synchronize: its later calls are compared with
        // nothing. Signature 2 was first called at 15, before the interval [20, 100).
        let events = [
            call(0.0, 10.0, 1),
            sync,
            call(60.0, 2.0, 1),
            call(70.0, 2.0, 1),
            call(15.0, 4.0, 2),
            call(80.0, 9.0, 2),
            call(90.0, 1.0, 2),
        ];
        assert_eq!(first_call_excess_ns(&events, &[], (0.0, 100.0)), 0.0);
        assert_eq!(first_call_excess_ns(&events, &[], (20.0, 100.0)), 0.0);
        // Without the earlier call, signature 2's first call in the interval costs 8.
        assert_eq!(first_call_excess_ns(&events[5..], &[], (20.0, 100.0)), 8.0);
    }

    #[test]
    fn the_profilers_own_work_during_a_first_call_is_not_its_cost() {
        // A first call of 30 during 20 of buffer requests (two overlapping intervals): its
        // own 10 against later calls of 4: 6.
        let events = [call(0.0, 30.0, 1), call(40.0, 4.0, 1), call(50.0, 4.0, 1)];
        let overhead = [(5.0, 20.0), (10.0, 25.0)];
        assert_eq!(first_call_excess_ns(&events, &overhead, (0.0, 100.0)), 6.0);
    }

    #[test]
    fn a_launch_call_on_top_of_its_thread_has_no_first_call_cost() {
        let launch = |ts_ns: f64, dur_ns: f32, signature: u64| HostEvent {
            kind: HostKind::Issue,
            ..call(ts_ns, dur_ns, signature)
        };
        // A first launch call of 300 against later ones of 5: all of it inflation over the
        // launch floor, taken out with the other calls'.
        let events = [
            launch(0.0, 300.0, 1),
            launch(310.0, 5.0, 1),
            launch(320.0, 5.0, 1),
        ];
        assert_eq!(first_call_excess_ns(&events, &[], (0.0, 400.0)), 0.0);
        // An operator holding its launch still counts its first call's excess: 40 against 12.
        let events = [
            call(0.0, 40.0, 2),
            launch(2.0, 30.0, 1),
            call(50.0, 12.0, 2),
            launch(52.0, 5.0, 1),
            call(70.0, 12.0, 2),
            launch(72.0, 5.0, 1),
        ];
        assert_eq!(first_call_excess_ns(&events, &[], (0.0, 100.0)), 28.0);
    }

    #[test]
    fn threads_nest_their_own_events_only() {
        // Thread 2's call during thread 1's first call is on top of its own thread.
        let mut events = vec![call(0.0, 10.0, 1), call(20.0, 2.0, 1)];
        events.push(HostEvent {
            thread: 2,
            ..call(1.0, 6.0, 1)
        });
        // Signature 1 on top: 10 (first), 6, 2 -> 10 - 4.
        assert_eq!(first_call_excess_ns(&events, &[], (0.0, 100.0)), 6.0);
    }
}
