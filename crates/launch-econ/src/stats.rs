//! Robust statistics over trials: median, min/max and MAD, and the warnings a careful user
//! wants when a figure is not to be trusted. Samples are never dropped.

use serde::{Deserialize, Serialize};

/// Relative spread (MAD / median) above which a figure is flagged as noisy.
pub const HIGH_SPREAD: f64 = 0.05;
/// How many scaled MADs from the median the first trial may sit before it is flagged.
pub const OUTLIER_MADS: f64 = 3.5;
/// Scales a MAD to a standard deviation for normally distributed data.
const MAD_TO_SIGMA: f64 = 1.4826;

/// Summary of one figure over trials.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Median absolute deviation from the median (unscaled).
    pub mad: f64,
    pub n: usize,
}

/// The median of `v` (mean of the middle two for even lengths); NaN for an empty slice.
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s: Vec<f64> = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let m = s.len() / 2;
    if s.len() % 2 == 1 {
        s[m]
    } else {
        (s[m - 1] + s[m]) / 2.0
    }
}

impl Summary {
    /// Summarises `samples`. An empty slice gives NaNs and `n = 0`.
    pub fn of(samples: &[f64]) -> Summary {
        let med = median(samples);
        let dev: Vec<f64> = samples.iter().map(|x| (x - med).abs()).collect();
        Summary {
            median: med,
            min: samples.iter().copied().fold(f64::INFINITY, f64::min),
            max: samples.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            mad: median(&dev),
            n: samples.len(),
        }
    }

    /// MAD relative to the median.
    pub fn relative_spread(&self) -> f64 {
        if self.median.abs() < f64::EPSILON {
            0.0
        } else {
            self.mad / self.median.abs()
        }
    }
}

/// Warnings for one figure: high spread, or a first trial far from the rest (a sign that the
/// warm-up was too short). Returned as sentences for the user; the samples stay as they are.
pub fn warnings(name: &str, samples: &[f64]) -> Vec<String> {
    let mut out = Vec::new();
    if samples.len() < 3 {
        return out;
    }
    let s = Summary::of(samples);
    if s.relative_spread() > HIGH_SPREAD {
        out.push(format!(
            "{name}: high spread across trials (MAD {:.1}% of the median); the machine may be busy or clocks changing — consider a longer --max-time",
            100.0 * s.relative_spread()
        ));
    }
    let rest = Summary::of(&samples[1..]);
    let sigma = (rest.mad * MAD_TO_SIGMA).max(rest.median.abs() * 0.01);
    if (samples[0] - rest.median).abs() > OUTLIER_MADS * sigma {
        out.push(format!(
            "{name}: the first trial ({:.3}) is an outlier against the others (median {:.3}); consider more --warmup",
            samples[0], rest.median
        ));
    }
    out
}

/// Least-squares line `y = a + b·x`; `None` with fewer than two distinct x.
pub fn linear_fit(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let b = sxy / sxx;
    Some((my - b * mx, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn summary_of_known_values() {
        let s = Summary::of(&[3.0, 1.0, 2.0, 10.0]);
        assert_eq!(s.median, 2.5);
        assert_eq!((s.min, s.max, s.n), (1.0, 10.0, 4));
        // deviations 0.5, 1.5, 0.5, 7.5 -> median 1.0
        assert_eq!(s.mad, 1.0);
        assert!(Summary::of(&[]).median.is_nan());
    }

    #[test]
    fn outlying_first_trial_is_warned_not_dropped() {
        let samples = [9.0, 4.0, 4.01, 3.99, 4.0, 4.02];
        let w = warnings("eager", &samples);
        assert!(w.iter().any(|m| m.contains("first trial")), "{w:?}");
        // The summary still sees every sample.
        assert_eq!(Summary::of(&samples).max, 9.0);
    }

    #[test]
    fn steady_samples_get_no_warning() {
        assert!(warnings("x", &[4.0, 4.01, 3.99, 4.0, 4.02]).is_empty());
    }

    #[test]
    fn noisy_samples_are_flagged() {
        let w = warnings("x", &[1.0, 2.0, 1.0, 2.0, 1.5]);
        assert!(w.iter().any(|m| m.contains("high spread")), "{w:?}");
    }

    #[test]
    fn fit_recovers_a_line() {
        let pts: Vec<_> = [1.0, 10.0, 100.0, 1000.0]
            .iter()
            .map(|&x| (x, 2.5 + 0.01 * x))
            .collect();
        let (a, b) = linear_fit(&pts).unwrap();
        assert!((a - 2.5).abs() < 1e-9 && (b - 0.01).abs() < 1e-12);
        assert!(linear_fit(&[(1.0, 2.0)]).is_none());
        assert!(linear_fit(&[(1.0, 2.0), (1.0, 3.0)]).is_none());
    }

    proptest! {
        #[test]
        fn median_lies_between_min_and_max(v in prop::collection::vec(-1e9f64..1e9, 1..50)) {
            let s = Summary::of(&v);
            prop_assert!(s.min <= s.median && s.median <= s.max);
            prop_assert!(s.mad >= 0.0);
            prop_assert!(s.mad <= s.max - s.min);
        }

        #[test]
        fn median_is_order_independent(mut v in prop::collection::vec(-1e6f64..1e6, 1..40)) {
            let m = median(&v);
            v.reverse();
            prop_assert_eq!(m, median(&v));
        }

        #[test]
        fn warnings_never_panic(v in prop::collection::vec(prop::num::f64::ANY, 0..20)) {
            let _ = warnings("p", &v);
        }
    }
}
