//! The offline model of a walk on several streams: recorded GEMMs side by side share device
//! memory and stretch by their load, as the profile measured (`crate::beside`).

use launch_econ::beside::{BesideCosts, BesidePoint};
use launch_econ::model::ModelInputs;
use launch_econ::occupancy::SmLimits;
use launch_econ::offline::{graph_step_model, OfflineDevice};
use launch_econ::trace::matmul::{operand_bytes, MatmulRole};
use launch_econ::trace::{Op, StreamWait, Walk};
use memra_engine::{Gemm, GemmType};

#[test]
fn recorded_gemms_side_by_side_share_memory_and_stretch_by_their_load() {
    let inputs = ModelInputs::core(1.0, 0.0, 0.0, 5.0, 3.0);
    // main: 10 us; s1 and s2 fork from it, each a 20 us GEMM streaming 4096 x 4096 bf16
    // weights (~1690 GB/s); main joins both, 10 us.
    let gemm = Gemm::plain(GemmType::Bf16, 4096, 16, 4096);
    let k = |stream: u64, corr: u64, us: f64, g: Option<Gemm>| Op {
        stream: Some(stream),
        correlation: Some(corr),
        matmul: g.map(MatmulRole::Call),
        ..Op::kernel("k", corr as f64, us * 1e3)
    };
    let wait = StreamWait::new;
    let w = Walk {
        ops: vec![
            k(7, 1, 10.0, None),
            k(13, 4, 20.0, Some(gemm)),
            k(17, 6, 20.0, Some(gemm)),
            k(7, 9, 10.0, None),
        ],
        waits: vec![wait(13, 2), wait(17, 3), wait(7, 7), wait(7, 8)],
        ..Walk::default()
    };
    let load = operand_bytes(&gemm) as f64 / 20_000.0;
    let costs = |stretch: f64, bandwidth_gb_s: f64| {
        let p = |l: f64| BesidePoint {
            load_gb_s: l,
            stretch,
            gemm_us: 10.0,
        };
        Some(BesideCosts {
            points: [p(1000.0), p(2000.0), p(4000.0)],
            bandwidth_gb_s,
            small: Default::default(),
            small_pair: Default::default(),
        })
    };
    let sms = SmLimits::of("9.0", 132);
    let at = |c| {
        let m = ModelInputs {
            graph_launch_fixed_us: 0.0,
            graph_node_beside: c,
            ..inputs
        };
        graph_step_model(
            &w,
            &OfflineDevice {
                sms: sms.as_ref(),
                ..OfflineDevice::of(&m)
            },
        )
    };
    // Nothing measured: 10 + 20 + 10.
    assert!((at(None) - 0.040).abs() < 1e-12);
    // Together they ask for twice what memory gives: each at half rate, 10 + 40 + 10.
    assert!((at(costs(0.0, load)) - 0.060).abs() < 1e-9);
    // Memory enough, a measured 50% stretch beside each other: 10 + 30 + 10.
    assert!((at(costs(0.5, 10.0 * load)) - 0.050).abs() < 1e-9);
}
