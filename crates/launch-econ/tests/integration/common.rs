//! What the test modules share: the binary, and the check every bad input gets.

use assert_cmd::Command;
use predicates::prelude::*;

/// The binary by its build-time path (also valid where staged test executables run).
pub fn cmd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_launch-econ"))
}

/// A command line's words (for arguments without spaces: flags and numbers, not paths).
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// The path of a test fixture (`tests/fixtures/NAME`).
pub fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// `replay TRACE` followed by `flags` (words without spaces).
pub fn replay<'a>(trace: &'a str, flags: &'a str) -> Vec<&'a str> {
    let mut v = vec!["replay", trace];
    v.extend(words(flags));
    v
}

/// `launch-econ ARGS`, which must exit 0: its output.
pub fn succeeds(args: &[&str]) -> std::process::Output {
    cmd().args(args).assert().success().get_output().clone()
}

/// `launch-econ ARGS` with no GPU visible, which must exit 0: its standard output.
pub fn stdout_without_gpu(args: &[&str]) -> String {
    let out = cmd()
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", "")
        .assert()
        .success()
        .get_output()
        .clone();
    stdout_of(&out)
}

/// What a run wrote on standard output, as text.
pub fn stdout_of(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 on stdout")
}

/// What a run wrote on standard error (its report and warnings), as text.
pub fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("UTF-8 on stderr")
}

/// The JSON document a run with `--export-json -` wrote on stdout.
pub fn json_of(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("the JSON export on stdout")
}

/// The JSON document of `replay TRACE FLAGS`, which must exit 0 (FLAGS include
/// `--export-json -`).
pub fn replay_json(trace: &str, flags: &str) -> serde_json::Value {
    json_of(&succeeds(&replay(trace, flags)))
}

/// How many of `trace`'s kernels stood in as `what` (a `fidelity` count of the replay's JSON)
/// in `replay TRACE FLAGS`, where FLAGS include `--export-json -`.
pub fn stand_ins(trace: &str, flags: &str, what: &str) -> u64 {
    replay_json(trace, flags)["result"]["replay"]["fidelity"][what]
        .as_u64()
        .unwrap_or_else(|| panic!("no fidelity count {what} in the replay's JSON"))
}

/// `launch-econ ARGS` with no GPU visible exits 2 (bad input) with `msg` on stderr, no panic.
pub fn assert_usage_error<I, S>(args: I, msg: &str)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    cmd()
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", "")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(msg).and(predicate::str::contains("panicked").not()));
}
