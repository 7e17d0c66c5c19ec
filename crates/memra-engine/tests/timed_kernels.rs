//! The timed stand-in kernels on a real device: spins timed to the grid or per block, reads
//! that stream or pace, and the slots they record their spans in. Run with
//! `--include-ignored` on a machine with a GPU (`bash .gpu/run.sh tests` on the GPU machine).

use memra_engine::{Chase, ChaseRound, Engine, Error, LaunchShape, Pace};

fn engine() -> Engine {
    Engine::new(0).expect("a CUDA device at ordinal 0")
}

#[test]
#[ignore = "needs a CUDA device"]
fn spin_grid_spans_about_ns_over_many_waves_and_resets_its_slot() {
    let e = engine();
    let mut slots = e.zeros::<u64>(2 * Engine::SPIN_SLOT_WORDS).unwrap();
    // ~100 waves on any current GPU (how much shorter than 100 x ns the span is, the replay
    // reports as fidelity; here only behaviour is checked, not timing).
    let big = LaunchShape::of((100_000, 1, 1), (256, 1, 1));
    let ns = 50_000;
    e.spin_grid(ns, big, &mut slots, 1).unwrap();
    let s = e.dtoh(&slots).unwrap();
    assert_eq!(&s[..4], &[0, 0, 0, 0], "slot 0 untouched");
    assert_eq!((s[4], s[5]), (0, 0), "slot reset by the last block");
    assert!(s[6] >= ns, "span {} < requested {ns}", s[6]);
    assert!(s[7] >= s[6], "end stamp {} before the span {}", s[7], s[6]);
    // The same slot serves a graph's replays.
    let g = e
        .capture_graph(|eng| eng.spin_grid(10_000, big, &mut slots, 1))
        .unwrap();
    for _ in 0..3 {
        g.launch().unwrap();
    }
    let s = e.dtoh(&slots).unwrap();
    assert_eq!((s[4], s[5]), (0, 0));
    assert!(s[6] >= 10_000);
    let err = e.spin_grid(1, big, &mut slots, 2).unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn spin_blocks_takes_a_round_of_ns_for_each_round_of_blocks() {
    let e = engine();
    let mut slots = e.zeros::<u64>(Engine::SPIN_SLOT_WORDS).unwrap();
    // 1024-thread blocks: at most two an SM (2048 threads), so 4 x SMs blocks take at least
    // two rounds, and a block of the second starts only once one of the first has ended.
    let sms = e.device_info().sm_count as u32;
    let ns = 20_000;
    e.spin_blocks(ns, LaunchShape::linear(4 * sms, 1024), &mut slots, 0)
        .unwrap();
    let s = e.dtoh(&slots).unwrap();
    assert_eq!(s[0], 0, "slot reset by the last block");
    assert!(s[2] >= 2 * ns, "span {} < two rounds of {ns}", s[2]);
    // One block: its own ns, like spin_grid.
    e.spin_blocks(ns, LaunchShape::linear(1, 32), &mut slots, 0)
        .unwrap();
    let s = e.dtoh(&slots).unwrap();
    assert!(s[2] >= ns && s[3] >= s[2], "{s:?}");
    let err = e
        .spin_blocks(1, LaunchShape::linear(1, 32), &mut slots, 1)
        .unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_grid_span_never_leaves_its_start_stamp_to_the_next_launch() {
    // Beside another stream's wide kernel (the stand-ins' life in a walk of several streams):
    // after every launch slot[0] is clear again, and each recorded span starts no earlier than
    // the launch before it ended (a stale stamp would start it a whole launch early).
    let e = engine();
    let busy = engine();
    let mut slots = e.zeros::<u64>(2 * Engine::SPIN_SLOT_WORDS).unwrap();
    let mut busy_slots = busy.zeros::<u64>(Engine::SPIN_SLOT_WORDS).unwrap();
    let ring = e.chase_ring(64).unwrap();
    let shape = LaunchShape::linear(128, 128);
    let mut sink = e.zeros::<u32>(128 * 128).unwrap();
    let mut last_end = [0u64; 2];
    for round in 0..300 {
        busy.spin_grid(20_000, LaunchShape::linear(1024, 1024), &mut busy_slots, 0)
            .unwrap();
        e.spin_grid(1_000, shape, &mut slots, 0).unwrap();
        e.chase_grid(
            Chase {
                ns: 500,
                loads: 3,
                round: ChaseRound::Read,
                shape,
            },
            &ring,
            &mut sink,
            &mut slots,
            1,
        )
        .unwrap();
        let s = e.dtoh(&slots).unwrap();
        for k in 0..2 {
            let w = &s[k * 4..k * 4 + 4];
            assert_eq!(
                w[0], 0,
                "round {round}, slot {k}: a start stamp left behind"
            );
            let start = w[3] - w[2];
            assert!(
                start >= last_end[k],
                "round {round}, slot {k}: span starts at {start}, before the last launch ended at {}",
                last_end[k]
            );
            last_end[k] = w[3];
        }
    }
    busy.stream().synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn stream_grid_reads_its_range_and_records_a_span() {
    let e = engine();
    // 4096 floats of zero with one 16-byte word (-1.5, 0, 0, 0) at byte 1024: the kernel
    // raises slot word 1 to all ones only when the words it read sum to exactly -1.5.
    let mut host = vec![0f32; 4096];
    host[256] = -1.5;
    let src = e.htod(&host).unwrap();
    let mut slots = e.zeros::<u64>(2 * Engine::SPIN_SLOT_WORDS).unwrap();
    let one = LaunchShape::linear(1, 1);
    e.stream_grid(&src, 1024, 16, one, &mut slots, 1).unwrap();
    let s = e.dtoh(&slots).unwrap();
    assert_eq!(&s[..4], &[0, 0, 0, 0], "slot 0 untouched");
    assert_eq!(
        (s[4], s[5]),
        (0, u64::MAX),
        "slot reset, and the word at 1024 was read"
    );
    assert_eq!(
        Engine::stream_span(&s[4..8]),
        None,
        "a marked slot holds no end"
    );
    assert!(s[6] > 0 && s[7] >= s[6], "span {} end {}", s[6], s[7]);
    // A range without that word, read by a grid of many waves up to the buffer's last byte.
    e.memset_zero(&mut slots, 64).unwrap();
    let wide = LaunchShape::linear(1024, 256);
    e.stream_grid(&src, 2048, 4096 * 4 - 2048, wide, &mut slots, 1)
        .unwrap();
    let s = e.dtoh(&slots).unwrap();
    assert_eq!(s[4], 0, "slot reset");
    assert!(s[5] > 0 && s[5] < u64::MAX, "nothing in range sums to -1.5");
    // Every block raised word 1 to its end: a time after the launch's start.
    assert!(s[5] >= s[7] - s[6], "last end {} before the start", s[5]);
    // The range must lie in the buffer, aligned to 16 bytes; the slot must exist.
    let err = e
        .stream_grid(&src, 2048, 4096 * 4 - 2032, wide, &mut slots, 1)
        .unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
    let err = e.stream_grid(&src, 8, 16, one, &mut slots, 1).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    // More words × blocks than the kernel's 64-bit split can hold.
    let huge = LaunchShape::of((i32::MAX as u32, 65535, 65535), (1, 1, 1));
    let err = e.stream_grid(&src, 0, 64, huge, &mut slots, 1).unwrap_err();
    assert!(err.to_string().contains("more than it can split"), "{err}");
    let err = e.stream_grid(&src, 0, 16, one, &mut slots, 2).unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn stream_paced_from_reads_every_word_and_lasts_its_span() {
    let e = engine();
    // 64 Ki words of zero but the last = (-1.5, 0, 0, 0): reading it marks the slot.
    let words = 1usize << 16;
    let mut host = vec![0f32; words * 4];
    host[(words - 1) * 4] = -1.5;
    let src = e.htod(&host).unwrap();
    let mut slots = e.zeros::<u64>(2 * Engine::SPIN_SLOT_WORDS).unwrap();
    // Four loads a thread; sixteen, with every thread's share a whole number of sixteen-load
    // rounds and with a tail.
    let one = |deep| Pace {
        deep,
        ..Pace::default()
    };
    for (shape, n, pace) in [
        (LaunchShape::linear(64, 128), words, one(false)),
        (LaunchShape::linear(32, 128), words, one(true)),
        (LaunchShape::linear(7, 96), words - 5, one(true)),
    ] {
        for ns in [0u64, 20_000] {
            let pace = Pace { ns, ..pace };
            let mut c = e.zeros::<u64>(1).unwrap();
            let from = words - n;
            if from > 0 {
                // Start the read where it ends at the marked last word.
                e.htod_into(&[from as u64], &mut c).unwrap();
            }
            e.memset_zero(&mut slots, 64).unwrap();
            e.stream_paced_from(&src, &mut c, n * 16, pace, shape, &mut slots, 1)
                .unwrap();
            let w = e.dtoh(&slots).unwrap();
            // Every word was read (the marked last one too) and the cursor moved past them.
            assert_eq!(w[4 + 1], u64::MAX, "{n} words, {pace:?}, {shape:?}");
            assert_eq!(e.dtoh(&c).unwrap()[0], words as u64);
            // The grid's span, on the timer the kernel waits on, is at least what it was
            // asked.
            assert!(w[4 + 2] >= ns, "span {} under {ns}", w[4 + 2]);
        }
    }
    // Bad input as stream_grid_from: a part word, a slot out of range.
    let mut c = e.zeros::<u64>(1).unwrap();
    let wide = LaunchShape::linear(64, 128);
    for deep in [false, true] {
        let pace = Pace {
            ns: 1000,
            ..one(deep)
        };
        let err = e
            .stream_paced_from(&src, &mut c, 8, pace, wide, &mut slots, 0)
            .unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
        let err = e
            .stream_paced_from(&src, &mut c, 16, pace, wide, &mut slots, 2)
            .unwrap_err();
        assert!(matches!(err, Error::Length { .. }), "{err}");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn stream_paced_reads_the_first_bytes_every_time_and_lasts_its_span() {
    let e = engine();
    // 4096 words of zero but word 1000 = (-1.5, 0, 0, 0): reading it marks the slot.
    let words = 4096usize;
    let mut host = vec![0f32; words * 4];
    host[1000 * 4] = -1.5;
    let src = e.htod(&host).unwrap();
    let mut slots = e.zeros::<u64>(2 * Engine::SPIN_SLOT_WORDS).unwrap();
    let shape = LaunchShape::linear(16, 128);
    for deep in [false, true] {
        for ns in [0u64, 20_000] {
            let pace = Pace { ns, deep };
            // The first 1001 words hold the mark, read however often; the first 1000 do not.
            for (n, marked) in [(1001usize, true), (1001, true), (1000, false)] {
                e.memset_zero(&mut slots, 64).unwrap();
                e.stream_paced(&src, n * 16, pace, shape, &mut slots, 1)
                    .unwrap();
                let w = e.dtoh(&slots).unwrap();
                assert_eq!(w[4 + 1] == u64::MAX, marked, "{n} words, {pace:?}");
                assert!(w[4 + 2] >= ns, "span {} under {ns}", w[4 + 2]);
            }
        }
    }
    // Bad input: a part word, more than the buffer holds, a slot out of range.
    let pace = Pace {
        ns: 1000,
        deep: false,
    };
    let err = e
        .stream_paced(&src, 8, pace, shape, &mut slots, 0)
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    let err = e
        .stream_paced(&src, (words + 1) * 16, pace, shape, &mut slots, 0)
        .unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
    let err = e
        .stream_paced(&src, 16, pace, shape, &mut slots, 2)
        .unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn stream_grid_from_reads_where_the_cursor_says_and_moves_it() {
    let e = engine();
    // 1024 words of zero but word 100 = (-1.5, 0, 0, 0): reading it marks the slot.
    let mut host = vec![0f32; 4096];
    host[400] = -1.5;
    let src = e.htod(&host).unwrap();
    let mut slots = e.zeros::<u64>(Engine::SPIN_SLOT_WORDS).unwrap();
    let one = LaunchShape::linear(1, 32);
    let read = |cursor: u64, slots: &mut memra_engine::DeviceBuffer<u64>| {
        let mut c = e.htod(&[cursor]).unwrap();
        e.memset_zero(slots, 32).unwrap();
        e.stream_grid_from(&src, &mut c, 16 * 16, one, slots, 0)
            .unwrap();
        let marked = e.dtoh(slots).unwrap()[1] == u64::MAX;
        (e.dtoh(&c).unwrap()[0], marked)
    };
    // From word 0: 16 words on, no mark.
    assert_eq!(read(0, &mut slots), (16, false));
    // From word 100: the marked word is read.
    assert_eq!(read(100, &mut slots), (116, true));
    // A cursor past the room (1024 − 16 + 1 = 1009 places) wraps: 5 × 1009 + 100 reads 100.
    assert_eq!(read(5 * 1009 + 100, &mut slots), (116, true));
    // Whatever the cursor holds, the read stays inside the buffer.
    let (after, _) = read(u64::MAX, &mut slots);
    assert_eq!(after, u64::MAX % 1009 + 16);
    // Launches sharing a cursor read on one after another, eager and in a graph alike.
    let mut c = e.zeros::<u64>(1).unwrap();
    let g = e
        .capture_graph(|eng| eng.stream_grid_from(&src, &mut c, 16 * 16, one, &mut slots, 0))
        .unwrap();
    g.launch().unwrap();
    e.stream().synchronize().unwrap();
    // The capture's eager warm-up read once, the replay once more: 2 × 16 words.
    assert_eq!(e.dtoh(&c).unwrap()[0], 32);
    drop(g);
    // Bad input: a read longer than the buffer, a part word, an empty cursor.
    let mut c = e.zeros::<u64>(1).unwrap();
    let err = e
        .stream_grid_from(&src, &mut c, 4096 * 4 + 16, one, &mut slots, 0)
        .unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
    let err = e
        .stream_grid_from(&src, &mut c, 8, one, &mut slots, 0)
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    let mut empty = e.zeros::<u64>(0).unwrap();
    let err = e
        .stream_grid_from(&src, &mut empty, 16, one, &mut slots, 0)
        .unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn elementwise_l2_sums_its_inputs_into_the_result_and_lasts_its_span() {
    let e = engine();
    // Three inputs of 1000 words each, packed: input j holds j + 1 in every element, and
    // word 7 of input 2 holds 100 instead.
    let (words, inputs) = (1000usize, 3u32);
    let mut host = Vec::with_capacity(words * 4 * inputs as usize);
    for j in 0..inputs {
        host.extend(std::iter::repeat_n((j + 1) as f32, words * 4));
    }
    for x in &mut host[(2 * words + 7) * 4..(2 * words + 8) * 4] {
        *x = 100.0;
    }
    let src = e.htod(&host).unwrap();
    let mut slots = e.zeros::<u64>(2 * Engine::SPIN_SLOT_WORDS).unwrap();
    // Grids of one block, of fewer threads than results, and of more blocks than results.
    for shape in [
        LaunchShape::linear(1, 32),
        LaunchShape::linear(7, 64),
        LaunchShape::linear(2048, 128),
    ] {
        for ns in [0u64, 20_000] {
            let mut dst = e.zeros::<f32>(words * 4 + 4).unwrap();
            e.elementwise_l2(&src, &mut dst, words * 16, inputs, ns, shape, &mut slots, 1)
                .unwrap();
            let out = e.dtoh(&dst).unwrap();
            for (i, x) in out.iter().enumerate() {
                let want = match i / 4 {
                    7 => 1.0 + 2.0 + 100.0,
                    w if w < words => 6.0,
                    _ => 0.0, // past the result: untouched
                };
                assert_eq!(*x, want, "element {i}, {shape:?}");
            }
            let w = e.dtoh(&slots).unwrap();
            assert!(w[4 + 2] >= ns, "span {} under {ns}", w[4 + 2]);
            assert_eq!(&w[..4], &[0, 0, 0, 0], "slot 0 untouched");
        }
    }
    // Bad input: a part word, no inputs, more than src or dst holds, a slot out of range.
    let shape = LaunchShape::linear(4, 128);
    let mut dst = e.zeros::<f32>(words * 4).unwrap();
    for (bytes, inputs) in [(8usize, 1u32), (16, 0)] {
        let err = e
            .elementwise_l2(&src, &mut dst, bytes, inputs, 0, shape, &mut slots, 0)
            .unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    }
    for (bytes, inputs) in [(words * 16, 4u32), ((words + 1) * 16, 1)] {
        let err = e
            .elementwise_l2(&src, &mut dst, bytes, inputs, 0, shape, &mut slots, 0)
            .unwrap_err();
        assert!(matches!(err, Error::Length { .. }), "{err}");
    }
    let err = e
        .elementwise_l2(&src, &mut dst, 16, 1, 0, shape, &mut slots, 2)
        .unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
}
