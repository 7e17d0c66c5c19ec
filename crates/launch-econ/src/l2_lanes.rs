//! What lanes of element-wise kernels whose data the L2 holds move together, measured for
//! `--summary`.
//!
//! Small kernels of other lanes slow a small kernel by what they ask of device memory
//! ([`crate::beside::BesideCosts::small_stretch`], measured beside GEMMs that stream their
//! weights), and kernels running together share the bandwidth of a device-to-device copy. Where
//! a walk's data stays in the L2 from one kernel to the next, its element-wise kernels do not
//! queue on device memory at all: on an H100 lanes of 64 f32 adds over 1 MiB buffers ran +21%
//! and +54% for two and four lanes side by side against one, where reading their loads as
//! device-memory traffic priced four lanes at four times their recorded kernels (held-out batch
//! 66's ring; `scripts/elementwise_lanes_probe.py`, `docs/elementwise-lanes-h100.json`). What
//! they share is the L2's bandwidth, which this measures: a graph of four lanes of adds
//! forked side by side, each over three buffers of its own, all of them together half the L2
//! (within the 2/3 line of [`crate::footprint`]), replayed in turn with a graph of one such lane;
//! the bytes the lanes move (two inputs read, one result written, an add) over the step. The adds
//! take four elements a thread ([`Engine::add_x4`]), as PyTorch's vectorised element-wise kernels
//! do: on an H100 four lanes of those over 2 MiB buffers moved 6.9 TB/s together (PyTorch's own
//! adds 6.6), one-float-a-thread adds 3.8 (`scripts/l2_add_kernels_probe.py`,
//! `docs/l2-add-kernels-h100.json`).

use memra_engine::{DeviceBuffer, Engine};

use crate::forked_lanes::ForkedLanes;

/// The part of what the lanes move ([`L2Lanes::together_gb_s`]) that they write: an add reads
/// two inputs and writes one result. Lanes within the L2 are held by what they write, not by
/// what they read: on an H100 four lanes of 24 adds (two 2 MiB inputs read, one written) took
/// as long as four lanes of 24 unary kernels over the same buffers (one read, one written),
/// and lanes of f16 kernels over 512 Ki elements (1 MiB written) as long as lanes of f32
/// kernels over 256 Ki (`scripts/graph_lane_memory_probe.py`,
/// `docs/graph-lane-memory-dtypes-h100.json`). So the offline model shares this part of the
/// figure among what kernels within the L2 write.
pub const WRITTEN_PART: f64 = 1.0 / 3.0;

/// The part of the lanes' figure ([`L2Lanes::together_gb_s`]) that reads across rows reach,
/// each element a 32-byte sector ([`crate::trace::across_rows`]): on an H100 two and four lanes
/// of `a + a.T` over 1024 x 1024 (bf16 and f32) moved 4.8-5.0 TB/s together, their sectors
/// with their other bytes, where the profile's figure was 6.6 TB/s; four lanes over 512 x 512
/// and 768 x 768 came to 4.2-4.6 (`scripts/graph_lane_memory_probe.py --transposed`,
/// docs/cross-device/graph-lane-transposed-h100). A read a 32-byte sector a request takes more
/// of the L2 than its bytes in whole lines do. Measured on an H100, taken on other GPUs as well.
pub const ACROSS_ROW_PACE: f64 = 0.74;

/// Lanes side by side.
const LANES: usize = 4;
/// Adds a lane.
const NODES: usize = 64;
/// The part of the L2 the lanes' buffers take together.
const L2_PART: f64 = 0.5;

/// What [`measure`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L2Lanes {
    /// The bytes the lanes moved together over the step, GB/s.
    pub together_gb_s: f64,
    /// One lane alone, GB/s.
    pub alone_gb_s: f64,
}

/// Measures [`L2Lanes`] on `e`'s device, each lane on a stream of its own of `e`'s context.
pub fn measure(e: &Engine) -> anyhow::Result<L2Lanes> {
    let l2 = usize::try_from(e.device_info().l2_bytes).unwrap_or(0);
    let elems = (L2_PART * l2 as f64 / (3 * LANES * std::mem::size_of::<f32>()) as f64) as usize;
    anyhow::ensure!(
        elems > 0,
        "the device reports an L2 of {l2} bytes: nothing to measure"
    );
    let forked = ForkedLanes::new(e, LANES)?;
    let mut bufs: Vec<[DeviceBuffer<f32>; 3]> = forked
        .lanes()
        .iter()
        .map(|l| Ok([l.zeros(elems)?, l.zeros(elems)?, l.zeros(elems)?]))
        .collect::<memra_engine::Result<_>>()?;
    let (one, all) = forked.one_and_all_us(|i, lane| {
        let [a, b, y] = &mut bufs[i];
        (0..NODES).try_for_each(|_| lane.add_x4(a, b, y, elems))
    })?;
    // Two inputs read and a result written an add; bytes / µs = MB/s, / 1e3 = GB/s.
    let lane_bytes = (NODES * 3 * elems * std::mem::size_of::<f32>()) as f64;
    Ok(L2Lanes {
        together_gb_s: LANES as f64 * lane_bytes / all / 1e3,
        alone_gb_s: lane_bytes / one / 1e3,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[ignore = "needs a CUDA device"]
    fn lanes_within_the_l2_are_measured_on_the_device() {
        let e = Engine::new(0).unwrap();
        let m = measure(&e).unwrap();
        assert!(
            m.together_gb_s.is_finite() && m.together_gb_s > 0.0,
            "{m:?}"
        );
        assert!(m.alone_gb_s.is_finite() && m.alone_gb_s > 0.0, "{m:?}");
        // The engine stays usable after the captures across its lanes.
        e.noop().unwrap();
        e.stream().synchronize().unwrap();
    }
}
