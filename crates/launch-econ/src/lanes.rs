//! A recorded walk as lanes — one per recorded stream — and the cross-stream waits between
//! them, in the order the host issued everything.
//!
//! Kineto records each `cudaStreamWaitEvent` (with `enable_cuda_sync_events`) on the waiting
//! stream, but not which stream recorded the event (PyTorch 2.11 leaves `wait_on_stream` at
//! −1). The event is recorded just before the wait, on some other stream. A lane's first wait,
//! where it starts the lane's work in the walk (a fork), is taken to wait on the lane that
//! joins the others at the end (the lane of the walk's last op), as a framework's
//! `side.wait_stream(main)` does; every other wait (a join, a wait in mid-chain, a second wait
//! before the lane's work: a framework forks a stream once) on the work issued so far on
//! *every* other lane. Where the trace holds wait calls it has no GPU-side record of
//! ([`Walk::unrecorded_waits`]: joins by a stream that ran nothing after them, such as a main
//! stream that only forks and joins side streams), the last op's lane is no joiner: the lane
//! that ran work before any wait on it joins, or, with none, a stream that ran none of the
//! walk's work, and forks from it wait on nothing (an H100 walk of two such lanes of 120 adds
//! each: +117% read the other way).
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
//! a fork. Nor is any wait on an event that some wait waits on after its stream's work began
//! (a pipeline's `ready` event, recorded again every layer, whose first wait comes before
//! the consumer's first kernel), where a fork's event — fresh for each fork, as
//! `wait_stream`'s, or one event recorded again for each — is waited on only before a
//! stream's work. And where the event ids number the record calls
//! (`crate::trace::recordings`), a wait that is not a fork waits for what was issued before
//! its event's record call ([`Item::Record`]), not before the wait ([`WaitRule::All`] leaves
//! that reading out). A walk on several streams without recorded waits runs on one lane, in
//! start order — an upper bound — and the replay says so.

use std::collections::{HashMap, HashSet};

use crate::trace::{WaitRule, Walk};

/// An op laid out on a lane: its lane, start and end, ns.
pub type Span = (usize, f64, f64);

/// One thing to issue, in host order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// `walk.ops[op]`, on `lane`.
    Op { lane: usize, op: usize },
    /// `lane` waits for what has been issued so far on each lane of `on`.
    Wait { lane: usize, on: Vec<usize> },
    /// An event record call that later waits wait on: the work issued so far on each lane of
    /// `on` (any of them may have recorded it).
    Record { on: Vec<usize> },
    /// `lane` waits for what the [`Item::Wait`] or [`Item::Record`] at `items[at]` covered (a
    /// wait on a recording an earlier wait waited on, or on a known record call).
    WaitOn { lane: usize, at: usize },
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
    /// Waits read as waiting for the work issued before their event's record call.
    pub waits_at_record: usize,
    /// Waits that are neither forks nor tied to a recording of their event, read as waiting
    /// for all other lanes' work issued before them: an upper bound where the program waits
    /// on an event it recorded earlier (see `trace::recordings`).
    pub waits_on_all_before: usize,
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
    /// Several streams, each run as if it never waited on another ([`WaitRule::None`]).
    Unordered,
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

    /// A lane per recorded stream, each op on its stream's lane in start order and no lane
    /// waiting on another: the walk's streams as if they never waited on each other
    /// ([`WaitRule::None`]; for a walk whose trace records no waits, the lower bound beside
    /// [`Schedule::serialised`]'s upper one). `None` where fewer than two streams are recorded
    /// or an op has none.
    pub fn independent(walk: &Walk) -> Option<Schedule> {
        if walk.ops.iter().any(|o| o.stream.is_none()) {
            return None;
        }
        let streams = recorded_streams(walk);
        let lane_of: HashMap<u64, usize> =
            streams.iter().enumerate().map(|(i, &s)| (s, i)).collect();
        let items = walk
            .ops
            .iter()
            .enumerate()
            .filter_map(|(op, o)| {
                Some(Item::Op {
                    lane: *lane_of.get(&o.stream?)?,
                    op,
                })
            })
            .collect();
        (streams.len() >= 2).then(|| {
            Schedule::without_waits(
                streams.into_iter().map(Some).collect(),
                items,
                Basis::Unordered,
            )
        })
    }

    /// A schedule whose lanes never wait on each other.
    fn without_waits(streams: Vec<Option<u64>>, items: Vec<Item>, basis: Basis) -> Schedule {
        Schedule {
            streams,
            items,
            basis,
            forks_on_join: 0,
            waits_again: 0,
            waits_at_record: 0,
            waits_on_all_before: 0,
        }
    }

    /// One lane with every op in start order.
    fn serial(walk: &Walk, basis: Basis) -> Schedule {
        let items = (0..walk.ops.len())
            .map(|op| Item::Op { lane: 0, op })
            .collect();
        Schedule::without_waits(vec![None], items, basis)
    }

    /// The schedule of `walk` (see the module documentation).
    pub fn of(walk: &Walk) -> Schedule {
        let streams = recorded_streams(walk);
        if streams.len() <= 1 {
            return Schedule::serial(walk, Basis::OneStream);
        }
        if walk.wait_rule == WaitRule::None {
            if let Some(unordered) = Schedule::independent(walk) {
                return unordered;
            }
        }
        let ordered = walk
            .ops
            .iter()
            .all(|o| o.correlation.is_some() && o.stream.is_some());
        if walk.waits.is_empty() || !ordered {
            return Schedule::serial(walk, Basis::Serialised);
        }
        let reading = Reading::of(walk, &streams);
        let mut order = IssueOrder::new(streams.len());
        for (c, call) in reading.calls() {
            match call {
                Call::Op(i) => order.op(reading.lane_of_op(i), i),
                Call::Record => order.record(c),
                Call::Wait(i) => order.wait(&reading, i),
            }
        }
        Schedule {
            streams: streams.into_iter().map(Some).collect(),
            basis: Basis::RecordedWaits(order.waits),
            items: order.items,
            forks_on_join: order.forks_on_join,
            waits_again: order.waits_again,
            waits_at_record: order.waits_at_record,
            waits_on_all_before: order.waits_on_all_before,
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
                Item::Record { on } => {
                    until[k] = on.iter().map(|&l| clock[l]).fold(0.0, f64::max);
                }
                Item::WaitOn { lane, at } => {
                    clock[*lane] = clock[*lane].max(until[*at]);
                }
            }
        }
        out
    }

    /// `spans` of a lay-out of this schedule ([`Schedule::lay_out`], in issue order, or
    /// [`crate::sharing::lay_out_sharing`], in the order the ops end) by op index: each op's
    /// (lane, start, end), `None` for ops of a walk of `ops` the schedule does not hold. Each
    /// lane runs its ops in issue order, so a lane's n-th span is its n-th op.
    pub fn spans_by_op(&self, spans: &[Span], ops: usize) -> Vec<Option<Span>> {
        let mut lane_ops = vec![Vec::new(); self.lanes()];
        for item in &self.items {
            if let Item::Op { lane, op } = item {
                lane_ops[*lane].push(*op);
            }
        }
        let mut taken = vec![0usize; self.lanes()];
        let mut out = vec![None; ops];
        for &(lane, start, end) in spans {
            let Some(&op) = lane_ops.get(lane).and_then(|l| l.get(taken[lane])) else {
                continue;
            };
            taken[lane] += 1;
            if let Some(slot) = out.get_mut(op) {
                *slot = Some((lane, start, end));
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
            Basis::Unordered => format!(
                "{} streams on {} lanes, never waiting on each other (--waits none: a lower bound)",
                self.lanes(),
                self.lanes()
            ),
        }
    }
}

/// A host call the schedule places, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Call {
    /// `walk.ops[i]`.
    Op(usize),
    /// `walk.waits[i]`.
    Wait(usize),
    /// An event record call that waits other than forks are known to wait on.
    Record,
}

/// The walk's recorded streams in the order their first ops appear.
fn recorded_streams(walk: &Walk) -> Vec<u64> {
    let mut streams: Vec<u64> = Vec::new();
    for s in walk.ops.iter().filter_map(|o| o.stream) {
        if !streams.contains(&s) {
            streams.push(s);
        }
    }
    streams
}

/// How each recorded wait of a walk on several streams is read, from the whole walk: which
/// waits are forks, which are on a recording several streams wait on, which are read at
/// their event's record call (see the module documentation).
struct Reading<'w> {
    walk: &'w Walk,
    lane_of: HashMap<u64, usize>,
    /// Each lane's first op's correlation id: a wait before it starts the lane's work.
    first_op: Vec<u64>,
    /// Each lane's first wait's correlation id: the only wait that can fork it.
    first_wait: Vec<u64>,
    /// The lane that joins the others at the end: the lane of the walk's last op, or, where
    /// the trace holds joins of a stream that ran nothing after them
    /// ([`Walk::unrecorded_waits`]), the first lane that ran work before any wait on it;
    /// `None` for a joining stream that ran none of the walk's work.
    join: Option<usize>,
    /// How many waits wait on each recording.
    per_recording: HashMap<u64, usize>,
    /// Events some wait waits on after its stream's work began: a program's own events that
    /// order work between streams (a pipeline's `ready`, recorded again every layer), where
    /// a fork's event, fresh or recorded again for each fork, is only ever waited on before
    /// a stream's work.
    ordering: HashSet<u64>,
}

impl<'w> Reading<'w> {
    /// `walk`'s waits read against its `streams` (every op has a stream and a correlation
    /// id).
    fn of(walk: &'w Walk, streams: &[u64]) -> Reading<'w> {
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
        };
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
        reading
    }

    fn corr(&self, op: usize) -> u64 {
        self.walk.ops[op].correlation.unwrap_or(0)
    }

    fn lane_of_op(&self, op: usize) -> usize {
        self.lane_of[&self.walk.ops[op].stream.unwrap_or(0)]
    }

    /// The lane of wait `i`; `None` for a stream with no ops in this walk.
    fn lane_of_wait(&self, i: usize) -> Option<usize> {
        self.lane_of.get(&self.walk.waits[i].stream).copied()
    }

    /// Whether wait `i` is on a recording several streams wait on: an event of the program's
    /// own, not a framework's fork (which records a fresh event per wait); it may have been
    /// recorded on any stream, the waiting one included.
    fn shared(&self, i: usize) -> bool {
        self.walk.waits[i]
            .recording
            .is_some_and(|r| self.per_recording[&r] > 1)
    }

    /// Whether wait `i` on `lane` is read as a fork from the joining lane.
    fn fork(&self, i: usize, lane: usize) -> bool {
        let w = &self.walk.waits[i];
        self.walk.wait_rule == WaitRule::Join
            && !self.shared(i)
            && !w.event.is_some_and(|e| self.ordering.contains(&e))
            && Some(lane) != self.join
            && w.correlation < self.first_op[lane]
            && w.correlation == self.first_wait[lane]
    }

    /// The record call wait `i` on `lane` is read at, where it is read at one.
    fn at_record(&self, i: usize, lane: usize) -> Option<u64> {
        self.walk.waits[i]
            .recorded_at
            .filter(|_| self.walk.wait_rule != WaitRule::All && !self.fork(i, lane))
    }

    /// The ops, waits and the record calls read waits wait on, in host issue order by
    /// correlation id (at one id: ops, waits, records), each with its id.
    fn calls(&self) -> Vec<(u64, Call)> {
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

/// The schedule's items as the host calls are placed in issue order, with what was issued on
/// each lane so far and the counts the report gives.
struct IssueOrder {
    issued: Vec<bool>,
    items: Vec<Item>,
    waits: usize,
    forks_on_join: usize,
    waits_again: usize,
    waits_at_record: usize,
    waits_on_all_before: usize,
    /// The item that marked each record call (`None`: nothing had been issued).
    record_item: HashMap<u64, Option<usize>>,
    /// The first wait's item on each recording (`None`: nothing to wait for).
    first_wait: HashMap<u64, Option<usize>>,
}

impl IssueOrder {
    fn new(lanes: usize) -> IssueOrder {
        IssueOrder {
            issued: vec![false; lanes],
            items: Vec::new(),
            waits: 0,
            forks_on_join: 0,
            waits_again: 0,
            waits_at_record: 0,
            waits_on_all_before: 0,
            record_item: HashMap::new(),
            first_wait: HashMap::new(),
        }
    }

    /// The lanes other than `except` that have had work issued.
    fn issued_on(&self, except: Option<usize>) -> Vec<usize> {
        (0..self.issued.len())
            .filter(|&l| Some(l) != except && self.issued[l])
            .collect()
    }

    fn op(&mut self, lane: usize, op: usize) {
        self.issued[lane] = true;
        self.items.push(Item::Op { lane, op });
    }

    /// Record call `c`: any stream may have recorded it, so what each had issued.
    fn record(&mut self, c: u64) {
        let on = self.issued_on(None);
        self.record_item
            .insert(c, (!on.is_empty()).then_some(self.items.len()));
        if !on.is_empty() {
            self.items.push(Item::Record { on });
        }
    }

    /// Wait `i` of the walk, as `reading` reads it.
    fn wait(&mut self, reading: &Reading, i: usize) {
        let w = &reading.walk.waits[i];
        let Some(lane) = reading.lane_of_wait(i) else {
            return;
        };
        // A wait on a known record call, or again on a recording an earlier wait waited on.
        let again = match (reading.at_record(i, lane), w.recording) {
            (Some(r), _) => {
                self.waits_at_record += 1;
                Some(self.record_item[&r])
            }
            (_, Some(r)) if self.first_wait.contains_key(&r) => {
                self.waits_again += 1;
                Some(self.first_wait[&r])
            }
            _ => None,
        };
        if let Some(at) = again {
            if let Some(at) = at {
                self.waits += 1;
                self.items.push(Item::WaitOn { lane, at });
            }
            return;
        }
        let on = if reading.fork(i, lane) {
            let everything = self.issued_on(Some(lane));
            let on: Vec<usize> = everything
                .iter()
                .copied()
                .filter(|&l| Some(l) == reading.join)
                .collect();
            if on.len() < everything.len() {
                self.forks_on_join += 1;
            }
            on
        } else {
            let on = self.issued_on((!reading.shared(i)).then_some(lane));
            if !on.is_empty() {
                self.waits_on_all_before += 1;
            }
            on
        };
        let item = (!on.is_empty()).then_some(self.items.len());
        if let Some(r) = w.recording {
            self.first_wait.insert(r, item);
        }
        if item.is_some() {
            self.waits += 1;
            self.items.push(Item::Wait { lane, on });
        }
    }
}

#[cfg(test)]
mod tests;
