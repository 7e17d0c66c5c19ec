use super::*;
use memra_engine::{Gemm, GemmType};

fn kernel(blocks: u32, us: f64) -> Op {
    Op {
        kind: OpKind::Kernel {
            grid: (blocks, 1, 1),
            block: (128, 1, 1),
        },
        ..Op::kernel("k", 0.0, us * 1e3)
    }
}

#[test]
fn gemms_count_their_larger_operand_other_operators_only_the_largest() {
    // A decode GEMV: 4096 x 4096 bf16 weights (32 MiB), a 4096-wide activation.
    let g = Gemm::plain(GemmType::Bf16, 4096, 1, 4096);
    let gemm = Op {
        matmul: Some(MatmulRole::Call(g)),
        input_bytes: Some(99.0 * MIB), // the operator's, not counted again
        ..kernel(128, 10.0)
    };
    let add = |mib: f64| Op {
        input_bytes: Some(mib * MIB),
        ..kernel(1024, 2.0)
    };
    let f = Footprint::of(
        &Walk::from(vec![gemm.clone(), gemm, add(2.0), add(4.0), add(2.0)]),
        4000.0,
        Some(132),
    );
    assert_eq!(f.source, FootprintSource::Recorded);
    assert_eq!(f.bytes, 2.0 * 32.0 * MIB + 4.0 * MIB);
    assert!(f.beyond_l2(60.0 * MIB));
    // A chain of adds over one 2 MiB activation stays within the L2 however long it is.
    let chain = Footprint::of(&Walk::from(vec![add(2.0); 500]), 4000.0, Some(132));
    assert_eq!(chain.bytes, 2.0 * MIB);
    assert!(!chain.beyond_l2(60.0 * MIB));
}

#[test]
fn gathers_count_the_rows_they_read_added_up_not_their_tables() {
    // One 4 KiB row gathered from a token embedding table beside a 32 MiB weight and an add
    // over 1 MiB: the gather counts its row, and the add stays the largest other input.
    let g = Gemm::plain(GemmType::Bf16, 4096, 1, 4096);
    let gemm = Op {
        matmul: Some(MatmulRole::Call(g)),
        ..kernel(128, 10.0)
    };
    let gather = |rows_mib: f64| Op {
        input_bytes: Some(rows_mib * MIB + 8.0),
        largest_input_bytes: Some(rows_mib * MIB),
        gathered_bytes: Some(rows_mib * MIB),
        ..kernel(4, 2.0)
    };
    let add = Op {
        input_bytes: Some(MIB),
        ..kernel(1024, 2.0)
    };
    let lookup = Walk::from(vec![gather(4096.0 / MIB), gemm, add.clone()]);
    assert_eq!(Footprint::stated(&lookup).bytes, 32.0 * MIB + 4096.0 + MIB);
    // Eight bags over tables of their own read 5 MiB of rows each: 40 MiB together.
    let bags = Walk::from([vec![gather(5.0); 8], vec![add]].concat());
    assert_eq!(Footprint::stated(&bags).bytes, 41.0 * MIB);
    assert!(Footprint::stated(&bags).beyond_l2(60.0 * MIB));
    // Added up, a gather's index is not counted again beside its rows.
    assert_eq!(Footprint::inputs_added(&bags).bytes, 41.0 * MIB);
}

#[test]
fn added_up_inputs_count_every_operator_but_element_wise_ones() {
    let op = |name: &str, mib: f64| Op {
        input_bytes: Some(mib * MIB),
        ..Op::kernel(name, 0.0, 5000.0)
    };
    // Two attention kernels over caches of their own, a norm, an add over an activation.
    let w = Walk::from(vec![
        op("flash_fwd_kernel", 32.0),
        op("flash_fwd_kernel", 32.0),
        op("RowwiseMomentsCUDAKernel", 1.0),
        op("vectorized_elementwise_kernel<4, add>", 9.0),
    ]);
    assert_eq!(Footprint::stated(&w).bytes, 32.0 * MIB);
    let added = Footprint::inputs_added(&w);
    assert_eq!(added.source, FootprintSource::Recorded);
    assert_eq!(added.bytes, 65.0 * MIB);
    assert!(!within_l2(added, 60.0 * MIB) && within_l2(Footprint::stated(&w), 60.0 * MIB));
    // Without shapes: the stated footprint's source, never within the L2.
    let shapeless = Walk::from(vec![kernel(4, 5.0)]);
    assert_eq!(
        Footprint::inputs_added(&shapeless).source,
        FootprintSource::Durations
    );
}

#[test]
fn lanes_of_element_wise_kernels_hold_their_inputs_and_results_at_once() {
    // An add of two 16 MiB tensors into a third, 24 times a lane: 48 MiB a lane.
    let add = |stream: u64| Op {
        stream: Some(stream),
        input_bytes: Some(32.0 * MIB),
        largest_input_bytes: Some(16.0 * MIB),
        ..Op::kernel("vectorized_elementwise_kernel<4, add>", 0.0, 13_000.0)
    };
    let lanes = |n: u64| Walk::from((0..n).flat_map(|s| vec![add(s); 24]).collect::<Vec<_>>());
    // The largest input alone (16 MiB) is what the stated footprint counts, lanes or not.
    assert_eq!(Footprint::stated(&lanes(2)).bytes, 32.0 * MIB);
    assert_eq!(Footprint::inputs_added(&lanes(1)).bytes, 48.0 * MIB);
    assert_eq!(Footprint::inputs_added(&lanes(2)).bytes, 96.0 * MIB);
    // An L2 of 96 MiB holds one lane's (within 2/3 of it), not two lanes'.
    assert!(within_l2(Footprint::inputs_added(&lanes(1)), 96.0 * MIB));
    assert!(!within_l2(Footprint::inputs_added(&lanes(2)), 96.0 * MIB));
    // An in-place add (`aten::add_`, its result one of its two inputs) touches 32 MiB a lane.
    let in_place = |s: u64| Op {
        in_place: true,
        ..add(s)
    };
    let w = Walk::from(
        (0..2)
            .flat_map(|s| vec![in_place(s); 24])
            .collect::<Vec<_>>(),
    );
    assert_eq!(Footprint::inputs_added(&w).bytes, 64.0 * MIB);
    // A lane's smaller kernels do not add to its largest: a lane holds one kernel's data at once.
    let mut w = lanes(1);
    w.ops.push(Op {
        input_bytes: Some(MIB),
        largest_input_bytes: Some(MIB),
        ..add(0)
    });
    assert_eq!(Footprint::inputs_added(&w).bytes, 48.0 * MIB);
}

#[test]
fn copies_count_the_device_memory_they_touch() {
    let copy = |direction: &str, mib: f64| Op {
        kind: OpKind::Memcpy {
            bytes: (mib * MIB) as u64,
            direction: direction.into(),
            pageable: false,
        },
        ..Op::kernel("Memcpy", 0.0, 1000.0)
    };
    let memset = Op {
        kind: OpKind::Memset {
            bytes: (3.0 * MIB) as u64,
        },
        ..Op::kernel("Memset", 0.0, 1000.0)
    };
    let f = Footprint::of(
        &Walk::from(vec![copy("HtoD", 1.0), copy("DtoD", 2.0), memset]),
        0.0,
        None,
    );
    assert_eq!(f.bytes, (1.0 + 4.0 + 3.0) * MIB);
}

#[test]
fn a_replay_reading_less_than_a_shapeless_walk_may_warns_with_the_step_it_may_miss() {
    let l2 = 60.0 * MIB;
    let bound = Footprint {
        bytes: 2890.0 * MIB,
        source: FootprintSource::Durations,
    };
    let r = replay_memory_unknown(bound, 0.0, l2, 320, Some(0.17), true).expect("warns");
    let w = &r.warning;
    assert!(w.contains("~0 MiB a replay"), "{w}");
    assert!(w.contains("up to ~2890 MiB"), "{w}");
    assert!(w.contains("up to +0.054 ms a step"), "{w}");
    // On one stream the price takes half the step, and says so.
    assert!((r.added_ms - 0.0272).abs() < 1e-12, "{}", r.added_ms);
    assert!(w.contains("priced halfway, +0.027 ms"), "{w}");
    // Streams side by side: the nodes do not all add up; warned, nothing added.
    let lanes = replay_memory_unknown(bound, 0.0, l2, 320, Some(0.17), false).expect("warns");
    assert_eq!(lanes.added_ms, 0.0);
    assert!(
        lanes.warning.contains("up to +0.054 ms a step"),
        "{}",
        lanes.warning
    );
    assert!(!lanes.warning.contains("halfway"), "{}", lanes.warning);
    // No step known: the warning without an amount, nothing added.
    let plain = replay_memory_unknown(bound, 0.0, l2, 320, None, true).expect("warns");
    assert!(!plain.warning.contains("ms a step"), "{}", plain.warning);
    assert_eq!(plain.added_ms, 0.0);
    // Nothing to say: shapes were recorded, or the bound itself is within the L2.
    let recorded = Footprint {
        source: FootprintSource::Recorded,
        ..bound
    };
    assert_eq!(
        replay_memory_unknown(recorded, 0.0, l2, 320, Some(0.17), true),
        None
    );
    let small = Footprint {
        bytes: 8.0 * MIB,
        ..bound
    };
    assert_eq!(
        replay_memory_unknown(small, 0.0, l2, 320, Some(0.17), true),
        None
    );
}

#[test]
fn a_replay_streaming_past_the_line_for_a_shapeless_walk_is_priced_halfway_down() {
    let l2 = 60.0 * MIB;
    let bound = Footprint {
        bytes: 2890.0 * MIB,
        source: FootprintSource::Durations,
    };
    // The stand-ins streamed 128 MiB: the replay took the larger step, the real step may
    // not have.
    let r = replay_memory_unknown(bound, 128.0 * MIB, l2, 320, Some(0.17), true).expect("warns");
    let w = &r.warning;
    assert!(
        w.contains("~128 MiB a replay, past 2/3 of the 60 MiB L2"),
        "{w}"
    );
    assert!(w.contains("if the real step reads less"), "{w}");
    assert!(w.contains("up to -0.054 ms a step"), "{w}");
    assert!((r.added_ms + 0.0272).abs() < 1e-12, "{}", r.added_ms);
    assert!(w.contains("priced halfway, -0.027 ms"), "{w}");
    // Side by side: warned, nothing taken off.
    let lanes =
        replay_memory_unknown(bound, 128.0 * MIB, l2, 320, Some(0.17), false).expect("warns");
    assert_eq!(lanes.added_ms, 0.0);
    assert!(!lanes.warning.contains("halfway"), "{}", lanes.warning);
}

#[test]
fn without_shapes_kernels_read_what_their_grids_share_of_the_bandwidth_allows() {
    // 4000 GB/s = 4000 bytes/ns. A full 264-block kernel of 10 µs could read 40 MB; a
    // one-block kernel of 10 µs 1/132 of that.
    let w = Walk::from(vec![kernel(264, 10.0), kernel(1, 10.0)]);
    let f = Footprint::of(&w, 4000.0, Some(132));
    assert_eq!(f.source, FootprintSource::Durations);
    assert!(
        (f.bytes - 40e6 * (1.0 + 1.0 / 132.0)).abs() < 1.0,
        "{}",
        f.bytes
    );
    // No bandwidth known: kernels count nothing.
    assert_eq!(Footprint::of(&w, f64::NAN, Some(132)).bytes, 0.0);
    // No L2 known: never beyond it.
    assert!(!f.beyond_l2(0.0));
}

#[test]
fn data_within_the_l2_spins_and_the_note_names_the_other_price() {
    let l2 = 60.0 * MIB;
    let recorded = |mib: f64| Footprint {
        bytes: mib * MIB,
        source: FootprintSource::Recorded,
    };
    assert!(within_l2(recorded(2.0), l2));
    let spin = within_l2_note(recorded(2.0), l2, L2Resident::Spin, 3.0, 0).expect("within");
    assert!(
        spin.contains("~2 MiB (every operator's inputs added up, and what lanes of element-wise kernels hold at once), within 2/3 of the 60 MiB L2"),
        "{spin}"
    );
    assert!(
        spin.contains("recorded at 3.0 us or longer stand in without"),
        "{spin}"
    );
    assert!(spin.contains("--l2-resident stream"), "{spin}");
    let stream = within_l2_note(recorded(2.0), l2, L2Resident::Stream, 3.0, 16).expect("16");
    assert!(
        stream.starts_with("16 kernel(s) stand in by reading fresh"),
        "{stream}"
    );
    assert!(stream.contains("--l2-resident spin"), "{stream}");
    // Streaming chosen but nothing streams: nothing to say.
    assert_eq!(
        within_l2_note(recorded(2.0), l2, L2Resident::Stream, 3.0, 0),
        None
    );
    // Past the line (a decode step's weights), no shapes, or no L2 known: not within.
    assert!(!within_l2(recorded(41.0), l2));
    assert_eq!(
        within_l2_note(recorded(41.0), l2, L2Resident::Spin, 3.0, 0),
        None
    );
    let durations = Footprint {
        source: FootprintSource::Durations,
        ..recorded(2.0)
    };
    assert!(!within_l2(durations, l2));
    assert!(!within_l2(recorded(2.0), 0.0));
}

#[test]
fn long_kernels_spin_only_where_the_data_stays_in_the_l2_and_spinning_is_chosen() {
    let mib = (1u64 << 20) as f64;
    let l2 = 60.0 * mib;
    let data = |mib_: f64, source| Footprint {
        bytes: mib_ * mib,
        source,
    };
    let small = data(8.0, FootprintSource::Recorded);
    let large = data(400.0, FootprintSource::Recorded);
    let shapeless = data(8.0, FootprintSource::Durations);
    let asked = Some(2000.0);
    assert_eq!(streams_from(asked, L2Resident::Spin, small, l2), None);
    assert_eq!(streams_from(asked, L2Resident::Stream, small, l2), asked);
    assert_eq!(streams_from(asked, L2Resident::Spin, large, l2), asked);
    // Without shapes the data is not known to fit; with no L2 known, nothing fits.
    assert_eq!(streams_from(asked, L2Resident::Spin, shapeless, l2), asked);
    assert_eq!(streams_from(asked, L2Resident::Spin, small, 0.0), asked);
    // Streaming turned off stays off.
    assert_eq!(streams_from(None, L2Resident::Stream, large, l2), None);
    // `paced` spins within the L2 as `spin` does (one stream), and streams past it; beside
    // other streams it reads from the L2 from 1 µs, or from a lower threshold asked for.
    assert_eq!(streams_from(asked, L2Resident::Paced, small, l2), None);
    assert_eq!(streams_from(asked, L2Resident::Paced, large, l2), asked);
    assert_eq!(
        l2_paced_from(asked, L2Resident::Paced, small, l2),
        Some(1000.0)
    );
    assert_eq!(
        l2_paced_from(Some(500.0), L2Resident::Paced, small, l2),
        Some(500.0)
    );
    for (choice, data, at) in [
        (L2Resident::Spin, small, l2),
        (L2Resident::Stream, small, l2),
        (L2Resident::Paced, large, l2),
        (L2Resident::Paced, shapeless, l2),
        (L2Resident::Paced, small, 0.0),
    ] {
        assert_eq!(l2_paced_from(asked, choice, data, at), None);
    }
    assert_eq!(l2_paced_from(None, L2Resident::Paced, small, l2), None);
}

/// A recorded footprint well within a 50 MiB L2, as lanes of small element-wise kernels have.
const LANES_FOOTPRINT: Footprint = Footprint {
    bytes: 8.0 * MIB,
    source: FootprintSource::Recorded,
};

/// `walk` with a recorded bf16 GEMM after its kernels.
fn beside_a_gemm(walk: &Walk) -> Walk {
    let gemm = Op {
        matmul: Some(MatmulRole::Call(Gemm::plain(GemmType::Bf16, 4096, 1, 4096))),
        ..kernel(128, 10.0)
    };
    Walk {
        ops: [walk.ops.clone(), vec![gemm]].concat(),
        ..Walk::default()
    }
}

#[test]
fn lanes_within_the_l2_name_the_paced_replay() {
    let (l2, small) = (50.0 * MIB, LANES_FOOTPRINT);
    let add = |ns: f64, bytes: Option<f64>| Op {
        input_bytes: bytes,
        ..Op::kernel("vectorized_elementwise_kernel<add>", 0.0, ns)
    };
    let walk = Walk {
        ops: vec![
            add(1500.0, Some(MIB)),
            add(800.0, Some(MIB)),
            add(3000.0, None),
        ],
        ..Walk::default()
    };
    let note = lanes_within_l2_note(&walk, small, l2, L2Resident::Spin, true).expect("note");
    assert!(
        note.starts_with(
            "the streams run side by side over data within 2/3 of the 50 MiB L2: 1 kernel(s)"
        ),
        "{note}"
    );
    assert!(
        note.contains("held-out walks of such lanes")
            && note.contains("--summary came within 10%")
            && note.contains("--l2-resident work")
            && !note.contains("keep the default"),
        "{note}"
    );
    // Beside a recorded GEMM the note says paced came high there.
    let with_gemm = beside_a_gemm(&walk);
    let beside = lanes_within_l2_note(&with_gemm, small, l2, L2Resident::Spin, true).expect("note");
    assert!(
        beside.contains("beside GEMMs, as here, --l2-resident paced")
            && beside.contains("keep the default"),
        "{beside}"
    );
    // One stream, `paced` or `stream` chosen, data past the line: nothing to say.
    assert_eq!(
        lanes_within_l2_note(&walk, small, l2, L2Resident::Spin, false),
        None
    );
    assert_eq!(
        lanes_within_l2_note(&walk, small, l2, L2Resident::Paced, true),
        None
    );
    assert_eq!(
        lanes_within_l2_note(&walk, small, l2, L2Resident::Stream, true),
        None
    );
    let large = Footprint {
        bytes: 40.0 * MIB,
        ..small
    };
    assert_eq!(
        lanes_within_l2_note(&walk, large, l2, L2Resident::Spin, true),
        None
    );
}

#[test]
fn lanes_of_wide_element_wise_kernels_say_the_replay_is_a_lower_bound() {
    let (l2, small) = (50.0 * MIB, LANES_FOOTPRINT);
    let add = |grid: u32| Op {
        input_bytes: Some(4.0 * MIB),
        ..Op::recorded(
            "vectorized_elementwise_kernel<add>".into(),
            0.0,
            1700.0,
            OpKind::Kernel {
                grid: (grid, 1, 1),
                block: (128, 1, 1),
            },
        )
    };
    // 512 blocks of 128 threads: 64 Ki threads, where the stored lanes ran far from side by side.
    let wide = Walk {
        ops: vec![add(512), add(512), add(511)],
        ..Walk::default()
    };
    let note = lanes_within_l2_note(&wide, small, l2, L2Resident::Spin, true).expect("note");
    assert!(
        note.contains("; 2 of them launch 64 Ki threads or more")
            && note.ends_with("take the replayed graph step as a lower bound here"),
        "{note}"
    );
    // Beside a recorded GEMM the stored runs say nothing of it.
    let beside = beside_a_gemm(&wide);
    let note = lanes_within_l2_note(&beside, small, l2, L2Resident::Spin, true).expect("note");
    assert!(!note.contains("64 Ki threads"), "{note}");
    // Narrower grids: no such clause.
    let narrow = Walk {
        ops: vec![add(64), add(64)],
        ..Walk::default()
    };
    let note = lanes_within_l2_note(&narrow, small, l2, L2Resident::Spin, true).expect("note");
    assert!(!note.contains("64 Ki threads"), "{note}");
}
