//! The readings of what the profiler's callbacks cost a recorded step, from the step's own
//! host events: outside each event from the operators that only call operators, inside each
//! operator from its leaf views, inside each call from the calls that only read state (what
//! each stands for: [`super::host`]).
//!
//! A trace with no operator that only calls operators (a loop of leaf operators, each one
//! launch) still shows the cost outside each event between its operators: the gap from one
//! top-level operator's end to the next one's start holds one event's callbacks beside the
//! program's own work between the two calls. The gaps with the least of that work read
//! nearest the cost, so the lower tenth of them is taken. On the H200 validation walks that
//! hold both it read a median 1.28 times the operators' reading (a quarter of them under 1.08,
//! a quarter over 1.43): high, a stand-in where nothing better is recorded.

use super::host::{HostEvent, HostKind};

/// Which share of the gaps between operators the outside cost is read at: the gaps that hold
/// the least of the program's own work.
const GAP_QUANTILE: f64 = 0.1;

/// How deep events are followed into one another.
const MAX_DEPTH: usize = 1024;

/// What the profiler's callbacks cost, read from the events (see the module docs), ns;
/// `None` where the events say nothing of it.
pub(super) struct CallbackCosts {
    /// Outside each event: the own time per nested event of the operators whose nested
    /// events are all operators.
    pub per_event: Reading,
    /// Outside each event, where no operator only calls operators: the gaps between
    /// consecutive top-level operators of a thread, read at [`GAP_QUANTILE`].
    pub between_ops: Reading,
    /// Inside an operator: the durations of the leaf view operators.
    pub inside_op: Reading,
    /// Inside a call that issues no GPU work: the durations of the query calls.
    pub inside_call: Reading,
    /// From the start of one call that issues GPU work to the next of its thread, read at
    /// [`GAP_QUANTILE`]: the cadence of a program that records no operators (see
    /// `crate::trace_eager`).
    pub issue_interval: Reading,
}

/// A reading of some samples, ns (their median, or for the gaps their low quantile), and how
/// many there were.
pub(super) struct Reading {
    pub value: Option<f64>,
    pub samples: usize,
}

impl Reading {
    fn median(v: Vec<f64>) -> Reading {
        Reading {
            samples: v.len(),
            value: (!v.is_empty()).then(|| crate::stats::median(&v)),
        }
    }

    /// The `q` quantile of `v` (the sample at that rank, counted from the lowest).
    fn quantile(mut v: Vec<f64>, q: f64) -> Reading {
        v.sort_by(f64::total_cmp);
        let rank = ((v.len() as f64 * q) as usize).min(v.len().saturating_sub(1));
        Reading {
            samples: v.len(),
            value: v.get(rank).copied(),
        }
    }
}

/// An event still open while later ones are read, with what is nested in it so far.
struct Open {
    event: HostEvent,
    nested: u32,
    nested_ns: f64,
    only_operators: bool,
}

/// The callbacks' costs over `events[i]` for `i` in `order` (see [`CallbackCosts`]).
pub(super) fn callback_costs(events: &[HostEvent], mut order: Vec<u32>) -> CallbackCosts {
    // Per thread, in start order, enclosing events first; a stack of the events still open.
    order.sort_by(|&a, &b| {
        let (a, b) = (&events[a as usize], &events[b as usize]);
        (a.thread.cmp(&b.thread))
            .then(a.ts_ns.total_cmp(&b.ts_ns))
            .then(b.dur_ns.total_cmp(&a.dur_ns))
    });
    let mut own = Vec::new();
    let mut views = Vec::new();
    let mut gaps = Vec::new();
    let calls: Vec<f64> = order
        .iter()
        .map(|&i| events[i as usize])
        .filter(|e| e.kind == HostKind::QueryCall)
        .map(|e| f64::from(e.dur_ns))
        .collect();
    let close = |o: Open, own: &mut Vec<f64>, views: &mut Vec<f64>| {
        if o.event.kind.is_operator() && o.nested > 0 && o.only_operators {
            let ns = (f64::from(o.event.dur_ns) - o.nested_ns) / f64::from(o.nested);
            own.push(ns.max(0.0));
        }
        if o.event.kind == HostKind::ViewOperator && o.nested == 0 {
            views.push(f64::from(o.event.dur_ns));
        }
    };
    let mut open: Vec<Open> = Vec::new();
    // The last top-level event and the last call that issues GPU work of the thread being read.
    let mut last_top: Option<HostEvent> = None;
    let mut last_issue: Option<HostEvent> = None;
    let mut intervals = Vec::new();
    for &i in &order {
        let e = events[i as usize];
        if e.kind == HostKind::Issue {
            if let Some(prev) = last_issue.filter(|p| p.thread == e.thread) {
                intervals.push(e.ts_ns - prev.ts_ns);
            }
            last_issue = Some(e);
        }
        while let Some(o) = open.pop() {
            if o.event.thread == e.thread && o.event.end_ns() > e.ts_ns {
                open.push(o);
                break;
            }
            close(o, &mut own, &mut views);
        }
        if open.is_empty() {
            if let Some(prev) = last_top.filter(|p| p.thread == e.thread) {
                if prev.kind.is_operator() && e.kind.is_operator() {
                    gaps.push((e.ts_ns - prev.end_ns()).max(0.0));
                }
            }
            last_top = Some(e);
        }
        if let Some(parent) = open.last_mut() {
            parent.nested += 1;
            parent.nested_ns += f64::from(e.dur_ns);
            parent.only_operators &= e.kind.is_operator();
        }
        // Real traces nest a few dozen deep; a file of identical intervals would nest every
        // event in the one before, so the stack stops growing at MAX_DEPTH.
        if open.len() < MAX_DEPTH {
            open.push(Open {
                event: e,
                nested: 0,
                nested_ns: 0.0,
                only_operators: true,
            });
        }
    }
    while let Some(o) = open.pop() {
        close(o, &mut own, &mut views);
    }
    CallbackCosts {
        per_event: Reading::median(own),
        between_ops: Reading::quantile(gaps, GAP_QUANTILE),
        inside_op: Reading::median(views),
        inside_call: Reading::median(calls),
        issue_interval: Reading::quantile(intervals, GAP_QUANTILE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(ts_ns: f64, dur_ns: f32, kind: HostKind, thread: u64) -> HostEvent {
        HostEvent {
            thread,
            ..crate::trace::host::tests::ev(ts_ns, dur_ns, kind)
        }
    }

    fn costs(events: &[HostEvent]) -> CallbackCosts {
        callback_costs(events, (0..events.len() as u32).collect())
    }

    #[test]
    fn gaps_between_top_level_operators_are_read_low() {
        // Thread 1: eleven leaf operators, each holding its launch, 10 ns long, 3 ns apart and
        // one of them 40 ns after the one before (the program's own work between them).
        let mut events = Vec::new();
        let mut t = 0.0;
        for k in 0..11 {
            events.push(ev(t, 10.0, HostKind::Operator, 1));
            events.push(ev(t + 2.0, 5.0, HostKind::Issue, 1));
            t += if k == 4 { 50.0 } else { 13.0 };
        }
        let c = costs(&events);
        // Ten gaps: nine of 3 ns, one of 40: the low tenth is 3.
        assert_eq!(c.between_ops.samples, 10);
        assert_eq!(c.between_ops.value, Some(3.0));
        // No operator only calls operators: no reading of that kind.
        assert_eq!(c.per_event.samples, 0);
        assert_eq!(c.per_event.value, None);
    }

    #[test]
    fn only_gaps_from_one_operator_to_the_next_of_the_same_thread_count() {
        let events = [
            // An operator, a runtime call at the top level, an operator: no two operators in a
            // row.
            ev(0.0, 10.0, HostKind::Operator, 1),
            ev(12.0, 2.0, HostKind::OtherCall, 1),
            ev(16.0, 4.0, HostKind::Operator, 1),
            // Another thread's operators between them count only among themselves.
            ev(11.0, 1.0, HostKind::Operator, 2),
            ev(19.0, 1.0, HostKind::Operator, 2),
            // A nested operator is not at the top level.
            ev(30.0, 10.0, HostKind::Operator, 1),
            ev(31.0, 2.0, HostKind::ViewOperator, 1),
        ];
        let c = costs(&events);
        // Thread 1: 16..20 then 30: a gap of 10; thread 2: 12 then 19: a gap of 7.
        assert_eq!(c.between_ops.samples, 2);
        assert_eq!(c.between_ops.value, Some(7.0));
    }

    #[test]
    fn launch_calls_are_read_at_the_lower_tenth_of_their_intervals_per_thread() {
        // Thread 1: eleven launch calls 20 ns apart but one 100 ns after the one before (the
        // program's own work between them), each beside a query call that is not a launch.
        let mut events = Vec::new();
        let mut t = 0.0;
        for k in 0..11 {
            events.push(ev(t, 5.0, HostKind::Issue, 1));
            events.push(ev(t + 6.0, 1.0, HostKind::QueryCall, 1));
            t += if k == 4 { 100.0 } else { 20.0 };
        }
        // Thread 2's launches, 3 ns after thread 1's, count only among themselves: 50 apart.
        events.push(ev(3.0, 1.0, HostKind::Issue, 2));
        events.push(ev(53.0, 1.0, HostKind::Issue, 2));
        let c = costs(&events);
        // Ten intervals of thread 1 (nine of 20, one of 100) and one of thread 2 (50).
        assert_eq!(c.issue_interval.samples, 11);
        assert_eq!(c.issue_interval.value, Some(20.0));
        assert_eq!(costs(&events[..1]).issue_interval.value, None);
    }

    #[test]
    fn nothing_in_a_row_reads_nothing() {
        let c = costs(&[ev(0.0, 1.0, HostKind::Operator, 1)]);
        assert_eq!((c.between_ops.samples, c.between_ops.value), (0, None));
        let c = costs(&[]);
        assert_eq!((c.inside_op.samples, c.inside_call.value), (0, None));
    }
}
