//! The command line as a user meets it: usage errors, missing GPU, output format.

use assert_cmd::Command;
use predicates::prelude::*;

fn cmd() -> Command {
    Command::cargo_bin("launch-econ").unwrap()
}

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
        .stderr(predicate::str::contains("unexpected argument"));
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
    let stderr = String::from_utf8(out.stderr).unwrap();
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
    let stdout = String::from_utf8(out.stdout).unwrap();
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
        ) && second.ends_with(" ms"),
        "{second}"
    );
}
