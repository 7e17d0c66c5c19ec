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
//! that reading out): where work was issued both since the record call before it and before
//! the one after it, for the work of the lane that issued last before it alone, since a
//! program records an event right after issuing the work it marks — so a pipeline's stage
//! waits on the stage before, not on stages further on (an H100 walk of three stages passing
//! four micro-batches priced +20% with the record read as made on every lane); record calls
//! one after another (the joins of several streams) stay read as made on any lane. Where the
//! ids do not tie a wait to its call (events recorded again, one per pipeline stage), a wait
//! issued right after a record call, nothing between them, is read at that call, so the same
//! reading of its stream applies (an H100 pipeline of that kind: +45% read on every lane,
//! +8.5% so). A walk on
//! several streams without recorded waits runs on one lane, in start order — an upper bound
//! — and the replay says so.

use std::collections::HashMap;

use crate::trace::{WaitRule, Walk};
use reading::{Call, Reading};

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
    /// Waits the event ids do not tie to a record call, read as waiting for what the record
    /// call right before them covered (nothing issued between).
    pub waits_right_after_record: usize,
    /// Of the waits read at a record call, those whose call is read as made on one lane (the
    /// one that issued work right before it).
    pub waits_on_producer: usize,
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
            waits_right_after_record: 0,
            waits_on_producer: 0,
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
                Call::Record => order.record(c, reading.producer.get(&c).copied()),
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
            waits_right_after_record: order.waits_right_after_record,
            waits_on_producer: order.waits_on_producer,
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

/// The schedule's items as the host calls are placed in issue order, with what was issued on
/// each lane so far and the counts the report gives.
struct IssueOrder {
    issued: Vec<bool>,
    items: Vec<Item>,
    waits: usize,
    forks_on_join: usize,
    waits_again: usize,
    waits_at_record: usize,
    waits_right_after_record: usize,
    waits_on_producer: usize,
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
            waits_right_after_record: 0,
            waits_on_producer: 0,
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

    /// Record call `c`: what `producer` had issued, where the reading names the lane that
    /// recorded it, else what each lane had (any may have recorded it).
    fn record(&mut self, c: u64, producer: Option<usize>) {
        let on = match producer {
            Some(l) => vec![l],
            None => self.issued_on(None),
        };
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
                if w.recorded_at.is_some() {
                    self.waits_at_record += 1;
                } else {
                    self.waits_right_after_record += 1;
                }
                self.waits_on_producer += usize::from(reading.producer.contains_key(&r));
                // Later waits on the same recording wait for what this one did.
                if let Some(recording) = w.recording {
                    self.first_wait
                        .entry(recording)
                        .or_insert(self.record_item[&r]);
                }
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
mod props;
mod reading;
#[cfg(test)]
mod tests;
