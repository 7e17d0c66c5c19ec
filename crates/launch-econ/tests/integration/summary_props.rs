//! The offline price (`replay --summary`) over random walks of forked lanes, read from Kineto JSON
//! as a user's trace is: whatever the kernels' grids, blocks, registers and shared memory (ones no
//! SM could hold included), the price is finite, no shorter than the walk with every kernel at its
//! recorded time, and counts no more kernels waiting for room than the walk has; and a kernel more
//! at a lane's end never makes it shorter by more than a ten-thousandth of it. (That kernel
//! lengthens the front-end part of the nodes other lanes begin beside it, which moves where
//! their kernels overlap, as on a real GPU: steps 0.3–34 ns shorter were seen among thousands
//! of walks, 3.5e-5 of the step at most. One put in a lane's middle moves its own lane's later
//! kernels too.)

use launch_econ::document::TraceInfo;
use launch_econ::price::StepPrice;
use launch_econ::pricing::{load_profile, price_offline};
use launch_econ::trace::{kineto, summarize};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Kernel names of the kinds the model tells apart: element-wise, normalisation, reduction,
/// GEMM, fused attention and one it knows nothing of.
const NAMES: [&str; 6] = [
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute",
    "void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>>",
    "my_kernel",
];

/// One kernel: name, µs, grid blocks, block threads, registers a thread and shared bytes a
/// block where recorded.
type Kernel = (usize, f64, u32, u32, Option<(u32, u32)>);

fn kernel() -> impl Strategy<Value = Kernel> {
    (
        0..NAMES.len(),
        0.5f64..200.0,
        // As many grids near the H200's 132 SMs (fewer, exactly, a round of two) as any others.
        prop_oneof![
            1u32..4096,
            prop::sample::select(vec![64u32, 96, 128, 132, 264])
        ],
        prop::sample::select(vec![32u32, 64, 128, 256, 384, 512, 1024]),
        // Registers and shared memory of small kernels, of whole-SM blocks (168 x 384 threads
        // and 164 KB, a decode GEMV's) and of blocks no SM holds.
        prop::option::of(prop_oneof![
            (16u32..256, 0u32..240_000),
            Just((168u32, 164_308u32)),
            (16u32..40, 0u32..1024),
        ]),
    )
}

/// A prologue on stream 7, each lane on a stream of its own waiting on it, an epilogue waiting
/// on every lane: the shape of a forked step as the profiler records it.
fn trace(lanes: &[Vec<Kernel>]) -> Value {
    let mut events = Vec::new();
    let mut correlation = 10;
    let mut next = || {
        correlation += 2;
        correlation
    };
    let push_kernel = |events: &mut Vec<Value>, stream: u64, ts: f64, k: &Kernel, c| {
        let (name, dur, blocks, threads, resources) = *k;
        let mut args = json!({"device": 0, "stream": stream, "correlation": c,
                              "grid": [blocks, 1, 1], "block": [threads, 1, 1]});
        if let Some((registers, shared)) = resources {
            args["registers per thread"] = registers.into();
            args["shared memory"] = shared.into();
        }
        events.push(
            json!({"ph": "X", "cat": "kernel", "name": NAMES[name], "pid": 0,
                           "tid": stream, "ts": ts, "dur": dur, "args": args}),
        );
    };
    let wait = |stream: u64, ts: f64, c| {
        json!({"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0,
               "tid": stream, "ts": ts, "dur": 1.0,
               "args": {"cuda_sync_kind": "Stream Wait Event", "wait_on_stream": -1,
                        "wait_on_cuda_event_record_corr_id": -1, "stream": stream,
                        "correlation": c, "device": 0}})
    };
    let prologue = (0, 5.0, 4, 128, None);
    push_kernel(&mut events, 7, 1000.0, &prologue, next());
    let mut end: f64 = 1005.0;
    for (i, lane) in lanes.iter().enumerate() {
        let stream = 13 + 4 * i as u64;
        events.push(wait(stream, 1006.0, next()));
        let mut ts = 1008.0;
        for k in lane {
            push_kernel(&mut events, stream, ts, k, next());
            ts += k.1 + 2.0;
        }
        end = end.max(ts);
    }
    for _ in lanes {
        events.push(wait(7, end + 1.0, next()));
    }
    push_kernel(&mut events, 7, end + 3.0, &prologue, next());
    json!({ "traceEvents": events })
}

/// The offline price of `lanes` as a forked step, and how many ops the trace reader found.
fn priced(lanes: &[Vec<Kernel>]) -> (StepPrice, usize) {
    let text = trace(lanes).to_string();
    let mut walk = kineto::read(text.as_bytes(), "random.json").unwrap();
    let info = TraceInfo {
        path: "random.json".into(),
        filter: String::new(),
        steps: None,
        summary: summarize(&walk, 3),
    };
    let profile = load_profile(None).unwrap();
    let report = price_offline(&mut walk, info, profile, Some(1.0), None, false);
    (report.prediction, walk.ops.len())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_offline_price_of_any_forked_walk_is_finite_and_no_shorter_than_unshared(
        lanes in prop::collection::vec(prop::collection::vec(kernel(), 1..6), 1..5),
    ) {
        let (p, kernels) = priced(&lanes);
        prop_assert_eq!(kernels, 2 + lanes.iter().map(Vec::len).sum::<usize>());
        prop_assert!(p.graph_step_ms.is_finite() && p.graph_step_ms > 0.0, "{}", p.graph_step_ms);
        if let Some(unshared) = p.graph_step_unshared_ms {
            prop_assert!(unshared.is_finite() && unshared > 0.0, "{}", unshared);
            prop_assert!(p.graph_step_ms >= unshared - 1e-9, "{} < {}", p.graph_step_ms, unshared);
        }
        if let Some(serial) = p.graph_step_serial_ms {
            prop_assert!(serial.is_finite(), "{}", serial);
        }
        // The longest lane alone, at its recorded times, bounds the step from below.
        let longest = lanes.iter().map(|l| l.iter().map(|k| k.1).sum::<f64>()).fold(0.0, f64::max);
        prop_assert!(p.graph_step_ms * 1e3 >= longest, "{} ms < {} us", p.graph_step_ms, longest);
        if let Some(waited) = p.kernels_waiting_for_room {
            prop_assert!(waited <= kernels, "{} of {}", waited, kernels);
        }
    }

    #[test]
    fn a_kernel_more_at_the_end_of_a_lane_never_makes_the_step_shorter(
        lanes in prop::collection::vec(prop::collection::vec(kernel(), 1..6), 1..5),
        extra in kernel(),
        at in 0usize..4,
    ) {
        let mut longer = lanes.clone();
        let lane = at % longer.len();
        longer[lane].push(extra);
        let (before, after) = (priced(&lanes).0.graph_step_ms, priced(&longer).0.graph_step_ms);
        prop_assert!(after >= before * (1.0 - 1e-4), "{} -> {} ms", before, after);
    }
}
