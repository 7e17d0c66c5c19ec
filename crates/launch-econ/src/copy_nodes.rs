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
//!
//! A copy that follows a copy of its direction on its stream has no kernel to hand over
//! from: on the H200, eight 8 MiB host-to-device copies back to back ran at 154 µs each,
//! eager and in a graph, where the line above says 168 (`scripts/copy_chain_probe.py`: a
//! copy in a chain 3.8, 12.2, 78.5, 154.4 µs at 64 KiB, 512 KiB, 4 MiB, 8 MiB; between
//! kernels 6.8, 19.6, 87.1, 162.6). So the profile also stores, per direction, what a copy
//! adds to a graph of copies alone: its line after a copy.

use memra_engine::Engine;
use serde::{Deserialize, Serialize};

use crate::stand_in::node_us;
use crate::stats::median;
use crate::trace::CopyDirection;

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
    /// A host-to-device copy right after another on its stream (graphs of copies alone);
    /// `None` in profiles written before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_to_device_after_copy: Option<CopyCost>,
    /// The same for device to host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_to_host_after_copy: Option<CopyCost>,
}

impl CopyNodeCosts {
    /// What a copy of `bytes` in `direction` adds to a graph, µs: after a copy of its
    /// direction on its stream (`after_copy`), the line measured between copies where the
    /// profile has it, else the line between kernels. `None` for a copy that is not between
    /// host and device.
    pub fn node_us(&self, direction: CopyDirection, bytes: f64, after_copy: bool) -> Option<f64> {
        let (between_kernels, chained) = match direction {
            CopyDirection::HostToDevice => (self.host_to_device, self.host_to_device_after_copy),
            CopyDirection::DeviceToHost => (self.device_to_host, self.device_to_host_after_copy),
            CopyDirection::DeviceToDevice | CopyDirection::Other => return None,
        };
        Some(
            chained
                .filter(|_| after_copy)
                .unwrap_or(between_kernels)
                .node_us(bytes),
        )
    }
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
    let (mut h2d_chained, mut d2h_chained) = (Vec::new(), Vec::new());
    for bytes in SIZES {
        let with = median_of(&mut |eng| {
            eng.noop()?;
            eng.copy_from_host(&host, &mut dev, bytes)
        })?;
        h2d.push((bytes as f64, with - kernel));
        let alone = median_of(&mut |eng| eng.copy_from_host(&host, &mut dev, bytes))?;
        h2d_chained.push((bytes as f64, alone));
        let with = median_of(&mut |eng| {
            eng.noop()?;
            eng.copy_to_host(&dev, &mut host, bytes)
        })?;
        d2h.push((bytes as f64, with - kernel));
        let alone = median_of(&mut |eng| eng.copy_to_host(&dev, &mut host, bytes))?;
        d2h_chained.push((bytes as f64, alone));
    }
    let fit = |points: &[(f64, f64)], what: &str| {
        CopyCost::fit(points).ok_or_else(|| anyhow::anyhow!("no fit for {what} copy nodes"))
    };
    Ok(CopyNodeCosts {
        host_to_device: fit(&h2d, "host-to-device")?,
        device_to_host: fit(&d2h, "device-to-host")?,
        host_to_device_after_copy: Some(fit(&h2d_chained, "chained host-to-device")?),
        device_to_host_after_copy: Some(fit(&d2h_chained, "chained device-to-host")?),
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
    fn a_copy_after_a_copy_takes_the_chained_line_where_the_profile_has_one() {
        let line = |fixed_us, us_per_mib| CopyCost {
            fixed_us,
            us_per_mib,
        };
        let mut c = CopyNodeCosts {
            host_to_device: line(8.0, 20.0),
            device_to_host: line(9.0, 21.0),
            host_to_device_after_copy: Some(line(2.5, 19.0)),
            device_to_host_after_copy: None,
        };
        let us = |c: &CopyNodeCosts, d, after| c.node_us(d, MIB, after).unwrap();
        use CopyDirection::*;
        assert!((us(&c, HostToDevice, false) - 28.0).abs() < 1e-9);
        assert!((us(&c, HostToDevice, true) - 21.5).abs() < 1e-9);
        // No chained line measured: the line between kernels.
        assert!((us(&c, DeviceToHost, true) - 30.0).abs() < 1e-9);
        c.device_to_host_after_copy = Some(line(3.0, 20.0));
        assert!((us(&c, DeviceToHost, true) - 23.0).abs() < 1e-9);
        // Not a host copy: no line.
        assert_eq!(c.node_us(DeviceToDevice, MIB, true), None);
    }

    #[test]
    fn profiles_without_the_chained_lines_still_load() {
        let c: CopyNodeCosts = serde_json::from_str(
            r#"{"host_to_device":{"fixed_us":8.0,"us_per_mib":20.0},
                "device_to_host":{"fixed_us":9.0,"us_per_mib":21.0}}"#,
        )
        .unwrap();
        assert_eq!(c.host_to_device_after_copy, None);
        assert_eq!(c.device_to_host_after_copy, None);
    }

    #[test]
    fn one_size_gives_no_fit() {
        assert!(CopyCost::fit(&[(MIB, 5.0), (MIB, 6.0)]).is_none());
        assert!(CopyCost::fit(&[]).is_none());
    }
}
