//! Small kernels beside other lanes, the two points of [`BesideCosts`] that time them: adds
//! beside GEMMs streaming their weights ([`BesideCosts::small`]) and adds beside the same adds
//! ([`BesideCosts::small_pair`]).

use memra_engine::Engine;

#[cfg(doc)]
use super::BesideCosts;
use super::{replay_times, stamps, Adds, Chain, Nodes, SmallPoint, REPLAYS, SIZES, TOKENS};
use crate::stats::median;

/// How many times longer than the GEMMs alone the small-kernel chain runs alone: long enough
/// that it outlasts them however much slower its adds run beside them (2.6 times on the H200),
/// leaving stamped rounds after them to compare with.
const ADDS_OVER_GEMMS: f64 = 4.0;

/// Stamped rounds of adds that fit within the GEMMs' time, at least (fewer adds a round where
/// the GEMMs are short).
const ROUNDS_WITHIN_GEMMS: f64 = 8.0;
/// Adds a stamped round at most.
const ADDS_A_ROUND: usize = 64;

/// One [`SmallPoint`]: the smallest chain's adds on `other` beside the GEMMs alone of a
/// `d`-square chain on `e`, in one graph, the adds outlasting the GEMMs
/// ([`ADDS_OVER_GEMMS`] times their time) and stamped every round
/// ([`stamps`]): an add's node time in the rounds that ran wholly while the GEMMs ran, against
/// the rounds wholly after them, in the same replay (median over replays). Taken as the
/// difference between that graph's time and the adds' alone, it also held the per-node level
/// the two graphs ran at (the GEMMs' 256 MiB put the one beside them at the upper level), which
/// moved the 4096-square point from 1.0 to 2.2 from run to run on one H200.
pub(super) fn measure_small(e: &Engine, other: &Engine, d: u32) -> anyhow::Result<SmallPoint> {
    let mut gemms = Chain::new(e, d)?;
    let mut adds = Adds::new(other, SIZES[0])?;
    let (fork, join) = (e.event()?, other.event()?);
    let alone = e.capture_graph(|eng| gemms.issue(eng, Nodes::Gemms))?;
    let (round, _keep_round) = e.capture_graph_across(&[other], |eng| {
        fork.record()?;
        other.wait_event(&fork)?;
        adds.issue(other)?;
        join.record()?;
        eng.wait_event(&join)
    })?;
    let t = replay_times(e, &[&alone, &round])?;
    let (b, add_us) = (t[0], t[1] / adds.layers as f64);
    anyhow::ensure!(
        b > 0.0 && add_us > 0.0,
        "small kernels beside {d}-square GEMMs: no time measured"
    );
    let every = ((b / (ROUNDS_WITHIN_GEMMS * add_us)) as usize).clamp(1, ADDS_A_ROUND);
    let rounds = ((ADDS_OVER_GEMMS * b / add_us) as usize)
        .div_ceil(every)
        .max(2);
    let mut gemm_marks = stamps::Stamps::new(e, 2)?;
    let mut add_marks = stamps::Stamps::new(other, rounds + 1)?;
    let (beside, _keep_beside) = e.capture_graph_across(&[other], |eng| {
        fork.record()?;
        other.wait_event(&fork)?;
        gemm_marks.mark(eng, 0)?;
        gemms.issue(eng, Nodes::Gemms)?;
        gemm_marks.mark(eng, 1)?;
        add_marks.mark(other, 0)?;
        for r in 0..rounds {
            (0..every).try_for_each(|_| adds.issue_one(other))?;
            add_marks.mark(other, r + 1)?;
        }
        join.record()?;
        eng.wait_event(&join)
    })?;
    let stretches: Vec<f64> = stamps::replayed_splits(
        &beside,
        (&add_marks, other),
        (&gemm_marks, e),
        every,
        REPLAYS,
    )?
    .into_iter()
    .map(|(during, after)| during / after - 1.0)
    .collect();
    anyhow::ensure!(
        !stretches.is_empty(),
        "small kernels beside {d}-square GEMMs: no stamped round of adds ran wholly while the GEMMs ran and after them ({b:.1} µs of GEMMs, {add_us:.2} µs an add)"
    );
    let bytes = crate::trace::matmul::operand_bytes(&gemms.gemm) as f64;
    Ok(SmallPoint {
        // One GEMM's bytes over its time alone; bytes / µs = MB/s, / 1e3 = GB/s.
        load_gb_s: bytes / (b / gemms.weights.len() as f64) / 1e3,
        stretch: median(&stretches).max(0.0),
    })
}

/// Rounds of the smallest chain's adds (128 each) in [`BesideCosts::small_pair`]'s chains.
const PAIR_ROUNDS: usize = 4;

/// The bytes one of [`BesideCosts::small_pair`]'s adds moves: two inputs read and a result
/// written, of the smallest chain's `SIZES[0] × TOKENS` floats ([`Adds::new`]).
pub(super) const PAIR_ADD_BYTES: f64 =
    (3 * SIZES[0] as usize * TOKENS as usize * std::mem::size_of::<f32>()) as f64;

/// [`BesideCosts::small_pair`]: the small points' adds on `other`, forked alone, and forked
/// beside the same adds on `e`; the two chains start together and run alike, so each add
/// took `t_both / t_alone` times as long. Its load is one add's bytes (two inputs read, one
/// result written) over its node time alone, as the offline model reckons a recorded
/// element-wise kernel's.
pub(super) fn measure_small_pair(e: &Engine, other: &Engine) -> anyhow::Result<SmallPoint> {
    let mut mine = Adds::new(e, SIZES[0])?;
    let mut theirs = Adds::new(other, SIZES[0])?;
    let (fork, join) = (e.event()?, other.event()?);
    let mut forked = |both: bool| {
        e.capture_graph_across(&[other], |eng| {
            fork.record()?;
            other.wait_event(&fork)?;
            for _ in 0..PAIR_ROUNDS {
                if both {
                    mine.issue(eng)?;
                }
                theirs.issue(other)?;
            }
            join.record()?;
            eng.wait_event(&join)
        })
    };
    let (alone, _keep_alone) = forked(false)?;
    let (both, _keep_both) = forked(true)?;
    let t = replay_times(e, &[&alone, &both])?;
    let adds = (PAIR_ROUNDS * theirs.layers) as f64;
    debug_assert_eq!(
        3.0 * (theirs.bufs[0].len() * std::mem::size_of::<f32>()) as f64,
        PAIR_ADD_BYTES
    );
    let bytes = PAIR_ADD_BYTES;
    anyhow::ensure!(
        t[0] > 0.0 && t[1] > 0.0,
        "small adds beside small adds: no time measured"
    );
    Ok(SmallPoint {
        // bytes / µs = MB/s, / 1e3 = GB/s.
        load_gb_s: bytes / (t[0] / adds) / 1e3,
        stretch: (t[1] / t[0] - 1.0).max(0.0),
    })
}
