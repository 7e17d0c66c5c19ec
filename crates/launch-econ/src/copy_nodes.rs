//! What a host↔device copy costs a graph, by direction and size: measured on the GPU for the
//! device profile, so that `replay --summary` can price a walk's copies without a GPU.
//!
//! A copy between two kernels of a graph runs on a copy engine: the copy waits for the kernel
//! before it, the next kernel waits for the copy, and each hand-over costs time that a
//! profiler's duration of the copy does not show. Priced like a kernel node (its recorded
//! duration + the kernel node gap), the H200 validation's pinned-copies walk (two 512 KiB
//! copies around sixteen kernels) came out 10% short, where the GPU replay, which runs the
//! copies, was within 1%. So the profile stores, per direction, what adding one copy of a
//! given size to a graph of kernels costs: graphs of `(empty kernel, copy)` pairs against
//! graphs of empty kernels alone, at a few sizes, fitted as fixed + per MiB. Host ends are
//! page-locked, as replays use.

use memra_engine::Engine;
use serde::{Deserialize, Serialize};

use crate::stand_in::node_us;
use crate::stats::median;

const MIB: f64 = (1u64 << 20) as f64;
/// Copy sizes measured, bytes.
pub const SIZES: [usize; 3] = [4 << 10, 512 << 10, 4 << 20];
/// Measurements per size (each a difference of two graph replays).
const SAMPLES: usize = 3;

/// One direction's graph cost of a copy node: `fixed_us + us_per_mib × MiB`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CopyCost {
    pub fixed_us: f64,
    pub us_per_mib: f64,
}

impl CopyCost {
    /// What a copy of `bytes` adds to a graph of kernels, µs.
    pub fn node_us(&self, bytes: f64) -> f64 {
        self.fixed_us + self.us_per_mib * bytes / MIB
    }

    /// The least-squares line through `(bytes, µs)` points (at least two distinct sizes).
    pub fn fit(points: &[(f64, f64)]) -> Option<CopyCost> {
        let n = points.len() as f64;
        let mx = points.iter().map(|p| p.0 / MIB).sum::<f64>() / n;
        let my = points.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = points.iter().map(|p| (p.0 / MIB - mx).powi(2)).sum();
        let sxy: f64 = points.iter().map(|p| (p.0 / MIB - mx) * (p.1 - my)).sum();
        (sxx > 0.0 && sxy.is_finite()).then(|| {
            let us_per_mib = sxy / sxx;
            CopyCost {
                fixed_us: my - us_per_mib * mx,
                us_per_mib,
            }
        })
    }
}

/// Both directions between host and device.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CopyNodeCosts {
    pub host_to_device: CopyCost,
    pub device_to_host: CopyCost,
}

/// Measures [`CopyNodeCosts`] on `e` (at the process's current level of graph node cost:
/// measure before [`crate::other_stream::activate`]).
pub fn measure(e: &Engine) -> anyhow::Result<CopyNodeCosts> {
    let largest = SIZES[SIZES.len() - 1];
    let mut host = e.host_staging(largest)?;
    let mut dev = e.zeros::<u8>(largest)?;
    let median_of =
        |f: &mut dyn FnMut(&Engine) -> memra_engine::Result<()>| -> anyhow::Result<f64> {
            let v = (0..SAMPLES)
                .map(|_| node_us(e, &mut *f))
                .collect::<anyhow::Result<Vec<_>>>()?;
            Ok(median(&v))
        };
    let kernel = median_of(&mut |eng| eng.noop())?;
    let (mut h2d, mut d2h) = (Vec::new(), Vec::new());
    for bytes in SIZES {
        let with = median_of(&mut |eng| {
            eng.noop()?;
            eng.copy_from_host(&host, &mut dev, bytes)
        })?;
        h2d.push((bytes as f64, with - kernel));
        let with = median_of(&mut |eng| {
            eng.noop()?;
            eng.copy_to_host(&dev, &mut host, bytes)
        })?;
        d2h.push((bytes as f64, with - kernel));
    }
    let fit = |points: &[(f64, f64)], what: &str| {
        CopyCost::fit(points).ok_or_else(|| anyhow::anyhow!("no fit for {what} copy nodes"))
    };
    Ok(CopyNodeCosts {
        host_to_device: fit(&h2d, "host-to-device")?,
        device_to_host: fit(&d2h, "device-to-host")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_is_the_line_through_the_points() {
        let c = CopyCost::fit(&[(0.0, 5.0), (MIB, 7.0), (4.0 * MIB, 13.0)]).unwrap();
        assert!((c.fixed_us - 5.0).abs() < 1e-9, "{c:?}");
        assert!((c.us_per_mib - 2.0).abs() < 1e-9, "{c:?}");
        assert!((c.node_us(2.0 * MIB) - 9.0).abs() < 1e-9);
        // Noisy points: least squares, not the end points.
        let c = CopyCost::fit(&[(0.0, 5.0), (MIB, 8.0), (2.0 * MIB, 9.0)]).unwrap();
        assert!((c.us_per_mib - 2.0).abs() < 1e-9 && (c.fixed_us - 5.333_333_333).abs() < 1e-6);
    }

    #[test]
    fn one_size_gives_no_fit() {
        assert!(CopyCost::fit(&[(MIB, 5.0), (MIB, 6.0)]).is_none());
        assert!(CopyCost::fit(&[]).is_none());
    }
}
