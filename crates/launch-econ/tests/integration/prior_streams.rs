//! `launch-econ replay --prior-streams`: streams that run work before the replay's own, the
//! process state a graph with branches depends on (see `launch_econ::prior_streams`).

use crate::common::{fixture, replay, replay_json, stdout_of, succeeds};

/// `--prior-streams N` runs a kernel on N streams before the replay makes its own: the report
/// says so, the JSON records N, and the warning on the process the graph runs in names it.
/// Unless told, eight on a walk whose streams run side by side.
#[test]
#[ignore = "needs a CUDA device"]
fn prior_streams_run_first_and_are_recorded() {
    let fx = fixture("kineto_two_streams.json");
    let v = replay_json(&fx, "--trials 2 --reps 3 --prior-streams 4 --export-json -");
    assert_eq!(v["result"]["replay"]["config"]["prior_streams"], 4);
    // The walk's streams overlap: the warning names the state the replay ran in.
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("after 4 other streams each ran a kernel"),
        "{warnings}"
    );
    let out = succeeds(&replay(&fx, "--trials 2 --reps 3 --prior-streams 2"));
    let text = stdout_of(&out);
    assert!(
        text.contains("prior streams: 2 ran a kernel each"),
        "{text}"
    );
    // Unless told, a walk whose streams run side by side replays after eight launches, and
    // `--prior-streams 0` asks for a fresh process.
    let plain = replay_json(&fx, "--trials 2 --reps 3 --export-json -");
    assert_eq!(plain["result"]["replay"]["config"]["prior_streams"], 8);
    let fresh = succeeds(&replay(&fx, "--trials 2 --reps 3 --prior-streams 0"));
    assert!(!stdout_of(&fresh).contains("prior streams"));
}

/// On a walk of one stream, launches first keep the replay's graphs below the level real ones
/// ran at: asking for them is warned against, and not asking is not.
#[test]
#[ignore = "needs a CUDA device"]
fn prior_streams_on_one_stream_are_warned_against() {
    let fx = fixture("kineto_step.json");
    let v = replay_json(&fx, "--trials 2 --reps 3 --prior-streams 8 --export-json -");
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("--prior-streams 8 on a walk whose streams do not run side by side"),
        "{warnings}"
    );
    // Not asked, a walk of one lane replays from a fresh process, with nothing to warn of.
    let plain = replay_json(&fx, "--trials 2 --reps 3 --export-json -");
    assert_eq!(plain["result"]["replay"]["config"]["prior_streams"], 0);
    assert!(!plain["warnings"].to_string().contains("--prior-streams"));
}
