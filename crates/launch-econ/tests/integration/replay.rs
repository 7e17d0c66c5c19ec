//! `launch-econ replay` as a user meets it without a GPU: traces read offline (`--summary`),
//! bad traces and filters, streams and marked steps (the replays on a GPU: `replay_gpu`).

use crate::common::{
    assert_usage_error, fixture, json_of, replay, stdout_of, stdout_without_gpu, succeeds,
};

/// `replay --summary` reads a trace with no GPU; bad traces and filters are exit 2.
#[test]
fn replay_summary_needs_no_gpu_and_rejects_bad_input() {
    let fx = fixture;
    let step = fx("kineto_step.json");
    let stdout = stdout_without_gpu(&replay(&step, "--summary --top 1"));
    assert!(
        stdout.contains("2 kernels, 1 copies, 1 memsets"),
        "{stdout}"
    );
    assert!(stdout.contains("sm90_xmma_gemm"), "{stdout}");
    let greenctx = fx("nsys_greenctx.csv");
    let out = succeeds(&replay(&greenctx, "--summary --stream 7 --export-json -"));
    let v = json_of(&out);
    assert_eq!(v["result"]["trace"]["summary"]["kernels"], 2);
    assert_eq!(v["result"]["prediction"]["graph_source"], "model");
    // One stream: no streams-in-series figure, and the error of one-stream walks (10% for
    // the model).
    let p = &v["result"]["prediction"];
    assert!(p["graph_step_serial_ms"].is_null());
    assert_eq!(p["branches"], false);
    let share = p["graph_step_error_ms"].as_f64().unwrap() / p["graph_step_ms"].as_f64().unwrap();
    assert!((share - 0.10).abs() < 1e-9, "{p}");
    assert_eq!(v["result"]["kind"], "replay-summary");
    // The shipped profile is the H200's: its grid table prices wide kernels, unless turned off.
    assert_eq!(v["result"]["grid_nodes"], "NVIDIA H200");
    // It says what memory a step touches and how far that makes its nodes step: an nsys
    // trace records no shapes, so from the kernels' durations.
    let level = &v["result"]["level_step"];
    assert_eq!(level["footprint"]["source"], "durations", "{level}");
    assert!(level["step_us"].as_f64().unwrap() > 0.0, "{level}");
    assert!(stdout.contains("memory a step: ~"), "{stdout}");
    let off = stdout_without_gpu(&replay(&step, "--summary --grid-nodes off"));
    assert!(off.contains("no grid table"), "{off}");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["replay".into(), fx("missing.json"), "--summary".into()],
            "cannot read",
        ),
        (
            vec![
                "replay".into(),
                fx("nsys_greenctx.csv"),
                "--summary".into(),
                "--stream".into(),
                "99".into(),
            ],
            "no operations left",
        ),
        (
            vec![
                "replay".into(),
                fx("nsys_greenctx.csv"),
                "--window".into(),
                "5..1".into(),
            ],
            "FROM must be below TO",
        ),
        (
            vec![
                "replay".into(),
                fx("nsys_greenctx.csv"),
                "--host-overhead-us".into(),
                "-3".into(),
            ],
            "unexpected argument '-3'",
        ),
        (
            vec![
                "replay".into(),
                fx("nsys_greenctx.csv"),
                "--spin-ramp-ns".into(),
                "2e6".into(),
            ],
            "must be between 0 and 1000000 ns",
        ),
        (
            vec![
                "replay".into(),
                fx("nsys_greenctx.csv"),
                "--stream-from-us".into(),
                "soon".into(),
            ],
            "`soon` is not a number of µs (or `off`)",
        ),
        (
            vec![
                "replay".into(),
                fx("nsys_greenctx.csv"),
                "--node-gap".into(),
                "fast".into(),
            ],
            "is not `profile`, `measure` or a gap in us",
        ),
        (
            vec![
                "replay".into(),
                fx("nsys_greenctx.csv"),
                "--summary".into(),
                "--eager-step-ms".into(),
                "0".into(),
            ],
            "must be above 0 ms",
        ),
        (
            vec![
                "replay".into(),
                fx("nsys_greenctx.csv"),
                "--summary".into(),
                "--eager-step-ms".into(),
                "inf".into(),
            ],
            "finite, non-negative",
        ),
        (
            vec![
                "replay".into(),
                fx("nsys_greenctx.csv"),
                "--summary".into(),
                "--profile".into(),
                fx("missing-profile.json"),
            ],
            "cannot read profile",
        ),
        (
            vec![
                "replay".into(),
                fx("nsys_greenctx.csv"),
                "--summary".into(),
                "--profile".into(),
                fx("kineto_step.json"),
            ],
            "no schema_version",
        ),
        (
            vec![
                "replay".into(),
                fx("nsys_greenctx.csv"),
                "--summary".into(),
                "--grid-nodes".into(),
                fx("kineto_step.json"),
            ],
            "is not a grid table",
        ),
        (
            vec![
                "replay".into(),
                fx("nsys_greenctx.csv"),
                "--reps".into(),
                "0".into(),
            ],
            "invalid value '0'",
        ),
        (vec!["replay".into()], "required"),
        (
            vec![
                "replay".into(),
                fx("kineto_two_streams.json"),
                "--chase-floor".into(),
                "two-steps".into(),
            ],
            "invalid value 'two-steps' for '--chase-floor",
        ),
        (
            vec![
                "replay".into(),
                fx("kineto_two_streams_reductions.json"),
                "--concurrent-stand-ins".into(),
                "barriers".into(),
            ],
            "invalid value 'barriers' for '--concurrent-stand-ins",
        ),
        (
            vec![
                "replay".into(),
                fx("kineto_step.json"),
                "--graph-step".into(),
                "both".into(),
            ],
            "invalid value 'both' for '--graph-step",
        ),
        (
            vec![
                "replay".into(),
                fx("kineto_step.json"),
                "--export-trace".into(),
                "/nonexistent-dir/replay.json".into(),
            ],
            "/nonexistent-dir/replay.json",
        ),
        (
            vec![
                "replay".into(),
                fx("kineto_step.json"),
                "--summary".into(),
                "--export-trace".into(),
                "/nonexistent-dir/model.json".into(),
            ],
            "/nonexistent-dir/model.json",
        ),
    ];
    for (args, msg) in cases {
        assert_usage_error(&args, msg);
    }
}

/// Two streams forked and joined with recorded waits: the offline model runs the branches
/// side by side (20 + 40 + 20 us of kernels, not 120) and says how it read the streams.
#[test]
fn replay_summary_overlaps_streams_with_recorded_waits() {
    let fx = fixture("kineto_two_streams.json");
    let out = succeeds(&replay(&fx, "--summary --export-json -"));
    let v = json_of(&out);
    let graph_ms = v["result"]["prediction"]["graph_step_ms"].as_f64().unwrap();
    // The shipped profile's launch, its node costs at the upper level and what each node
    // pays for the other lane come to about 10 us: far from the 40 us serialising would add.
    let nodes_ms = 0.015;
    assert!(
        (0.080..0.080 + nodes_ms).contains(&graph_ms),
        "graph step {graph_ms} ms"
    );
    // Beside it, the same model with the streams one after another: 120 us of kernels.
    let serial_ms = v["result"]["prediction"]["graph_step_serial_ms"]
        .as_f64()
        .unwrap();
    assert!(
        (0.120..0.120 + nodes_ms).contains(&serial_ms),
        "serial {serial_ms} ms"
    );
    // Streams side by side: the wider error the model had on such walks.
    let p = &v["result"]["prediction"];
    assert_eq!(p["branches"], true);
    let share = p["graph_step_error_ms"].as_f64().unwrap() / graph_ms;
    assert!((share - 0.39).abs() < 1e-9, "{p}");
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("3 streams") && warnings.contains("prices the longest chain"),
        "{warnings}"
    );
    assert!(!warnings.contains("one after another"), "{warnings}");
    // Side by side in a graph, kernels slow each other down: the price says it comes out low,
    // and for how much of this step (the two 40 us branches side by side: 40 of 80 us).
    assert!(warnings.contains("slow each other down"), "{warnings}");
    assert!(
        warnings.contains("side by side for 50% of the step"),
        "{warnings}"
    );
}

/// Two streams whose trace records no waits (an nsys CSV): the offline model adds them up,
/// an upper bound (20 + 40 + 20 us of one-block kernels), and gives beside it the two lanes
/// never waiting on each other (the 40 us side kernel beside the main stream's 40), a lower
/// bound; both say so.
#[test]
fn replay_summary_brackets_streams_without_recorded_waits() {
    let fx = fixture("nsys_two_streams.csv");
    let out = succeeds(&replay(&fx, "--summary --export-json -"));
    let v = json_of(&out);
    let p = &v["result"]["prediction"];
    let nodes_ms = 0.015;
    let graph_ms = p["graph_step_ms"].as_f64().unwrap();
    assert!((0.080..0.080 + nodes_ms).contains(&graph_ms), "{p}");
    let lower_ms = p["graph_step_independent_ms"].as_f64().unwrap();
    assert!((0.040..0.040 + nodes_ms).contains(&lower_ms), "{p}");
    assert!(p["graph_step_serial_ms"].is_null(), "{p}");
    // The upper bound may be off by as much as the two bounds lie apart.
    let error_ms = p["graph_step_error_ms"].as_f64().unwrap();
    assert!((error_ms - (graph_ms - lower_ms)).abs() < 1e-12, "{p}");
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("adds them up as if they ran one after another")
            && warnings.contains("never waiting on each other"),
        "{warnings}"
    );
    // `--waits none` prices the lower bound as the step: the streams on lanes of their own.
    let none = json_of(&succeeds(&replay(
        &fx,
        "--summary --waits none --export-json -",
    )));
    let n = &none["result"]["prediction"];
    assert_eq!(n["graph_step_ms"], p["graph_step_independent_ms"], "{n}");
    assert!(n["graph_step_independent_ms"].is_null(), "{n}");
    assert!(
        none["warnings"]
            .to_string()
            .contains("never waiting on each other, whatever waits it records"),
        "{none}"
    );
    let text = String::from_utf8(succeeds(&replay(&fx, "--summary")).stdout).unwrap();
    assert!(
        text.contains("never waiting on each other: a lower bound"),
        "{text}"
    );
}

/// What the shipped profile's widest GEMM pair says a kernel of one round of fat blocks
/// holds of the GPU.
fn one_round_hold() -> f64 {
    launch_econ::document::ModelProfile::shipped_for("NVIDIA H200")
        .and_then(|p| p.model_inputs.graph_node_beside)
        .and_then(|c| c.one_round_hold())
        .expect("the shipped profile measured GEMM pairs")
}

/// Two side branches whose kernels each fill the GPU with one round of fat blocks (132
/// one-per-SM blocks of 168 registers × 384 threads and 164 KB of shared memory). Kernels of
/// unknown kind each hold part of it, as the profile's widest GEMM pair did: the second finds
/// no room for its blocks until the first's begin to retire, for the last part of its work
/// that it does not hold the SMs through, and from then on they share the GPU. The same
/// kernels named as cuBLAS's, without shapes to judge them by, hold all of it, so the step
/// comes out as if the branches ran one after another. The perfect overlap at recorded
/// durations is reported beside it.
#[test]
fn replay_summary_shares_the_gpu_between_kernels_that_fill_it() {
    let fx = fixture("kineto_two_streams_full_gpu.json");
    let prediction = |trace: &str| {
        let v = json_of(&succeeds(&replay(trace, "--summary --export-json -")));
        let p = v["result"]["prediction"].clone();
        let ms = |k: &str| p[k].as_f64().unwrap_or_else(|| panic!("{k}: {p}"));
        (
            ms("graph_step_ms"),
            ms("graph_step_unshared_ms"),
            ms("graph_step_serial_ms"),
        )
    };
    let launch_ms = 0.01;
    // 20 + 40 + 20 us overlapped; 20 + 2 × 40 + 20 us one after the other.
    let (graph, unshared, serial) = prediction(&fx);
    assert!((0.080..0.080 + launch_ms).contains(&unshared));
    assert!((0.120..0.120 + launch_ms).contains(&serial));
    // Each branch holds h of the GPU. The first runs 40h us alone; its last 40(1 - h) us of
    // work, shared with the second (2h together), take 80h(1 - h); the second, 40(1 - h) us
    // done by then, runs its last 40h alone: 80h(2 - h) us in all.
    let h = one_round_hold();
    assert!(h > 0.5 && h < 1.0, "the profile's pair: {h}");
    let extra = graph - unshared;
    assert!(
        (extra - (0.080 * h * (2.0 - h) - 0.040)).abs() < 0.001,
        "graph {graph} unshared {unshared} hold {h}"
    );
    let waited = json_of(&succeeds(&replay(&fx, "--summary --export-json -")));
    assert_eq!(
        waited["result"]["prediction"]["kernels_waiting_for_room"], 1,
        "the second branch's kernel"
    );
    let text = stdout_of(&succeeds(&replay(&fx, "--summary")));
    assert!(text.contains("sharing them"), "{text}");
    assert!(
        text.contains("1 kernel(s) waiting for room beside kernels whose blocks fill every SM"),
        "{text}"
    );

    let dir = std::env::temp_dir().join(format!("le-full-gpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let blas = dir.join("cublas.json");
    let renamed = std::fs::read_to_string(&fx)
        .unwrap()
        .replace("\"branch_a\"", "\"nvjet_branch_a\"")
        .replace("\"branch_b\"", "\"nvjet_branch_b\"");
    std::fs::write(&blas, renamed).unwrap();
    let (graph, _, serial) = prediction(blas.to_str().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
    assert!((0.120..0.120 + launch_ms).contains(&graph), "{graph}");
    assert!((graph - serial).abs() < 0.002, "{graph} {serial}");

    // The branches of the plain fixture (8 small blocks each) fit beside each other, so they
    // share nothing; as small kernels that wait on their loads they run slower beside each
    // other by what small adds measured beside small adds, of their whole nodes, no more.
    let plain = json_of(&succeeds(&replay(
        &fixture("kineto_two_streams.json"),
        "--summary --export-json -",
    )));
    let p = &plain["result"]["prediction"];
    let (graph, unshared) = (
        p["graph_step_ms"].as_f64().unwrap(),
        p["graph_step_unshared_ms"].as_f64().unwrap(),
    );
    let s = launch_econ::document::ModelProfile::shipped_for("NVIDIA H200")
        .and_then(|p| p.model_inputs.graph_node_beside)
        .map(|c| c.small_pair.stretch)
        .expect("the shipped profile measured small adds side by side");
    assert!(s > 0.0, "{s}");
    assert!(graph > unshared && graph <= unshared * (1.0 + s), "{p}");
}

/// A trace of several steps marked by the profiler (`prof.step()`; a one-layer decode step
/// recorded three times on an H200 by scripts/profiler_steps.py, trimmed to the events the
/// reader uses): the last step is priced by default and the report says so; one step's price
/// is a third of the three's; a step the trace does not hold is a usage error naming those
/// it does.
#[test]
fn a_trace_of_several_marked_steps_prices_one() {
    let fx = fixture("kineto_profiler_steps.json");
    let doc = |flags: &str| json_of(&succeeds(&replay(&fx, flags)));
    let last = doc("--summary --export-json -");
    let trace = &last["result"]["trace"];
    assert_eq!(trace["summary"]["kernels"], 28);
    let steps = trace["steps"].as_str().unwrap();
    assert!(
        steps.starts_with(
            "ProfilerStep#4, one of 3 marked steps: #2 (28 ops), #3 (28 ops), #4 (28 ops)"
        ),
        "{steps}"
    );
    let second = doc("--summary --profiler-step 2 --export-json -");
    assert_eq!(second["result"]["trace"]["summary"]["kernels"], 28);
    let all = doc("--summary --profiler-step all --export-json -");
    assert_eq!(all["result"]["trace"]["summary"]["kernels"], 84);
    assert!(all["result"]["trace"]["steps"]
        .as_str()
        .unwrap()
        .contains("3 marked steps as one walk"));
    let graph =
        |v: &serde_json::Value| v["result"]["prediction"]["graph_step_ms"].as_f64().unwrap();
    let gpu_ms = |v: &serde_json::Value| {
        v["result"]["trace"]["summary"]["kernel_gpu_ns"]
            .as_f64()
            .unwrap()
            / 1e6
    };
    // The same kernels each step: one step's recorded GPU time and graph step are about a
    // third of the three's (the graph launch is paid once either way).
    let third = gpu_ms(&all) / 3.0;
    assert!(
        (gpu_ms(&last) - third).abs() < 0.1 * third,
        "{} vs {third}",
        gpu_ms(&last)
    );
    assert!(
        graph(&last) < 0.5 * graph(&all),
        "{} vs {}",
        graph(&last),
        graph(&all)
    );
    // Each step has its own host side: its eager estimate is not the whole trace's.
    let eager =
        |v: &serde_json::Value| v["result"]["prediction"]["eager_step_ms"].as_f64().unwrap();
    assert_eq!(last["result"]["prediction"]["eager_source"], "trace");
    assert!(
        eager(&last) < 0.5 * eager(&all),
        "{} vs {}",
        eager(&last),
        eager(&all)
    );
    let text = stdout_without_gpu(&replay(&fx, "--summary"));
    assert!(text.contains("step: ProfilerStep#4, one of 3"), "{text}");
    assert_usage_error(
        replay(&fx, "--summary --profiler-step 9"),
        "no ProfilerStep#9 in the trace; it marks #2 (28 ops), #3 (28 ops), #4 (28 ops)",
    );
    assert_usage_error(replay(&fx, "--summary --profiler-step first"), "not a step");
    // A trace that marks no steps: `last` is the whole trace, a number is an error.
    let step = fixture("kineto_step.json");
    let plain = json_of(&succeeds(&replay(&step, "--summary --export-json -")));
    assert!(plain["result"]["trace"]["steps"].is_null());
    assert_usage_error(
        replay(&step, "--summary --profiler-step 3"),
        "marks no profiler steps",
    );
}

/// `--captured GRAPH_TRACE` says whether a profiled graph replay runs the recorded walk: the
/// graph's copy and memset nodes, run as driver kernels, are the step's copy and memset;
/// another walk is a warning in the report and the JSON; a missing trace is exit 2.
#[test]
fn captured_graph_is_checked_against_the_recording() {
    let step = fixture("kineto_step.json");
    let graph = fixture("kineto_step_graph.json");
    let flags = format!("--summary --captured {graph}");
    let text = stdout_without_gpu(&replay(&step, &flags));
    assert!(
        text.contains("runs the recorded walk (4 kernels, copies and memsets)"),
        "{text}"
    );
    let other = fixture("kineto_one_stream_gemms.json");
    let flags = format!("--summary --captured {other} --export-json -");
    let out = succeeds(&replay(&step, &flags));
    let v = json_of(&out);
    assert_eq!(v["captured"]["same"], false, "{v}");
    assert_eq!(v["captured"]["recorded"], 4);
    assert_eq!(v["captured"]["captured"], 5);
    let warnings = v["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap_or("").contains("runs another walk")),
        "{warnings:?}"
    );
    // Without --captured the document holds no such field.
    let plain = json_of(&succeeds(&replay(&step, "--summary --export-json -")));
    assert!(plain.get("captured").is_none(), "{plain}");
    let missing = fixture("missing_graph.json");
    assert_usage_error(
        [
            "replay",
            step.as_str(),
            "--summary",
            "--captured",
            missing.as_str(),
        ],
        "--captured",
    );
}
