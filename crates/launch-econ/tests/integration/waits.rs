//! How `replay --summary` reads a trace's cross-stream waits: forks, joins, shared events, and
//! the other readings `--waits` selects.

use crate::common::{assert_usage_error, fixture, json_of, replay, succeeds};

/// The graph step, ms, and the warnings of `replay TRACE FLAGS` (flags ending in
/// `--export-json -`).
fn priced(trace: &str, flags: &str) -> (f64, String) {
    let v = json_of(&succeeds(&replay(trace, flags)));
    let ms = v["result"]["prediction"]["graph_step_ms"].as_f64().unwrap();
    (ms, v["warnings"].to_string())
}

/// A producer's event waited on by a copier and then a consumer (`kineto_shared_event.json`):
/// the trace names the event, so the consumer waits for the producer's kernel (10 us) and not
/// for the copy (40 us) issued before its wait, under either reading of the waits. Without the
/// event's id the consumer's wait, its stream's second before its work (so no fork: a stream
/// is forked once), waits on everything issued before it, the copy too, under both readings.
#[test]
fn waits_on_one_recording_wait_for_the_same_work() {
    let fx = fixture("kineto_shared_event.json");
    let graph_ms = |path: &str, flags: &str| priced(path, flags).0;
    // 5 + 10 + 40 + 5 us of kernels on the longest chain, plus launch and node costs.
    for waits in ["join", "all"] {
        let ms = graph_ms(&fx, &format!("--summary --waits {waits} --export-json -"));
        assert!((0.058..0.068).contains(&ms), "{waits}: {ms}");
    }
    let text = std::fs::read_to_string(&fx).unwrap();
    let unnamed = std::env::temp_dir().join(format!("le-unnamed-{}.json", std::process::id()));
    let stripped: String = text
        .split("\"wait_on_cuda_event_id\": ")
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                part
            } else {
                part.trim_start_matches(|c: char| c.is_ascii_digit())
                    .trim_start_matches(", ")
            }
        })
        .collect();
    std::fs::write(&unnamed, stripped).unwrap();
    let path = unnamed.to_str().unwrap();
    let join = graph_ms(path, "--summary --export-json -");
    let all = graph_ms(path, "--summary --waits all --export-json -");
    std::fs::remove_file(&unnamed).ok();
    assert!(join > 0.068, "{join}");
    assert!(all > 0.068, "{all}");
}

/// Lanes forked from a main stream that runs nothing (`kineto_idle_main_lanes.json`: fork A,
/// run A 40 us, fork B, run B 40 us, two joins the GPU side did not record): B's fork waits
/// on main's work, none, so the lanes run side by side, and the report says why; `--waits all`
/// queues B behind A.
#[test]
fn lanes_forked_from_a_main_stream_that_runs_nothing_run_side_by_side() {
    let fx = fixture("kineto_idle_main_lanes.json");
    let graph_ms = |flags: &str| priced(&fx, flags);
    let (join, warnings) = graph_ms("--summary --export-json -");
    let (all, _) = graph_ms("--summary --waits all --export-json -");
    // 40 us of kernels side by side, 80 one after the other (+ launch and node costs).
    assert!((0.040..0.055).contains(&join), "{join}");
    assert!((0.080..0.095).contains(&all), "{all}");
    assert!(
        warnings.contains("2 stream wait calls have no record on the GPU side"),
        "{warnings}"
    );
}

/// Forks issued one after another (fork A, run A, fork B, run B, join): by default B's fork
/// waits on the joining stream, so the branches run side by side; `--waits all` queues B
/// behind A, and the report says which reading it used.
#[test]
fn forks_one_after_another_run_side_by_side_unless_told_otherwise() {
    let fx = fixture("kineto_serial_forks.json");
    let graph_ms = |flags: &str| priced(&fx, flags);
    let (join, warnings) = graph_ms("--summary --export-json -");
    let (all, all_warnings) = graph_ms("--summary --waits all --export-json -");
    // 40 + 10 us of kernels side by side, 40 + 40 + 10 one after the other (+ a few us of
    // launch and node costs from the profile).
    assert!((0.050..0.060).contains(&join), "{join}");
    assert!((0.090..0.100).contains(&all), "{all}");
    assert!(
        warnings.contains("1 of the waits that start a stream's work come after work"),
        "{warnings}"
    );
    assert!(all_warnings.contains("an upper bound where streams fork one after another"));
    assert_usage_error(replay(&fx, "--summary --waits some"), "--waits");
    assert_usage_error(replay(&fx, "--summary --gemms some"), "--gemms");
    assert_usage_error(
        replay(&fx, "--summary --gemm-operands shared"),
        "--gemm-operands",
    );
    assert_usage_error(replay(&fx, "--prior-streams 300"), "--prior-streams");
    assert_usage_error(replay(&fx, "--summary --sub-floor some"), "--sub-floor");
    assert_usage_error(
        replay(&fx, "--summary --concurrent-stand-ins some"),
        "--concurrent-stand-ins",
    );
    assert_usage_error(
        replay(&fx, "--summary --concurrent-spins some"),
        "--concurrent-spins",
    );
    assert_usage_error(
        replay(&fx, "--summary --element-wise some"),
        "--element-wise",
    );
    assert_usage_error(replay(&fx, "--summary --l2-resident some"), "--l2-resident");
    assert_usage_error(replay(&fx, "--summary --past-l2 some"), "--past-l2");
}
