//! `launch-econ replay` on a GPU: eager and graph replays, copies in their direction,
//! several streams on lanes and the exported trace, the node gap, and the stand-ins a walk
//! on several streams gets (chases, paced reads).

use crate::common::{
    cmd, fixture, json_of, replay, replay_json, stand_ins, stderr_of, stdout_of, succeeds,
};

/// Replay of a fixture walk on a GPU: a report with fidelity and a saving.
#[test]
#[ignore = "needs a CUDA device"]
fn replay_runs_on_a_gpu() {
    let fx = fixture("kineto_step.json");
    let out = succeeds(&replay(&fx, "--trials 3 --reps 5 --export-json -"));
    let v = json_of(&out);
    let stderr = stderr_of(&out);
    assert!(stderr.contains("spans, kernels >= 2 us (2)"), "{stderr}");
    assert!(
        stderr.contains("stand-ins: each graph node planned"),
        "{stderr}"
    );
    let r = &v["result"]["replay"];
    assert_eq!(r["kernels"], 2);
    assert_eq!(r["trials"].as_array().unwrap().len(), 3);
    assert_eq!(r["fidelity"]["kernels"].as_array().unwrap().len(), 2);
    // The 12.75 µs kernel stands in by streaming memory, sized in the walk's graph, and its
    // replayed duration is read back.
    let streaming = r["fidelity"]["streaming_stand_ins"].as_u64().unwrap();
    assert!((1..=2).contains(&streaming), "{streaming}");
    assert!(
        r["fidelity"]["kernels"][0][1].as_f64().is_some(),
        "{}",
        r["fidelity"]
    );
    assert!(r["summary"]["graph_gpu_ms"]["median"].as_f64().unwrap() > 0.0);
    assert!(r["planned_nodes_ms"].as_f64().unwrap() > 0.0);
    assert!(r["touched_bytes"].as_f64().unwrap() >= 0.0, "{r}");
    // The graph step is priced at the upper level of node cost, measured after the trials;
    // the trials' single-stream figure is reported beside it as the lower level.
    let upper = r["graph_wall_other_stream_ms"]["median"].as_f64().unwrap();
    let quiet = r["summary"]["graph_wall_ms"]["median"].as_f64().unwrap();
    let p = &v["result"]["prediction"];
    let device = v["device"]["name"].as_str().unwrap();
    if device.contains("H200") {
        // A GPU with a shipped profile: the graph step is the mean of the replayed graph and
        // the offline model over that profile, both reported.
        assert_eq!(p["graph_source"], "replay-and-model", "{p}");
        assert_eq!(p["graph_step_replayed_ms"].as_f64().unwrap(), upper);
        let model = p["graph_step_model_ms"].as_f64().unwrap();
        let mean = p["graph_step_ms"].as_f64().unwrap();
        assert!((mean - (upper + model) / 2.0).abs() < 1e-12, "{p}");
        let offline = json_of(&succeeds(&replay(&fx, "--summary --export-json -")));
        assert_eq!(
            offline["result"]["prediction"]["graph_step_ms"]
                .as_f64()
                .unwrap(),
            model,
            "the model beside the replay is --summary's"
        );
        assert!(p["graph_step_quiet_ms"].as_f64().unwrap() > 0.0);
    } else {
        assert_eq!(p["graph_source"], "replay", "{p}");
        assert_eq!(p["graph_step_ms"].as_f64().unwrap(), upper);
        assert_eq!(p["graph_step_quiet_ms"].as_f64().unwrap(), quiet);
        let warnings = v["warnings"].to_string();
        assert!(
            warnings.contains("is the replayed graph alone: no device profile describes it"),
            "{warnings}"
        );
    }
    // `--graph-step replay`: the replayed graph alone, on any GPU.
    let alone = json_of(&succeeds(&replay(
        &fx,
        "--trials 2 --reps 3 --graph-step replay --export-json -",
    )));
    let a = &alone["result"]["prediction"];
    assert_eq!(a["graph_source"], "replay", "{a}");
    assert!(a["graph_step_model_ms"].is_null(), "{a}");
    assert_eq!(
        a["graph_step_ms"].as_f64().unwrap(),
        alone["result"]["replay"]["graph_wall_other_stream_ms"]["median"]
            .as_f64()
            .unwrap()
    );
    assert!(r["graph_gpu_other_stream_ms"]["median"].as_f64().unwrap() > 0.0);
    // The step's host-to-device copy was recorded from pageable memory; it replays through
    // page-locked memory, and the report says so.
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("1 host<->device copies were recorded from or into pageable"),
        "{warnings}"
    );
    assert!(!warnings.contains("device-to-device"), "{warnings}");
    // The front-end gap comes from the profile of this kind of GPU where one holds it (the
    // shipped H200 profile), else the engine estimates it; the report says which.
    let source = r["node_gap_source"]["kind"].as_str().unwrap();
    if device.contains("H200") {
        assert_eq!(source, "profile", "{}", r["node_gap_source"]);
        assert!(
            stderr.contains("front-end gap, from the shipped profile"),
            "{stderr}"
        );
    } else {
        assert_eq!(source, "measured", "{}", r["node_gap_source"]);
    }
}

/// `--node-gap` sets the gap every node is planned with, or has the engine estimate it.
#[test]
#[ignore = "needs a CUDA device"]
fn the_node_gap_can_be_given_or_measured() {
    let fx = fixture("kineto_step.json");
    let given = replay_json(&fx, "--trials 2 --reps 3 --node-gap 0.25 --export-json -");
    let r = &given["result"]["replay"];
    assert_eq!(r["node_gap_us"].as_f64().unwrap(), 0.25);
    assert_eq!(r["node_gap_source"]["kind"], "user");
    let measured = replay_json(
        &fx,
        "--trials 2 --reps 3 --node-gap measure --export-json -",
    );
    let r = &measured["result"]["replay"];
    assert_eq!(r["node_gap_source"]["kind"], "measured");
    assert!(r["node_gap_us"].as_f64().unwrap() >= 0.0);
}

/// Kernels of many blocks just under the streaming threshold all spin and read nothing, while
/// a trace without shapes says they could have read 300 MiB: the replay warns that the real
/// step may take the larger level step, and where a profile of this GPU says by how much (the
/// shipped one on an H200), prices half of it.
#[test]
#[ignore = "needs a CUDA device"]
fn a_replay_reading_less_than_a_shapeless_trace_may_warns() {
    let fx = fixture("nsys_wide_short_kernels.csv");
    let v = replay_json(&fx, "--trials 2 --reps 3 --export-json -");
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("no shapes recorded: the stand-ins read ~0 MiB a replay"),
        "{warnings}"
    );
    if !v["device"]["name"].as_str().unwrap().contains("H200") {
        // No profile of this GPU measured the level steps: nothing to price.
        assert!(!warnings.contains("ms a step"), "{warnings}");
        assert!(v["result"]["prediction"]["graph_step_unknown_memory_ms"].is_null());
        return;
    }
    assert!(warnings.contains("ms a step"), "{warnings}");
    // One stream: the price holds half the larger step, on top of the replayed graph.
    assert!(warnings.contains("priced halfway"), "{warnings}");
    let p = &v["result"]["prediction"];
    let added = p["graph_step_unknown_memory_ms"].as_f64().expect("added");
    assert!(added > 0.0, "{p}");
    assert_replayed_step_holds(&v, added);
}

/// A CuPy step (no shapes) of eleven row kernels of ~13 µs: their stand-ins stream their
/// recorded time, ~250 MiB a replay, past the line, while the real kernels may reread one
/// matrix from the L2. The replay warns that the real step may take the smaller level step,
/// and where a profile of this GPU says by how much (the shipped one on an H200), takes half
/// of the difference off.
#[test]
#[ignore = "needs a CUDA device"]
fn a_replay_streaming_past_the_line_for_a_shapeless_trace_is_priced_halfway_down() {
    let fx = fixture("cupy_long_row_kernels.json.gz");
    let v = replay_json(&fx, "--trials 2 --reps 3 --export-json -");
    let l2 = v["device"]["l2_bytes"].as_f64().unwrap();
    let touched = v["result"]["replay"]["touched_bytes"].as_f64().unwrap();
    assert!(touched > l2, "touched {touched} of an L2 of {l2}");
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("past 2/3 of the"), "{warnings}");
    assert!(
        warnings.contains("if the real step reads less"),
        "{warnings}"
    );
    let p = &v["result"]["prediction"];
    if !v["device"]["name"].as_str().unwrap().contains("H200") {
        assert!(!warnings.contains("ms a step"), "{warnings}");
        assert!(p["graph_step_unknown_memory_ms"].is_null(), "{p}");
        return;
    }
    assert!(warnings.contains("priced halfway, -"), "{warnings}");
    let taken = p["graph_step_unknown_memory_ms"]
        .as_f64()
        .expect("taken off");
    assert!(taken < 0.0, "{p}");
    assert_replayed_step_holds(&v, taken);
}

/// The replayed side of the prediction's graph step is the replayed graph at the upper level
/// plus `unknown_ms` for memory the trace does not say. Where a profile of the GPU priced the
/// mean of the replay and the offline model (the shipped one on an H200), that side is
/// `graph_step_replayed_ms`; else the graph step itself.
fn assert_replayed_step_holds(v: &serde_json::Value, unknown_ms: f64) {
    let p = &v["result"]["prediction"];
    let replayed = p["graph_step_replayed_ms"]
        .as_f64()
        .unwrap_or_else(|| p["graph_step_ms"].as_f64().expect("graph step"));
    let upper = v["result"]["replay"]["graph_wall_other_stream_ms"]["median"]
        .as_f64()
        .unwrap();
    assert!((replayed - (upper + unknown_ms)).abs() < 1e-9, "{p}");
}

/// A device-to-host copy replays in its direction (into page-locked memory), eagerly and in
/// the graph, and the report warns that such a copy changes what a framework captures.
#[test]
#[ignore = "needs a CUDA device"]
fn replay_copies_to_the_host() {
    let fx = fixture("nsys_2023.csv");
    let out = succeeds(&replay(
        &fx,
        "--trials 2 --reps 3 --warmup 0 --export-json -",
    ));
    let v = json_of(&out);
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("copies device to host 1 time"),
        "{warnings}"
    );
    assert!(!warnings.contains("device-to-device"), "{warnings}");
    let r = &v["result"]["replay"];
    assert!(r["summary"]["graph_gpu_ms"]["median"].as_f64().unwrap() > 0.0);
    assert!(r["summary"]["eager_wall_ms"]["median"].as_f64().unwrap() > 0.0);
}

/// `replay FIXTURE FLAGS --export-trace FILE`, which must succeed: its output and the trace
/// it wrote.
fn replay_exporting_trace(name: &str, flags: &str) -> (std::process::Output, serde_json::Value) {
    let fx = fixture(name);
    let dir = std::env::temp_dir().join(format!("le-trace-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("replay.json");
    let out = cmd()
        .args(replay(&fx, flags))
        .arg("--export-trace")
        .arg(&trace)
        .assert()
        .success()
        .get_output()
        .clone();
    let v = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    (out, v)
}

/// The (start, end), µs, of the op named `name` in process `pid` of an exported trace's events.
fn span_of(events: &[serde_json::Value], pid: u64, name: &str) -> (f64, f64) {
    let e = events
        .iter()
        .find(|e| e["pid"] == pid && e["ph"] == "X" && e["name"] == name)
        .unwrap_or_else(|| panic!("pid {pid}: no {name}"));
    let ts = e["ts"].as_f64().unwrap();
    (ts, ts + e["dur"].as_f64().unwrap())
}

/// A two-stream walk with recorded waits replays on two lanes, and `--export-trace` writes
/// both replayed walks with GPU stamps.
#[test]
#[ignore = "needs a CUDA device"]
fn replay_runs_streams_on_lanes_and_exports_a_trace() {
    let (out, v) = replay_exporting_trace("kineto_two_streams.json", "--trials 3 --reps 5");
    let stderr = stderr_of(&out);
    let stdout = stdout_of(&out);
    assert!(
        stdout.contains("streams: 3 streams on 3 lanes, ordered by 4 recorded cross-stream waits"),
        "{stdout}"
    );
    assert!(stderr.contains("wrote the replay trace"), "{stderr}");
    // The lanes overlap: the price says concurrent kernels would slow each other down.
    assert!(stderr.contains("slow each other down"), "{stderr}");
    let ev = v["traceEvents"].as_array().unwrap();
    for pid in [1, 2] {
        let stamped: Vec<&serde_json::Value> = ev
            .iter()
            .filter(|e| e["pid"] == pid && e["ph"] == "X")
            .collect();
        assert_eq!(stamped.len(), 4, "pid {pid}: {stamped:?}");
        assert!(stamped.iter().all(|e| e["args"]["timing"] == "stamped"));
        // The epilogue starts after both branches ended (the join held).
        let end = |name: &str| {
            let e = stamped.iter().find(|e| e["name"] == name).unwrap();
            e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap()
        };
        let epi = stamped.iter().find(|e| e["name"] == "epilogue").unwrap();
        let start = epi["ts"].as_f64().unwrap();
        assert!(
            start >= end("branch_a") && start >= end("branch_b"),
            "pid {pid}: {stamped:?}"
        );
    }
}

/// Two streams whose trace records no waits replay one after another by default, and side by
/// side from the start under `--waits none`: in both replayed walks the side stream's kernel
/// starts before the main stream's first one ends.
#[test]
#[ignore = "needs a CUDA device"]
fn streams_without_waits_replay_serialised_or_never_waiting() {
    let serial = succeeds(&replay(
        &fixture("nsys_two_streams.csv"),
        "--trials 2 --reps 3",
    ));
    assert!(
        stdout_of(&serial).contains("several streams serialised onto one"),
        "{}",
        stdout_of(&serial)
    );
    let (out, v) =
        replay_exporting_trace("nsys_two_streams.csv", "--trials 3 --reps 5 --waits none");
    let stdout = stdout_of(&out);
    assert!(
        stdout.contains("streams: 2 streams on 2 lanes, never waiting on each other"),
        "{stdout}"
    );
    let ev = v["traceEvents"].as_array().unwrap();
    for pid in [1, 2] {
        let side = span_of(ev, pid, "side");
        assert!(side.0 < span_of(ev, pid, "main_a").1, "pid {pid}: {ev:?}");
    }
}

/// A replay's CSV holds its price after the measured figures, and a walk with streams side by
/// side carries the wider error such walks had (the replay alone's: on an H200 the default
/// would price the mean of the replay and the offline model, whose error differs).
#[test]
#[ignore = "needs a CUDA device"]
fn a_replay_s_csv_holds_its_price() {
    let fx = fixture("kineto_two_streams.json");
    let out = succeeds(&replay(
        &fx,
        "--trials 2 --reps 3 --graph-step replay --export-csv -",
    ));
    let csv = stdout_of(&out);
    let value = |name: &str| -> f64 {
        let row = csv
            .lines()
            .find(|l| l.split(',').next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} row: {csv}"));
        row.split(',').nth(1).unwrap().parse().unwrap()
    };
    assert!(csv.starts_with("figure,median,min,max,mad,n"), "{csv}");
    let graph = value("graph_step_ms");
    assert!(graph > 0.0, "{csv}");
    assert!(
        (value("graph_step_error_ms") / graph - 0.41).abs() < 1e-4,
        "{csv}"
    );
    assert_eq!(value("branches"), 1.0, "{csv}");
    assert!(value("eager_step_ms") > 0.0, "{csv}");
}

/// One recording of an event waited on by two streams: the consumer that waits second runs
/// after the producer's kernel but beside the copy issued on the other stream before its wait,
/// in the eager and the graph replay alike.
#[test]
#[ignore = "needs a CUDA device"]
fn a_second_wait_on_one_recording_does_not_wait_for_work_issued_after_it() {
    let (out, v) = replay_exporting_trace("kineto_shared_event.json", "--trials 2 --reps 3");
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains("1 of the waits wait on an event another wait already waited on"),
        "{stderr}"
    );
    let ev = v["traceEvents"].as_array().unwrap();
    for pid in [1, 2] {
        let span = |name: &str| span_of(ev, pid, name);
        let (produce, copy, consume) = (span("produce"), span("copy_aside"), span("consume"));
        assert!(consume.0 >= produce.1, "pid {pid}: {produce:?} {consume:?}");
        assert!(copy.0 >= produce.1, "pid {pid}: {produce:?} {copy:?}");
        // Waiting for the copy would start it after the copy's end.
        assert!(consume.0 < copy.1, "pid {pid}: {copy:?} {consume:?}");
        let epilogue = span("epilogue");
        assert!(
            epilogue.0 >= copy.1.max(consume.1),
            "pid {pid}: {epilogue:?}"
        );
    }
}

/// `--concurrent-stand-ins chase` stands a concurrent walk's kernels in by chases and the
/// report says so; kernels named element-wise chase (none in this fixture) and by default
/// (`chase-rounds`) those named reductions barrier-chase, or chase where each thread reads
/// several rounds of loads, with `chase-element-wise` they spin, `spin` spins them all, and
/// a walk on one stream never chases.
#[test]
#[ignore = "needs a CUDA device"]
fn concurrent_stand_ins_can_chase_and_one_stream_never_does() {
    let fx = fixture("kineto_two_streams.json");
    let chases = |flags: &str| stand_ins(&fx, flags, "chase_stand_ins");
    let quick = "--trials 2 --reps 3 --warmup 0 --export-json -";
    assert_eq!(chases(&format!("{quick} --concurrent-stand-ins chase")), 4);
    assert_eq!(chases(quick), 0);
    assert_eq!(chases(&format!("{quick} --concurrent-stand-ins spin")), 0);
    assert_eq!(
        chases(&format!("{quick} --concurrent-stand-ins chase --stream 13")),
        0
    );
    let out = succeeds(&replay(
        &fx,
        "--trials 2 --reps 3 --warmup 0 --concurrent-stand-ins chase",
    ));
    let text = stdout_of(&out);
    assert!(text.contains("4 kernels stand in by a chase"), "{text}");
    // Kernels not named reductions never barrier-chase; the same walk with its kernels named
    // reductions does by default (`chase-rounds`), except the two whose operators' recorded
    // inputs give each thread 256 bytes to read (four rounds of loads), which chase; with
    // `chase-barriers` all four barrier-chase, with `chase-element-wise` all spin.
    assert_eq!(stand_ins(&fx, quick, "barrier_chase_stand_ins"), 0);
    let fx = fixture("kineto_two_streams_reductions.json");
    let barrier_chases = |flags: &str| stand_ins(&fx, flags, "barrier_chase_stand_ins");
    let chases = |flags: &str| stand_ins(&fx, flags, "chase_stand_ins");
    assert_eq!(barrier_chases(quick), 2, "chase-rounds is the default");
    assert_eq!(chases(quick), 2);
    let barriers = format!("{quick} --concurrent-stand-ins chase-barriers");
    assert_eq!(barrier_chases(&barriers), 4);
    assert_eq!(chases(&barriers), 0);
    let element_wise = format!("{quick} --concurrent-stand-ins chase-element-wise");
    assert_eq!(barrier_chases(&element_wise), 0);
    assert_eq!(chases(&element_wise), 0);
    let out = succeeds(&replay(&fx, "--trials 2 --reps 3 --warmup 0"));
    let text = stdout_of(&out);
    assert!(
        text.contains("2 kernels stand in by a barrier chase"),
        "{text}"
    );
    assert!(text.contains("2 kernels stand in by a chase"), "{text}");
}

/// Decode attention on two streams whose operator inputs the trace recorded (33.6 MB in
/// 18 µs each, 86 KB of shared memory a block): both stand in by paced reads, holding the
/// SMs as the recorded kernels did (above the 48 KiB a launch gets without opting in), and
/// the report says so; the prologue's 4 KB of inputs do not pace, nor does anything with
/// `--stream-from-us off` or on one stream.
#[test]
#[ignore = "needs a CUDA device"]
fn long_kernels_with_recorded_inputs_read_them_paced_beside_other_streams() {
    let fx = fixture("kineto_two_streams_attention.json");
    let quick = "--trials 2 --reps 3 --warmup 0";
    let out = succeeds(&replay(&fx, quick));
    let text = stdout_of(&out);
    assert!(
        text.contains("2 kernels (recorded >= 2 us, their operator's inputs recorded) stand in by reading those inputs"),
        "{text}"
    );
    let paced = |flags: &str| {
        stand_ins(
            &fx,
            &format!("{quick} --export-json - {flags}"),
            "paced_stand_ins",
        )
    };
    assert_eq!(paced(""), 2);
    assert_eq!(paced("--stream-from-us off"), 0);
    assert_eq!(paced("--stream 13"), 0);
}

/// `--l2-resident work` on two streams of adds over data the L2 holds: the small add recorded
/// at 30 µs does its work on each stream; the 1 Mi-element add recorded at 2 µs on two blocks
/// keeps the default stand-in, as no two blocks move its 12 MiB in that time, and the report
/// says so. The prologue (not element-wise) reads its inputs paced. `--l2-resident paced`
/// reads all five paced (a paced read does no work, so has no such floor); the default none.
#[test]
#[ignore = "needs a CUDA device"]
fn work_doing_stand_ins_that_outlast_their_kernel_keep_the_default() {
    let fx = fixture("kineto_two_streams_adds.json");
    let quick = "--trials 2 --reps 3 --warmup 0 --export-json -";
    let v = replay_json(&fx, &format!("{quick} --l2-resident work"));
    let f = &v["result"]["replay"]["fidelity"];
    assert_eq!(f["paced_stand_ins"], 3, "{f}");
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains(
            "2 of the 4 element-wise kernels that would do their work keep the default stand-in"
        ),
        "{warnings}"
    );
    let paced = |flags: &str| stand_ins(&fx, &format!("{quick} {flags}"), "paced_stand_ins");
    assert_eq!(paced("--l2-resident paced"), 5);
    assert_eq!(paced(""), 0);
}

/// With `--profile` of this kind of GPU the default prices the mean of the replayed graph and
/// the offline model over it, on any GPU, as an H200 does over the shipped profile.
#[test]
#[ignore = "needs a CUDA device"]
fn a_profile_of_this_gpu_gives_the_mean_by_default() {
    let fx = fixture("kineto_step.json");
    let quick = "--trials 2 --reps 3 --export-json -";
    let alone = replay_json(&fx, &format!("{quick} --graph-step replay"));
    assert_eq!(alone["result"]["prediction"]["graph_source"], "replay");
    // The shipped profile, said to be of this GPU.
    let shipped = format!("{}/../../profiles/h200.json", env!("CARGO_MANIFEST_DIR"));
    let mut profile: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shipped).unwrap()).unwrap();
    profile["device"]["name"] = alone["device"]["name"].clone();
    let path = std::env::temp_dir().join(format!(
        "launch-econ-profile-of-this-gpu-{}.json",
        std::process::id()
    ));
    std::fs::write(&path, profile.to_string()).unwrap();
    let v = replay_json(&fx, &format!("{quick} --profile {}", path.display()));
    std::fs::remove_file(&path).unwrap();
    let p = &v["result"]["prediction"];
    assert_eq!(p["graph_source"], "replay-and-model", "{p}");
    let replayed = p["graph_step_replayed_ms"].as_f64().unwrap();
    let model = p["graph_step_model_ms"].as_f64().unwrap();
    assert!(
        (p["graph_step_ms"].as_f64().unwrap() - (replayed + model) / 2.0).abs() < 1e-12,
        "{p}"
    );
}
