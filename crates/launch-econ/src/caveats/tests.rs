//! What the warnings say, and when, on hand-made walks.

use super::*;
use crate::trace::Op;

/// A kernel `name` of `dur` ns on `stream`.
fn kernel_on(stream: u64, name: &str, dur: f64) -> Op {
    Op {
        stream: Some(stream),
        ..Op::kernel(name, 0.0, dur)
    }
}

#[test]
fn f32_fma_gemms_on_two_streams_are_flagged_for_the_offline_model() {
    let gemm = |name: &str, stream: u64| kernel_on(stream, name, 5000.0);
    let simt = "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>";
    let two = Walk {
        ops: vec![gemm(simt, 13), gemm(simt, 17)],
        ..Walk::default()
    };
    let m = simt_gemms_warning(&two).expect("two streams of FMA GEMMs");
    assert!(m.starts_with("2 streams run f32 GEMM kernels"), "{m}");
    // One stream of them, or TF32 ones beside them: nothing to say.
    let one = Walk {
        ops: vec![gemm(simt, 13), gemm(simt, 13)],
        ..Walk::default()
    };
    assert_eq!(simt_gemms_warning(&one), None);
    let tf32 = Walk {
        ops: vec![
            gemm(simt, 13),
            gemm(
                "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32",
                17,
            ),
        ],
        ..Walk::default()
    };
    // One stream of them beside another stream's kernels: the spread of such walks.
    let beside = simt_gemms_warning(&tf32).expect("f32 GEMMs beside TF32 ones");
    assert!(
        beside.starts_with("one stream runs f32 GEMM kernels"),
        "{beside}"
    );
    // cuBLAS's IEEE f32 kernels say so by their types alone.
    let xmma = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x32x8_stage3_warpsize2x1x1";
    let ieee = Walk {
        ops: vec![gemm(xmma, 13), gemm(xmma, 17)],
        ..Walk::default()
    };
    assert!(simt_gemms_warning(&ieee).is_some_and(|m| m.starts_with("2 streams")));
    // A one-block f32 GEMM on each of two streams of long bf16 GEMMs (a decoder's rotary
    // embedding): under a tenth of each stream's time, nothing to say.
    let nvjet = |stream: u64| kernel_on(stream, "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT", 50_000.0);
    let rotary = Walk {
        ops: vec![gemm(simt, 13), nvjet(13), gemm(simt, 17), nvjet(17)],
        ..Walk::default()
    };
    assert_eq!(simt_gemms_warning(&rotary), None);
}

#[test]
fn the_process_history_names_the_state_the_replay_ran_in() {
    let fresh = process_history(0);
    assert!(
        fresh.contains("in a fresh process when run from the CLI with --prior-streams 0"),
        "{fresh}"
    );
    assert!(fresh.contains("--prior-streams N"), "{fresh}");
    let warmed = process_history(8);
    assert!(
        warmed.contains("after 8 other streams each ran a kernel"),
        "{warmed}"
    );
    assert!(!warmed.contains("fresh process ("), "{warmed}");
}

#[test]
fn prior_streams_on_one_stream_is_warned_only_when_asked_for() {
    assert_eq!(prior_streams_on_one_stream(0), None);
    let w = prior_streams_on_one_stream(8).unwrap();
    assert!(w.starts_with("--prior-streams 8 on a walk"), "{w}");
    assert!(w.contains("leave it at 0"), "{w}");
}

#[test]
fn kernels_given_their_twins_durations_are_said() {
    let mut walk = Walk::default();
    assert!(unreproduced(&walk, true).is_empty());
    walk.uncontended = crate::trace::contention::Uncontended {
        kernels: 4,
        ns: 331_000.0,
    };
    let msgs = unreproduced(&walk, false).join("\n");
    assert!(
        msgs.contains("4 kernel(s) ran beside other streams' kernels"),
        "{msgs}"
    );
    assert!(msgs.contains("0.331 ms less in all"), "{msgs}");
}

#[test]
fn what_is_not_reproduced_is_said() {
    let op = |stream: u64, kind: OpKind, name: &str| Op {
        kind,
        ..kernel_on(stream, name, 1.0)
    };
    let k = OpKind::Kernel {
        grid: (1, 1, 1),
        block: (1, 1, 1),
    };
    let one = Walk {
        ops: vec![op(7, k.clone(), "gemm")],
        ..Walk::default()
    };
    assert!(unreproduced(&one, true).is_empty());
    let mut graphed = one.clone();
    graphed.ops[0].from_graph = true;
    let msgs = unreproduced(&graphed, false).join("\n");
    assert!(
        msgs.contains("1 of the 1 operations were launched by a CUDA graph already"),
        "{msgs}"
    );
    let w = Walk {
        ops: vec![
            op(7, k.clone(), "gemm"),
            op(8, k, "ncclDevKernel_AllReduce"),
            op(
                7,
                OpKind::Memcpy {
                    bytes: 4,
                    direction: "HtoD".into(),
                    pageable: true,
                },
                "Memcpy HtoD (Pageable -> Device)",
            ),
            op(
                7,
                OpKind::Memcpy {
                    bytes: 4,
                    direction: "PtoP".into(),
                    pageable: false,
                },
                "Memcpy PtoP (Device -> Device)",
            ),
        ],
        ..Walk::default()
    };
    let msgs = unreproduced(&w, false).join("\n");
    assert!(!msgs.contains("device to host"), "{msgs}");
    assert!(msgs.contains("2 streams"), "{msgs}");
    assert!(msgs.contains("1 NCCL"), "{msgs}");
    // The offline model prices copies at their recorded time: nothing about replaying them.
    assert!(
        !msgs.contains("pageable") && !msgs.contains("peer"),
        "{msgs}"
    );
    let replayed = unreproduced(&w, true).join("\n");
    assert!(
        replayed.contains("1 host<->device copies were recorded from or into pageable"),
        "{replayed}"
    );
    assert!(replayed.contains("1 copies that are neither"), "{replayed}");
}

#[test]
fn several_streams_without_shapes_are_warned_of_offline_only() {
    let on = |stream: u64| Op {
        correlation: Some(stream),
        ..kernel_on(stream, "k", 1.0)
    };
    let mut walk = Walk {
        ops: vec![on(7), on(8)],
        wait_rule: WaitRule::None,
        ..Walk::default()
    };
    const SAYS: &str = "the trace records no operator's shapes";
    assert!(unreproduced(&walk, false).iter().any(|w| w.contains(SAYS)));
    // The replay runs no load model: nothing to say there.
    assert!(!unreproduced(&walk, true).iter().any(|w| w.contains(SAYS)));
    walk.ops[0].input_bytes = Some(1e6);
    assert!(!unreproduced(&walk, false).iter().any(|w| w.contains(SAYS)));
    // One stream without shapes: no streams side by side to share.
    let one = Walk {
        ops: vec![on(7), on(7)],
        ..Walk::default()
    };
    assert!(!unreproduced(&one, false).iter().any(|w| w.contains(SAYS)));
}

#[test]
fn a_walk_of_several_devices_is_said_to_be_priced_as_one_devices() {
    let on = |device: Option<u32>| Op {
        device,
        ..kernel_on(7, "k", 1.0)
    };
    let walk = |devices: &[Option<u32>]| Walk {
        ops: devices.iter().map(|&d| on(d)).collect(),
        ..Walk::default()
    };
    // One device, or none recorded: nothing to say.
    for one in [walk(&[Some(1), Some(1)]), walk(&[None, Some(0)])] {
        assert!(unreproduced(&one, true).is_empty());
        assert!(unreproduced(&one, false).is_empty());
    }
    let two = walk(&[Some(1), Some(0), Some(1)]);
    let replayed = unreproduced(&two, true).join("\n");
    assert!(
        replayed.contains("operations of 2 devices (0, 1)"),
        "{replayed}"
    );
    assert!(
        replayed.contains("the replay runs all of them"),
        "{replayed}"
    );
    assert!(replayed.contains("--trace-device 0"), "{replayed}");
    let offline = unreproduced(&two, false).join("\n");
    assert!(
        offline.contains("the offline model lays all of them out"),
        "{offline}"
    );
}

#[test]
fn copies_to_the_host_are_warned_of_only_where_the_host_may_wait_on_them_mid_step() {
    let copy = Op {
        kind: OpKind::Memcpy {
            bytes: 1 << 20,
            direction: "DtoH".into(),
            pageable: false,
        },
        ..kernel_on(7, "Memcpy DtoH (Device -> Pinned)", 1.0)
    };
    let with_host = |waits: Option<usize>| Walk {
        ops: vec![copy.clone()],
        host: waits.map(|w| crate::trace::HostSide {
            blocking_waits_mid_step: w,
            ..crate::trace::HostSide::default()
        }),
        ..Walk::default()
    };
    let warned = |w: &Walk| {
        unreproduced(w, true)
            .into_iter()
            .find(|m| m.contains("device to host"))
    };
    // An offload to page-locked memory the host never waits on is a copy node.
    assert_eq!(warned(&with_host(Some(0))), None);
    let waited = warned(&with_host(Some(2))).unwrap();
    assert!(
        waited.contains("copies device to host 1 time(s) and the host waits for the GPU 2 time(s) before its last launch"),
        "{waited}"
    );
    let unknown = warned(&with_host(None)).unwrap();
    assert!(unknown.contains("the trace does not say"), "{unknown}");
}

#[test]
fn a_gap_near_the_profiles_says_nothing_and_one_well_above_says_by_how_much() {
    assert_eq!(front_end_gap_above_profile(0.09, 0.068, "H200", 100), None);
    assert_eq!(front_end_gap_above_profile(0.05, 0.068, "H200", 100), None);
    assert_eq!(estimated_gap_above_shipped(0.09, 0.068, "H200"), None);
    let e = estimated_gap_above_shipped(0.195, 0.068, "NVIDIA H200").unwrap();
    assert!(e.contains("0.127 us above"), "{e}");
    let w = front_end_gap_above_profile(0.195, 0.068, "NVIDIA H200", 1000).unwrap();
    assert!(w.contains("0.195 us a node"), "{w}");
    assert!(w.contains("0.127 us above the 0.068"), "{w}");
    assert!(w.contains("up to 0.1270 ms over 1000 nodes"), "{w}");
}

#[test]
fn a_replay_priced_without_the_model_says_why() {
    use crate::pricing::GraphStepChoice;
    let auto = no_profile_for_the_mean("NVIDIA H100 80GB HBM3", GraphStepChoice::Auto);
    assert!(
        auto.contains("(NVIDIA H100 80GB HBM3) is the replayed graph alone"),
        "{auto}"
    );
    assert!(
        auto.contains("no device profile describes it") && auto.contains("--profile FILE"),
        "{auto}"
    );
    let mean = no_profile_for_the_mean("NVIDIA H100 80GB HBM3", GraphStepChoice::Mean);
    assert!(
        mean.contains("--graph-step mean found no device profile"),
        "{mean}"
    );
    assert!(
        mean.contains("--export-json FILE") && mean.contains("--profile"),
        "{mean}"
    );
}

#[test]
fn joins_without_a_gpu_side_record_are_said_to_change_the_joining_stream() {
    let on = |stream: u64, correlation: u64| Op {
        correlation: Some(correlation),
        ..kernel_on(stream, "k", 1.0)
    };
    let mut walk = Walk {
        ops: vec![on(13, 3), on(17, 6)],
        waits: vec![
            crate::trace::StreamWait::new(13, 2),
            crate::trace::StreamWait::new(17, 5),
        ],
        ..Walk::default()
    };
    const SAYS: &str = "stream wait calls have no record on the GPU side";
    assert!(!unreproduced(&walk, true).iter().any(|w| w.contains(SAYS)));
    walk.unrecorded_waits = 2;
    let msgs = unreproduced(&walk, false).join("\n");
    assert!(msgs.contains(&format!("2 {SAYS}")), "{msgs}");
    // `--waits all` reads no fork at all: nothing to say.
    walk.wait_rule = WaitRule::All;
    assert!(!unreproduced(&walk, true).iter().any(|w| w.contains(SAYS)));
}
