//! Which recording of an event each cross-stream wait waits on, from what Kineto records: the
//! id of the event a wait waits on (`wait_on_cuda_event_id`) and the correlation ids of the
//! event record calls, but not which call recorded which event (PyTorch 2.11 leaves
//! `wait_on_cuda_event_record_corr_id` at −1).
//!
//! Two readings; the first only where the trace bears it out, the second always:
//! * **One event a record.** CUDA numbers events as they are made, and a framework that makes
//!   a fresh event for each record (PyTorch's `wait_stream`, `torch.cuda.Event()` per use)
//!   records them in that order, so the waited events' ids, less one offset, index the record
//!   calls. The offset is the least that puts every wait's record before it (so at least one
//!   wait's event was recorded by the call right before it, as `wait_stream` does); the
//!   reading holds only if it gives every waited event a record call (an event made before the
//!   walk and recorded again in it, or ids that jump, leave one without). Each wait then knows
//!   the call that recorded its event, however much was issued in between. What the trace
//!   cannot show: a program that records again events it made before the waited ones (a pool
//!   of events) between them shifts the later ones onto earlier calls, so their waits are read
//!   as waiting for less (`--waits all` prices the upper bound).
//! * **One recording until a record call.** A wait on an event that an earlier wait waited
//!   on, with no event recorded between the two calls, waits on the same recording.

use std::collections::HashMap;

use super::StreamWait;

/// Sets each wait's [`StreamWait::event`], its [`StreamWait::recording`] (the second reading)
/// and, where the one-event-a-record reading holds, its [`StreamWait::recorded_at`]. `waits`
/// and `records` (the record calls' correlation ids) in host order; `events`: each wait's
/// event id by the wait's correlation id.
pub(crate) fn mark(waits: &mut [StreamWait], events: &HashMap<u64, u64>, records: &[u64]) {
    if let Some(at) = one_event_a_record(waits, events, records) {
        for (w, r) in waits.iter_mut().zip(at) {
            w.recorded_at = r;
        }
    }
    for w in waits.iter_mut() {
        w.event = events.get(&w.correlation).copied();
    }
    // Per event: the correlation and recording of the last wait on it.
    let mut last: HashMap<u64, (u64, u64)> = HashMap::new();
    for w in waits {
        let Some(event) = w.event else {
            continue;
        };
        let recorded_between = |from: u64| {
            let i = records.partition_point(|&r| r <= from);
            records.get(i).is_some_and(|&r| r < w.correlation)
        };
        let recording = match last.get(&event) {
            Some(&(at, recording)) if !recorded_between(at) => recording,
            _ => w.correlation,
        };
        w.recording = Some(recording);
        last.insert(event, (w.correlation, recording));
    }
}

/// Each wait's record call under the one-event-a-record reading (`None` for a wait whose
/// event the trace does not name), or `None` where the trace contradicts it.
fn one_event_a_record(
    waits: &[StreamWait],
    events: &HashMap<u64, u64>,
    records: &[u64],
) -> Option<Vec<Option<u64>>> {
    // (event id, how many record calls came before the wait).
    let named: Vec<(u64, usize)> = waits
        .iter()
        .filter_map(|w| {
            let e = *events.get(&w.correlation)?;
            Some((e, records.partition_point(|&r| r < w.correlation)))
        })
        .collect();
    if named.is_empty() {
        return None;
    }
    // The record of event e is call e - offset; it must come before every wait on e.
    let mut offset = i128::MIN;
    for &(e, before) in &named {
        if before == 0 {
            return None;
        }
        offset = offset.max(e as i128 - (before as i128 - 1));
    }
    let call = |e: u64| usize::try_from(e as i128 - offset).ok();
    if named.iter().any(|&(e, _)| call(e).is_none()) {
        return None;
    }
    Some(
        waits
            .iter()
            .map(|w| {
                events
                    .get(&w.correlation)
                    .and_then(|&e| call(e))
                    .map(|c| records[c])
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(correlation: u64) -> StreamWait {
        StreamWait::new(13, correlation)
    }

    fn marked_waits(waits: &[(u64, Option<u64>)], records: &[u64]) -> Vec<StreamWait> {
        let mut w: Vec<StreamWait> = waits.iter().map(|&(c, _)| wait(c)).collect();
        let events = waits
            .iter()
            .filter_map(|&(c, e)| Some((c, e?)))
            .collect::<HashMap<_, _>>();
        mark(&mut w, &events, records);
        w
    }

    fn marked(waits: &[(u64, Option<u64>)], records: &[u64]) -> Vec<(Option<u64>, Option<u64>)> {
        marked_waits(waits, records)
            .iter()
            .map(|w| (w.recording, w.recorded_at))
            .collect()
    }

    #[test]
    fn fresh_events_in_record_order_name_their_record_calls() {
        // Records at 10, 20, 30, 40, 50 make events 7 to 11. Event 7 is waited on at 12,
        // event 10 at 42, event 9 at 45 (after event 10's record), event 11 at 52 (the last,
        // right after its record). Event 8 is never waited on.
        let got = marked(
            &[(12, Some(7)), (42, Some(10)), (45, Some(9)), (52, Some(11))],
            &[10, 20, 30, 40, 50],
        );
        assert_eq!(
            got,
            vec![
                (Some(12), Some(10)),
                (Some(42), Some(40)),
                (Some(45), Some(30)),
                (Some(52), Some(50))
            ]
        );
        // A wait on an event recorded long before, after later records (a prefetch's copy
        // waited on two records later): its own call.
        let got = marked(
            &[(12, Some(7)), (52, Some(8)), (62, Some(10))],
            &[10, 20, 45, 60],
        );
        assert_eq!(
            got,
            vec![
                (Some(12), Some(10)),
                (Some(52), Some(20)),
                (Some(62), Some(60))
            ]
        );
    }

    #[test]
    fn an_event_made_before_the_walk_and_recorded_again_falls_back() {
        // Event 3 (made long before) is recorded at 20 and again at 40, waited on after each;
        // fork events 100 and 101 recorded at 10 and 50. Event 3 would need call -97.
        let got = marked(
            &[
                (12, Some(100)),
                (22, Some(3)),
                (42, Some(3)),
                (52, Some(101)),
            ],
            &[10, 20, 40, 50],
        );
        // Fallback: a record call between the two waits on event 3 makes a new recording.
        assert_eq!(
            got,
            vec![
                (Some(12), None),
                (Some(22), None),
                (Some(42), None),
                (Some(52), None)
            ]
        );
        // Each wait knows its event.
        let events: Vec<Option<u64>> =
            marked_waits(&[(12, Some(100)), (22, Some(3)), (32, None)], &[10, 20])
                .iter()
                .map(|w| w.event)
                .collect();
        assert_eq!(events, vec![Some(100), Some(3), None]);
    }

    #[test]
    fn a_wait_before_any_record_or_ids_that_jump_fall_back() {
        // No record call before the wait.
        assert_eq!(marked(&[(5, Some(1))], &[10]), vec![(Some(5), None)]);
        // Events 1 and 5 with records at 10 and 20 only: 5 needs call 1, so 1 needs call -3.
        assert_eq!(
            marked(&[(12, Some(1)), (22, Some(5))], &[10, 20]),
            vec![(Some(12), None), (Some(22), None)]
        );
        // A wait that names no event keeps neither.
        assert_eq!(marked(&[(12, None)], &[10]), vec![(None, None)]);
    }
}
