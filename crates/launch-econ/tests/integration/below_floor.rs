//! `launch-econ loop` and `--pdl` as a user meets them: argument errors without a GPU, and
//! real runs (ignored without a device) whose results the tool itself checks on the device.

use crate::common::{assert_usage_error, json_of, stderr_of, succeeds, words};

/// Bad loop arguments exit 2 with the reason, before any GPU work.
#[test]
fn loop_arguments_are_validated() {
    for (args, msg) in [
        (vec!["loop", "--steps", "0"], "not in 1..=1000000"),
        (
            vec!["loop", "--steps", "10", "--stop-at", "11"],
            "between 1 and --steps 10",
        ),
        (vec!["loop", "--stop-at", "0"], "between 1 and --steps"),
        (vec!["loop", "--reps", "3"], "--reps does not apply"),
        (vec!["loop", "--step-kernels", "x"], "invalid value"),
        (vec!["loop", "--elems", "0"], "at least 1"),
    ] {
        assert_usage_error(&args, msg);
    }
}

/// A loop run on the GPU: every path's step count is checked on the device counter (the run
/// fails otherwise), and the JSON export says so.
#[test]
#[ignore = "needs a CUDA device"]
fn loop_runs_and_checks_its_step_counts() {
    let out = succeeds(&words(
        "loop --steps 200 --stop-at 50 --step-kernels 2 --trials 3 --warmup 1 --export-json -",
    ));
    let doc = json_of(&out);
    let r = &doc["result"];
    assert_eq!(r["kind"], "loop");
    assert_eq!(r["config"]["steps"], 200);
    assert_eq!(r["config"]["stop_at"], 50);
    // warm-up + 3 trials, four loops each
    assert_eq!(r["checked_loops"], 16);
    assert_eq!(r["step_nodes"], 3, "2 adds and the counting kernel");
    assert_eq!(r["body_nodes"], 4, "the step and the loop kernel");
    for f in [
        "host_loop_wall_us",
        "while_wall_us",
        "readback_wall_us",
        "while_exit_wall_us",
    ] {
        assert!(r["summary"][f]["median"].as_f64().unwrap() > 0.0, "{f}");
    }
    let report = stderr_of(&out);
    assert!(report.contains("one WHILE launch: host issue"), "{report}");
}

/// `--pdl` reaches the measurement and the document, and the run completes.
#[test]
#[ignore = "needs a CUDA device"]
fn pdl_run_is_recorded_as_such() {
    let out = succeeds(&["200", "--pdl", "--trials", "2", "--export-json", "-"]);
    let doc = json_of(&out);
    assert_eq!(doc["result"]["point"]["config"]["pdl"], true);
    let report = stderr_of(&out);
    assert!(
        report.contains("with programmatic dependent launch"),
        "{report}"
    );
}
