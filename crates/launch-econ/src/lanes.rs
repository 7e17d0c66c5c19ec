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
//! rules differ. Where the trace names the event a wait waits on (Kineto's
//! `wait_on_cuda_event_id`), a wait on an event that an earlier wait waited on, with no event
//! recorded between the two calls, waits for the same work as that earlier wait, whatever was
//! issued between them (one recording waited on by several streams, as a producer's output is
//! by its consumers); such an event is the program's own, so its first wait is never read as
//! a fork. A walk on several streams without recorded waits runs on one lane, in
//! start order — an upper bound — and the replay says so.

use std::collections::HashMap;

use crate::trace::{WaitRule, Walk};

/// One thing to issue, in host order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// `walk.ops[op]`, on `lane`.
    Op { lane: usize, op: usize },
    /// `lane` waits for what has been issued so far on each lane of `on`.
    Wait { lane: usize, on: Vec<usize> },
    /// `lane` waits for what the [`Item::Wait`] at `items[wait]` waited for (a later wait on
    /// the same recording of an event).
    WaitAgain { lane: usize, wait: usize },
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
    /// Waits read as waiting again on a recording an earlier wait waited on.
    pub waits_again: usize,
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
            waits_again: 0,
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
        let mut waits_again = 0;
        // How many waits wait on each recording, and the item of the first one's wait
        // (`None`: it waited on nothing).
        let mut per_recording: HashMap<u64, usize> = HashMap::new();
        for r in walk.waits.iter().filter_map(|w| w.recording) {
            *per_recording.entry(r).or_default() += 1;
        }
        let mut first_wait: HashMap<u64, Option<usize>> = HashMap::new();
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
            let recording = walk.waits[i].recording;
            if let Some(&first) = recording.and_then(|r| first_wait.get(&r)) {
                if let Some(wait) = first {
                    waits += 1;
                    waits_again += 1;
                    items.push(Item::WaitAgain { lane, wait });
                }
                continue;
            }
            // A recording several streams wait on is an event of the program's own, not a
            // framework's fork (which records a fresh event per wait): it may have been
            // recorded on any stream, the waiting one included, so its first wait waits on
            // all streams' work issued so far.
            let shared = recording.is_some_and(|r| per_recording[&r] > 1);
            let all: Vec<usize> = (0..streams.len())
                .filter(|&l| (l != lane || shared) && issued[l])
                .collect();
            let on = match join {
                Some(j)
                    if walk.wait_rule == WaitRule::Join
                        && !shared
                        && !issued[lane]
                        && lane != j =>
                {
                    let on: Vec<usize> = all.iter().copied().filter(|&l| l == j).collect();
                    if on.len() < all.len() {
                        forks_on_join += 1;
                    }
                    on
                }
                _ => all,
            };
            let item = (!on.is_empty()).then_some(items.len());
            if let Some(r) = recording {
                first_wait.insert(r, item);
            }
            if item.is_some() {
                waits += 1;
                items.push(Item::Wait { lane, on });
            }
        }
        Schedule {
            streams: streams.into_iter().map(Some).collect(),
            items,
            basis: Basis::RecordedWaits(waits),
            forks_on_join,
            waits_again,
        }
    }

    /// Lays the walk out on its lanes: each op for `cost(op)` ns after the one before it on its
    /// lane, a wait holding its lane until the lanes it waits on have run what was issued on
    /// them. Returns each op's lane, start and end, ns, in issue order.
    pub fn lay_out(&self, mut cost: impl FnMut(usize) -> f64) -> Vec<(usize, f64, f64)> {
        let mut clock = vec![0.0f64; self.lanes()];
        // What each wait item waited for: when that work ends.
        let mut until = vec![0.0f64; self.items.len()];
        let mut out = Vec::with_capacity(self.items.len());
        for (k, item) in self.items.iter().enumerate() {
            match item {
                Item::Op { lane, op } => {
                    let start = clock[*lane];
                    clock[*lane] += cost(*op);
                    out.push((*lane, start, clock[*lane]));
                }
                Item::Wait { lane, on } => {
                    until[k] = on.iter().map(|&l| clock[l]).fold(0.0, f64::max);
                    clock[*lane] = clock[*lane].max(until[k]);
                }
                Item::WaitAgain { lane, wait } => {
                    clock[*lane] = clock[*lane].max(until[*wait]);
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
            recording: None,
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
    fn a_later_wait_on_the_same_recording_waits_for_what_the_first_waited_for() {
        // A producer lane (13) and a consumer (17) each ran a kernel; the producer runs
        // another, its event is waited on by a copier (21, after its own first copy) and then,
        // after the copier's next copy was issued, by the consumer: one recording.
        let mut ops = vec![
            op(13, 1),
            op(17, 2),
            op(21, 3),
            op(13, 4),
            op(21, 6),
            op(17, 8),
        ];
        for (o, d) in ops.iter_mut().zip([1.0, 1.0, 1.0, 1.0, 5.0, 1.0]) {
            o.duration_ns = d;
        }
        let shared = |stream, correlation| StreamWait {
            recording: Some(5),
            ..wait(stream, correlation)
        };
        let w = Walk {
            ops,
            waits: vec![shared(21, 5), shared(17, 7)],
            ..Walk::default()
        };
        let s = Schedule::of(&w);
        assert_eq!((s.basis, s.waits_again), (Basis::RecordedWaits(2), 1));
        assert_eq!(
            s.items[4..],
            [
                // What the copier issued itself is in the snapshot: the event may be its own.
                Item::Wait {
                    lane: 2,
                    on: vec![0, 1, 2]
                },
                Item::Op { lane: 2, op: 4 },
                Item::WaitAgain { lane: 1, wait: 4 },
                Item::Op { lane: 1, op: 5 },
            ]
        );
        // The consumer's kernel follows the producer's second kernel (1..2), not the copy
        // issued before its wait (2..7).
        let spans = s.lay_out(|op| w.ops[op].duration_ns);
        assert_eq!(spans[4], (2, 2.0, 7.0));
        assert_eq!(spans[5], (1, 2.0, 3.0));
        // Without the event's id each wait waits on all work issued before it.
        let unnamed = Walk {
            waits: vec![wait(21, 5), wait(17, 7)],
            ..w.clone()
        };
        let spans = Schedule::of(&unnamed).lay_out(|op| w.ops[op].duration_ns);
        assert_eq!(spans[5], (1, 7.0, 8.0));
    }

    #[test]
    fn a_recording_several_streams_wait_on_is_not_read_as_a_fork() {
        // Main (7) runs last, so it is the joining lane. A producer (13) runs a kernel, then a
        // copier (21) and a consumer (17) that ran nothing yet wait on one recording: they
        // wait on the producer, where a fork would wait on main alone (nothing issued).
        let w = Walk {
            ops: vec![op(13, 1), op(21, 4), op(17, 5), op(7, 6)],
            waits: vec![
                StreamWait {
                    recording: Some(2),
                    ..wait(21, 2)
                },
                StreamWait {
                    recording: Some(2),
                    ..wait(17, 3)
                },
            ],
            ..Walk::default()
        };
        let s = Schedule::of(&w);
        assert_eq!((s.forks_on_join, s.waits_again), (0, 1));
        assert_eq!(
            s.lay_out(|_| 1.0),
            vec![(0, 0.0, 1.0), (1, 1.0, 2.0), (2, 1.0, 2.0), (3, 0.0, 1.0)]
        );
        // Each on an event of its own, both are forks from main.
        let forks = Walk {
            waits: vec![wait(21, 2), wait(17, 3)],
            ..w
        };
        let s = Schedule::of(&forks);
        assert_eq!(s.forks_on_join, 2);
        assert_eq!(s.lay_out(|_| 1.0)[1], (1, 0.0, 1.0));
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
