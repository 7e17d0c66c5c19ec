//! Work the replaying process ran before the replay's own streams: process history a trace
//! does not record, and one that moves a graph with branches. On the H200, replays of the 26
//! recorded multi-stream walks ran a median 1.9 points (up to 10) shorter when eight kernels
//! had run, each waited for, before the replay made its streams. It counts launches, not
//! streams: seven or more empty kernels on one stream did it, four to six did not; streams
//! created without running anything, device memory allocated first, or launches after the
//! replay's first stream moved nothing (docs/validation-h200.md, "Graphs with branches and the
//! process's stream history"). A framework process has run far more before it makes its
//! capture stream; `--prior-streams N` reproduces that state with N launches, one on each of
//! N streams.
//!
//! Unless told, a walk whose streams run side by side replays after [`FRAMEWORK_LAUNCHES`]:
//! the real graphs a trace is priced against run in a framework's process, and over the 92
//! stored multi-stream walk runs (batches 12-23 and the in-sample groups) eight launches first
//! came within 5% of 68 against 60 from a fresh process (docs/validation-h200.md, "Eight
//! launches first by default").
//!
//! Nor is it the framework's state reproduced: real PyTorch graphs with branches ran the same
//! whatever streams their process had used first (N = 0-16 pool streams), at the upper level
//! of per-node cost, while the replay's graphs with branches move with N and not monotonically
//! (on lanes of small kernels four launches moved some walks and six did not), and no
//! activation tried moves them to the upper level (docs/validation-h200.md, "Graphs with
//! branches and the process's history"). Eight is the choice that priced more walks right.
//!
//! It is not the whole of a framework process's state: on a walk of one stream the same eight
//! launches keep the replay's graphs from moving to the upper level of per-node cost
//! ([`crate::other_stream::activate`] no longer moves them), where the real graphs of one
//! stream ran; the 34 one-stream walks then replayed a median 7% (up to 19%) under their real
//! graphs, against 33 of 34 within 5% without. The replay warns where it is asked for there.

use memra_engine::{Engine, EngineOptions};

/// Launches run first where the walk has branches and `--prior-streams` is not given: seven or
/// more put the process in the state a framework's is in, so eight.
pub const FRAMEWORK_LAUNCHES: u32 = 8;

/// The prior streams a replay runs: `asked` where given, else [`FRAMEWORK_LAUNCHES`] for a
/// walk laid out on several lanes (streams ordered by recorded waits, as the replay runs them
/// side by side) and none for one on one lane (there the launches would keep its graphs below
/// the level real ones ran at).
pub fn resolve(asked: Option<u32>, several_lanes: bool) -> u32 {
    asked.unwrap_or(if several_lanes { FRAMEWORK_LAUNCHES } else { 0 })
}

/// Creates `n` streams on device `device`, one after another, and runs the empty kernel on
/// each (waiting for it) before the next; the caller keeps them alive through the replay, as
/// a framework keeps its streams.
pub fn run(device: usize, n: u32) -> memra_engine::Result<Vec<Engine>> {
    (0..n)
        .map(|_| {
            let e = Engine::with_options(device, &EngineOptions::default())?;
            e.noop()?;
            e.stream().synchronize()?;
            Ok(e)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_with_branches_replay_after_framework_launches_unless_told() {
        assert_eq!(resolve(None, true), FRAMEWORK_LAUNCHES);
        assert_eq!(resolve(None, false), 0);
        assert_eq!(resolve(Some(0), true), 0);
        assert_eq!(resolve(Some(3), false), 3);
    }
}
