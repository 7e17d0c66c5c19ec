//! The reading of a walk's streams and waits into lanes, on hand-made walks.

use super::*;
use crate::trace::{Op, StreamWait};

fn op(stream: u64, corr: u64) -> Op {
    Op {
        device: Some(0),
        stream: Some(stream),
        correlation: Some(corr),
        ..Op::kernel("k", corr as f64, 1.0)
    }
}

fn wait(stream: u64, correlation: u64) -> StreamWait {
    StreamWait::new(stream, correlation)
}

#[test]
fn fork_and_join_become_waits_on_the_other_lanes() {
    // main (7) runs k0; s1 (13) and s2 (17) wait on main, each run one kernel; main
    // waits on both and runs the last kernel.
    let w = Walk {
        ops: vec![op(7, 1), op(13, 4), op(17, 6), op(7, 9)],
        waits: vec![wait(13, 2), wait(17, 3), wait(7, 7), wait(7, 8)],
        ..Walk::default()
    };
    let s = Schedule::of(&w);
    assert_eq!(s.streams, vec![Some(7), Some(13), Some(17)]);
    assert_eq!(s.basis, Basis::RecordedWaits(4));
    assert_eq!(
        s.items,
        vec![
            Item::Op { lane: 0, op: 0 },
            Item::Wait {
                lane: 1,
                on: vec![0]
            },
            Item::Wait {
                lane: 2,
                on: vec![0]
            },
            Item::Op { lane: 1, op: 1 },
            Item::Op { lane: 2, op: 2 },
            Item::Wait {
                lane: 0,
                on: vec![1, 2]
            },
            Item::Wait {
                lane: 0,
                on: vec![1, 2]
            },
            Item::Op { lane: 0, op: 3 },
        ]
    );
}

#[test]
fn the_side_by_side_share_counts_time_with_two_lanes_busy() {
    // Fork/join: k0 (1) on main, then 13 runs 4 and 17 runs 2 side by side, then k3 (1).
    let mut ops = vec![op(7, 1), op(13, 4), op(17, 6), op(7, 9)];
    for (o, d) in ops.iter_mut().zip([1.0, 4.0, 2.0, 1.0]) {
        o.duration_ns = d;
    }
    let w = Walk {
        ops,
        waits: vec![wait(13, 2), wait(17, 3), wait(7, 7), wait(7, 8)],
        ..Walk::default()
    };
    let s = Schedule::of(&w);
    assert_eq!(
        s.lay_out(|op| w.ops[op].duration_ns),
        vec![(0, 0.0, 1.0), (1, 1.0, 5.0), (2, 1.0, 3.0), (0, 5.0, 6.0)]
    );
    // Two lanes busy from 1 to 3 of 6.
    assert!((s.side_by_side_share(&w) - 2.0 / 6.0).abs() < 1e-12);
    let one = Walk {
        ops: vec![op(7, 1)],
        ..Walk::default()
    };
    assert_eq!(Schedule::of(&one).side_by_side_share(&one), 0.0);
}

#[test]
fn without_waits_or_ids_the_walk_is_serialised() {
    let plain = Walk {
        ops: vec![op(7, 1), op(13, 2)],
        ..Walk::default()
    };
    let s = Schedule::of(&plain);
    assert_eq!((s.lanes(), s.basis), (1, Basis::Serialised));
    assert_eq!(s.items.len(), 2);
    let mut no_ids = plain.clone();
    no_ids.waits = vec![wait(13, 2)];
    no_ids.ops[1].correlation = None;
    assert_eq!(Schedule::of(&no_ids).basis, Basis::Serialised);
    let one = Walk {
        ops: vec![op(7, 1), op(7, 2)],
        waits: vec![wait(7, 3)],
        ..Walk::default()
    };
    assert_eq!(Schedule::of(&one).basis, Basis::OneStream);
}

#[test]
fn without_waits_the_streams_can_also_be_laid_out_never_waiting() {
    // 7 runs 1 and 3, 13 runs 2: side by side, 7's two ops one after the other.
    let mut ops = vec![op(7, 1), op(13, 2), op(7, 3)];
    for (o, d) in ops.iter_mut().zip([2.0, 5.0, 2.0]) {
        o.duration_ns = d;
    }
    let w = Walk {
        ops,
        ..Walk::default()
    };
    let s = Schedule::independent(&w).unwrap();
    assert_eq!(s.streams, vec![Some(7), Some(13)]);
    assert_eq!(s.basis, Basis::Unordered);
    assert_eq!(
        s.lay_out(|op| w.ops[op].duration_ns),
        vec![(0, 0.0, 2.0), (1, 0.0, 5.0), (0, 2.0, 4.0)]
    );
    // One stream, or an op on none: nothing to lay out side by side.
    let one = Walk {
        ops: vec![op(7, 1), op(7, 2)],
        ..Walk::default()
    };
    assert!(Schedule::independent(&one).is_none());
    let mut unknown = w.clone();
    unknown.ops[1].stream = None;
    assert!(Schedule::independent(&unknown).is_none());
}

#[test]
fn under_waits_none_recorded_waits_are_left_out() {
    // The fork/join walk of the first test: every lane starts at once.
    let mut w = Walk {
        ops: vec![op(7, 1), op(13, 4), op(17, 6), op(7, 9)],
        waits: vec![wait(13, 2), wait(17, 3), wait(7, 7), wait(7, 8)],
        ..Walk::default()
    };
    assert_eq!(Schedule::of(&w).basis, Basis::RecordedWaits(4));
    w.wait_rule = WaitRule::None;
    let s = Schedule::of(&w);
    assert_eq!(s.basis, Basis::Unordered);
    assert!(
        s.items.iter().all(|i| matches!(i, Item::Op { .. })),
        "{s:?}"
    );
    assert_eq!(
        s.lay_out(|_| 1.0),
        vec![(0, 0.0, 1.0), (1, 0.0, 1.0), (2, 0.0, 1.0), (0, 1.0, 2.0)]
    );
    assert!(s.describe().contains("never waiting on each other"));
    // One stream has nothing to leave out.
    let one = Walk {
        ops: vec![op(7, 1), op(7, 2)],
        wait_rule: WaitRule::None,
        ..Walk::default()
    };
    assert_eq!(Schedule::of(&one).basis, Basis::OneStream);
}

#[test]
fn forks_one_after_another_wait_on_the_joining_lane() {
    // No work on main (7) before the forks: 13 forks and runs, then 17 forks and runs,
    // then main joins both and runs the last kernel.
    let w = Walk {
        ops: vec![op(13, 2), op(17, 4), op(7, 7)],
        waits: vec![wait(13, 1), wait(17, 3), wait(7, 5), wait(7, 6)],
        ..Walk::default()
    };
    let s = Schedule::of(&w);
    // 17's fork does not wait for 13's kernel: both start at 0.
    let spans = s.lay_out(|_| 1.0);
    assert_eq!(spans, vec![(0, 0.0, 1.0), (1, 0.0, 1.0), (2, 1.0, 2.0)]);
    assert_eq!(s.forks_on_join, 1);
    // Waiting on every lane queues 17 behind 13.
    let all = Walk {
        wait_rule: WaitRule::All,
        ..w
    };
    let s = Schedule::of(&all);
    assert_eq!(s.forks_on_join, 0);
    assert_eq!(
        s.lay_out(|_| 1.0),
        vec![(0, 0.0, 1.0), (1, 1.0, 2.0), (2, 2.0, 3.0)]
    );
}

#[test]
fn waits_before_any_other_work_and_on_unknown_streams_are_dropped() {
    let w = Walk {
        ops: vec![op(7, 2), op(13, 4)],
        waits: vec![wait(13, 1), wait(99, 3)],
        ..Walk::default()
    };
    let s = Schedule::of(&w);
    assert_eq!(s.basis, Basis::RecordedWaits(0));
    assert!(s.items.iter().all(|i| matches!(i, Item::Op { .. })));
}

#[test]
fn spans_of_a_lay_out_map_back_to_their_ops_in_any_order() {
    // main runs op 0 and op 3, s1 op 1, s2 op 2 (fork and join as above).
    let w = Walk {
        ops: vec![op(7, 1), op(13, 4), op(17, 6), op(7, 9)],
        waits: vec![wait(13, 2), wait(17, 3), wait(7, 7), wait(7, 8)],
        ..Walk::default()
    };
    let s = Schedule::of(&w);
    let costs = [10.0, 20.0, 30.0, 5.0];
    let issued = s.lay_out(|op| costs[op]);
    let by_op = s.spans_by_op(&issued, 4);
    assert_eq!(
        by_op,
        vec![
            Some((0, 0.0, 10.0)),
            Some((1, 10.0, 20.0 + 10.0)),
            Some((2, 10.0, 40.0)),
            Some((0, 40.0, 45.0)),
        ]
    );
    // Spans in the order they end (as the sharing lay-out gives them) map the same.
    let mut by_end = issued.clone();
    by_end.sort_by(|a, b| a.2.total_cmp(&b.2));
    assert_eq!(s.spans_by_op(&by_end, 4), by_op);
    // A span beyond what a lane holds is left out; an op with none is None.
    assert_eq!(s.spans_by_op(&issued[..1], 4)[1], None);
    let extra = [issued.clone(), vec![(1, 50.0, 60.0)]].concat();
    assert_eq!(s.spans_by_op(&extra, 4), by_op);
}

mod records;
