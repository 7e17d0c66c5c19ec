//! How the recorded waits of a walk on several streams are read (see [`super`]): which are
//! forks, which wait on a recording several streams wait on, which are read at their event's
//! record call and on which lane that call recorded.

use std::collections::{HashMap, HashSet};

use crate::trace::{WaitRule, Walk};

/// A host call the schedule places, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Call {
    /// `walk.ops[i]`.
    Op(usize),
    /// `walk.waits[i]`.
    Wait(usize),
    /// An event record call that waits other than forks are known to wait on.
    Record,
}

/// How each recorded wait of a walk on several streams is read, from the whole walk: which
/// waits are forks, which are on a recording several streams wait on, which are read at
/// their event's record call (see [`super`]).
pub(super) struct Reading<'w> {
    pub(super) walk: &'w Walk,
    lane_of: HashMap<u64, usize>,
    /// Each lane's first op's correlation id: a wait before it starts the lane's work.
    first_op: Vec<u64>,
    /// Each lane's first wait's correlation id: the only wait that can fork it.
    first_wait: Vec<u64>,
    /// The lane that joins the others at the end: the lane of the walk's last op, or, where
    /// the trace holds joins of a stream that ran nothing after them
    /// ([`Walk::unrecorded_waits`]), the first lane that ran work before any wait on it;
    /// `None` for a joining stream that ran none of the walk's work.
    pub(super) join: Option<usize>,
    /// How many waits wait on each recording.
    per_recording: HashMap<u64, usize>,
    /// Events some wait waits on after its stream's work began: a program's own events that
    /// order work between streams (a pipeline's `ready`, recorded again every layer), where
    /// a fork's event, fresh or recorded again for each fork, is only ever waited on before
    /// a stream's work.
    ordering: HashSet<u64>,
    /// Record calls read as recorded on one lane: the lane that issued work last before the
    /// call, where it issued some since the record call before it and no wait on the event
    /// is that lane's own (see [`Reading::producers`]).
    pub(super) producer: HashMap<u64, usize>,
    /// Each op's correlation id and lane, in issue order.
    issued: Vec<(u64, usize)>,
    /// The waits' correlation ids, in issue order.
    wait_corrs: Vec<u64>,
}

impl<'w> Reading<'w> {
    /// `walk`'s waits read against its `streams` (every op has a stream and a correlation
    /// id).
    pub(super) fn of(walk: &'w Walk, streams: &[u64]) -> Reading<'w> {
        let lane_of: HashMap<u64, usize> =
            streams.iter().enumerate().map(|(i, &s)| (s, i)).collect();
        let mut reading = Reading {
            walk,
            lane_of,
            first_op: vec![u64::MAX; streams.len()],
            first_wait: vec![u64::MAX; streams.len()],
            join: None,
            per_recording: HashMap::new(),
            ordering: HashSet::new(),
            producer: HashMap::new(),
            issued: Vec::new(),
            wait_corrs: walk.waits.iter().map(|w| w.correlation).collect(),
        };
        reading.wait_corrs.sort_unstable();
        for i in 0..walk.ops.len() {
            let l = reading.lane_of_op(i);
            reading.first_op[l] = reading.first_op[l].min(reading.corr(i));
        }
        for w in &walk.waits {
            if let Some(&l) = reading.lane_of.get(&w.stream) {
                reading.first_wait[l] = reading.first_wait[l].min(w.correlation);
            }
        }
        reading.join = if walk.unrecorded_waits > 0 {
            // The joins of a stream that ran nothing after them: the joining stream is the
            // one that ran work before any wait on it (the first such), or none in the walk.
            (0..streams.len())
                .filter(|&l| reading.first_op[l] < reading.first_wait[l])
                .min_by_key(|&l| reading.first_op[l])
        } else {
            (0..walk.ops.len())
                .max_by_key(|&i| reading.corr(i))
                .map(|i| reading.lane_of_op(i))
        };
        for r in walk.waits.iter().filter_map(|w| w.recording) {
            *reading.per_recording.entry(r).or_default() += 1;
        }
        reading.ordering = walk
            .waits
            .iter()
            .filter(|w| {
                reading
                    .lane_of
                    .get(&w.stream)
                    .is_some_and(|&l| w.correlation > reading.first_op[l])
            })
            .filter_map(|w| w.event)
            .collect();
        reading.issued = (0..walk.ops.len())
            .map(|i| (reading.corr(i), reading.lane_of_op(i)))
            .collect();
        reading.issued.sort_unstable();
        reading.producer = reading.producers();
        reading
    }

    /// The lane each record call that waits are read at was recorded on, where the issue
    /// order tells it: a program records an event right after issuing the work it marks
    /// (`wait_stream`, an `Event.record()` after a stage), so a record call with work issued
    /// both since the record call before it and before the one after it was recorded by the
    /// lane that issued last before it. Not where that lane is one that waits on the event
    /// (a stream does not wait on its own work), nor for record calls one after another with
    /// nothing issued between (a join of several streams, events recorded on each stream
    /// after a loop over them): which stream recorded which is not told by the order, so
    /// those stay read as recorded on any lane.
    fn producers(&self) -> HashMap<u64, usize> {
        let issued = &self.issued;
        let records = &self.walk.record_calls;
        let mut waiters: HashMap<u64, Vec<usize>> = HashMap::new();
        for i in 0..self.walk.waits.len() {
            let Some(lane) = self.lane_of_wait(i) else {
                continue;
            };
            if let Some(r) = self.at_record(i, lane) {
                waiters.entry(r).or_default().push(lane);
            }
        }
        waiters
            .into_iter()
            .filter_map(|(r, lanes)| {
                let i = issued.partition_point(|&(c, _)| c < r);
                let &(c, lane) = issued.get(i.checked_sub(1)?)?;
                let k = records.partition_point(|&x| x < r);
                let before = k.checked_sub(1).map(|k| records[k]);
                let after = records.get(k + 1).copied();
                let fresh = before.is_none_or(|b| c > b);
                let alone = after.is_none_or(|a| self.issued_between(r, a));
                (fresh && alone && !lanes.contains(&lane)).then_some((r, lane))
            })
            .collect()
    }

    /// Whether an op was issued after call `from` and before call `to`.
    fn issued_between(&self, from: u64, to: u64) -> bool {
        let i = self.issued.partition_point(|&(c, _)| c <= from);
        self.issued.get(i).is_some_and(|&(c, _)| c < to)
    }

    fn corr(&self, op: usize) -> u64 {
        self.walk.ops[op].correlation.unwrap_or(0)
    }

    pub(super) fn lane_of_op(&self, op: usize) -> usize {
        self.lane_of[&self.walk.ops[op].stream.unwrap_or(0)]
    }

    /// The lane of wait `i`; `None` for a stream with no ops in this walk.
    pub(super) fn lane_of_wait(&self, i: usize) -> Option<usize> {
        self.lane_of.get(&self.walk.waits[i].stream).copied()
    }

    /// Whether wait `i` is on a recording several streams wait on: an event of the program's
    /// own, not a framework's fork (which records a fresh event per wait); it may have been
    /// recorded on any stream, the waiting one included.
    pub(super) fn shared(&self, i: usize) -> bool {
        self.walk.waits[i]
            .recording
            .is_some_and(|r| self.per_recording[&r] > 1)
    }

    /// Whether wait `i` on `lane` is read as a fork from the joining lane.
    pub(super) fn fork(&self, i: usize, lane: usize) -> bool {
        let w = &self.walk.waits[i];
        self.walk.wait_rule == WaitRule::Join
            && !self.shared(i)
            && !w.event.is_some_and(|e| self.ordering.contains(&e))
            && Some(lane) != self.join
            && w.correlation < self.first_op[lane]
            && w.correlation == self.first_wait[lane]
    }

    /// The record call wait `i` on `lane` is read at, where it is read at one: the call the
    /// event ids tie it to, else the record call right before it (see
    /// [`Reading::right_after_record`]).
    pub(super) fn at_record(&self, i: usize, lane: usize) -> Option<u64> {
        if self.walk.wait_rule == WaitRule::All || self.fork(i, lane) {
            return None;
        }
        self.walk.waits[i]
            .recorded_at
            .or_else(|| self.right_after_record(i))
    }

    /// The record call wait `i` was issued right after, with nothing issued and no other
    /// wait between them: a program's `event.record(stream)` then `other.wait_event(event)`
    /// (or `wait_stream`), read so where the event ids do not tie the wait to its call (a
    /// program that records the same events again, one per stage, every micro-batch), as
    /// the record call before a wait covers at least what its event does.
    pub(super) fn right_after_record(&self, i: usize) -> Option<u64> {
        let at = self.walk.waits[i].correlation;
        let records = &self.walk.record_calls;
        let r = *records.get(records.partition_point(|&c| c < at).checked_sub(1)?)?;
        let op_between = self.issued_between(r, at);
        let w = self.wait_corrs.partition_point(|&c| c <= r);
        let wait_between = self.wait_corrs.get(w).is_some_and(|&c| c < at);
        (!op_between && !wait_between).then_some(r)
    }

    /// The ops, waits and the record calls read waits wait on, in host issue order by
    /// correlation id (at one id: ops, waits, records), each with its id.
    pub(super) fn calls(&self) -> Vec<(u64, Call)> {
        let mut calls: Vec<(u64, Call)> = (0..self.walk.ops.len())
            .map(|i| (self.corr(i), Call::Op(i)))
            .collect();
        for (i, w) in self.walk.waits.iter().enumerate() {
            let Some(lane) = self.lane_of_wait(i) else {
                continue;
            };
            calls.push((w.correlation, Call::Wait(i)));
            if let Some(r) = self.at_record(i, lane) {
                calls.push((r, Call::Record));
            }
        }
        calls.sort_unstable();
        calls.dedup();
        calls
    }
}
