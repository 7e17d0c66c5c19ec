//! What a graph node costs once another stream of the process has launched kernels.
//!
//! On an H200 (driver 580) a graph's nodes cost more — ~0.16–0.18 µs each, whatever the
//! kernel — once ten or more kernels have been launched on a stream other than the one the
//! graph was built on, when that stream had launched kernels before the graph was built; the
//! extra cost stays for every graph of the process from then on. CuPy and PyTorch reproduce
//! it with a 300-node graph of one-block kernels (0.78 → 0.96 µs a node), and PyTorch decode
//! graphs of transformers models were found in that state from their first replay.
//!
//! A framework process — warm-up, capture, then copies, sampling or collectives on other
//! streams — is in that state, so the graph step is priced in it; the same graph in a
//! process that never leaves the graph's stream is the lower bound (`quiet`). A replay on
//! one stream is quiet until [`activate`] runs, and nothing returns it to quiet: measure the
//! quiet figures first.

use memra_engine::{Engine, EngineOptions};

use crate::stand_in::node_us;

/// Kernels launched on the other stream: well past the ten that bring the extra cost.
pub const LAUNCHES: usize = 32;

/// Launches [`LAUNCHES`] empty kernels on a new stream of `e`'s device (same context) and
/// waits for them: from here on, this process's graphs cost what they cost in a framework.
pub fn activate(e: &Engine) -> anyhow::Result<()> {
    let other = Engine::with_options(
        e.ordinal(),
        &EngineOptions {
            pdl: e.pdl(),
            ..EngineOptions::default()
        },
    )?;
    for _ in 0..LAUNCHES {
        other.noop()?;
    }
    other.stream().synchronize()?;
    Ok(())
}

/// GPU time a one-block graph node gains once another stream has launched kernels, µs: the
/// empty kernel's node time measured quiet, then again after [`activate`] (each the median
/// of five). Leaves the process active.
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
