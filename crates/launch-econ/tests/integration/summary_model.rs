//! The offline model of a walk on several streams: recorded GEMMs side by side share device
//! memory and stretch by their load, as the profile measured (`crate::beside`); small kernels
//! beside whole-SM blocks run on the SMs those leave.

use launch_econ::beside::{BesideCosts, BesidePoint};
use launch_econ::model::ModelInputs;
use launch_econ::occupancy::SmLimits;
use launch_econ::offline::{graph_step_model, OfflineDevice};
use launch_econ::trace::matmul::{operand_bytes, MatmulRole};
use launch_econ::trace::{Op, StreamWait, Walk};
use memra_engine::{Gemm, GemmType};

use crate::common::{cmd, fixture, json_of, replay, stderr_of, stdout_of, succeeds};

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
            per_lane_us: 0.0,
            l2_gb_s: 0.0,
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

/// The full-GPU fixture's first branch cut to 128 whole-SM blocks (168 registers x 384
/// threads: 1024 registers left on each of the 128 SMs it holds) and its second made an add of
/// 512 blocks of 128 threads at `registers` a thread: the `--summary` prediction's JSON.
fn beside_128_whole_sm_blocks(registers: u64) -> serde_json::Value {
    let mut trace: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("kineto_two_streams_full_gpu.json")).unwrap(),
    )
    .unwrap();
    for e in trace["traceEvents"].as_array_mut().unwrap() {
        match e["name"].as_str() {
            Some("branch_a") => e["args"]["grid"] = serde_json::json!([128, 1, 1]),
            Some("branch_b") => {
                e["name"] = "vectorized_elementwise_kernel<add>".into();
                e["dur"] = 10.0.into();
                let args = &mut e["args"];
                args["grid"] = serde_json::json!([512, 1, 1]);
                args["block"] = serde_json::json!([128, 1, 1]);
                args["registers per thread"] = registers.into();
                args["shared memory"] = 0.into();
            }
            _ => {}
        }
    }
    let dir = std::env::temp_dir().join(format!("le-confined-{}-{registers}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("trace.json");
    std::fs::write(&path, trace.to_string()).unwrap();
    let out = succeeds(&replay(path.to_str().unwrap(), "--summary --export-json -"));
    let text = stdout_of(&succeeds(&replay(path.to_str().unwrap(), "--summary")));
    std::fs::remove_dir_all(&dir).unwrap();
    let mut p = json_of(&out)["result"]["prediction"].clone();
    p["text"] = text.into();
    p
}

/// An add whose block (4 warps at 32 registers: 4096) does not fit in the 1024 registers the
/// GEMV's 128 whole-SM blocks leave is priced as one whose block does (8 registers): small
/// kernels are not confined to the SMs such kernels leave (held-out batch 56: element-wise
/// chains beside GEMV chains took turns with them, and a rule that confined them priced such
/// walks up to 38% high), and the price counts no confined kernels.
#[test]
fn a_small_kernel_beside_whole_sm_blocks_is_not_confined_to_the_sms_they_leave() {
    let crowded = beside_128_whole_sm_blocks(32);
    let fits = beside_128_whole_sm_blocks(8);
    assert!(crowded.get("kernels_confined").is_none(), "{crowded}");
    assert!(
        !crowded["text"]
            .as_str()
            .unwrap()
            .contains("rounds of blocks"),
        "{}",
        crowded["text"]
    );
    let ms = |p: &serde_json::Value| p["graph_step_ms"].as_f64().unwrap();
    assert!(
        (ms(&crowded) - ms(&fits)).abs() < 1e-9,
        "{} vs {}",
        ms(&crowded),
        ms(&fits)
    );
}

/// `replay --summary --export-trace FILE` writes, with no GPU, the recording and where the
/// offline model puts each node of the graph step: a two-stream walk's branches side by side,
/// the join after both, within the step it prices.
#[test]
fn summary_exports_the_model_s_graph_step_as_a_trace() {
    let fx = fixture("kineto_two_streams.json");
    let dir = std::env::temp_dir().join(format!("le-summary-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("model.json");
    let out = cmd()
        .args(replay(&fx, "--summary --export-json -"))
        .arg("--export-trace")
        .arg(&path)
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(
        stderr_of(&out).contains("wrote the model's trace"),
        "{}",
        stderr_of(&out)
    );
    let step_us = json_of(&out)["result"]["prediction"]["graph_step_ms"]
        .as_f64()
        .unwrap()
        * 1e3;
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let ev = v["traceEvents"].as_array().unwrap();
    assert!(ev
        .iter()
        .any(|e| e["pid"] == 1 && e["args"]["name"] == "graph step, offline model"));
    let recorded = ev
        .iter()
        .filter(|e| e["pid"] == 0 && e["ph"] == "X")
        .count();
    let model: Vec<&serde_json::Value> = ev
        .iter()
        .filter(|e| e["pid"] == 1 && e["ph"] == "X")
        .collect();
    assert_eq!(model.len(), recorded, "{model:?}");
    assert!(model.iter().all(|e| e["args"]["timing"] == "model"));
    // Each node's time alone is given, and none runs shorter beside the others.
    assert!(model.iter().all(|e| {
        let alone = e["args"]["alone_us"].as_f64().unwrap();
        alone >= e["args"]["recorded_dur_us"].as_f64().unwrap()
            && e["dur"].as_f64().unwrap() >= alone - 1e-9
    }));
    let span = |name: &str| {
        let e = model.iter().find(|e| e["name"] == name).unwrap();
        let ts = e["ts"].as_f64().unwrap();
        (
            ts,
            ts + e["dur"].as_f64().unwrap(),
            e["tid"].as_u64().unwrap(),
        )
    };
    let (a, b, epi) = (span("branch_a"), span("branch_b"), span("epilogue"));
    assert_ne!(a.2, b.2, "the branches on lanes of their own");
    assert!(a.0 < b.1 && b.0 < a.1, "side by side: {a:?} {b:?}");
    // ts + dur in µs as floats: equal ends may differ in the last bits.
    let after = |x: f64, y: f64| x >= y - 1e-9 * y.abs().max(1.0);
    assert!(
        after(epi.0, a.1) && after(epi.0, b.1),
        "the join waits: {epi:?} {a:?} {b:?}"
    );
    let last = model
        .iter()
        .map(|e| e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(
        last > 0.0 && last <= step_us,
        "{last} us of nodes in a {step_us} us step"
    );
}

/// Two lanes of bf16 element-wise kernels within the L2 (a stored H200 run, held-out batch 91),
/// which the model's sharing prices above its own price of them one after another (0.103 ms
/// against 0.094; the real graph ran 0.068) with a profile that has no L2 figure, as the
/// shipped one had none before, so their loads queue on device memory: streams side by side
/// take no longer than the same kernels in turn, so the step is held at the serial price and
/// says so.
#[test]
fn streams_side_by_side_are_never_priced_above_one_after_another() {
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let trace = format!(
        "{root}/docs/stored/heldout-89-93-f492220/heldout91/lq_two_lanes_of_elementwise_bf16.eager.json.gz"
    );
    let mut profile: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{root}/profiles/h200.json")).unwrap(),
    )
    .unwrap();
    profile["result"]["model_inputs"]["graph_node_beside"]
        .as_object_mut()
        .unwrap()
        .remove("l2_gb_s");
    let dir = std::env::temp_dir().join(format!("le-serial-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let without_l2 = dir.join("h200-without-l2.json");
    std::fs::write(&without_l2, profile.to_string()).unwrap();
    let flags = format!(
        "--summary --eager-step-ms 0.734 --export-json - --profile {}",
        without_l2.display()
    );
    let out = succeeds(&replay(&trace, &flags));
    std::fs::remove_dir_all(&dir).unwrap();
    let p = &json_of(&out)["result"]["prediction"];
    let step = p["graph_step_ms"].as_f64().unwrap();
    let serial = p["graph_step_serial_ms"].as_f64().unwrap();
    let unshared = p["graph_step_unshared_ms"].as_f64().unwrap();
    assert_eq!(step, serial, "{p}");
    assert!(unshared < step, "{p}");
    let quiet = p["graph_step_quiet_ms"].as_f64().unwrap();
    assert!(quiet <= step, "{p}");
    let report = format!("{}{}", stdout_of(&out), stderr_of(&out));
    assert!(
        report.contains("priced them longer than one after another"),
        "{report}"
    );
}

/// Two lanes of f32 `addcmul` over 2 Mi elements (a stored H200 run, held-out batch 96): 32
/// MiB a lane, 64 together, past the H200's 60 MiB L2. Alone each kernel ran faster than
/// device memory gives, partly from the L2; side by side the real graph took 0.187 ms, longer
/// than the model's price of the lanes one after another (0.150). The step is held at the
/// kernels' bytes from device memory and says so.
#[test]
fn lanes_whose_data_pass_the_l2_are_priced_no_shorter_than_their_bytes_from_device_memory() {
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let trace = format!(
        "{root}/docs/stored/heldout-68-73-96-127a3bf/heldout96/lv_two_lanes_of_addcmuls_f32_2m.eager.json.gz"
    );
    let out = succeeds(&replay(
        &trace,
        "--summary --eager-step-ms 0.484 --export-json -",
    ));
    let p = &json_of(&out)["result"]["prediction"];
    let step = p["graph_step_ms"].as_f64().unwrap();
    let floor = p["graph_step_streamed_floor_ms"].as_f64().unwrap();
    let serial = p["graph_step_serial_ms"].as_f64().unwrap();
    assert_eq!(step, floor, "{p}");
    assert!(floor > serial, "{p}");
    let report = format!("{}{}", stdout_of(&out), stderr_of(&out));
    assert!(
        report.contains("no shorter than their recorded bytes at device memory's bandwidth"),
        "{report}"
    );
    // Four lanes of fp16 scale-adds whose data stay within the L2 (32 MiB together): no floor.
    let one = format!(
        "{root}/docs/stored/heldout-68-73-96-127a3bf/heldout96/lv_four_lanes_of_scale_adds_fp16_2m.eager.json.gz"
    );
    let out = succeeds(&replay(
        &one,
        "--summary --eager-step-ms 1.7 --export-json -",
    ));
    let p = &json_of(&out)["result"]["prediction"];
    assert!(p.get("graph_step_streamed_floor_ms").is_none(), "{p}");
}
