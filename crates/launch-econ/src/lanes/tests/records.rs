//! Waits on recorded events: recordings waited on again, by several streams, for forks and for
//! a pipeline's stages.

use super::*;
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
            Item::WaitOn { lane: 1, at: 4 },
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
fn the_first_wait_on_an_event_that_orders_a_pipeline_is_not_read_as_a_fork() {
    // Main (7) forks a first stream (13) and a second (17), then the first runs layer 0 and
    // records event 22, which the second waits on before its own layer 0; again for layer 1.
    // Event 22 is waited on after the second stream's work began, so it orders the streams:
    // the second's first wait waits on the first stream's layer, not on main.
    let ops = vec![op(13, 3), op(17, 5), op(13, 6), op(17, 8), op(7, 9)];
    let on = |stream, correlation, event| StreamWait {
        recording: Some(correlation),
        event: Some(event),
        ..wait(stream, correlation)
    };
    let w = Walk {
        ops,
        waits: vec![on(13, 1, 100), on(17, 2, 101), on(17, 4, 22), on(17, 7, 22)],
        ..Walk::default()
    };
    let s = Schedule::of(&w);
    assert_eq!(s.forks_on_join, 0);
    let spans = s.lay_out(|_| 1.0);
    assert_eq!(spans[1], (1, 1.0, 2.0));
    assert_eq!(spans[3], (1, 2.0, 3.0));
    // On fresh events too: the second stream's second wait before its work is no fork (a
    // stream is forked once), so its layer 0 still waits for the first stream's.
    let fresh = Walk {
        waits: vec![
            on(13, 1, 100),
            on(17, 2, 101),
            on(17, 4, 102),
            on(17, 7, 103),
        ],
        ..w.clone()
    };
    assert_eq!(Schedule::of(&fresh).lay_out(|_| 1.0)[1], (1, 1.0, 2.0));
    // Without its fork from main, that wait is the second stream's first: read as a fork, its
    // layer 0 runs beside the first stream's (a pipeline between side streams on fresh
    // events reads short; `--waits all` prices the upper bound).
    let unforked = Walk {
        waits: vec![on(13, 1, 100), on(17, 4, 102), on(17, 7, 103)],
        ..w
    };
    assert_eq!(Schedule::of(&unforked).lay_out(|_| 1.0)[1], (1, 0.0, 1.0));
}

#[test]
fn a_stream_that_only_forks_and_joins_holds_no_lane_back() {
    // Main (7) runs nothing: it forks a first stream (13), which runs two kernels, then a
    // second (17), which runs two; it joins both, and the trace holds no record of those two
    // joins (no work on main came after them). The second fork, issued after the first
    // stream's work, waits on main's work alone: none.
    let w = Walk {
        ops: vec![op(13, 3), op(13, 4), op(17, 7), op(17, 8)],
        waits: vec![wait(13, 2), wait(17, 6)],
        unrecorded_waits: 2,
        ..Walk::default()
    };
    let s = Schedule::of(&w);
    assert_eq!(s.forks_on_join, 1);
    let spans = s.lay_out(|_| 1.0);
    assert_eq!(spans[2], (1, 0.0, 1.0));
    // With the joins recorded (main running work after them), the last op's stream is taken
    // to join the others, so its wait is no fork and waits on the first stream's work.
    let recorded = Walk {
        unrecorded_waits: 0,
        ..w.clone()
    };
    assert_eq!(Schedule::of(&recorded).lay_out(|_| 1.0)[2], (1, 2.0, 3.0));
    // Where main ran work before forking (and none after its joins), the forks wait on it.
    let main_first = Walk {
        ops: vec![op(7, 1), op(13, 3), op(13, 4), op(17, 7), op(17, 8)],
        ..w
    };
    let spans = Schedule::of(&main_first).lay_out(|_| 1.0);
    assert_eq!(spans[1], (1, 1.0, 2.0));
    assert_eq!(spans[3], (2, 1.0, 2.0));
}

#[test]
fn one_event_recorded_again_for_each_fork_is_still_read_as_forks() {
    // Main (7) records event 5 and a side stream (13) waits on it and runs; main records it
    // again and a second side stream (17) waits and runs; main joins both. Every wait on
    // event 5 starts a stream's work: forks, so the second side stream does not queue
    // behind the first.
    let ops = vec![op(13, 3), op(17, 5), op(7, 9)];
    let fork = |stream, correlation| StreamWait {
        recording: Some(correlation),
        event: Some(5),
        ..wait(stream, correlation)
    };
    let w = Walk {
        ops,
        waits: vec![fork(13, 2), fork(17, 4)],
        ..Walk::default()
    };
    let s = Schedule::of(&w);
    assert_eq!(s.forks_on_join, 1);
    assert_eq!(s.lay_out(|_| 1.0)[1], (1, 0.0, 1.0));
}

#[test]
fn a_wait_whose_record_call_is_known_waits_for_what_was_issued_before_that_call() {
    // A copier (17) copies weights 0 and 1 (records at 2 and 4); compute (13) waits for
    // copy 0 and runs layer 0, records (7); the copier waits for that, copies weights 2
    // (record at 10); compute waits for copy 1, recorded at 4, and runs layer 1.
    let mut ops = vec![op(17, 1), op(17, 3), op(13, 6), op(17, 9), op(13, 12)];
    for (o, d) in ops.iter_mut().zip([5.0, 5.0, 3.0, 5.0, 3.0]) {
        o.duration_ns = d;
    }
    let at = |stream, correlation, record| StreamWait {
        recording: Some(record),
        recorded_at: Some(record),
        ..wait(stream, correlation)
    };
    let w = Walk {
        ops,
        waits: vec![at(13, 5, 2), at(17, 8, 7), at(13, 11, 4)],
        ..Walk::default()
    };
    let s = Schedule::of(&w);
    assert_eq!(s.waits_at_record, 3);
    assert_eq!(s.waits_on_all_before, 0);
    let spans = s.lay_out(|op| w.ops[op].duration_ns);
    // Layer 0 after copy 0; copy 2 after layer 0 was issued (and copy 1 before it, on its
    // own stream); layer 1 after copy 1, beside copy 2.
    assert_eq!(spans[2], (1, 5.0, 8.0));
    assert_eq!(spans[3], (0, 10.0, 15.0));
    assert_eq!(spans[4], (1, 10.0, 13.0));
    // Without the record calls every wait waits for everything issued before it (compute
    // is the joining stream, so none is a fork): layer 0 for copy 1, layer 1 for copy 2;
    // `--waits all` reads them so whatever the trace says.
    let plain = |rule| {
        let mut v = w.clone();
        v.wait_rule = rule;
        if rule == WaitRule::Join {
            for x in &mut v.waits {
                x.recorded_at = None;
                x.recording = None;
            }
        }
        Schedule::of(&v).lay_out(|op| w.ops[op].duration_ns)[4]
    };
    assert_eq!(plain(WaitRule::Join), (1, 18.0, 21.0));
    assert_eq!(plain(WaitRule::All), (1, 18.0, 21.0));
    // The report counts those waits: read at the upper bound.
    let mut unread = w.clone();
    for x in &mut unread.waits {
        x.recorded_at = None;
        x.recording = None;
    }
    let s = Schedule::of(&unread);
    assert_eq!((s.waits_at_record, s.waits_on_all_before), (0, 3));
    let warned = crate::caveats::unreproduced(&unread, true);
    assert!(
        warned
            .iter()
            .any(|m| m.starts_with("3 of the waits are neither forks nor tied")),
        "{warned:?}"
    );
}

/// A three-stage pipeline's ops (stream, correlation): main (7) runs a kernel, two
/// micro-batches pass stages 13, 17 and 21, main runs the last kernel.
const PIPELINE_OPS: [(u64, u64); 8] = [
    (7, 1),
    (13, 4),
    (17, 7),
    (21, 10),
    (13, 11),
    (17, 14),
    (21, 17),
    (7, 24),
];

/// Its waits (stream, correlation): stage 13 forked from main, each stage's on the one
/// before, main's three joins.
const PIPELINE_WAITS: [(u64, u64); 8] = [
    (13, 3),
    (17, 6),
    (21, 9),
    (17, 13),
    (21, 16),
    (7, 19),
    (7, 21),
    (7, 23),
];

/// Its record calls: one right before each wait.
const PIPELINE_RECORDS: [u64; 8] = [2, 5, 8, 12, 15, 18, 20, 22];

/// Waits on fresh events, one per record call (`wait_stream`), marked as the trace reader
/// marks them: `waits` as (stream, wait's correlation), each on the event of the record call
/// before it; `records`: every record call's correlation id.
fn waits_on_fresh_events(waits: &[(u64, u64)], records: &[u64]) -> Vec<StreamWait> {
    let mut out: Vec<StreamWait> = waits.iter().map(|&(s, c)| wait(s, c)).collect();
    let events: HashMap<u64, u64> = waits
        .iter()
        .map(|&(_, c)| (c, 100 + records.partition_point(|&r| r < c) as u64 - 1))
        .collect();
    crate::trace::recordings::mark(&mut out, &events, records);
    out
}

#[test]
fn a_pipeline_stage_waits_on_the_stage_before_not_on_stages_further_on() {
    // Main (7) runs a kernel and forks stage 0 (13); two micro-batches pass stages 13, 17
    // and 21, each stage waiting on the one before (record, wait); main joins all three
    // (three records one after another) and runs the last kernel. Stage 21's first
    // micro-batch takes 30 ns, every other op 10.
    let w = Walk {
        ops: PIPELINE_OPS.iter().map(|&(s, c)| op(s, c)).collect(),
        waits: waits_on_fresh_events(&PIPELINE_WAITS, &PIPELINE_RECORDS),
        record_calls: PIPELINE_RECORDS.to_vec(),
        ..Walk::default()
    };
    let cost = |op: usize| if op == 3 { 30.0 } else { 10.0 };
    let s = Schedule::of(&w);
    // A stream's first wait reads as a fork from main (the order of calls cannot tell a
    // pipeline's first micro-batch from forks one after another); the second micro-batch's
    // two waits read as waiting on the stage before, the joins' records (one after another)
    // as made on any stream.
    assert_eq!(
        (s.forks_on_join, s.waits_at_record, s.waits_on_producer),
        (2, 5, 2)
    );
    let spans = s.lay_out(cost);
    // Stage 17's second micro-batch waits for stage 13's (20-30), not for stage 21's first
    // (10-40), as it would with the record read as made on any stream.
    assert_eq!(spans[5], (2, 30.0, 40.0));
    assert_eq!(spans[6], (3, 40.0, 50.0));
    // Main joins everything.
    assert_eq!(spans[7], (0, 50.0, 60.0));
    // `--waits all`: every stage after every other (stage 21's first from 30 to 60).
    let mut upper = w.clone();
    upper.wait_rule = WaitRule::All;
    assert_eq!(Schedule::of(&upper).lay_out(cost)[5], (2, 60.0, 70.0));
}

#[test]
fn a_record_right_after_the_waiting_streams_own_work_is_read_as_made_on_any_stream() {
    // B (17) runs a long kernel, A (13) a short one, then an event is recorded and A waits
    // on it: A does not wait on its own work, so the record is not read as A's; A's next
    // kernel waits for B's.
    let mut ops = vec![op(17, 1), op(13, 2), op(13, 5)];
    ops[0].duration_ns = 10.0;
    let w = Walk {
        ops,
        waits: waits_on_fresh_events(&[(13, 4)], &[3]),
        record_calls: vec![3],
        ..Walk::default()
    };
    let s = Schedule::of(&w);
    assert_eq!((s.waits_at_record, s.waits_on_producer), (1, 0));
    assert_eq!(s.lay_out(|op| w.ops[op].duration_ns)[2], (1, 10.0, 11.0));
}

#[test]
fn a_pipeline_that_records_its_stage_events_again_waits_at_the_record_right_before() {
    // The pipeline above, with one event per stage recorded again every micro-batch (200
    // for stage 13's output, 201 for stage 17's): the event ids do not number the record
    // calls, so each wait is read at the record call issued right before it.
    let events = [100, 200, 201, 200, 201, 101, 102, 103];
    let mut marked: Vec<StreamWait> = PIPELINE_WAITS.iter().map(|&(s, c)| wait(s, c)).collect();
    let events: HashMap<u64, u64> = PIPELINE_WAITS
        .iter()
        .zip(events)
        .map(|(&(_, c), e)| (c, e))
        .collect();
    crate::trace::recordings::mark(&mut marked, &events, &PIPELINE_RECORDS);
    assert!(marked.iter().all(|w| w.recorded_at.is_none()));
    let w = Walk {
        ops: PIPELINE_OPS.iter().map(|&(s, c)| op(s, c)).collect(),
        waits: marked,
        record_calls: PIPELINE_RECORDS.to_vec(),
        ..Walk::default()
    };
    let s = Schedule::of(&w);
    // Lane 13's first wait forks it from main; the four stage waits and the three joins
    // read at the record right before them, the stage waits on the stage before.
    assert_eq!(
        (
            s.waits_right_after_record,
            s.waits_on_producer,
            s.waits_on_all_before
        ),
        (7, 4, 0)
    );
    let spans = s.lay_out(|op| if op == 3 { 30.0 } else { 10.0 });
    // Stage 21's first micro-batch after stage 17's (20-30); stage 17's second after stage
    // 13's (20-30), not after stage 21's first; main after everything.
    assert_eq!(spans[3], (3, 30.0, 60.0));
    assert_eq!(spans[5], (2, 30.0, 40.0));
    assert_eq!(spans[7], (0, 70.0, 80.0));
    let warned = crate::caveats::unreproduced(&w, false);
    assert!(
        warned
            .iter()
            .any(|m| m.starts_with("7 of the waits are taken to wait for what the record call")),
        "{warned:?}"
    );
}
