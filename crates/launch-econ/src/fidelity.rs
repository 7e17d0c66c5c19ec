//! How closely a replay's stand-ins kept their recorded kernels' durations, kernel by kernel.

use serde::{Deserialize, Serialize};

use crate::stats::{median, Summary};
use crate::trace::Walk;

/// Kernels at least this long (recorded) are held to the fidelity goal.
pub const FIDELITY_MIN_NS: f64 = 2_000.0;

/// Replayed against recorded duration, kernel by kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fidelity {
    /// (recorded ns, replayed ns) per kernel, in walk order; replayed = own span + ramp, the
    /// median over the measured trials' graph replays; `None` for kernels replayed by the
    /// empty kernel of their shape (they are shorter than any timed spin of that shape).
    pub kernels: Vec<(f64, Option<f64>)>,
    /// |replayed − recorded| / recorded over kernels ≥ 2 µs.
    pub rel_error_long: Option<Summary>,
    /// 90th percentile of that error.
    pub p90_rel_error_long: Option<f64>,
    /// Share of kernels ≥ 2 µs within 5% of their recorded duration.
    pub within_5pct_long: Option<f64>,
    /// Kernels shorter than the spin kernel can go (replayed longer than recorded).
    pub too_short_to_match: usize,
    /// Kernels replayed by the empty kernel of their shape.
    #[serde(default)]
    pub empty_stand_ins: usize,
    /// Kernels replayed by a stand-in that streams memory.
    #[serde(default)]
    pub streaming_stand_ins: usize,
    /// Kernels replayed by a chase (walks whose streams run side by side).
    #[serde(default)]
    pub chase_stand_ins: usize,
    /// Kernels replayed by a barrier chase (`--concurrent-stand-ins chase-rounds`,
    /// `chase-barriers`).
    #[serde(default)]
    pub barrier_chase_stand_ins: usize,
    /// Kernels replayed by a spin timed per block (walks whose streams run side by side).
    #[serde(default)]
    pub block_spin_stand_ins: usize,
    /// Kernels replayed by a paced read of their operator's recorded inputs (walks whose
    /// streams run side by side).
    #[serde(default)]
    pub paced_stand_ins: usize,
    /// Kernels below their shape's floor (the spin asked for nothing, or for a chasing kernel
    /// a one-read chase), stood in by the empty kernel, the empty spin or a one-read chase
    /// (see [`crate::stand_in::SubFloor`] and [`crate::stand_in::ChaseFloor`]).
    #[serde(default)]
    pub sub_floor_kernels: usize,
    /// How far those stand-ins' planned nodes sum over their targets (recorded + gap), µs.
    #[serde(default)]
    pub sub_floor_over_us: f64,
    /// Of those kernels, the ones stood in by a one-read chase (see
    /// [`crate::stand_in::ChaseFloor`]); the others by the empty kernel or the empty spin.
    #[serde(default)]
    pub sub_floor_reads: usize,
    /// Kernels of recorded GEMMs run for real (cuBLAS; not in the per-kernel comparison).
    #[serde(default)]
    pub real_gemm_kernels: usize,
}

/// Each kernel's median over the measured trials' replays.
pub(crate) fn per_kernel_median(per_trial: &[Vec<f64>]) -> Vec<f64> {
    let n = per_trial.first().map_or(0, |v| v.len());
    (0..n)
        .map(|k| median(&per_trial.iter().map(|v| v[k]).collect::<Vec<_>>()))
        .collect()
}

/// The fidelity of a replay of `walk` whose kernels' spans were `spans` (ns, NaN: an empty
/// stand-in), the stand-in counts left at zero for the caller.
pub(crate) fn fidelity(walk: &Walk, spans: &[f64]) -> Fidelity {
    let kernels: Vec<(f64, Option<f64>)> = walk
        .kernels()
        .map(|o| o.duration_ns)
        .zip(spans.iter().map(|&p| p.is_finite().then_some(p)))
        .collect();
    let errs: Vec<f64> = kernels
        .iter()
        .filter_map(|&(r, p)| Some((r, p?)))
        .filter(|(r, _)| *r >= FIDELITY_MIN_NS)
        .map(|(r, p)| (p - r).abs() / r)
        .collect();
    let (summary, p90, within) = if errs.is_empty() {
        (None, None, None)
    } else {
        let mut sorted = errs.clone();
        sorted.sort_by(|a, b| a.total_cmp(b));
        let p90 = sorted[((sorted.len() as f64 * 0.9).ceil() as usize).clamp(1, sorted.len()) - 1];
        let within = errs.iter().filter(|&&e| e <= 0.05).count() as f64 / errs.len() as f64;
        (Some(Summary::of(&errs)), Some(p90), Some(within))
    };
    Fidelity {
        too_short_to_match: kernels
            .iter()
            .filter(|(r, p)| p.is_some_and(|p| p > *r) && *r < FIDELITY_MIN_NS)
            .count(),
        empty_stand_ins: kernels.iter().filter(|(_, p)| p.is_none()).count(),
        streaming_stand_ins: 0,
        chase_stand_ins: 0,
        barrier_chase_stand_ins: 0,
        block_spin_stand_ins: 0,
        paced_stand_ins: 0,
        sub_floor_kernels: 0,
        sub_floor_over_us: 0.0,
        sub_floor_reads: 0,
        real_gemm_kernels: 0,
        kernels,
        rel_error_long: summary,
        p90_rel_error_long: p90,
        within_5pct_long: within,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Op;

    #[test]
    fn per_kernel_medians_over_trials() {
        let m = per_kernel_median(&[vec![1.0, 10.0], vec![3.0, 30.0], vec![2.0, 20.0]]);
        assert_eq!(m, vec![2.0, 20.0]);
        assert!(per_kernel_median(&[]).is_empty());
    }

    #[test]
    fn fidelity_counts_long_kernels_only() {
        let k = |d: f64| Op::kernel("k", 0.0, d);
        let w = Walk {
            ops: vec![k(1000.0), k(2000.0), k(10000.0), k(4000.0)],
            ..Walk::default()
        };
        let f = fidelity(&w, &[1800.0, 2050.0, 10100.0, 4400.0]);
        assert_eq!(f.empty_stand_ins, 0);
        let g = fidelity(&w, &[f64::NAN, 2050.0, 10100.0, 4400.0]);
        assert_eq!((g.empty_stand_ins, g.kernels[0].1), (1, None));
        let s = f.rel_error_long.unwrap();
        assert_eq!(s.n, 3);
        assert!((s.median - 0.025).abs() < 1e-12);
        assert!((f.within_5pct_long.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((f.p90_rel_error_long.unwrap() - 0.1).abs() < 1e-12);
        assert_eq!(f.too_short_to_match, 1);
    }
}
