//! Sizing streaming stand-ins: how many bytes each one reads so that its graph node costs
//! what the recorded kernel's would (recorded duration + the front-end gap every node is
//! planned with).
//!
//! A streaming stand-in (`stream_grid`, the recorded grid and block) reads a span of a large
//! arena where the previous read ended, so every replay reads from device memory as a decode step
//! reads its weights. How long such a read takes depends on the shape (a one-block grid reads
//! at a few GB/s, a full one at the memory's speed) and is not quite linear in the bytes, so
//! each shape's zero-byte duration and read rate are measured first and each step is sized
//! from them, then corrected once launched alone, and then a few rounds in the walk's own
//! graph, where it will run. Real kernels run about as long in a graph as in the eager
//! recording (H200 validation walks: graph/eager within 1–2% for kernels ≥ 2 µs), but a
//! stand-in sized alone did not: its node cost ~0.4 µs more than its lone span + the spin's
//! ramp (the read's tail and what the next node waits for after it), so the in-graph rounds
//! measure each step's node time (the next step's start − its own) and size the read to
//! leave it the recorded duration. A step whose target is too close to its shape's
//! zero-byte duration reverts to its spin.
//!
//! Spans run to the block that ended last: blocks that stream end over a spread the
//! highest-index block (the spin's end marker) does not mark (`scripts/stream_cupti.py`
//! compares them with CUPTI's durations on an H200).

use std::collections::HashMap;

use memra_engine::{DeviceBuffer, Engine, LaunchShape};

use crate::prepared::{spin_step, Prepared, Step};
use crate::stand_in::{ShapeKey, SpinFit};
use crate::stats::median;

pub use crate::stand_in::ARENA_BYTES;
/// Correction rounds in the walk's graph, after one of lone launches.
const GRAPH_ROUNDS: usize = 3;
/// Graph replays per round; the first is left out (it may run cold).
const GRAPH_REPLAYS: usize = 4;
/// Lone launches each shape is measured with.
const SAMPLES: usize = 5;
/// The read each shape's rate is measured at: this many bytes per thread, at most
/// [`PROBE_MAX_BYTES`].
const PROBE_BYTES_PER_THREAD: usize = 1024;
const PROBE_MAX_BYTES: usize = 64 << 20;
/// A step streams only if its target span exceeds its shape's zero-byte span by this much, ns.
const MIN_READ_NS: f64 = 200.0;
/// Rounds a paced step's read is fitted to its shape in, at most.
const PACE_ROUNDS: usize = 3;
/// Largest change of a step's bytes in one correction round (factor either way).
const MAX_STEP_FACTOR: f64 = 4.0;

/// A shape's streaming stand-in, measured: its span at zero bytes and its read rate (bytes
/// per ns of span beyond that), spans to the block that ended last.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ShapeRate {
    pub zero_ns: f64,
    pub bytes_per_ns: f64,
}

/// `bytes` rounded down to a multiple of 16 (the kernel reads 16-byte words), at least 16 and
/// at most the arena.
fn words(bytes: f64) -> usize {
    let b = if bytes.is_finite() {
        bytes.max(0.0)
    } else {
        0.0
    };
    ((b as usize).min(ARENA_BYTES) / 16).max(1) * 16
}

/// The bytes a step of `rate` reads to span `target_ns`.
pub(crate) fn first_size(rate: ShapeRate, target_ns: f64) -> usize {
    words((target_ns - rate.zero_ns) * rate.bytes_per_ns)
}

/// The next size of a step that read `bytes` in `measured_ns` and should take `target_ns`:
/// the read part scaled to the target (at most [`MAX_STEP_FACTOR`] either way, so one noisy
/// measurement cannot throw a step far off).
pub(crate) fn corrected(bytes: usize, measured_ns: f64, target_ns: f64, zero_ns: f64) -> usize {
    let read = measured_ns - zero_ns;
    let want = target_ns - zero_ns;
    let factor = if read > 0.0 {
        (want / read).clamp(1.0 / MAX_STEP_FACTOR, MAX_STEP_FACTOR)
    } else {
        MAX_STEP_FACTOR
    };
    words(bytes as f64 * factor)
}

/// The span (to the block that ended last) of one `stream_grid` launch of `shape` reading
/// `bytes` of `prep`'s arena where its cursor is, alone on an idle GPU, ns (on slot 0 of
/// `slots`).
fn lone_span(
    e: &Engine,
    prep: &mut Prepared,
    bytes: usize,
    shape: LaunchShape,
    slots: &mut DeviceBuffer<u64>,
) -> memra_engine::Result<f64> {
    e.stream_grid_from(&prep.arena, &mut prep.cursor, bytes, shape, slots, 0)?;
    let w = e.dtoh(slots)?; // waits for the launch
    Ok(Engine::stream_span(&w[..Engine::SPIN_SLOT_WORDS]).unwrap_or(0) as f64)
}

/// Measures a shape: medians of [`SAMPLES`] lone launches at zero bytes and at a probe read
/// (each read from fresh memory: the cursor moves on).
fn measure_shape(
    e: &Engine,
    prep: &mut Prepared,
    shape: LaunchShape,
    slots: &mut DeviceBuffer<u64>,
) -> memra_engine::Result<ShapeRate> {
    let probe_bytes = shape
        .threads()
        .saturating_mul(PROBE_BYTES_PER_THREAD as u64);
    let probe = words(probe_bytes.min(PROBE_MAX_BYTES as u64) as f64);
    let (mut zero, mut read) = (vec![], vec![]);
    for _ in 0..SAMPLES {
        zero.push(lone_span(e, prep, 0, shape, slots)?);
        read.push(lone_span(e, prep, probe, shape, slots)?);
    }
    let zero_ns = median(&zero);
    let read_ns = (median(&read) - zero_ns).max(1.0);
    Ok(ShapeRate {
        zero_ns,
        bytes_per_ns: probe as f64 / read_ns,
    })
}

/// Sizes every streaming step of `prep` on `e` (see the module docs). `gap_ns`: the front-end
/// gap every graph node is planned with ([`crate::stand_in::StandInPlan::gap_us`]). `prep` is
/// one stream's part of a walk: its steps are sized in a graph of that part alone, so a walk
/// on several streams keeps what its streams do to each other in the replay. Where `fit`
/// fits this part's spins (`SpinFit::Streamed`: only where streaming stand-ins are left once
/// those that cannot stream have reverted to spins), each graph round also shifts the timed
/// spins ([`fit_spins`]), in rounds of their own where nothing streams.
pub(crate) fn size(
    e: &Engine,
    prep: &mut Prepared,
    gap_ns: f64,
    fit: SpinFit,
) -> anyhow::Result<()> {
    let shapes: Vec<LaunchShape> = prep
        .steps
        .iter()
        .filter_map(|st| match *st {
            Step::Stream { shape, .. } => Some(shape),
            _ => None,
        })
        .collect();
    if shapes.is_empty() && !fit.fits(false) {
        // Nothing to size (a lane of paced stand-ins only): no lone launches, no graph rounds.
        return Ok(());
    }
    let mut rates: HashMap<ShapeKey, ShapeRate> = HashMap::new();
    let mut scratch = e.zeros::<u64>(Engine::SPIN_SLOT_WORDS)?;
    for shape in shapes {
        if let std::collections::hash_map::Entry::Vacant(v) = rates.entry((shape.grid, shape.block))
        {
            v.insert(measure_shape(e, prep, shape, &mut scratch)?);
        }
    }
    let zero_of = |shape: LaunchShape| rates[&(shape.grid, shape.block)].zero_ns;
    let streams = !rates.is_empty();
    if streams {
        revert_unreachable(&mut prep.steps, zero_of);
        for st in prep.steps.iter_mut() {
            if let Step::Stream {
                recorded_ns,
                ramp_ns,
                ref mut bytes,
                shape,
                ..
            } = *st
            {
                *bytes = first_size(rates[&(shape.grid, shape.block)], recorded_ns - ramp_ns);
            }
        }
        for i in 0..prep.steps.len() {
            if matches!(prep.steps[i], Step::Stream { .. }) {
                prep.issue_step(e, i)?;
                e.stream().synchronize()?;
            }
        }
        let lone: Vec<Option<f64>> = read_slots(e, prep)?
            .iter()
            .map(|m| m.map(|m| m.span_ns))
            .collect();
        correct(&mut prep.steps, &lone, zero_of);
    }
    let fit_spins = fit.fits(
        prep.steps
            .iter()
            .any(|st| matches!(st, Step::Stream { .. })),
    );
    for _ in 0..GRAPH_ROUNDS {
        let graph = in_graph(e, prep)?;
        if streams {
            set_ramps(&mut prep.steps, &graph, gap_ns);
            revert_unreachable(&mut prep.steps, zero_of);
            let spans: Vec<Option<f64>> = graph.iter().map(|g| g.map(|g| g.span_ns)).collect();
            correct(&mut prep.steps, &spans, zero_of);
        }
        if fit_spins {
            self::fit_spins(&mut prep.steps, &prep.node_targets, &graph);
        }
    }
    Ok(())
}

/// Shifts every timed spin (`Step::Spin` asking for more than nothing) by the median of what
/// their graph nodes (`graph`) cost over their targets (`targets`, by step: planned recorded
/// duration + gap), so that a stream's spins cost as planned in its graph. One shift for all
/// of them: a spin's node overrun comes from the stream around it (slots evicted by what
/// streamed before it), not from its own request, and one median over many nodes is not
/// thrown by a noisy one. A spin keeps asking for at least 1 ns (it stays timed).
pub(crate) fn fit_spins(steps: &mut [Step], targets: &[Option<f64>], graph: &[Option<InGraph>]) {
    let over: Vec<f64> = steps
        .iter()
        .zip(targets)
        .zip(graph)
        .filter_map(|((st, target), g)| match st {
            Step::Spin { ns, .. } if *ns > 0 => Some(g.as_ref()?.node_ns - (*target)?),
            _ => None,
        })
        .filter(|d| d.is_finite())
        .collect();
    if over.is_empty() {
        return;
    }
    let shift = median(&over);
    for (st, target) in steps.iter_mut().zip(targets) {
        if let (Step::Spin { ns, .. }, Some(_)) = (st, target) {
            if *ns > 0 {
                *ns = (*ns as f64 - shift).round().max(1.0) as u64;
            }
        }
    }
}

/// Fits every paced step of `prep` to its shape: each is launched alone, and one whose read
/// overran its span by more than [`MIN_READ_NS`] (a grid of few blocks cannot read as fast as
/// the kernel it stands in for did) reads less, in proportion, for at most [`PACE_ROUNDS`]
/// rounds: its time stays the recorded one, its load as near the recorded as its shape allows.
pub(crate) fn fit_paced(e: &Engine, prep: &mut Prepared) -> anyhow::Result<()> {
    let paced: Vec<usize> = (0..prep.steps.len())
        .filter(|&i| matches!(prep.steps[i], Step::Paced { .. }))
        .collect();
    for _ in 0..PACE_ROUNDS {
        for &i in &paced {
            prep.issue_step(e, i)?;
            e.stream().synchronize()?;
        }
        let spans = read_slots(e, prep)?;
        let mut over = false;
        for &i in &paced {
            if let (Step::Paced { bytes, pace, .. }, Some(m)) = (&mut prep.steps[i], spans[i]) {
                let target = pace.ns as f64;
                if m.span_ns > target + MIN_READ_NS {
                    *bytes = words(*bytes as f64 * target / m.span_ns);
                    over = true;
                }
            }
        }
        if !over {
            break;
        }
    }
    Ok(())
}

/// What one timed step showed: its start on the GPU's global timer and its span (a streaming
/// step's to the block that ended last), ns. The start stays an integer: the timer counts ns
/// since the epoch (~1.8e18), which an `f64` holds only to the nearest 256 ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Measured {
    pub start_ns: u64,
    pub span_ns: f64,
}

/// Each step's last [`Measured`] from `prep`'s slots; `None` for steps that stamp nothing.
fn read_slots(e: &Engine, prep: &Prepared) -> memra_engine::Result<Vec<Option<Measured>>> {
    prep.per_step(e, |st, words| {
        let words = words?;
        let (span, end) = (words[2], words[3]);
        let start = end.checked_sub(span).filter(|_| end > 0)?;
        let span = match st {
            Step::Stream { .. } | Step::Paced { .. } => Engine::stream_span(words)?,
            _ => span,
        };
        Some(Measured {
            start_ns: start,
            span_ns: span as f64,
        })
    })
}

/// A step in the walk's graph: its span and its node time (the next step's start − its own,
/// NaN where the next step stamps no start or there is none), ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct InGraph {
    pub node_ns: f64,
    pub span_ns: f64,
}

/// Captures `prep` as one graph and replays it [`GRAPH_REPLAYS`] times; each step's medians
/// over the replays after the first.
fn in_graph(e: &Engine, prep: &mut Prepared) -> anyhow::Result<Vec<Option<InGraph>>> {
    let n = prep.steps.len();
    let graph = e.capture_graph(|e| {
        prep.issue_steps(e, 0..n, |ns, shape, slot, slots| {
            e.spin_grid(ns, shape, slots, slot)
        })
    })?;
    let mut samples = Vec::with_capacity(GRAPH_REPLAYS);
    for k in 0..GRAPH_REPLAYS {
        graph.launch()?;
        e.stream().synchronize()?;
        if k > 0 {
            samples.push(node_times(&read_slots(e, prep)?));
        }
    }
    Ok((0..n)
        .map(|i| {
            let got: Vec<InGraph> = samples.iter().filter_map(|s| s[i]).collect();
            let of = |f: fn(&InGraph) -> f64| median(&got.iter().map(f).collect::<Vec<_>>());
            (!got.is_empty()).then(|| InGraph {
                node_ns: of(|g| g.node_ns),
                span_ns: of(|g| g.span_ns),
            })
        })
        .collect())
}

/// Each timed step's [`InGraph`] from one replay's starts and spans.
pub(crate) fn node_times(m: &[Option<Measured>]) -> Vec<Option<InGraph>> {
    (0..m.len())
        .map(|i| {
            let here = m[i]?;
            let next = m.get(i + 1).copied().flatten();
            Some(InGraph {
                node_ns: next.map_or(f64::NAN, |n| {
                    (i128::from(n.start_ns) - i128::from(here.start_ns)) as f64
                }),
                span_ns: here.span_ns,
            })
        })
        .collect()
}

/// Sets each streaming step's `ramp_ns` to what its graph node cost beyond its span, less the
/// front-end gap `gap_ns` every node is planned with: the part of its recorded duration its
/// read must leave out. A step whose node time is unknown takes the median of its shape's
/// known ones, else keeps its ramp.
pub(crate) fn set_ramps(steps: &mut [Step], graph: &[Option<InGraph>], gap_ns: f64) {
    let mut by_shape: HashMap<ShapeKey, Vec<f64>> = HashMap::new();
    let mut own = vec![None; steps.len()];
    for (i, st) in steps.iter().enumerate() {
        if let (Step::Stream { shape, .. }, Some(g)) = (st, graph[i]) {
            if g.node_ns.is_finite() {
                let r = g.node_ns - gap_ns - g.span_ns;
                own[i] = Some(r);
                by_shape
                    .entry((shape.grid, shape.block))
                    .or_default()
                    .push(r);
            }
        }
    }
    for (i, st) in steps.iter_mut().enumerate() {
        if let Step::Stream { shape, ramp_ns, .. } = st {
            let shared = by_shape.get(&(shape.grid, shape.block)).map(|v| median(v));
            if let Some(r) = own[i].or(shared) {
                *ramp_ns = r;
            }
        }
    }
}

/// Streaming steps whose target span (recorded − ramp) is too close to their shape's zero-byte
/// span (`zero_of`) to be read revert to their spin.
fn revert_unreachable(steps: &mut [Step], zero_of: impl Fn(LaunchShape) -> f64) {
    for st in steps.iter_mut() {
        if let Step::Stream {
            recorded_ns,
            ramp_ns,
            shape,
            slot,
            fallback,
            ..
        } = *st
        {
            if recorded_ns - ramp_ns < zero_of(shape) + MIN_READ_NS {
                *st = spin_step(fallback, shape, slot);
            }
        }
    }
}

/// Rescales each streaming step's read so that its span (`spans`, by step) becomes its
/// target, recorded − ramp.
fn correct(steps: &mut [Step], spans: &[Option<f64>], zero_of: impl Fn(LaunchShape) -> f64) {
    for (st, span) in steps.iter_mut().zip(spans) {
        if let (
            Step::Stream {
                recorded_ns,
                ramp_ns,
                bytes,
                shape,
                ..
            },
            Some(span),
        ) = (st, span)
        {
            *bytes = corrected(*bytes, *span, *recorded_ns - *ramp_ns, zero_of(*shape));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(bytes: usize) -> Step {
        Step::Stream {
            recorded_ns: 3000.0,
            ramp_ns: 680.0,
            bytes,
            shape: LaunchShape::linear(1, 32),
            slot: 0,
            fallback: crate::stand_in::Choice::Spin(0),
        }
    }

    fn at(start_ns: u64, span_ns: f64) -> Option<Measured> {
        Some(Measured { start_ns, span_ns })
    }

    #[test]
    fn node_times_run_to_the_next_start() {
        // On the epoch clock (~1.8e18 ns), where an f64 of a start rounds to 256 ns.
        let t0: u64 = 1_764_842_000_123_456_789;
        let g = node_times(&[
            at(t0, 400.0),
            at(t0 + 500, 300.0),
            None,
            at(t0 + 2000, 100.0),
        ]);
        assert_eq!(g[0].unwrap().node_ns, 500.0);
        assert_eq!(g[0].unwrap().span_ns, 400.0);
        assert!(g[1].unwrap().node_ns.is_nan(), "next step stamps nothing");
        assert!(g[2].is_none());
        assert!(g[3].unwrap().node_ns.is_nan(), "last step");
    }

    #[test]
    fn ramps_are_node_beyond_span_less_the_gap_else_the_shapes_median() {
        let mut steps = vec![
            stream(100),
            stream(100),
            stream(100),
            Step::Memset {
                bytes: 4,
                target: 0,
            },
        ];
        let g = |node_ns, span_ns| Some(InGraph { node_ns, span_ns });
        let graph = [
            g(3000.0, 2000.0),
            g(3500.0, 2100.0),
            g(f64::NAN, 2000.0),
            None,
        ];
        set_ramps(&mut steps, &graph, 100.0);
        let ramps: Vec<f64> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Stream { ramp_ns, .. } => Some(*ramp_ns),
                _ => None,
            })
            .collect();
        // 3000 − 100 − 2000; 3500 − 100 − 2100; unknown: the median of 900 and 1300.
        assert_eq!(ramps, vec![900.0, 1300.0, 1100.0]);
    }

    #[test]
    fn spins_shift_by_the_median_overrun_of_their_nodes_and_stay_timed() {
        let spin = |ns| Step::Spin {
            ns,
            shape: LaunchShape::linear(1, 32),
            slot: 0,
        };
        let mut steps = vec![
            spin(1000),
            spin(2000),
            spin(50),
            spin(0),
            stream(100),
            spin(3000),
        ];
        let targets = [
            Some(1700.0),
            Some(2700.0),
            Some(800.0),
            Some(700.0),
            Some(3000.0),
            Some(3700.0),
        ];
        let g = |node_ns| {
            Some(InGraph {
                node_ns,
                span_ns: 0.0,
            })
        };
        // Overruns 100, 300, 50 (the empty spin's and the stream's not counted; the last
        // step's node is unknown): median 100.
        let graph = [
            g(1800.0),
            g(3000.0),
            g(850.0),
            g(900.0),
            g(3500.0),
            g(f64::NAN),
        ];
        let requests = |steps: &[Step]| -> Vec<u64> {
            steps
                .iter()
                .filter_map(|s| match s {
                    Step::Spin { ns, .. } => Some(*ns),
                    _ => None,
                })
                .collect()
        };
        fit_spins(&mut steps, &targets, &graph);
        assert_eq!(requests(&steps), vec![900, 1900, 1, 0, 2900]);
        // Nothing measured: nothing moves.
        fit_spins(&mut steps, &targets, &[None, None, None, None, None, None]);
        assert_eq!(requests(&steps), vec![900, 1900, 1, 0, 2900]);
    }

    #[test]
    fn steps_too_short_to_read_revert_to_their_spin() {
        let mut steps = vec![stream(100), stream(100)];
        if let Step::Stream { ramp_ns, .. } = &mut steps[1] {
            *ramp_ns = 2500.0; // 3000 − 2500 = 500 ns: under zero span + MIN_READ_NS
        }
        revert_unreachable(&mut steps, |_| 400.0);
        assert!(matches!(steps[0], Step::Stream { .. }));
        assert!(matches!(steps[1], Step::Spin { ns: 0, slot: 0, .. }));
    }
}
