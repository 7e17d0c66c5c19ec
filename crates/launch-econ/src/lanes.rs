//! A recorded walk as lanes — one per recorded stream — and the cross-stream waits between
//! them, in the order the host issued everything.
//!
//! Kineto records each `cudaStreamWaitEvent` (with `enable_cuda_sync_events`) on the waiting
//! stream, but not which stream recorded the event (PyTorch 2.11 leaves `wait_on_stream` at
//! −1). The event is recorded just before the wait, on some other stream. A wait that starts a
//! lane's work in the walk (a fork) is taken to wait on the lane that joins the others at the
//! end (the lane of the walk's last op), as a framework's `side.wait_stream(main)` does; every
//! other wait (a join, a wait in mid-chain) on the work issued so far on *every* other lane.
//! Forks issued one after another with work between them (fork A, run A, fork B, run B) are
//! then side by side, as they ran in the graph; taking every wait to wait on every lane
//! ([`WaitRule::All`]) would queue B behind A (an H200 walk of three such chains: +157%). A
//! fork that did wait on another side lane (a pipeline between side streams) is read too short;
//! `WaitRule::All` reads it as an upper bound, and the report counts the forks where the
//! rules differ. A walk on several streams without recorded waits runs on one lane, in start
//! order — an upper bound — and the replay says so.

use std::collections::HashMap;

use crate::trace::{WaitRule, Walk};

/// One thing to issue, in host order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// `walk.ops[op]`, on `lane`.
    Op { lane: usize, op: usize },
    /// `lane` waits for what has been issued so far on each lane of `on`.
    Wait { lane: usize, on: Vec<usize> },
}

/// The walk's lanes and issue order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// The recorded stream of each lane (`None`: the walk serialised onto one lane).
    pub streams: Vec<Option<u64>>,
    pub items: Vec<Item>,
    /// How the lanes were derived, for the report.
    pub basis: Basis,
    /// Forks taken to wait on the joining lane alone where other lanes had work issued before
    /// them (where [`WaitRule::All`] would wait longer).
    pub forks_on_join: usize,
}

/// Why the walk has the lanes it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// One recorded stream.
    OneStream,
    /// Several streams, ordered by this many recorded waits (every op has a correlation id).
    RecordedWaits(usize),
    /// Several streams but no recorded waits (or no correlation ids): serialised.
    Serialised,
}

impl Schedule {
    pub fn lanes(&self) -> usize {
        self.streams.len()
    }

    /// The walk on one lane in start order, whatever its streams: the price of running them
    /// one after another.
    pub fn serialised(walk: &Walk) -> Schedule {
        Schedule::serial(walk, Basis::Serialised)
    }

    /// One lane with every op in start order.
    fn serial(walk: &Walk, basis: Basis) -> Schedule {
        Schedule {
            streams: vec![None],
            items: (0..walk.ops.len())
                .map(|op| Item::Op { lane: 0, op })
                .collect(),
            basis,
            forks_on_join: 0,
        }
    }

    /// The schedule of `walk` (see the module documentation).
    pub fn of(walk: &Walk) -> Schedule {
        let mut streams: Vec<u64> = Vec::new();
        for s in walk.ops.iter().filter_map(|o| o.stream) {
            if !streams.contains(&s) {
                streams.push(s);
            }
        }
        if streams.len() <= 1 {
            return Schedule::serial(walk, Basis::OneStream);
        }
        let ordered = walk
            .ops
            .iter()
            .all(|o| o.correlation.is_some() && o.stream.is_some());
        if walk.waits.is_empty() || !ordered {
            return Schedule::serial(walk, Basis::Serialised);
        }
        let lane_of: HashMap<u64, usize> =
            streams.iter().enumerate().map(|(i, &s)| (s, i)).collect();
        // Host issue order: ops and waits by correlation id (ties: the op first).
        let mut events: Vec<(u64, u8, usize)> = walk
            .ops
            .iter()
            .enumerate()
            .map(|(i, o)| (o.correlation.unwrap_or(0), 0, i))
            .chain(
                walk.waits
                    .iter()
                    .enumerate()
                    .map(|(i, w)| (w.correlation, 1, i)),
            )
            .collect();
        events.sort_unstable();
        let lane_of_op = |i: usize| lane_of[&walk.ops[i].stream.unwrap_or(0)];
        let join = events
            .iter()
            .rev()
            .find(|e| e.1 == 0)
            .map(|e| lane_of_op(e.2));
        let mut issued = vec![false; streams.len()];
        let mut items = Vec::with_capacity(events.len());
        let mut waits = 0;
        let mut forks_on_join = 0;
        for (_, kind, i) in events {
            if kind == 0 {
                let lane = lane_of_op(i);
                issued[lane] = true;
                items.push(Item::Op { lane, op: i });
                continue;
            }
            let Some(&lane) = lane_of.get(&walk.waits[i].stream) else {
                continue; // a stream with no ops in this walk
            };
            let all: Vec<usize> = (0..streams.len())
                .filter(|&l| l != lane && issued[l])
                .collect();
            let on = match join {
                Some(j) if walk.wait_rule == WaitRule::Join && !issued[lane] && lane != j => {
                    let on: Vec<usize> = all.iter().copied().filter(|&l| l == j).collect();
                    if on.len() < all.len() {
                        forks_on_join += 1;
                    }
                    on
                }
                _ => all,
            };
            if !on.is_empty() {
                waits += 1;
                items.push(Item::Wait { lane, on });
            }
        }
        Schedule {
            streams: streams.into_iter().map(Some).collect(),
            items,
            basis: Basis::RecordedWaits(waits),
            forks_on_join,
        }
    }

    /// Lays the walk out on its lanes: each op for `cost(op)` ns after the one before it on its
    /// lane, a wait holding its lane until the lanes it waits on have run what was issued on
    /// them. Returns each op's lane, start and end, ns, in issue order.
    pub fn lay_out(&self, mut cost: impl FnMut(usize) -> f64) -> Vec<(usize, f64, f64)> {
        let mut clock = vec![0.0f64; self.lanes()];
        let mut out = Vec::with_capacity(self.items.len());
        for item in &self.items {
            match item {
                Item::Op { lane, op } => {
                    let start = clock[*lane];
                    clock[*lane] += cost(*op);
                    out.push((*lane, start, clock[*lane]));
                }
                Item::Wait { lane, on } => {
                    clock[*lane] = on.iter().map(|&l| clock[l]).fold(clock[*lane], f64::max);
                }
            }
        }
        out
    }

    /// The share of the walk's time, laid out at its recorded durations, during which two or
    /// more lanes run at once: how much of a graph step kernels on other streams could slow
    /// down (see the replay's warning). 0 on one lane.
    pub fn side_by_side_share(&self, walk: &Walk) -> f64 {
        if self.lanes() < 2 {
            return 0.0;
        }
        let spans = self.lay_out(|op| walk.ops[op].duration_ns.max(0.0));
        let end = spans.iter().map(|s| s.2).fold(0.0, f64::max);
        if end <= 0.0 {
            return 0.0;
        }
        // Ops on one lane never overlap, so the count of running ops is the count of busy
        // lanes; at equal times an end (−1) goes before a start (+1).
        let mut edges: Vec<(f64, i32)> = spans
            .iter()
            .filter(|s| s.2 > s.1)
            .flat_map(|s| [(s.1, 1), (s.2, -1)])
            .collect();
        edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let (mut busy, mut last, mut both) = (0i32, 0.0f64, 0.0f64);
        for (t, d) in edges {
            if busy >= 2 {
                both += t - last;
            }
            busy += d;
            last = t;
        }
        both / end
    }

    /// The schedule in words, for reports.
    pub fn describe(&self) -> String {
        match self.basis {
            Basis::OneStream => "one stream".into(),
            Basis::RecordedWaits(n) => format!(
                "{} streams on {} lanes, ordered by {n} recorded cross-stream waits",
                self.lanes(),
                self.lanes()
            ),
            Basis::Serialised => {
                "several streams serialised onto one (the trace records no cross-stream waits)"
                    .into()
            }
        }
    }
}

#[cfg(test)]
mod tests {
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
        StreamWait {
            stream,
            correlation,
            step: None,
        }
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
}
