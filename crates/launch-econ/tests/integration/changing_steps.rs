//! `launch-econ update` (and `buckets`) as a user meets them: argument errors without a GPU,
//! and real runs (ignored without a device) that check their own results on the device.

use crate::common::{assert_usage_error, json_of, stderr_of, succeeds, words};

#[test]
fn update_arguments_are_validated() {
    let steps = format!(
        "{}/tests/fixtures/kineto_profiler_steps.json",
        env!("CARGO_MANIFEST_DIR")
    );
    for (args, msg) in [
        (
            vec!["update", "--nodes", "10", "--changed", "11"],
            "more than the step's 10 kernels",
        ),
        (vec!["update", "--changed", "0"], "at least 1"),
        (vec!["update", "--changed", "0%"], "above 0"),
        (vec!["update", "--changed", "120%"], "at most 100"),
        (vec!["update", "--changed", "x"], "not a whole number"),
        (vec!["update", "--steps", "1"], "not in 2..=100000"),
        (vec!["update", "--reps", "2"], "--reps does not apply"),
        (
            vec!["update", "--trace", "no/such/trace.json"],
            "no/such/trace.json",
        ),
        (
            vec!["update", "--trace", "x.json", "--nodes", "5"],
            "cannot be used with",
        ),
        (vec!["update", "--profiler-step", "3"], "--trace"),
        (
            vec!["update", "--trace", &steps, "--profiler-step", "9"],
            "no ProfilerStep#9 in the trace",
        ),
    ] {
        assert_usage_error(&args, msg);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn update_prices_every_way_and_checks_them() {
    let out = succeeds(&words(
        "update --nodes 64 --changed 25% --steps 4 --trials 2 --warmup 0 --export-json -",
    ));
    let doc = json_of(&out);
    let r = &doc["result"];
    assert_eq!(r["kind"], "update");
    assert_eq!(r["config"]["changed"], 16);
    assert_eq!(r["checked_paths"], 10, "5 ways x 2 trials");
    let refusal = r["topology_change"]["refusal"].as_str().unwrap();
    assert!(refusal.contains("TOPOLOGY_CHANGED"), "{refusal}");
    for f in [
        "eager_wall_us",
        "update_wall_us",
        "set_params_wall_us",
        "device_params_wall_us",
    ] {
        assert!(r["summary"][f]["median"].as_f64().unwrap() > 0.0, "{f}");
    }
    let report = stderr_of(&out);
    assert!(report.contains("winner:"), "{report}");
}

/// A recorded walk: the changed stand-ins record into the place each step names, every way.
#[test]
#[ignore = "needs a CUDA device"]
fn update_on_a_recorded_walk() {
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/torch_decode_small.json"
    );
    let out = succeeds(&[
        "update",
        "--trace",
        trace,
        "--changed",
        "3",
        "--steps",
        "3",
        "--trials",
        "2",
        "--warmup",
        "0",
        "--export-json",
        "-",
    ]);
    let doc = json_of(&out);
    let r = &doc["result"];
    assert_eq!(r["config"]["changed"], 3);
    assert_eq!(r["config"]["elems"], 0);
    assert_eq!(r["checked_paths"], 10);
    let report = stderr_of(&out);
    assert!(report.contains("replayed by stand-ins"), "{report}");
}

#[test]
fn bucket_arguments_are_validated() {
    for (args, msg) in [
        (vec!["buckets", "--sizes", "0,4"], "at least 1"),
        (
            vec![
                "buckets",
                "--sizes",
                "1,1000000",
                "--elems-per-batch",
                "100000",
            ],
            "exceeds the kernel's 32-bit index",
        ),
        (vec!["buckets", "--repeats", "0"], "not in 1..=10000"),
    ] {
        assert_usage_error(&args, msg);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn buckets_build_check_and_switch() {
    let out = succeeds(&words(
        "buckets --sizes 1,2,4 --nodes 4 --repeats 3 --export-json -",
    ));
    let doc = json_of(&out);
    let r = &doc["result"];
    assert_eq!(r["kind"], "buckets");
    assert_eq!(r["checked"], 4, "three buckets and the switched executable");
    let b = r["buckets"].as_array().unwrap();
    assert_eq!(b.len(), 3);
    assert_eq!(b[2]["elems"], 4096);
    assert_eq!(b[0]["switch_us"]["n"], 3);
    let report = stderr_of(&out);
    assert!(report.contains("bucket set: 3 graphs"), "{report}");
}
