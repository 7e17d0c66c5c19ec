//! The two levels of per-node graph cost, and pricing at the one framework processes run at.
//!
//! On an H200 (driver 580) every graph node of a process costs one of two amounts, 0.17–0.19
//! µs apart, whatever the kernel does (empty, memory-bound, spinning; 1 or 132 blocks; 160 KiB
//! of shared memory; 1 KiB of parameters; 64 distinct functions), and all graphs of the
//! process move together. Raw CuPy kernels move it up, in `scripts/graph_level_probe.py`:
//! a graph uploaded (`cuGraphUpload`) and not yet launched, until its first launch (for good
//! if it is destroyed first); or ten kernels on another stream after the graph's own stream
//! had launched many before it was built (one is not enough). Launching the pending graph
//! brings it back down; the full rule is not known.
//!
//! PyTorch decode graphs of transformers models (Llama-, Qwen2-shaped) ran at the upper level
//! from their first replay; GPT-2 and an MLP stack at the lower, until kernels were launched
//! on a new stream. A framework process — warm-up, capture, then copies, sampling or
//! collectives on other streams, graphs for several batch sizes built ahead — has every
//! chance to be at the upper level, so the graph step is priced there and the lower level is
//! reported beside it as the quiet lower bound. A replay on one stream starts at the lower
//! level; [`activate`] moves it up (ten or more kernels on another stream: measured on every
//! run as [`node_extra_us`], 0.175–0.179 µs in three runs). Measure the quiet figures first.
//!
//! How far a graph steps depends on the memory one replay touches: past about two thirds of
//! the L2, every node of the graph steps about twice as far (0.33 µs on the H200, however few
//! of its nodes read; `scripts/footprint_level_probe.py`), so [`node_extra_us`] measures both
//! and [`crate::footprint`] says which a walk takes.

use memra_engine::{DeviceBuffer, Engine, EngineOptions, LaunchShape};

use crate::stand_in::{node_us, node_us_after};
use crate::stats::median;

/// Kernels launched on the other stream: well past the ten that move the level up.
pub const LAUNCHES: usize = 32;

/// Launches [`LAUNCHES`] empty kernels on a new stream of `e`'s device (same context) and
/// waits for them: the process's graphs move to the upper level (see the module docs).
pub fn activate(e: &Engine) -> anyhow::Result<()> {
    let other = second_engine(e)?;
    for _ in 0..LAUNCHES {
        other.noop()?;
    }
    other.stream().synchronize()?;
    Ok(())
}

/// A second engine on `e`'s device and context with a stream of its own (and `e`'s PDL
/// setting): another stream of the same process.
pub fn second_engine(e: &Engine) -> memra_engine::Result<Engine> {
    Engine::with_options(
        e.ordinal(),
        &EngineOptions {
            pdl: e.pdl(),
            ..EngineOptions::default()
        },
    )
}

/// The step between the two levels, µs a node, for the two kinds of graph that take different
/// steps (see [`crate::footprint`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelSteps {
    /// A graph of empty kernels.
    pub small_us: f64,
    /// The same graph with one node first that reads more memory than the L2 holds, fresh
    /// at every replay; `None` where the device does not report its L2.
    pub beyond_l2_us: Option<f64>,
}

/// Bytes the first node reads in [`node_extra_us`]'s beyond-L2 graph, in L2s: past the
/// transition `scripts/footprint_level_probe.py` found (32 to 48 MiB on a 60 MiB L2).
const READ_L2S: usize = 2;
/// Bytes of the arena it reads from, in L2s: successive replays read different memory.
const ARENA_L2S: usize = 5;

/// A read of `bytes` from `arena` where `cursor` left the last one: fresh memory at every
/// replay (the arena is larger than the L2 by [`ARENA_L2S`]).
struct FreshRead {
    arena: DeviceBuffer<u8>,
    cursor: DeviceBuffer<u64>,
    slots: DeviceBuffer<u64>,
    bytes: usize,
}

/// GPU time between the two levels, µs a node: node times of an empty kernel's graph, and of
/// the same graph after a read of two L2s, measured quiet, then again after [`activate`]
/// (each the median of five). Leaves the process at the upper level.
pub fn node_extra_us(e: &Engine) -> anyhow::Result<LevelSteps> {
    let l2 = usize::try_from(e.device_info().l2_bytes)
        .ok()
        .filter(|&b| b > 0);
    let mut beyond = match l2 {
        Some(l2) => Some(FreshRead {
            arena: e.zeros::<u8>(ARENA_L2S * l2)?,
            cursor: e.zeros::<u64>(1)?,
            slots: e.zeros::<u64>(Engine::SPIN_SLOT_WORDS)?,
            bytes: READ_L2S * l2 / 16 * 16,
        }),
        None => None,
    };
    let shape = LaunchShape::linear(4 * e.device_info().sm_count.max(1) as u32, 256);
    let mut five = |e: &Engine| -> anyhow::Result<(f64, Option<f64>)> {
        let small = (0..5)
            .map(|_| node_us(e, |eng| eng.noop()))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let big = match beyond.as_mut() {
            Some(r) => {
                let v = (0..5)
                    .map(|_| {
                        node_us_after(
                            e,
                            |eng| {
                                eng.stream_grid_from(
                                    &r.arena,
                                    &mut r.cursor,
                                    r.bytes,
                                    shape,
                                    &mut r.slots,
                                    0,
                                )
                            },
                            |eng| eng.noop(),
                        )
                    })
                    .collect::<anyhow::Result<Vec<_>>>()?;
                Some(median(&v))
            }
            None => None,
        };
        Ok((median(&small), big))
    };
    let (quiet, quiet_big) = five(e)?;
    activate(e)?;
    let (active, active_big) = five(e)?;
    Ok(LevelSteps {
        small_us: (active - quiet).max(0.0),
        beyond_l2_us: quiet_big.zip(active_big).map(|(q, a)| (a - q).max(0.0)),
    })
}
