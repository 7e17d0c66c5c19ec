//! The round model: what capturing a round of kernel launches into a graph would save.
//!
//! A round of `L` launches that the user measured at `H` ms of host issue and (optionally)
//! `G` ms of GPU time — the profiler's kernel sum:
//!
//! * **graph** = `launch_host(L) + max(G + L · gap, L · node_gpu) + L · shared`: one
//!   `cuGraphLaunch` on the host (a fixed cost plus a small per-node cost, both measured),
//!   then the GPU runs the nodes: each its kernel's profiled duration plus the front end's gap
//!   between graph nodes (`gap`, measured), and never faster than the measured per-node floor
//!   of graph replay; `shared` is the step between the two levels of per-node graph cost
//!   (measured; see [`crate::other_stream`]): rounds are priced at the upper level, where
//!   framework processes were found, and the round without it is reported as the lower bound.
//!   (`eager_extra` was measured at the lower level; what an eager kernel costs at the upper
//!   level was not, so a GPU-bound round's saving is the conservative one.) The terms are added,
//!   not overlapped: the next round waits for this one.
//! * **eager** = `max(H, G + L · (gap + eager_extra))`: host issue and GPU execution overlap,
//!   so the round takes as long as the slower of the two; a kernel launched eagerly costs the
//!   GPU more than a graph node (`eager_extra`: the measured back-to-back eager kernel less the
//!   graph node, same kernel). With no `G` the round is taken as host-bound (`H`), which makes
//!   the saving an upper bound.
//!
//! Profiles written before the gaps were measured (no `graph_node_gap_us`) fall back to
//! `max(G, L · node_gpu)` and `max(H, G)`.
//! * **saving** = eager − graph; **break-even** = build cost / saving, in rounds, where the
//!   build cost (capture + instantiate + upload) scales with the node count as measured.
//!
//! A GPU-bound round (`G ≥ H`) therefore saves little or nothing, however cheap replay is.

use serde::{Deserialize, Serialize};

/// What the model needs from a measurement, all medians.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModelInputs {
    /// GPU time per graph node in replay (device events), µs: the replay floor.
    pub graph_node_gpu_us: f64,
    /// Host cost of one `Graph::launch()` call: fixed part, µs.
    pub graph_launch_fixed_us: f64,
    /// Host cost of one `Graph::launch()` call: per node, µs.
    pub graph_launch_per_node_us: f64,
    /// Capture + instantiate + upload, per node, µs.
    pub build_per_node_us: f64,
    /// Eager host issue per launch through the engine, µs (for comparison with the user's).
    pub eager_issue_us: f64,
    /// GPU time a graph node adds to its kernel's profiled duration, µs (a one-block spin's
    /// node time less its profiled duration; see `stand_in`). `None` in older profiles.
    #[serde(default)]
    pub graph_node_gap_us: Option<f64>,
    /// How much longer a profiler (CUPTI) saw the one-block spin run than its own span, ns,
    /// measured at the end of the run that wrote the profile: the gap above is its node less
    /// its span and this ramp, and `replay` asks its stand-ins for recorded durations less it
    /// on this kind of GPU. `None` in older profiles and where CUPTI could not be loaded (the
    /// H200's figure, [`crate::calibration::DEFAULT_SPIN_RAMP_NS`], was used).
    #[serde(default)]
    pub spin_ramp_ns: Option<f64>,
    /// GPU time an eager kernel, queued back to back, costs beyond the same kernel as a graph
    /// node, µs. `None` in older profiles.
    #[serde(default)]
    pub eager_extra_us: Option<f64>,
    /// GPU time between the two levels of per-node graph cost, µs (see
    /// [`crate::other_stream`]); the graph round includes it. `None` in older profiles.
    #[serde(default)]
    pub graph_node_other_stream_us: Option<f64>,
    /// The same step for a graph whose replay touches more memory than the L2 holds, µs:
    /// about twice the other on an H200 (see [`crate::footprint`]). `None` in older profiles.
    #[serde(default)]
    pub graph_node_other_stream_beyond_l2_us: Option<f64>,
    /// What a host↔device copy node adds to a graph of kernels, by direction and size (see
    /// [`crate::copy_nodes`]); `replay --summary` prices a trace's copies with it. `None` in
    /// older profiles.
    #[serde(default)]
    pub copy_nodes: Option<crate::copy_nodes::CopyNodeCosts>,
    /// GPU time a graph node costs beyond its own while a GEMM of another stream runs beside
    /// it, by that GEMM's bytes a second (see [`crate::beside`]); `replay --summary` adds it
    /// on walks of several streams. `None` in older profiles.
    #[serde(default)]
    pub graph_node_beside: Option<crate::beside::BesideCosts>,
    /// The device's GEMM peaks (see [`crate::roofline`]): `replay --summary` tells with them
    /// which recorded GEMMs are held by their math, and so hold the SMs they fill for all
    /// their time. `None` in older profiles.
    #[serde(default)]
    pub gemm_peaks: Option<crate::roofline::GemmPeaks>,
}

impl ModelInputs {
    /// Device-memory bandwidth the profile measured (a device-to-device copy's, GB/s, see
    /// [`crate::beside::BesideCosts::bandwidth_gb_s`]); 0 where it holds none.
    pub fn bandwidth_gb_s(&self) -> f64 {
        self.graph_node_beside.map_or(0.0, |c| c.bandwidth_gb_s)
    }

    /// The figures every profile holds — replay floor, graph launch (fixed and per node),
    /// build per node and eager issue, µs — and none of the later ones: a profile as an
    /// older launch-econ wrote it.
    pub fn core(
        graph_node_gpu_us: f64,
        graph_launch_fixed_us: f64,
        graph_launch_per_node_us: f64,
        build_per_node_us: f64,
        eager_issue_us: f64,
    ) -> ModelInputs {
        ModelInputs {
            graph_node_gpu_us,
            graph_launch_fixed_us,
            graph_launch_per_node_us,
            build_per_node_us,
            eager_issue_us,
            graph_node_gap_us: None,
            spin_ramp_ns: None,
            eager_extra_us: None,
            graph_node_other_stream_us: None,
            graph_node_other_stream_beyond_l2_us: None,
            copy_nodes: None,
            graph_node_beside: None,
            gemm_peaks: None,
        }
    }
}

/// The user's round.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Round {
    pub launches: u64,
    /// Measured host issue time of the whole round, ms.
    pub host_issue_ms: f64,
    /// Measured GPU time of the round, ms, if known.
    pub gpu_ms: Option<f64>,
}

/// What the model predicts for a round.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub eager_ms: f64,
    pub graph_ms: f64,
    /// The graph round at the lower level of per-node graph cost (a lower bound), ms.
    #[serde(default)]
    pub graph_quiet_ms: f64,
    pub saving_ms: f64,
    /// Host part of the graph round (the launch call), ms.
    pub graph_launch_ms: f64,
    /// GPU part of the graph round, ms.
    pub graph_gpu_ms: f64,
    /// One-time cost to build the round's graph, ms.
    pub build_ms: f64,
    /// Rounds of replay that pay back the build; `None` when the graph saves nothing.
    pub break_even_rounds: Option<f64>,
    /// True when the GPU, not the host, bounds the eager round.
    pub gpu_bound: bool,
}

/// Applies the model (see the module documentation).
pub fn predict(m: &ModelInputs, r: &Round) -> Prediction {
    let l = r.launches as f64;
    let gpu = r.gpu_ms.unwrap_or(0.0).max(0.0);
    let (graph_node_extra_ms, eager_node_extra_ms) = match (r.gpu_ms, m.graph_node_gap_us) {
        (Some(_), Some(gap)) => {
            let gap = gap.max(0.0);
            let eager = gap + m.eager_extra_us.unwrap_or(0.0).max(0.0);
            (l * gap / 1e3, l * eager / 1e3)
        }
        _ => (0.0, 0.0),
    };
    let eager_ms = r.host_issue_ms.max(gpu + eager_node_extra_ms);
    let graph_launch_ms = (m.graph_launch_fixed_us + m.graph_launch_per_node_us * l).max(0.0) / 1e3;
    let shared_ms = l * m.graph_node_other_stream_us.unwrap_or(0.0).max(0.0) / 1e3;
    let graph_quiet_gpu_ms = (gpu + graph_node_extra_ms).max(l * m.graph_node_gpu_us / 1e3);
    let graph_gpu_ms = graph_quiet_gpu_ms + shared_ms;
    let graph_ms = graph_launch_ms + graph_gpu_ms;
    let saving_ms = eager_ms - graph_ms;
    let build_ms = m.build_per_node_us * l / 1e3;
    Prediction {
        eager_ms,
        graph_ms,
        graph_quiet_ms: graph_launch_ms + graph_quiet_gpu_ms,
        saving_ms,
        graph_launch_ms,
        graph_gpu_ms,
        build_ms,
        break_even_rounds: (saving_ms > 0.0).then(|| build_ms / saving_ms),
        gpu_bound: r.gpu_ms.is_some() && gpu + eager_node_extra_ms >= r.host_issue_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn h200_like() -> ModelInputs {
        ModelInputs::core(1.0, 2.0, 0.002, 6.0, 3.5)
    }

    #[test]
    fn measured_gaps_are_added_per_node() {
        let m = ModelInputs {
            graph_node_gap_us: Some(0.1),
            eager_extra_us: Some(0.9),
            ..h200_like()
        };
        // 1000 kernels summing to 2 ms on the GPU, 8 ms of host issue.
        let p = predict(
            &m,
            &Round {
                launches: 1000,
                host_issue_ms: 8.0,
                gpu_ms: Some(2.0),
            },
        );
        // Graph: 2 ms + 1000 x 0.1 us, above the 1 us/node floor (1 ms).
        assert!((p.graph_gpu_ms - 2.1).abs() < 1e-12);
        assert_eq!(p.eager_ms, 8.0);
        // GPU-bound once kernels + eager gaps pass the host: 7.5 ms + 1000 x 1.0 us = 8.5 ms.
        let q = predict(
            &m,
            &Round {
                launches: 1000,
                host_issue_ms: 8.0,
                gpu_ms: Some(7.5),
            },
        );
        assert!(q.gpu_bound);
        assert!((q.eager_ms - 8.5).abs() < 1e-12);
        assert!((q.graph_gpu_ms - 7.6).abs() < 1e-12);
        // Without GPU time the gaps change nothing: host-bound, the floor per node.
        let h = predict(
            &m,
            &Round {
                launches: 1000,
                host_issue_ms: 8.0,
                gpu_ms: None,
            },
        );
        assert!((h.graph_gpu_ms - 1.0).abs() < 1e-12);
        assert!(!h.gpu_bound);
    }

    #[test]
    fn another_active_stream_adds_its_cost_to_every_node() {
        let m = ModelInputs {
            graph_node_gap_us: Some(0.1),
            eager_extra_us: Some(0.9),
            graph_node_other_stream_us: Some(0.2),
            ..h200_like()
        };
        let round = |gpu_ms| Round {
            launches: 1000,
            host_issue_ms: 8.0,
            gpu_ms,
        };
        // Kernels + gaps (2.1 ms), then 1000 x 0.2 us; the quiet round leaves the 0.2 out.
        let p = predict(&m, &round(Some(2.0)));
        assert!((p.graph_gpu_ms - 2.3).abs() < 1e-12);
        assert!((p.graph_ms - p.graph_quiet_ms - 0.2).abs() < 1e-12);
        assert!((p.saving_ms - (8.0 - p.graph_ms)).abs() < 1e-12);
        // On the floor too: 1000 x (1.0 + 0.2) us without GPU time.
        let h = predict(&m, &round(None));
        assert!((h.graph_gpu_ms - 1.2).abs() < 1e-12);
        // The eager round is not changed.
        assert_eq!(p.eager_ms, 8.0);
    }

    #[test]
    fn host_bound_round_saves_host_time_minus_replay_floor() {
        let p = predict(
            &h200_like(),
            &Round {
                launches: 1000,
                host_issue_ms: 8.0,
                gpu_ms: None,
            },
        );
        assert_eq!(p.eager_ms, 8.0);
        assert!((p.graph_gpu_ms - 1.0).abs() < 1e-12);
        assert!((p.graph_launch_ms - 0.004).abs() < 1e-12);
        assert!((p.saving_ms - (8.0 - 1.004)).abs() < 1e-12);
        assert!(!p.gpu_bound);
        assert!((p.build_ms - 6.0).abs() < 1e-12);
        assert!((p.break_even_rounds.unwrap() - 6.0 / 6.996).abs() < 1e-9);
    }

    #[test]
    fn gpu_bound_round_saves_almost_nothing() {
        let p = predict(
            &h200_like(),
            &Round {
                launches: 1000,
                host_issue_ms: 8.0,
                gpu_ms: Some(12.0),
            },
        );
        assert!(p.gpu_bound);
        assert_eq!(p.eager_ms, 12.0);
        assert!(p.saving_ms < 0.0, "graph adds its launch on top: {p:?}");
        assert!(p.break_even_rounds.is_none());
    }

    proptest! {
        #[test]
        fn graph_never_beats_the_gpu_time(
            l in 1u64..100_000, h in 0.0f64..100.0, g in proptest::option::of(0.0f64..100.0)
        ) {
            let p = predict(&h200_like(), &Round { launches: l, host_issue_ms: h, gpu_ms: g });
            prop_assert!(p.graph_ms >= g.unwrap_or(0.0));
            prop_assert!(p.eager_ms >= h);
            prop_assert!((p.eager_ms - p.graph_ms - p.saving_ms).abs() < 1e-9);
            // Saving can never exceed the host issue that the graph removes.
            prop_assert!(p.saving_ms <= h + 1e-9);
        }

        #[test]
        fn a_gpu_bound_round_never_saves(
            l in 1u64..10_000, h in 0.0f64..50.0, extra in 0.0f64..50.0
        ) {
            let p = predict(&h200_like(), &Round { launches: l, host_issue_ms: h, gpu_ms: Some(h + extra) });
            prop_assert!(p.gpu_bound);
            prop_assert!(p.saving_ms <= 0.0);
            prop_assert!(p.break_even_rounds.is_none());
        }
    }
}
