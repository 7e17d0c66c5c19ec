//! Streams that ran work in the replaying process before the replay's own: process history a
//! trace does not record, and one that moves a graph with branches. On the H200, replays of
//! recorded multi-stream walks ran 2–10% shorter (on six of eight walks tried; two did not
//! move) when eight other streams had each run a kernel before the replay's first stream was
//! created; streams created without running anything, device memory allocated first, or
//! the same streams made after the replay's first one moved nothing
//! (docs/validation-h200.md, "Graphs with branches and the process's stream history"). A
//! framework process has usually run work on several streams (PyTorch's side streams and
//! capture stream, NCCL's) before it captures; `--prior-streams N` reproduces that state.

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
