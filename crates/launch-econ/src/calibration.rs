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

/// Where the ramp a replay asks its stand-ins with came from. [`DEFAULT_SPIN_RAMP_NS`] was
/// measured on the GPU the shipped profile describes (an H200).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RampFrom {
    /// `--spin-ramp-ns`.
    Given,
    /// The profile of this kind of GPU, which measured it (CUPTI, at the end of its run).
    Profile,
    /// [`DEFAULT_SPIN_RAMP_NS`], measured on an H200; `elsewhere`: taken on another kind of GPU.
    H200 { elsewhere: bool },
}

impl std::fmt::Display for RampFrom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RampFrom::Given => "--spin-ramp-ns",
            RampFrom::Profile => "measured by the profile of this GPU",
            RampFrom::H200 { elsewhere: false } => "the H200's",
            RampFrom::H200 { elsewhere: true } => "the H200's, on another GPU",
        })
    }
}

/// The ramp a replay asks its stand-ins with, ns, and where it came from: `given`
/// (`--spin-ramp-ns`), else what the profile of this kind of GPU (`profile`, from
/// [`crate::node_gap::profile_for`]) measured, else [`DEFAULT_SPIN_RAMP_NS`].
pub fn resolve_ramp_ns(
    given: Option<f64>,
    device: &str,
    profile: Option<&crate::model::ModelInputs>,
) -> (f64, RampFrom) {
    match (given, profile.and_then(|p| p.spin_ramp_ns)) {
        (Some(ns), _) => (ns, RampFrom::Given),
        (None, Some(ns)) => (ns, RampFrom::Profile),
        (None, None) => (
            DEFAULT_SPIN_RAMP_NS,
            RampFrom::H200 {
                elsewhere: crate::document::ModelProfile::shipped_for(device).is_none(),
            },
        ),
    }
}

/// Requested durations of the spins whose profiled ramp [`measure_ramp_ns`] measures, ns,
/// each launched [`RAMP_REPEATS`] times.
const RAMP_NS: [u64; 4] = [0, 1_000, 2_000, 5_000];
const RAMP_REPEATS: usize = 5;

/// How much longer a profiler sees the one-block spin run than its own span on this GPU, ns:
/// one-block spins recorded by CUPTI ([`memra_engine::profile_kernels`]), each profiled
/// duration less the span it stamped, the median. It leaves CUPTI detached, but call it after
/// the timings an attached profiler would slow.
pub fn measure_ramp_ns(e: &Engine) -> memra_engine::Result<f64> {
    let one = LaunchShape::linear(1, 128);
    let n = RAMP_NS.len() * RAMP_REPEATS;
    let mut slots = e.zeros::<u64>(Engine::SPIN_SLOT_WORDS * n)?;
    for _ in 0..2 {
        e.spin_grid(0, one, &mut slots, 0)?;
    }
    e.stream().synchronize()?;
    let (words, kernels) = memra_engine::profile_kernels(|| {
        for (i, &ns) in RAMP_NS.iter().cycle().take(n).enumerate() {
            e.spin_grid(ns, one, &mut slots, i)?;
        }
        e.dtoh(&slots)
    })?;
    let spins: Vec<_> = kernels
        .iter()
        .filter(|k| k.grid == [1, 1, 1] && k.block == [128, 1, 1])
        .collect();
    ramp_from(
        &words,
        &spins.iter().map(|k| k.duration_ns()).collect::<Vec<_>>(),
    )
}

/// The median of each profiled duration less the span its spin stamped (word 2 of each
/// spin's slot), ns; an error where the profiler recorded another number of spins.
fn ramp_from(slot_words: &[u64], profiled_ns: &[u64]) -> memra_engine::Result<f64> {
    let spans: Vec<u64> = slot_words
        .chunks_exact(Engine::SPIN_SLOT_WORDS)
        .map(|w| w[2])
        .collect();
    if profiled_ns.len() != spans.len() || spans.is_empty() {
        return Err(memra_engine::Error::Profiler {
            call: "recording the spin kernels",
            detail: format!(
                "{} spins launched, {} recorded",
                spans.len(),
                profiled_ns.len()
            ),
        });
    }
    let over: Vec<f64> = profiled_ns
        .iter()
        .zip(&spans)
        .map(|(&p, &s)| p as f64 - s as f64)
        .collect();
    Ok(median(&over))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ramp_comes_from_the_flag_then_the_profile_then_the_h200() {
        let mut measured = crate::model::ModelInputs::core(1.0, 2.0, 0.0, 3.0, 1.0);
        measured.spin_ramp_ns = Some(960.0);
        let older = crate::model::ModelInputs::core(1.0, 2.0, 0.0, 3.0, 1.0);
        let h100 = "NVIDIA H100 80GB HBM3";
        assert_eq!(
            resolve_ramp_ns(Some(700.0), h100, Some(&measured)),
            (700.0, RampFrom::Given)
        );
        assert_eq!(
            resolve_ramp_ns(None, h100, Some(&measured)),
            (960.0, RampFrom::Profile)
        );
        // The H200's figure: said where it is taken on another kind of GPU.
        let elsewhere = (DEFAULT_SPIN_RAMP_NS, RampFrom::H200 { elsewhere: true });
        assert_eq!(resolve_ramp_ns(None, h100, Some(&older)), elsewhere);
        assert_eq!(resolve_ramp_ns(None, h100, None), elsewhere);
        assert_eq!(
            resolve_ramp_ns(None, "NVIDIA H200", None),
            (DEFAULT_SPIN_RAMP_NS, RampFrom::H200 { elsewhere: false })
        );
    }

    #[test]
    fn the_ramp_is_the_median_of_profiled_less_span() {
        // Three spins: spans 100, 1000, 2000 ns (word 2 of each slot), profiled 700 more,
        // 1000 more and 650 more.
        let words = [0, 0, 100, 0, 0, 0, 1000, 0, 0, 0, 2000, 0];
        assert_eq!(ramp_from(&words, &[800, 2000, 2650]).unwrap(), 700.0);
    }

    #[test]
    #[ignore = "needs a CUDA device"]
    fn the_profiler_sees_every_spin_run_past_its_own_span() {
        // The span is stamped inside the kernel, so the profiled duration holds it.
        let e = Engine::new(0).unwrap();
        let ramp = match measure_ramp_ns(&e) {
            // Under compute-sanitizer (or a profiler) CUPTI is taken, and the default run
            // turns this error into a warning.
            Err(memra_engine::Error::ProfilerBusy { .. })
                if memra_engine::profiling_tool_injected() =>
            {
                return;
            }
            other => other.unwrap(),
        };
        assert!(ramp > 0.0, "{ramp}");
    }

    #[test]
    fn a_recording_that_misses_spins_is_an_error() {
        let words = [0, 0, 100, 0, 0, 0, 1000, 0];
        let e = ramp_from(&words, &[800]).unwrap_err();
        assert!(
            e.to_string().contains("2 spins launched, 1 recorded"),
            "{e}"
        );
    }
}
