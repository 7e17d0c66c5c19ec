//! `launch-econ replay` and the GEMMs a trace recorded with their shapes: which run for real
//! (cuBLAS) on a GPU, on several streams and on one, and as what.

use crate::common::{fixture, json_of, replay, stand_ins, succeeds};

/// Two streams of GEMMs whose shapes the trace recorded: the GEMMs run for real (cuBLAS) and
/// the report says so; `--gemms stand-in` stands them in like every other kernel.
#[test]
#[ignore = "needs a CUDA device"]
fn replay_runs_recorded_gemms_for_real_on_concurrent_streams() {
    let fx = fixture("kineto_two_streams_gemm.json");
    let real = json_of(&succeeds(&replay(
        &fx,
        "--trials 2 --reps 3 --warmup 0 --export-json -",
    )));
    let f = &real["result"]["replay"]["fidelity"];
    assert_eq!(f["real_gemm_kernels"], 6, "{f}");
    // The GEMMs' kernels are not counted as empty stand-ins (8 kernels stand in).
    assert!(f["empty_stand_ins"].as_u64().unwrap() <= 8, "{f}");
    let warnings = real["warnings"].to_string();
    assert!(
        warnings.contains("6 of 14 kernels are the recorded GEMMs run for real"),
        "{warnings}"
    );
    let graph_ms = real["result"]["prediction"]["graph_step_ms"]
        .as_f64()
        .unwrap();
    assert!(graph_ms > 0.0);
    let stood_in = json_of(&succeeds(&replay(
        &fx,
        "--trials 2 --reps 3 --warmup 0 --gemms stand-in --export-json -",
    )));
    assert_eq!(
        stood_in["result"]["replay"]["fidelity"]["real_gemm_kernels"],
        0
    );
    let warnings = stood_in["warnings"].to_string();
    assert!(warnings.contains("record_shapes=True"), "{warnings}");
}

/// One stream with three recorded GEMMs: a 512-token `mm` (held by its math), an 8-token `mm`
/// (a weight read) and a 512-token `addmm` (its bias added in cuBLAS's epilogue). The trace
/// links each to its operator; the replay runs the two held by their math for real (the
/// `addmm` with its bias in cuBLASLt's epilogue), and none with `--gemms stand-in`.
#[test]
fn one_stream_gemms_are_linked_to_their_operators() {
    use launch_econ::trace::matmul::MatmulRole;
    let walk = launch_econ::trace::read(std::path::Path::new(&fixture(
        "kineto_one_stream_gemms.json",
    )))
    .unwrap();
    let calls: Vec<_> = walk
        .ops
        .iter()
        .filter_map(|o| match o.matmul {
            Some(MatmulRole::Call(g)) => Some((g.m.min(g.n), g.accumulate, g.bias)),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![(512, false, false), (8, false, false), (512, false, true)],
        "{calls:?}"
    );
    let tf32 =
        launch_econ::trace::read(std::path::Path::new(&fixture("kineto_tf32_gemms.json"))).unwrap();
    let f32_calls = tf32
        .ops
        .iter()
        .filter(|o| matches!(o.matmul, Some(MatmulRole::Call(g)) if g.dtype == memra_engine::GemmType::F32))
        .count();
    assert_eq!(f32_calls, 2);
}

#[test]
#[ignore = "needs a CUDA device"]
fn replay_runs_math_bound_gemms_for_real_on_one_stream() {
    let fx = fixture("kineto_one_stream_gemms.json");
    let real_kernels = |flags: &str| stand_ins(&fx, flags, "real_gemm_kernels");
    assert_eq!(
        real_kernels("--trials 2 --reps 3 --warmup 0 --export-json -"),
        2
    );
    assert_eq!(
        real_kernels("--trials 2 --reps 3 --warmup 0 --gemms stand-in --export-json -"),
        0
    );
}

/// Two f32 `mm`s of 4.3 Gflop each on one stream: one recorded in 12 µs, as TF32 tensor cores
/// run it and far faster than any IEEE f32 GEMM can (358 Tflop/s), one in 300 µs. Both are
/// held by their math and run for real, with `--gemms auto` or `real`; the replay says that it
/// runs the first on TF32.
#[test]
#[ignore = "needs a CUDA device"]
fn an_f32_gemm_recorded_faster_than_f32_math_runs_on_tf32() {
    let fx = fixture("kineto_tf32_gemms.json");
    for gemms in ["auto", "real"] {
        let v = json_of(&succeeds(&replay(
            &fx,
            &format!("--trials 2 --reps 3 --warmup 0 --gemms {gemms} --export-json -"),
        )));
        assert_eq!(
            v["result"]["replay"]["fidelity"]["real_gemm_kernels"], 2,
            "--gemms {gemms}"
        );
        let warnings = v["warnings"].to_string();
        assert!(
            warnings.contains("1 recorded f32 GEMM(s) took less time than IEEE f32 math"),
            "{warnings}"
        );
    }
}
