//! The spin kernel's calibration: how far its own span runs past what it was asked for, and
//! how much longer a profiler would see it, so that a stand-in can be asked for the time that
//! makes it last as long as the recorded kernel.

use memra_engine::{Engine, LaunchShape};
use serde::{Deserialize, Serialize};

use crate::stats::median;

/// Requested spin durations used to calibrate the spin kernel, ns.
const CALIBRATION_NS: [u64; 3] = [2_000, 5_000, 10_000];
/// Grid sizes (blocks of 128 threads) used to calibrate.
const CALIBRATION_BLOCKS: [u32; 4] = [1, 16, 132, 1056];
/// How much longer a profiler sees the spin kernel run than the span it measures itself
/// (launch ramp before its first timestamp, retire after its last). Measured on an H200 with
/// CUPTI by `scripts/spin_cupti.py` (640–770 ns over grids of 1 to 1056 blocks); a trace from
/// another GPU can be matched by measuring it there and passing `--spin-ramp-ns`.
pub const DEFAULT_SPIN_RAMP_NS: f64 = 680.0;

/// How the spin kernel's own span relates to what it was asked for, and to what a profiler
/// would record for it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// span − requested = fixed + per_block × blocks (least squares over the calibration).
    pub span_overhead_fixed_ns: f64,
    pub span_overhead_per_block_ns: f64,
    /// Profiled duration − span (see [`DEFAULT_SPIN_RAMP_NS`]).
    pub ramp_ns: f64,
    /// Smallest non-zero difference between spans seen: the timer's effective tick, ns.
    pub timer_tick_ns: f64,
}

/// Measures how far the spin kernel's span runs past what it was asked for, by grid size.
pub fn calibrate(e: &Engine, ramp_ns: f64) -> anyhow::Result<Calibration> {
    let mut slots = e.zeros::<u64>(Engine::SPIN_SLOT_WORDS)?;
    let mut points = Vec::new();
    let mut spans = Vec::new();
    for &blocks in &CALIBRATION_BLOCKS {
        let shape = LaunchShape::linear(blocks, 128);
        for &ns in &CALIBRATION_NS {
            let mut over = Vec::new();
            for _ in 0..7 {
                e.spin_grid(ns, shape, &mut slots, 0)?;
                let span = e.dtoh(&slots)?[2];
                over.push(span as f64 - ns as f64);
                spans.push(span);
            }
            points.push((blocks as f64, median(&over)));
        }
    }
    let (fixed, per_block) = crate::stats::linear_fit(&points)
        .ok_or_else(|| anyhow::anyhow!("spin calibration produced no usable line"))?;
    spans.sort_unstable();
    spans.dedup();
    let tick = spans
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&d| d > 0)
        .min()
        .unwrap_or(0) as f64;
    Ok(Calibration {
        span_overhead_fixed_ns: fixed,
        span_overhead_per_block_ns: per_block.max(0.0),
        ramp_ns,
        timer_tick_ns: tick,
    })
}
