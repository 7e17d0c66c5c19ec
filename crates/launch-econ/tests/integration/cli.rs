//! The command line as a user meets it: usage errors, missing GPU, output format.

use predicates::prelude::*;

use crate::common::{
    assert_usage_error, cmd, json_of, stderr_of, stdout_of, stdout_without_gpu, succeeds, words,
};

/// Each bad launch count gets a usage error (exit 2) that names the problem, and no panic.
#[test]
fn bad_launch_counts_are_usage_errors() {
    let cases = [
        ("0", "at least 1"),
        ("abc", "not a whole number"),
        ("1.5", "not a whole number"),
        ("1000001", "more than the maximum"),
        ("99999999999999999999999", "not a whole number"),
    ];
    for (arg, msg) in cases {
        cmd()
            .arg(arg)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(msg).and(predicate::str::contains("panicked").not()));
    }
    // A negative number reads as an unknown flag: still a usage error.
    cmd()
        .arg("-5")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unexpected argument '-5'"));
    cmd()
        .args(["10", "20"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
    cmd()
        .args(["--device", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid value 'x'"));
}

/// With no visible GPU (or no driver at all) the tool says so in one line and exits 1.
#[test]
fn no_gpu_is_one_clear_line_and_exit_1() {
    let out = cmd()
        .arg("16")
        .env("CUDA_VISIBLE_DEVICES", "")
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stderr = stderr_of(&out);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("launch-econ: error: starting the engine on GPU 0: "),
        "{stderr}"
    );
    assert!(
        stderr.contains("no CUDA driver library") || stderr.contains("no usable device"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"));
    assert!(out.stdout.is_empty());
}

#[test]
fn help_and_version_exit_0() {
    cmd()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("N_LAUNCHES"));
    cmd()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::contains(env!("CARGO_PKG_VERSION")));
}

/// On a GPU the first two lines have the seed's exact shape.
#[test]
#[ignore = "needs a CUDA device"]
fn prints_the_seed_lines_on_a_gpu() {
    let out = cmd().arg("64").assert().success().get_output().clone();
    let stdout = stdout_of(&out);
    let mut lines = stdout.lines();
    let first = lines.next().unwrap();
    let second = lines.next().unwrap();
    let re_num = |s: &str, key: &str, unit: &str| -> f64 {
        let start = s
            .find(key)
            .unwrap_or_else(|| panic!("{key} missing in {s}"))
            + key.len();
        let rest = &s[start..];
        let end = rest.find(unit).unwrap();
        rest[..end].parse().unwrap()
    };
    assert!(first.starts_with("launches=64 eager="), "{first}");
    let eager = re_num(first, "eager=", " us/launch");
    let graph = re_num(first, "graph-replay=", " us/launch");
    assert!(eager > 0.0 && graph > 0.0, "{first}");
    assert!(first.ends_with('x'));
    assert!(
        second.starts_with(
            "predicted saving on a step37 verify round (1346 launches, 7.9 ms measured host issue): "
        ) && second.ends_with(" ms (an upper bound: no GPU time given, so the round is taken as host-bound)"),
        "{second}"
    );
}

/// The default run measures what host↔device copy nodes add to a graph, stores the fit in
/// its profile and says so.
#[test]
#[ignore = "needs a CUDA device"]
fn the_default_run_measures_copy_nodes() {
    let out = succeeds(&["64", "--export-json", "-"]);
    let v = json_of(&out);
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains("a page-locked copy node adds to a graph: host to device "),
        "{stderr}"
    );
    let c = &v["result"]["model_inputs"]["copy_nodes"];
    for dir in ["host_to_device", "device_to_host"] {
        let fixed = c[dir]["fixed_us"].as_f64().unwrap();
        let per_mib = c[dir]["us_per_mib"].as_f64().unwrap();
        // A 4 MiB copy costs the graph more than a 4 KiB one: the fit's slope is positive.
        assert!(fixed.is_finite() && per_mib > 0.0, "{dir}: {c}");
    }
}

/// Each bad sweep, export or profile argument: the message and exit 2, before any GPU work.
#[test]
fn bad_sweep_export_and_profile_input_exit_2() {
    let dir = std::env::temp_dir().join(format!("le-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad_schema = dir.join("v99.json");
    std::fs::write(&bad_schema, r#"{"schema_version": 99}"#).unwrap();
    let no_inputs = dir.join("sweep.json");
    std::fs::write(&no_inputs, r#"{"schema_version": 1}"#).unwrap();
    let garbage = dir.join("garbage.json");
    std::fs::write(&garbage, [0xffu8, 0x00, 0x13]).unwrap();
    let d = dir.display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["sweep".into(), "--launches".into(), "10..1".into()],
            "runs backwards",
        ),
        (
            vec!["sweep".into(), "--launches".into(), "1..8:x1".into()],
            "x<factor ≥ 2>",
        ),
        (
            vec!["sweep".into(), "--sizes".into(), "0".into()],
            "at least 1",
        ),
        (
            vec!["sweep".into(), "--export-xml".into(), "a.xml".into()],
            "unexpected argument '--export-xml'",
        ),
        (
            vec!["--export-json".into(), "/nonexistent-dir/x.json".into()],
            "does not exist",
        ),
        (vec!["--export-csv".into(), d.clone()], "is a directory"),
        (
            vec![
                "sweep".into(),
                "--plot".into(),
                "/nonexistent-dir/p.svg".into(),
            ],
            "does not exist",
        ),
        (
            vec![
                "--export-json".into(),
                "-".into(),
                "--export-csv".into(),
                "-".into(),
            ],
            "only one export",
        ),
        (vec!["--trials".into(), "0".into()], "invalid value '0'"),
        (
            vec![
                "--trials".into(),
                "3".into(),
                "--max-time".into(),
                "1".into(),
            ],
            "cannot be combined",
        ),
        (
            vec![
                "--min-time".into(),
                "2".into(),
                "--max-time".into(),
                "1".into(),
            ],
            "longer than --max-time",
        ),
        (vec!["--max-noise".into(), "0".into()], "above 0"),
        (
            vec!["--max-time".into(), "inf".into()],
            "between 0 and 86400",
        ),
        (
            vec!["--round-host-issue-ms".into(), "-1".into()],
            "finite, non-negative",
        ),
        (vec!["--round-gpu-ms".into(), "NaN".into()], "finite"),
        (
            vec![
                "predict".into(),
                "--profile".into(),
                format!("{d}/missing.json"),
            ],
            "cannot read profile",
        ),
        (
            vec![
                "predict".into(),
                "--profile".into(),
                bad_schema.display().to_string(),
            ],
            "schema_version 99",
        ),
        (
            vec![
                "predict".into(),
                "--profile".into(),
                no_inputs.display().to_string(),
            ],
            "no model_inputs",
        ),
        (
            vec![
                "predict".into(),
                "--profile".into(),
                format!(
                    "{}/../../profiles/sweep-h200.json",
                    env!("CARGO_MANIFEST_DIR")
                ),
            ],
            "is a `sweep` document; a device profile is one the default run writes",
        ),
        (
            vec![
                "predict".into(),
                "--profile".into(),
                garbage.display().to_string(),
            ],
            "not valid JSON",
        ),
        (
            vec!["predict".into(), "--round-launches".into(), "0".into()],
            "at least 1",
        ),
    ];
    for (args, msg) in cases {
        assert_usage_error(&args, msg);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `predict` needs no GPU: the shipped H200 profile answers, and its numbers follow the model.
#[test]
fn predict_works_without_a_gpu() {
    let stdout = stdout_without_gpu(&words(
        "predict --round-launches 1346 --round-host-issue-ms 7.9",
    ));
    assert!(stdout.starts_with(
        "predicted saving on a step37 verify round (1346 launches, 7.9 ms measured host issue): "
    ));
    assert!(stdout.contains("profiles/h200.json"), "{stdout}");
    // A GPU-bound round saves only the GPU cost an eager kernel has beyond a graph node
    // (measured at the lower level of graph node cost), less the step to the upper level the
    // graph is priced at.
    let out = succeeds(&["predict", "--round-gpu-ms", "12.16", "--export-json", "-"]);
    // With `-`, stdout holds only the JSON; the report goes to stderr.
    let v = json_of(&out);
    let r = &v["result"];
    let p = &r["prediction"];
    assert_eq!(p["gpu_bound"], true);
    let inputs = &r["model_inputs"];
    let per_kernel_ms = inputs["eager_extra_us"].as_f64().unwrap() / 1e3;
    let upper_ms = inputs["graph_node_other_stream_us"].as_f64().unwrap() / 1e3;
    let launch_ms = inputs["graph_launch_fixed_us"].as_f64().unwrap() / 1e3;
    let saving = p["saving_ms"].as_f64().unwrap();
    let per_kernel_saving = per_kernel_ms - upper_ms;
    assert!(
        saving <= 1346.0 * per_kernel_saving
            && saving >= 1346.0 * per_kernel_saving - 2.0 * launch_ms - 0.01,
        "saving {saving} ms, eager extra {per_kernel_ms} ms/kernel, upper level {upper_ms} ms/node"
    );
    // The round at the lower level is the graph round less the step, node by node.
    let quiet = p["graph_quiet_ms"].as_f64().unwrap();
    assert!((p["graph_ms"].as_f64().unwrap() - quiet - 1346.0 * upper_ms).abs() < 1e-9);
    assert_eq!(r["kind"], "predict");
    assert_eq!(v["schema_version"], 2);
    let stderr = stderr_of(&out);
    assert!(stderr.contains("your round"), "{stderr}");
    // A one-kernel round the graph's launch makes longer: "no saving", never "-0.00".
    let out = succeeds(&words(
        "predict --round-launches 1 --round-host-issue-ms 0.001 --round-gpu-ms 0.001",
    ));
    let stdout = stdout_of(&out);
    assert!(stdout.contains("): no saving"), "{stdout}");
    assert!(!stdout.contains("-0.00"), "{stdout}");
}

/// Every export target that cannot take the output is an error that names it, with a
/// non-zero exit; the other outputs are still written.
#[test]
fn lost_output_is_an_error() {
    let dir = std::env::temp_dir().join(format!("le-lost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    if std::path::Path::new("/dev/full").exists() {
        // A full device as the export: error, exit 1, and /dev/full is still a device.
        cmd()
            .args(["predict", "--export-json", "/dev/full"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains("cannot write /dev/full"));
        assert!(std::fs::metadata("/dev/full").is_ok_and(|m| !m.is_file()));
        // A full device as stdout: the report cannot be written.
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_launch-econ"))
            .arg("predict")
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("writing the report to stdout"), "{stderr}");
        // Report lost, export kept: the JSON file is still written.
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let json = dir.join("kept.json");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_launch-econ"))
            .args(["predict", "--export-json"])
            .arg(&json)
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(v["result"]["kind"], "predict");
    }
    // A closed pipe as stdout.
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe() writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just created and are owned here alone.
    let (read, write) = unsafe {
        use std::os::fd::FromRawFd;
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    };
    drop(read);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_launch-econ"))
        .args(["predict", "--export-json", "-"])
        .stdout(std::process::Stdio::from(write))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot write JSON to stdout"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // No permission to write: refused before any work.
    cmd()
        .args(["predict", "--export-json", "/proc/version"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot write /proc/version"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Arguments that are not UTF-8 are paths like any other, and absurd but finite numbers print
/// in scientific form.
#[test]
fn odd_arguments_never_panic() {
    use std::os::unix::ffi::OsStrExt;
    let dir = std::env::temp_dir().join(format!("le-odd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let name = dir.join(std::ffi::OsStr::from_bytes(b"\xff.json"));
    cmd()
        .args(["predict", "--export-json"])
        .arg(&name)
        .assert()
        .success();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&name).unwrap()).unwrap();
    assert!(v["argv"][3].as_str().unwrap().ends_with("\u{fffd}.json"));
    let out = succeeds(&["predict", "--round-host-issue-ms", "1e300"]);
    let stdout = stdout_of(&out);
    assert!(stdout.contains("1.000e300 ms"), "{stdout}");
    assert!(stdout.lines().all(|l| l.len() < 200), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A small sweep on a GPU writes every export and the chart.
#[test]
#[ignore = "needs a CUDA device"]
fn sweep_writes_exports_and_chart() {
    let dir = std::env::temp_dir().join(format!("le-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = |n: &str| dir.join(n).display().to_string();
    cmd()
        .args([
            "sweep",
            "--launches",
            "1,64",
            "--sizes",
            "4096",
            "--trials",
            "3",
            "--warmup",
            "1",
        ])
        .args(["--export-json", &p("s.json"), "--export-csv", &p("s.csv")])
        .args(["--export-markdown", &p("s.md"), "--plot", &p("s.svg")])
        .assert()
        .success();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("s.json")).unwrap()).unwrap();
    let points = v["result"]["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!(points[0]["trials"].as_array().unwrap().len(), 3);
    assert!(v["device"]["name"].as_str().unwrap().contains("NVIDIA"));
    assert_eq!(
        std::fs::read_to_string(p("s.csv")).unwrap().lines().count(),
        3
    );
    assert!(std::fs::read_to_string(p("s.md"))
        .unwrap()
        .starts_with("**sweep** on NVIDIA"));
    assert!(std::fs::read_to_string(p("s.svg"))
        .unwrap()
        .contains("<svg"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Sends `sig` to a sweep after `after`, twice at once as `timeout` and shells do (to the
/// process and to its group); returns the exit status, stderr and the JSON written.
fn interrupt_a_sweep(sig: i32, after: std::time::Duration) -> (Option<i32>, String, String) {
    let dir = std::env::temp_dir().join(format!("le-int-{}-{sig}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("partial.json");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_launch-econ"))
        .args([
            "sweep",
            "--launches",
            "1..8192",
            "--sizes",
            "4096,65536,1048576",
        ])
        .arg("--export-json")
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let pid = child.id() as i32;
    for _ in 0..2 {
        // SAFETY: kill() only sends a signal to our own child process.
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
    }
    let out = child.wait_with_output().unwrap();
    let written = std::fs::read_to_string(&json).unwrap_or_default();
    std::fs::remove_dir_all(&dir).unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        written,
    )
}

/// SIGINT (and its duplicate) during a sweep: what was measured is written, marked partial,
/// and the exit is 130; SIGTERM the same with 143.
#[test]
#[ignore = "needs a CUDA device"]
fn a_signal_during_a_sweep_writes_partial_results() {
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let (status, stderr, json) = interrupt_a_sweep(sig, std::time::Duration::from_secs(3));
        assert_eq!(status, Some(code), "signal {sig}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!stderr.contains("DEINITIALIZED"), "{stderr}");
        let v: serde_json::Value = serde_json::from_str(&json)
            .unwrap_or_else(|e| panic!("signal {sig}: no partial JSON ({e}); stderr: {stderr}"));
        assert_eq!(v["partial"], true);
        let points = v["result"]["points"].as_array().unwrap().len();
        assert!((1..42).contains(&points), "{points} points");
    }
}

/// The pipeline on the devices at hand: two stages on two streams of GPU 0 always, and on
/// GPUs 0 and 1 when two are visible; results are checked against the CPU reference inside.
#[test]
#[ignore = "needs a CUDA device"]
fn pipeline_runs_and_checks_its_result() {
    let out = succeeds(&words(
        "pipeline --devices 0 --stages 2 --stage-launches 8 --trials 2 --reps 3 --warmup 0",
    ));
    let stdout = stdout_of(&out);
    assert!(stdout.contains("all equal"), "{stdout}");
    assert!(stdout.contains("0->0: SameDevice"), "{stdout}");
    assert!(stdout.contains("2 trials x 3 rounds"), "{stdout}");
    // Four micro-batches in flight: every one checked against its own reference.
    let out = succeeds(&words("pipeline --devices 0 --stages 3 --stage-launches 4 --microbatches 4 --trials 2 --reps 3 --warmup 0"));
    let stdout = stdout_of(&out);
    assert!(stdout.contains("4 micro-batch(es) per round"), "{stdout}");
    assert!(stdout.contains("all equal"), "{stdout}");
    cmd()
        .args(["pipeline", "--devices", "0,99"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("device 99 is out of range"));
}

/// Host-side validation of pipeline arguments: exit 2 before any GPU work.
#[test]
fn pipeline_arguments_are_validated() {
    for (args, msg) in [
        (vec!["pipeline", "--devices", "0,0"], "listed twice"),
        (vec!["pipeline", "--devices", "x"], "not a device ordinal"),
        (
            vec!["pipeline", "--activation-bytes", "6"],
            "not a multiple of 4",
        ),
        (vec!["pipeline", "--activation-bytes", "0"], "at least 1"),
        (
            vec!["pipeline", "--devices", "0,1", "--stages", "3"],
            "does not match 2 devices",
        ),
        (vec!["pipeline", "--stage-launches", "0"], "at least 1"),
        (
            vec!["pipeline", "--microbatches", "0"],
            "0 is not in 1..=64",
        ),
        (
            vec!["pipeline", "--microbatches", "65"],
            "65 is not in 1..=64",
        ),
    ] {
        assert_usage_error(&args, msg);
    }
}
