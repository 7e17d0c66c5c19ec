//! Steps the profiler marked: `torch.profiler` with `prof.step()` wraps each step in a
//! `ProfilerStep#N` annotation (on the host, and on the GPU as `gpu_user_annotation`).
//!
//! Most users profile several steps under a schedule, and a price per step needs one of them:
//! by default the last one marked (the first active steps carry the profiler's start-up), or
//! the step the user names, or all of them as one walk. An op belongs to the step during which
//! the host issued it (its launch call's correlation id), or, without a launch call, the step
//! whose GPU annotation holds its start.

use std::collections::HashMap;

use serde::Serialize;

use super::host::{host_side, HostEvent};
use super::{HostSide, Walk};

/// A step the profiler marked, as read from the trace.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MarkedStep {
    /// N of `ProfilerStep#N`.
    pub number: u64,
    /// The GPU operations issued during it.
    pub ops: usize,
    /// Its own host side (the host events inside its annotation).
    #[serde(skip)]
    pub host: Option<HostSide>,
}

/// Which marked step to price.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StepChoice {
    /// The last marked step that issued GPU work; the whole trace when none is marked.
    #[default]
    Last,
    /// The whole trace as one walk.
    All,
    /// `ProfilerStep#N`.
    Number(u64),
}

impl std::str::FromStr for StepChoice {
    type Err = String;
    /// `last`, `all`, `N` or `ProfilerStep#N`.
    fn from_str(s: &str) -> Result<StepChoice, String> {
        let t = s.trim();
        match t.to_ascii_lowercase().as_str() {
            "last" => return Ok(StepChoice::Last),
            "all" => return Ok(StepChoice::All),
            _ => {}
        }
        t.strip_prefix("ProfilerStep#")
            .unwrap_or(t)
            .parse::<u64>()
            .map(StepChoice::Number)
            .map_err(|_| {
                format!("`{s}` is not a step: give N (of ProfilerStep#N), `last` or `all`")
            })
    }
}

/// An annotated interval: `ProfilerStep#number` from `start_ns` to `end_ns`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct StepMark {
    pub number: u64,
    pub start_ns: f64,
    pub end_ns: f64,
}

impl StepMark {
    /// The mark of a `ProfilerStep#N` annotation at `ts_us` lasting `dur_us`; `None` for other
    /// names or unusable times.
    pub(crate) fn of(name: &str, ts_us: f64, dur_us: f64) -> Option<StepMark> {
        let number = name.strip_prefix("ProfilerStep#")?.parse().ok()?;
        (ts_us.is_finite() && dur_us.is_finite() && dur_us >= 0.0).then_some(StepMark {
            number,
            start_ns: ts_us * 1e3,
            end_ns: (ts_us + dur_us) * 1e3,
        })
    }

    fn holds(&self, t_ns: f64) -> bool {
        t_ns >= self.start_ns && t_ns < self.end_ns
    }
}

/// What the reader gathered to split a trace into its marked steps.
#[derive(Debug, Default)]
pub(crate) struct StepEvidence {
    /// Host annotations.
    pub host: Vec<StepMark>,
    /// GPU annotations.
    pub gpu: Vec<StepMark>,
    /// When the host issued each runtime or driver call, by correlation id, ns.
    pub issued_at: HashMap<u64, f64>,
}

/// Assigns each op and wait of `walk` to the marked step it was issued in, and lists the
/// marked steps with their own host sides (from `events` and the profiler's `overhead`).
/// A trace without host annotations is left as it is.
pub(crate) fn assign(
    walk: &mut Walk,
    ev: &StepEvidence,
    events: &[HostEvent],
    overhead: &[(f64, f64)],
) {
    if ev.host.is_empty() && ev.gpu.is_empty() {
        return;
    }
    let step_of = |correlation: Option<u64>, gpu_start_ns: Option<f64>| -> Option<u64> {
        if let Some(t) = correlation.and_then(|c| ev.issued_at.get(&c)) {
            if let Some(m) = ev.host.iter().find(|m| m.holds(*t)) {
                return Some(m.number);
            }
        }
        let t = gpu_start_ns?;
        ev.gpu.iter().find(|m| m.holds(t)).map(|m| m.number)
    };
    for op in &mut walk.ops {
        op.step = step_of(op.correlation, Some(op.start_ns));
    }
    for w in &mut walk.waits {
        w.step = step_of(Some(w.correlation), None);
    }
    let mut numbers: Vec<u64> = ev.host.iter().chain(&ev.gpu).map(|m| m.number).collect();
    numbers.sort_unstable();
    numbers.dedup();
    walk.steps = numbers
        .into_iter()
        .map(|number| {
            let ops: Vec<_> = walk.ops.iter().filter(|o| o.step == Some(number)).collect();
            let gpu_end = ops
                .iter()
                .map(|o| o.start_ns + o.duration_ns)
                .fold(f64::NEG_INFINITY, f64::max);
            let host = ev
                .host
                .iter()
                .find(|m| m.number == number)
                .filter(|_| !ops.is_empty())
                .and_then(|m| host_side(events, overhead, (m.start_ns, m.end_ns), gpu_end));
            MarkedStep {
                number,
                ops: ops.len(),
                host,
            }
        })
        .collect();
}

/// The number of the step `choice` selects among `steps`: `Ok(None)` for the whole walk (no
/// marked step, or `All`); an error naming the marked steps for a number not among them.
pub fn select(steps: &[MarkedStep], choice: StepChoice) -> Result<Option<u64>, String> {
    match choice {
        StepChoice::All => Ok(None),
        StepChoice::Last => Ok(steps.iter().rev().find(|s| s.ops > 0).map(|s| s.number)),
        StepChoice::Number(n) => match steps.iter().find(|s| s.number == n) {
            Some(s) if s.ops > 0 => Ok(Some(n)),
            Some(_) => Err(format!("ProfilerStep#{n} issued no GPU work")),
            None if steps.is_empty() => Err(format!(
                "the trace marks no profiler steps (ProfilerStep#N), so there is no step {n}"
            )),
            None => Err(format!(
                "no ProfilerStep#{n} in the trace; it marks {}",
                describe(steps)
            )),
        },
    }
}

/// The marked steps in words: `#2 (240 ops), #3 (240 ops)`.
pub fn describe(steps: &[MarkedStep]) -> String {
    steps
        .iter()
        .map(|s| format!("#{} ({} ops)", s.number, s.ops))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(number: u64, ops: usize) -> MarkedStep {
        MarkedStep {
            number,
            ops,
            host: None,
        }
    }

    #[test]
    fn choices_parse_from_words_and_numbers() {
        assert_eq!("last".parse(), Ok(StepChoice::Last));
        assert_eq!("ALL".parse(), Ok(StepChoice::All));
        assert_eq!("4".parse(), Ok(StepChoice::Number(4)));
        assert_eq!("ProfilerStep#12".parse(), Ok(StepChoice::Number(12)));
        assert!("-1"
            .parse::<StepChoice>()
            .unwrap_err()
            .contains("not a step"));
        assert!("first".parse::<StepChoice>().is_err());
    }

    #[test]
    fn last_skips_steps_without_gpu_work() {
        let steps = [step(2, 10), step(3, 10), step(4, 0)];
        assert_eq!(select(&steps, StepChoice::Last), Ok(Some(3)));
        assert_eq!(select(&steps, StepChoice::All), Ok(None));
        assert_eq!(select(&[], StepChoice::Last), Ok(None));
        assert_eq!(select(&steps, StepChoice::Number(2)), Ok(Some(2)));
        assert!(select(&steps, StepChoice::Number(4))
            .unwrap_err()
            .contains("no GPU work"));
        let missing = select(&steps, StepChoice::Number(9)).unwrap_err();
        assert!(missing.contains("#2 (10 ops), #3 (10 ops)"), "{missing}");
        assert!(select(&[], StepChoice::Number(1))
            .unwrap_err()
            .contains("marks no profiler steps"));
    }

    #[test]
    fn marks_come_only_from_profiler_step_names() {
        let m = StepMark::of("ProfilerStep#7", 10.0, 2.5).unwrap();
        assert_eq!((m.number, m.start_ns, m.end_ns), (7, 10_000.0, 12_500.0));
        assert!(m.holds(10_000.0) && !m.holds(12_500.0));
        assert!(StepMark::of("forward", 10.0, 2.5).is_none());
        assert!(StepMark::of("ProfilerStep#x", 10.0, 2.5).is_none());
        assert!(StepMark::of("ProfilerStep#1", 10.0, -1.0).is_none());
    }
}
