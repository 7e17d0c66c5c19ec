//! The README's pasted output of the commands that need no GPU (`predict`, `replay
//! --summary`) is what this build prints: each pasted line appears in the command's output,
//! in order. A change to the model or its wording that the README does not follow fails here
//! instead of leaving users a stale example. (Pastes of GPU runs are measurements; they are
//! not rerun.)

use super::common::cmd;

/// The workspace root, where the README's commands run (their paths are relative to it).
fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every ```text block of the README that starts with `$ launch-econ ARGS`: ARGS and the
/// lines pasted below it.
fn pastes(readme: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let mut found = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```text" {
            continue;
        }
        let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        if let Some(args) = block.first().and_then(|l| l.strip_prefix("$ launch-econ ")) {
            found.push((
                args.split_whitespace().map(String::from).collect(),
                block[1..].iter().map(|l| l.to_string()).collect(),
            ));
        }
    }
    found
}

/// Whether a paste is of a command that touches no GPU.
fn offline(args: &[String]) -> bool {
    match args.first().map(String::as_str) {
        Some("predict") => true,
        Some("replay") => args.iter().any(|a| a == "--summary"),
        _ => false,
    }
}

#[test]
fn the_readmes_offline_pastes_are_what_this_build_prints() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let offline: Vec<_> = pastes(&readme)
        .into_iter()
        .filter(|(args, _)| offline(args))
        .collect();
    assert!(
        offline.len() >= 4,
        "the README's offline examples went missing: {} found",
        offline.len()
    );
    for (args, pasted) in offline {
        let out = cmd()
            .args(&args)
            .current_dir(root())
            .env("CUDA_VISIBLE_DEVICES", "")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "launch-econ {}: {out:?}",
            args.join(" ")
        );
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let mut printed_lines = printed.lines();
        for line in pasted.iter().filter(|l| !l.trim().is_empty()) {
            assert!(
                printed_lines.any(|p| p == line),
                "launch-econ {}: the README's line\n{line}\nis not printed (in order); it printed:\n{printed}",
                args.join(" ")
            );
        }
    }
}

#[test]
fn pastes_are_found_with_their_command_and_lines() {
    let readme = "x\n```text\n$ launch-econ predict --a 1\nline one\n\nline two\n```\n```text\nno command\n```\n```sh\n$ launch-econ replay t --summary\n```\n";
    let found = pastes(readme);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, ["predict", "--a", "1"]);
    assert_eq!(found[0].1, ["line one", "", "line two"]);
    assert!(offline(&found[0].0));
    assert!(!offline(&["replay".into(), "t.json".into()]));
    assert!(offline(&["replay".into(), "t".into(), "--summary".into()]));
}
