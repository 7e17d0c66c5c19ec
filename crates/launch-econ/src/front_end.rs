//! What the GPU's front end costs a graph node for each other lane of the graph.
//!
//! A graph's lanes (branches) do not issue their nodes independently: the nodes of every lane
//! go through the GPU's front end, and each node of a lane takes longer while other lanes still
//! have nodes to run. On an H200, lanes of 256 empty one-block kernels forked side by side in
//! one graph ran ×1.18, ×1.41 and ×2.00 one lane's step for 2, 4 and 8 lanes
//! (`scripts/lane_throughput_probe.py`, `docs/lane-throughput-h200.json`): 0.13, 0.10 and
//! 0.10 µs more a node for each other lane, where the kernels do no work that other lanes could
//! slow. Lanes of real kernels pay it beside what they take of each other's SMs and memory
//! ([`crate::sharing`]). A lane waiting on another's work does not: chains of 32 in-place adds
//! that take turns between two streams, each add waiting on the other stream's last, ran in a
//! real graph within 2% of the same chain on one stream (H100, one-block and 128-block adds,
//! `scripts/cross_branch_edge_probe.py`, `docs/cross-branch-edge-h100.json`).

use memra_engine::Engine;

use crate::forked_lanes::ForkedLanes;

/// Lanes side by side in the measured graph, beside the graph of one.
const LANES: usize = 4;
/// Empty kernels a lane.
const NODES: usize = 256;

/// How much longer each node runs for each other lane running beside it, µs: a graph of
/// `LANES` lanes of `NODES` empty one-block kernels forked side by side off `e`'s stream,
/// against a graph of one such lane (the same fork and join), replayed in turn; the extra
/// time over the nodes of a lane and the other lanes (at least 0).
pub fn measure_per_lane(e: &Engine) -> anyhow::Result<f64> {
    let (one, all) = ForkedLanes::new(e, LANES)?
        .one_and_all_us(|_, lane| (0..NODES).try_for_each(|_| lane.noop()))?;
    Ok(((all - one) / (NODES * (LANES - 1)) as f64).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[ignore = "needs a CUDA device"]
    fn the_cost_of_other_lanes_is_measured_on_the_device() {
        let e = Engine::new(0).unwrap();
        let us = measure_per_lane(&e).unwrap();
        assert!(us.is_finite() && us >= 0.0, "{us}");
        // The engine stays usable after the captures across its lanes.
        e.noop().unwrap();
        e.stream().synchronize().unwrap();
    }
}
