//! Properties of the reading of waits over random walks: every op is laid out once, each
//! lane in issue order, and op by op the default reading never waits for more than `--waits
//! all` (its upper bound) nor for less than `--waits none` (its lower one), however the
//! trace's events, record calls and waits fall.

use std::collections::HashMap;

use proptest::prelude::*;

use super::*;
use crate::trace::{Op, StreamWait};

/// One host call of a random walk.
#[derive(Debug, Clone)]
enum HostCall {
    /// A kernel on stream `0` lasting `1` ns.
    Kernel(u64, f64),
    /// Stream `0` waits on event `1`.
    Wait(u64, u64),
    /// An event record call.
    Record,
}

fn host_call() -> impl Strategy<Value = HostCall> {
    let stream = prop::sample::select(vec![7u64, 13, 17, 21]);
    prop_oneof![
        3 => (stream.clone(), 1.0f64..40.0).prop_map(|(s, d)| HostCall::Kernel(s, d)),
        1 => (stream, 0u64..6).prop_map(|(s, e)| HostCall::Wait(s, e)),
        1 => Just(HostCall::Record),
    ]
}

/// The walk the calls make, in issue order (correlation ids from 1), its waits marked as
/// the trace reader marks them; events `0..3` are fresh per record (numbered by the record
/// calls when `fresh`), the others reused.
fn walk_of(calls: &[HostCall], fresh: bool, rule: WaitRule) -> Walk {
    let (mut ops, mut waits, mut records, mut events) =
        (Vec::new(), Vec::new(), Vec::new(), HashMap::new());
    for (i, call) in calls.iter().enumerate() {
        let corr = i as u64 + 1;
        match *call {
            HostCall::Kernel(stream, ns) => {
                let mut o = Op::kernel("k", corr as f64, ns);
                o.device = Some(0);
                o.stream = Some(stream);
                o.correlation = Some(corr);
                ops.push(o);
            }
            HostCall::Wait(stream, e) => {
                // A fresh event names the record call right before the wait.
                let event = if fresh && e < 3 {
                    100 + records.len() as u64
                } else {
                    e
                };
                events.insert(corr, event);
                waits.push(StreamWait::new(stream, corr));
            }
            HostCall::Record => records.push(corr),
        }
    }
    crate::trace::recordings::mark(&mut waits, &events, &records);
    Walk {
        ops,
        waits,
        record_calls: records,
        wait_rule: rule,
        ..Walk::default()
    }
}

/// Each op's end in the lay-out of `walk` at its recorded durations.
fn ends(walk: &Walk) -> Vec<f64> {
    let s = Schedule::of(walk);
    let spans = s.lay_out(|op| walk.ops[op].duration_ns);
    let by_op = s.spans_by_op(&spans, walk.ops.len());
    assert!(
        by_op.iter().all(Option::is_some),
        "an op not laid out: {by_op:?}"
    );
    by_op.into_iter().map(|s| s.map_or(0.0, |s| s.2)).collect()
}

proptest! {
    #[test]
    fn the_default_reading_lies_between_waiting_on_nothing_and_on_everything(
        calls in prop::collection::vec(host_call(), 1..40),
        fresh in any::<bool>(),
    ) {
        let none = ends(&walk_of(&calls, fresh, WaitRule::None));
        let join = ends(&walk_of(&calls, fresh, WaitRule::Join));
        let all = ends(&walk_of(&calls, fresh, WaitRule::All));
        for (i, ((n, j), a)) in none.iter().zip(&join).zip(&all).enumerate() {
            prop_assert!(*n <= j + 1e-9, "op {i}: none {n} > join {j}");
            prop_assert!(*j <= a + 1e-9, "op {i}: join {j} > all {a}");
        }
    }
}
