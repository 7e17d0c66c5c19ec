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
//! It is not the whole of a framework process's state: on a walk of one stream the same eight
//! launches keep the replay's graphs from moving to the upper level of per-node cost
//! ([`crate::other_stream::activate`] no longer moves them), where the real graphs of one
//! stream ran; the 34 one-stream walks then replayed a median 7% (up to 19%) under their real
//! graphs, against 33 of 34 within 5% without. The replay warns where it is asked for there.

use memra_engine::{Engine, EngineOptions};

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
