//! The eager step from the trace alone, for a user who gives none (`--eager-step-ms`): the
//! recorded span less what the profiler added, read from the trace's host side
//! ([`crate::trace::host`]), and what that reading rests on.
//!
//! The profiler's cost per recorded event is read from the trace itself because it is not a
//! constant: on the H200 (`scripts/profiler_cost_probe.py`) one decode step recorded in four
//! profiler sessions of one process cost 1.8-5.6 µs an event in all, and steps of one kind of
//! event (views, one-element adds, linear layers) 1.5-5.8 µs. Where the trace holds few of the
//! operators it is read from, the reading is rough, and where it holds none that part is not
//! taken out at all; the report says so.
//!
//! A program that records no operators (CuPy, CUDA C++) gives nothing to read the cost per
//! event from, so its span less the launch calls' inflation reads high (on the H200 CuPy
//! walks up to 3.2 times their unprofiled step). What it does show is the cadence of its
//! launch calls: the intervals between them hold the program's own work per launch and the
//! profiler's cost, and the least inflated of them, the lower tenth as for the gaps between
//! operators (`trace::callbacks`), stand for the unprofiled cadence; the step is then its
//! launch calls at that cadence where that is shorter. It reads low where a program issues
//! runs of launches quickly and works between them (cuFFT's plans). Six CuPy programs written
//! after it came within 25% on 2 of 6 on an H100, against 0 of 6 from the span alone
//! (`docs/validation-h200.md`, "Held-out batch 75 on an H100").

use serde::{Deserialize, Serialize};

use crate::trace::{HostSide, Walk};

/// Fewer operators than this behind the per-event reading make it a rough one: a median of
/// a handful of operators' own time carries their own work (an H200 chain of one-element adds
/// read its cost from 5 and came out 87% low).
const FEW_SAMPLES: usize = 10;

/// The eager step estimated from the trace's host side, ms: from the first CPU event to the end of
/// the last GPU operation, less what the profiler added to each launch call (its recorded duration
/// over `launch_floor_us`, the unprofiled cost of one launch on this GPU), its callbacks' cost
/// outside each recorded event ([`outside_per_event`]) and inside each operator and each call that
/// issues no GPU work (see [`crate::trace::host`]), and its own work recorded in between, and never
/// below what no eager step can beat: the time the recorded GPU was busy (streams that ran side
/// by side counted once where they overlapped), nor its launch calls at
/// `launch_floor_us` each (the host issues every launch before the step can end; where the
/// profiler's cost read from the trace is more than the step held, as on an H200 MobileNet block
/// walk whose estimate fell to its GPU time, 0.15 ms against a 1.45 ms step, the reading is wrong
/// and the floor is nearer). Where the trace records no operators, not above its launch calls
/// at their cadence ([`launch_cadence_ns`]). `None` without a host side.
pub fn eager_from_trace(walk: &Walk, launch_floor_us: f64) -> Option<f64> {
    let h = walk.host?;
    let span_ns = walk.end_ns() - h.start_ns;
    if !(span_ns.is_finite() && span_ns > 0.0) {
        return None;
    }
    let excess_ns = (h.launch_call_ns - h.launch_calls as f64 * launch_floor_us * 1e3).max(0.0);
    let gpu_ns = busy_ns(walk);
    let callbacks_ns = (h.cpu_ops + h.runtime_calls) as f64 * outside_per_event(&h).0;
    let inside_ns = h.cpu_ops as f64 * h.profiler_inside_op_ns.max(0.0)
        + h.runtime_calls.saturating_sub(h.launch_calls) as f64
            * h.profiler_inside_call_ns.max(0.0);
    let own_ns = h.profiler_overhead_ns.max(0.0)
        + callbacks_ns
        + inside_ns
        + h.first_call_excess_ns.max(0.0);
    let issue_ns = h.launch_calls as f64 * launch_floor_us.max(0.0) * 1e3;
    let read_ns = span_ns - excess_ns - own_ns;
    let read_ns = launch_cadence_ns(&h).map_or(read_ns, |c| read_ns.min(c));
    Some(read_ns.max(gpu_ns).max(issue_ns) / 1e6)
}

/// A step that records no operators as its launch calls issued at their cadence, ns: each
/// call at the lower tenth of the intervals between consecutive calls of a thread
/// ([`HostSide::issue_interval_ns`]; see the module docs). `None` where the trace records
/// operators, whose readings take the profiler's cost out instead, or no two launch calls.
pub fn launch_cadence_ns(h: &HostSide) -> Option<f64> {
    (h.cpu_ops == 0 && h.issue_interval_samples > 0)
        .then(|| h.launch_calls as f64 * h.issue_interval_ns.max(0.0))
}

/// How long the GPU was busy in the recording, ns: the union of the operations' recorded
/// spans (on one stream, their sum; streams that overlapped count once where they did).
fn busy_ns(walk: &Walk) -> f64 {
    let mut spans: Vec<(f64, f64)> = walk
        .ops
        .iter()
        .map(|o| (o.start_ns, o.start_ns + o.duration_ns.max(0.0)))
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut busy = 0.0;
    let mut open: Option<(f64, f64)> = None;
    for (start, end) in spans {
        open = match open {
            Some((from, to)) if start <= to => Some((from, to.max(end))),
            Some((from, to)) => {
                busy += to - from;
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    busy + open.map_or(0.0, |(from, to)| to - from)
}

/// Where the profiler's cost outside each event was read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutsideFrom {
    /// The operators that only call operators: their own time per nested operator.
    #[default]
    WrapperOperators,
    /// No such operator: the gaps between consecutive top-level operators (reads high by the
    /// program's own work between them; `trace::callbacks`).
    GapsBetweenOperators,
}

/// The profiler's cost outside each recorded event, ns (at least 0), where it was read from
/// and from how many: the operators that only call operators, else the gaps between
/// operators; 0 from none where the trace holds neither.
pub fn outside_per_event(h: &HostSide) -> (f64, OutsideFrom, usize) {
    if h.profiler_per_event_samples > 0 || h.profiler_between_ops_samples == 0 {
        (
            h.profiler_per_event_ns.max(0.0),
            OutsideFrom::WrapperOperators,
            h.profiler_per_event_samples,
        )
    } else {
        (
            h.profiler_between_ops_ns.max(0.0),
            OutsideFrom::GapsBetweenOperators,
            h.profiler_between_ops_samples,
        )
    }
}

/// How far off the trace-only eager step came on the stored H200 validation walks whose traces
/// hold launch calls in one range (`scripts/reprice_summary.py --trace-eager`; the
/// stored-claims test checks these against this version), as the report quotes it for a trace
/// of that range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassAccuracy {
    /// The class's traces hold at least this many launch calls...
    pub launch_calls_from: usize,
    /// ...and fewer than this many (`None`: no upper end).
    pub launch_calls_below: Option<usize>,
    /// Stored walks in the class.
    pub walks: usize,
    /// Those whose trace-only eager step came within 25% of the real one.
    pub within_25: usize,
    /// Their median error, % (its size, to the whole).
    pub median_abs_error_pct: usize,
}

impl ClassAccuracy {
    /// Whether a trace of `launch_calls` falls in the class.
    pub fn holds(&self, launch_calls: usize) -> bool {
        launch_calls >= self.launch_calls_from
            && self.launch_calls_below.is_none_or(|b| launch_calls < b)
    }

    /// The class's range in words: `fewer than 50`, `50 to 199`, `200 or more`.
    pub fn range(&self) -> String {
        match (self.launch_calls_from, self.launch_calls_below) {
            (0, Some(b)) => format!("fewer than {b}"),
            (a, None) => format!("{a} or more"),
            (a, Some(b)) => format!("{a} to {}", b - 1),
        }
    }
}

/// [`ClassAccuracy`] by launch calls, every count in one class: a small step's host time is a
/// few hundred microseconds, of which what the profiler added moves from recording to
/// recording as much as the step itself (the first calls' one-time costs alone are hundreds),
/// so the smaller the trace the farther off its estimate.
pub const BY_LAUNCH_CALLS: [ClassAccuracy; 3] = [
    ClassAccuracy {
        launch_calls_from: 0,
        launch_calls_below: Some(50),
        walks: 176,
        within_25: 58,
        median_abs_error_pct: 39,
    },
    ClassAccuracy {
        launch_calls_from: 50,
        launch_calls_below: Some(200),
        walks: 153,
        within_25: 80,
        median_abs_error_pct: 23,
    },
    ClassAccuracy {
        launch_calls_from: 200,
        launch_calls_below: None,
        walks: 81,
        within_25: 62,
        median_abs_error_pct: 14,
    },
];

/// The class of a trace of `launch_calls` ([`BY_LAUNCH_CALLS`]).
pub fn launch_class(launch_calls: usize) -> ClassAccuracy {
    *BY_LAUNCH_CALLS
        .iter()
        .find(|c| c.holds(launch_calls))
        .expect("the classes cover every count")
}

/// What the trace-only eager step read the profiler's cost from, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProfilerReadings {
    /// The cost outside each recorded event, µs ([`outside_per_event`]).
    pub per_event_us: f64,
    /// The operators that only call operators it was read from, or the gaps between
    /// operators ([`Self::per_event_from`]).
    pub per_event_samples: usize,
    /// Which of the two it was read from.
    #[serde(default)]
    pub per_event_from: OutsideFrom,
    /// The cost inside each operator, µs ([`crate::trace::HostSide::profiler_inside_op_ns`]).
    pub inside_op_us: f64,
    /// The leaf view operators it was read from.
    pub inside_op_samples: usize,
    /// The operators the trace recorded.
    pub operators: usize,
    /// The calls that issue GPU work the trace recorded.
    #[serde(default)]
    pub launch_calls: usize,
    /// How far off the stored walks of as many launch calls came ([`launch_class`]).
    #[serde(default)]
    pub stored_accuracy: Option<ClassAccuracy>,
    /// Where no operators were recorded, the interval between launch calls the step is read
    /// at, µs ([`launch_cadence_ns`]), and how many intervals it was read from.
    #[serde(default)]
    pub launch_interval_us: Option<f64>,
    #[serde(default)]
    pub launch_interval_samples: usize,
    /// What the readings rest on, for readers of the JSON (the report's note says the same).
    pub basis: ReadingBasis,
}

/// What a trace-only eager step's profiler readings rest on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadingBasis {
    /// No framework operators (CuPy, CUDA C++): the launch calls' inflation is taken out, and
    /// the step is no longer than its launch calls at their cadence ([`launch_cadence_ns`]).
    NoOperators,
    /// Nothing to read the cost outside the events from (no operator that only calls
    /// operators, no two operators in a row), or no view: that part is not taken out, so the
    /// estimate is high by it.
    Missing,
    /// Fewer than ten (`FEW_SAMPLES`) of either: a rough reading.
    Rough,
    /// Enough of both.
    Read,
}

impl ReadingBasis {
    fn of(operators: usize, per_event_samples: usize, inside_op_samples: usize) -> ReadingBasis {
        let fewest = per_event_samples.min(inside_op_samples);
        match (operators, fewest) {
            (0, _) => ReadingBasis::NoOperators,
            (_, 0) => ReadingBasis::Missing,
            (_, n) if n < FEW_SAMPLES => ReadingBasis::Rough,
            _ => ReadingBasis::Read,
        }
    }
}

impl ProfilerReadings {
    /// The readings of `walk`'s host side; `None` without one.
    pub fn of(walk: &Walk) -> Option<ProfilerReadings> {
        let h = walk.host?;
        let (outside_ns, per_event_from, per_event_samples) = outside_per_event(&h);
        Some(ProfilerReadings {
            per_event_us: outside_ns / 1e3,
            per_event_samples,
            per_event_from,
            inside_op_us: h.profiler_inside_op_ns / 1e3,
            inside_op_samples: h.profiler_inside_op_samples,
            operators: h.cpu_ops,
            launch_calls: h.launch_calls,
            stored_accuracy: Some(launch_class(h.launch_calls)),
            launch_interval_us: launch_cadence_ns(&h).map(|_| h.issue_interval_ns / 1e3),
            launch_interval_samples: h.issue_interval_samples,
            basis: ReadingBasis::of(h.cpu_ops, per_event_samples, h.profiler_inside_op_samples),
        })
    }

    /// The readings in words, and what they leave open, and how far off traces of as many
    /// launch calls came: lines under the eager step.
    pub fn text(&self) -> String {
        let accuracy = self.stored_accuracy.map_or(String::new(), |c| {
            format!(
                "              (stored H200 validation walks of {} launch calls, as this trace holds {}: {} of {} within 25% of their unprofiled step, a median error of {}%)\n",
                c.range(),
                self.launch_calls,
                c.within_25,
                c.walks,
                c.median_abs_error_pct
            )
        });
        self.readings_text() + &accuracy
    }

    /// The readings in words, and what they leave open.
    fn readings_text(&self) -> String {
        if self.basis == ReadingBasis::NoOperators {
            return match self.launch_interval_us {
                Some(us) => format!(
                    "              (no framework operators recorded, so no cost per event to read: the step is taken as its {} launch calls at {us:.2} us apart, the lower tenth of the {} intervals between them, where that is less than the span less the launch calls' inflation over this GPU's launch floor)\n",
                    self.launch_calls, self.launch_interval_samples
                ),
                None => "              (no framework operators recorded: of the profiler's cost only its inflation of the launch calls, over this GPU's launch floor, is taken out)\n".into(),
            };
        }
        let outside = match (self.per_event_samples, self.per_event_from) {
            (0, _) => "none read outside the events (no operator that only calls operators, no two operators in a row): not taken out, so the estimate is high by it".to_string(),
            (n, OutsideFrom::WrapperOperators) => format!(
                "{:.2} us outside each event, from {n} operator(s) that only call operators",
                self.per_event_us
            ),
            (n, OutsideFrom::GapsBetweenOperators) => format!(
                "{:.2} us outside each event, from the lower tenth of {n} gap(s) between operators, as no operator only calls operators: reads high by the program's own work between them",
                self.per_event_us
            ),
        };
        let inside = match self.inside_op_samples {
            0 => "none read inside the operators (no view operator): not taken out".to_string(),
            n => format!(
                "{:.2} us inside each operator, from {n} view operator(s)",
                self.inside_op_us
            ),
        };
        let rough = match self.basis {
            ReadingBasis::Missing => {
                " (recording cost 1.5-5.8 us an event in all on the H200: scripts/profiler_cost_probe.py)"
            }
            ReadingBasis::Rough => {
                " (read from so few, may be far off either way: pass --eager-step-ms)"
            }
            ReadingBasis::NoOperators | ReadingBasis::Read => "",
        };
        format!(
            "              (the profiler's cost per recorded event: {outside}; {inside}{rough})\n"
        )
    }
}

#[cfg(test)]
mod tests;
