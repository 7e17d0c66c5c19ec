//! The latency-bound stand-in on a real device (`bash .gpu/run.sh tests` on the GPU machine).

use memra_engine::{
    chase_ring_words, Chase, ChaseRound, Engine, Error, LaunchShape, CHASE_LINE_WORDS,
};

/// A chase of plain reads.
fn reads(ns: u64, loads: u32, shape: LaunchShape) -> Chase {
    Chase {
        ns,
        loads,
        round: ChaseRound::Read,
        shape,
    }
}

/// A chase whose every step is a round of a block-wide reduction.
fn reductions(ns: u64, loads: u32, shape: LaunchShape) -> Chase {
    Chase {
        round: ChaseRound::BlockReduction,
        ..reads(ns, loads, shape)
    }
}

/// The line each warp of `threads` threads reaches after `loads` steps through `words`.
fn expected_lines(words: &[u32], threads: usize, loads: u32) -> Vec<u32> {
    let lines = words.len() / CHASE_LINE_WORDS;
    (0..threads)
        .map(|t| {
            let mut line = ((t / 32) % lines) as u32;
            for _ in 0..loads {
                line = words[line as usize * CHASE_LINE_WORDS] % lines as u32;
            }
            line
        })
        .collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_chase_of_reads_takes_its_steps_records_a_span_and_stays_inside_its_buffers() {
    let e = Engine::new(0).expect("a CUDA device at ordinal 0");
    let lines = 64;
    let ring = e.chase_ring(lines).unwrap();
    let words = chase_ring_words(lines, 0x9E37_79B9_7F4A_7C15);
    assert_eq!(e.dtoh(&ring).unwrap(), words, "the ring the engine uploads");
    let shape = LaunchShape::linear(8, 128);
    let threads = 8 * 128;
    let mut sink = e.zeros::<u32>(threads).unwrap();
    let mut slots = e.zeros::<u64>(2 * Engine::SPIN_SLOT_WORDS).unwrap();
    for loads in [0u32, 1, 5, 200] {
        e.chase_grid(reads(3_000, loads, shape), &ring, &mut sink, &mut slots, 1)
            .unwrap();
        assert_eq!(
            e.dtoh(&sink).unwrap(),
            expected_lines(&words, threads, loads),
            "each warp's line after {loads} steps"
        );
        let s = e.dtoh(&slots).unwrap();
        assert_eq!(&s[..4], &[0, 0, 0, 0], "slot 0 untouched");
        assert_eq!(s[4], 0, "slot reset by the last block");
        assert!(s[6] >= 3_000, "span {} shorter than the spin alone", s[6]);
    }
    // In a graph, replay after replay, as the replayed walks use it.
    let g = e
        .capture_graph(|eng| eng.chase_grid(reads(0, 7, shape), &ring, &mut sink, &mut slots, 1))
        .unwrap();
    for _ in 0..3 {
        g.launch().unwrap();
    }
    e.stream().synchronize().unwrap();
    assert_eq!(e.dtoh(&sink).unwrap(), expected_lines(&words, threads, 7));
    drop(g);
    // Any ring contents stay inside the ring, and a short sink wraps: no fault, a result.
    let wild = e.htod(&vec![u32::MAX; 4 * CHASE_LINE_WORDS]).unwrap();
    let mut short = e.zeros::<u32>(3).unwrap();
    e.chase_grid(reads(0, 9, shape), &wild, &mut short, &mut slots, 1)
        .unwrap();
    let got = e.dtoh(&short).unwrap();
    assert!(got.iter().all(|&l| l < 4), "{got:?}");
    // Bad input: steps through a ring without a whole line, a slot past the slots.
    let part = e.zeros::<u32>(CHASE_LINE_WORDS - 1).unwrap();
    let err = e
        .chase_grid(reads(0, 1, shape), &part, &mut sink, &mut slots, 1)
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    e.chase_grid(reads(0, 0, shape), &part, &mut sink, &mut slots, 1)
        .unwrap();
    let err = e
        .chase_grid(reads(0, 1, shape), &ring, &mut sink, &mut slots, 2)
        .unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
    assert!(e.chase_ring(0).is_err());
}

/// The lines each warp of a block of `warps` whole warps reaches after `loads` barrier-chase
/// steps through `words`, starting at `first_warp` (the block's first warp over the grid).
fn expected_barrier_lines(words: &[u32], first_warp: usize, warps: usize, loads: u32) -> Vec<u32> {
    let lines = (words.len() / CHASE_LINE_WORDS) as u32;
    let mut line: Vec<u32> = (0..warps)
        .map(|w| ((first_warp + w) % lines as usize) as u32)
        .collect();
    for _ in 0..loads {
        // Each warp sums its 32 equal words; every warp then sums the warps' sums.
        let total = line.iter().fold(0u32, |t, &l| {
            t.wrapping_add((words[l as usize * CHASE_LINE_WORDS] % lines).wrapping_mul(32))
        });
        line = (0..warps as u32)
            .map(|w| total.wrapping_add(w) % lines)
            .collect();
    }
    line
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_chase_of_block_reductions_reduces_every_step_across_its_block_and_stays_inside_its_buffers() {
    let e = Engine::new(0).expect("a CUDA device at ordinal 0");
    let lines = 64;
    let ring = e.chase_ring(lines).unwrap();
    let words = chase_ring_words(lines, 0x9E37_79B9_7F4A_7C15);
    let (blocks, threads) = (6usize, 256usize);
    let shape = LaunchShape::linear(blocks as u32, threads as u32);
    let warps = threads / 32;
    let mut sink = e.zeros::<u32>(blocks * threads).unwrap();
    let mut slots = e.zeros::<u64>(2 * Engine::SPIN_SLOT_WORDS).unwrap();
    for loads in [0u32, 1, 4, 50] {
        e.chase_grid(
            reductions(2_000, loads, shape),
            &ring,
            &mut sink,
            &mut slots,
            1,
        )
        .unwrap();
        let got = e.dtoh(&sink).unwrap();
        for b in 0..blocks {
            let want = expected_barrier_lines(&words, b * warps, warps, loads);
            for (t, &l) in got[b * threads..][..threads].iter().enumerate() {
                assert_eq!(l, want[t / 32], "block {b} thread {t} after {loads} steps");
            }
        }
        let s = e.dtoh(&slots).unwrap();
        assert_eq!(&s[..4], &[0, 0, 0, 0], "slot 0 untouched");
        assert!(s[6] >= 2_000, "span {} shorter than the spin alone", s[6]);
    }
    // Blocks of a partial warp and any ring contents: no fault, lines inside the ring.
    let wild = e.htod(&vec![u32::MAX; 4 * CHASE_LINE_WORDS]).unwrap();
    let mut short = e.zeros::<u32>(5).unwrap();
    e.chase_grid(
        reductions(0, 9, LaunchShape::linear(3, 100)),
        &wild,
        &mut short,
        &mut slots,
        1,
    )
    .unwrap();
    let got = e.dtoh(&short).unwrap();
    assert!(got.iter().all(|&l| l < 4), "{got:?}");
    // Bad input as chase_grid's.
    let part = e.zeros::<u32>(CHASE_LINE_WORDS - 1).unwrap();
    let err = e
        .chase_grid(reductions(0, 1, shape), &part, &mut sink, &mut slots, 1)
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    let err = e
        .chase_grid(reductions(0, 1, shape), &ring, &mut sink, &mut slots, 2)
        .unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
}
