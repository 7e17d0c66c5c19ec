//! The two levels of per-node graph cost, and pricing at the one framework processes run at.
//!
//! On an H200 (driver 580) every graph node of a process costs one of two amounts, 0.17–0.19
//! µs apart, whatever the kernel does (empty, memory-bound, spinning; 1 or 132 blocks; 160 KiB
//! of shared memory; 1 KiB of parameters; 64 distinct functions), and all graphs of the
//! process move together. Raw CuPy kernels move it up, in `scripts/graph_level_probe.py`:
//! a graph uploaded (`cuGraphUpload`) and not yet launched, until its first launch (for good
//! if it is destroyed first); or ten kernels on another stream after the graph's own stream
//! had launched many before it was built (one is not enough). Launching the pending graph
//! brings it back down; the full rule is not known.
//!
//! PyTorch decode graphs of transformers models (Llama-, Qwen2-shaped) ran at the upper level
//! from their first replay; GPT-2 and an MLP stack at the lower, until kernels were launched
//! on a new stream. A framework process — warm-up, capture, then copies, sampling or
//! collectives on other streams, graphs for several batch sizes built ahead — has every
//! chance to be at the upper level, so the graph step is priced there and the lower level is
//! reported beside it as the quiet lower bound. A replay on one stream starts at the lower
//! level; [`activate`] moves it up (ten or more kernels on another stream: measured on every
//! run as [`node_extra_us`], 0.175–0.179 µs in three runs). Measure the quiet figures first.

use memra_engine::{Engine, EngineOptions};

use crate::stand_in::node_us;

/// Kernels launched on the other stream: well past the ten that move the level up.
pub const LAUNCHES: usize = 32;

/// Launches [`LAUNCHES`] empty kernels on a new stream of `e`'s device (same context) and
/// waits for them: the process's graphs move to the upper level (see the module docs).
pub fn activate(e: &Engine) -> anyhow::Result<()> {
    let other = second_engine(e)?;
    for _ in 0..LAUNCHES {
        other.noop()?;
    }
    other.stream().synchronize()?;
    Ok(())
}

/// A second engine on `e`'s device and context with a stream of its own (and `e`'s PDL
/// setting): another stream of the same process.
pub fn second_engine(e: &Engine) -> memra_engine::Result<Engine> {
    Engine::with_options(
        e.ordinal(),
        &EngineOptions {
            pdl: e.pdl(),
            ..EngineOptions::default()
        },
    )
}

/// GPU time between the two levels, µs: the empty kernel's graph-node time measured quiet,
/// then again after [`activate`] (each the median of five). Leaves the process at the upper
/// level.
pub fn node_extra_us(e: &Engine) -> anyhow::Result<f64> {
    let five = |e: &Engine| -> anyhow::Result<f64> {
        let v = (0..5)
            .map(|_| node_us(e, |eng| eng.noop()))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(crate::stats::median(&v))
    };
    let quiet = five(e)?;
    activate(e)?;
    let active = five(e)?;
    Ok((active - quiet).max(0.0))
}
