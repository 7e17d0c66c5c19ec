//! `replay --summary --grid-nodes FILE`: a grid table written by `scripts/grid_node_probe.py`
//! prices wide kernels by the rows of their own family.

use crate::common::{assert_usage_error, json_of, replay, succeeds};

/// A grid table of the probe's JSON prices element-wise kernels by the add of their element
/// size, others by the memory kernel's rows.
#[test]
fn a_grid_table_prices_element_wise_kernels_by_their_own_rows() {
    let dir = std::env::temp_dir().join(format!("grid-families-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // One stream: two kernels of each kind, 1024 blocks of 128 threads, 20 us each.
    let names = [
        "void at::native::vectorized_elementwise_kernel<8, add<c10::Half>>",
        "void at::native::vectorized_elementwise_kernel<4, add<float>>",
        "layer_norm_kernel",
    ];
    let mut events = Vec::new();
    for i in 0..6u64 {
        let ts = 1_000.0 + 30.0 * i as f64;
        events.push(serde_json::json!({"ph": "X", "cat": "cuda_runtime",
            "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts, "dur": 4.0,
            "args": {"correlation": 100 + i}}));
        events.push(
            serde_json::json!({"ph": "X", "cat": "kernel", "name": names[i as usize % 3],
            "pid": 0, "tid": 7, "ts": ts + 5.0, "dur": 20.0,
            "args": {"device": 0, "stream": 7, "correlation": 100 + i,
                     "grid": [1024, 1, 1], "block": [128, 1, 1]}}),
        );
    }
    let trace = dir.join("trace.json");
    std::fs::write(
        &trace,
        serde_json::json!({"schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}],
            "traceEvents": events})
        .to_string(),
    )
    .unwrap();
    // Shifts at 1024 blocks: the memory kernel -0.3 us, the bf16 add -0.1, the f32 add 0.
    let row = |family: &str, kernel: &str, bytes: Option<u32>, blocks: u32, d: f64| {
        serde_json::json!({"threads": 128, "blocks": blocks, "node_minus_profiled_us": d,
            "family": family, "kernel": kernel, "element_bytes": bytes})
    };
    let table = dir.join("table.json");
    std::fs::write(
        &table,
        serde_json::json!({"device": "NVIDIA H200", "cases": [
            row("memory", "memory kernel", None, 8, 0.3),
            row("memory", "memory kernel", None, 1024, 0.0),
            row("element_wise", "torch add bf16", Some(2), 8, 0.2),
            row("element_wise", "torch add bf16", Some(2), 1024, 0.1),
            row("element_wise", "torch add f32", Some(4), 8, 0.3),
            row("element_wise", "torch add f32", Some(4), 1024, 0.3),
        ]})
        .to_string(),
    )
    .unwrap();
    let (trace, table) = (trace.to_str().unwrap(), table.to_str().unwrap());
    let graph_ms = |grid_nodes: &str| {
        let flags = format!("--summary --grid-nodes {grid_nodes} --export-json -");
        json_of(&succeeds(&replay(trace, &flags)))["result"]["prediction"]["graph_step_ms"]
            .as_f64()
            .unwrap()
    };
    // Two of each kind: 2 x (0.3 + 0.1 + 0) us shorter than without a table.
    let saved_us = (graph_ms("off") - graph_ms(table)) * 1e3;
    assert!((saved_us - 0.8).abs() < 1e-6, "{saved_us}");
    // A row of a family launch-econ does not know, or of a negative element size, is a
    // usage error (exit 2), not a panic.
    let bad = dir.join("bad.json");
    let bad_path = bad.to_str().unwrap();
    for case in [
        row("reduction", "sum", None, 8, 0.3),
        serde_json::json!({"threads": 128, "blocks": 8, "node_minus_profiled_us": 0.3,
            "family": "element_wise", "element_bytes": -2}),
    ] {
        std::fs::write(
            &bad,
            serde_json::json!({"device": "NVIDIA H200", "cases": [case]}).to_string(),
        )
        .unwrap();
        let flags = format!("--summary --grid-nodes {bad_path}");
        assert_usage_error(replay(trace, &flags), "is not a grid table");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
