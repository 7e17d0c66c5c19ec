//! Sizing streaming stand-ins: how many bytes each one reads so that, launched alone on an
//! idle GPU as the recording launched it, a profiler would see it run as long as the recorded
//! kernel.
//!
//! A streaming stand-in (`stream_grid`, the recorded grid and block) reads a span of a large
//! arena, each step its own span, so every replay reads from device memory as a decode step
//! reads its weights. How long such a read takes depends on the shape (a one-block grid reads
//! at a few GB/s, a full one at the memory's speed) and is not quite linear in the bytes, so
//! each shape's zero-byte duration and read rate are measured first, each step is sized from
//! them, and then every step is measured where it will run and corrected, a few rounds. A step
//! whose target is too close to its shape's zero-byte duration reverts to its spin.
//!
//! Spans run to the block that ended last: blocks that stream end over a spread the
//! highest-index block (the spin's end marker) does not mark. With that span, profiled −
//! span is close to the spin's, shape for shape (CUPTI on an H200, lone launches, 64 blocks:
//! 0.83–0.90 µs streaming 0–16 MiB vs 0.86 spinning; 132 blocks: 0.93–1.09 vs 1.02; but 1024
//! blocks 1.06–1.15 vs 1.38; `scripts/stream_cupti.py`), which the stand-in plan knows per
//! shape.

use std::collections::HashMap;

use memra_engine::{DeviceBuffer, Engine, LaunchShape};

use crate::prepared::{spin_step, Prepared, Step};
use crate::stand_in::ShapeKey;
use crate::stats::median;

/// Bytes of the arena streaming stand-ins read from: far larger than any current GPU's L2
/// cache, so a span read again a walk later has long been evicted.
pub const ARENA_BYTES: usize = 1 << 30;
/// Arena offsets are aligned to this many bytes.
const ALIGN: usize = 256;
/// Correction rounds after the first sizing.
const ROUNDS: usize = 3;
/// Lone launches each shape is measured with.
const SAMPLES: usize = 5;
/// The read each shape's rate is measured at: this many bytes per thread, at most
/// [`PROBE_MAX_BYTES`].
const PROBE_BYTES_PER_THREAD: usize = 1024;
const PROBE_MAX_BYTES: usize = 64 << 20;
/// A step streams only if its target span exceeds its shape's zero-byte span by this much, ns.
const MIN_READ_NS: f64 = 200.0;
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

/// Lays the steps' reads one after another in the arena (aligned), starting over at its start
/// when the next read would run past its end.
pub(crate) fn assign_offsets(steps: &mut [Step]) {
    let mut at = 0usize;
    for st in steps {
        if let Step::Stream { bytes, offset, .. } = st {
            if at + *bytes > ARENA_BYTES {
                at = 0;
            }
            *offset = at;
            at = (at + *bytes).div_ceil(ALIGN) * ALIGN;
        }
    }
}

/// The span (to the block that ended last) of one `stream_grid` launch of `shape` reading
/// `bytes` from `offset`, alone on an idle GPU, ns (on slot 0 of `slots`).
fn lone_span(
    e: &Engine,
    arena: &DeviceBuffer<u8>,
    offset: usize,
    bytes: usize,
    shape: LaunchShape,
    slots: &mut DeviceBuffer<u64>,
) -> memra_engine::Result<f64> {
    e.stream_grid(arena, offset, bytes, shape, slots, 0)?;
    let w = e.dtoh(slots)?; // waits for the launch
    Ok(Engine::stream_span(&w[..Engine::SPIN_SLOT_WORDS]).unwrap_or(0) as f64)
}

/// Measures a shape: medians of [`SAMPLES`] lone launches at zero bytes and at a probe read,
/// each read from a fresh offset.
fn measure_shape(
    e: &Engine,
    arena: &DeviceBuffer<u8>,
    shape: LaunchShape,
    slots: &mut DeviceBuffer<u64>,
) -> memra_engine::Result<ShapeRate> {
    let probe_bytes = shape
        .threads()
        .saturating_mul(PROBE_BYTES_PER_THREAD as u64);
    let probe = words(probe_bytes.min(PROBE_MAX_BYTES as u64) as f64);
    let (mut zero, mut read) = (vec![], vec![]);
    for i in 0..SAMPLES {
        zero.push(lone_span(e, arena, 0, 0, shape, slots)?);
        // SAMPLES probes of at most PROBE_MAX_BYTES fit in the arena.
        let offset = i * probe.div_ceil(ALIGN) * ALIGN;
        read.push(lone_span(e, arena, offset, probe, shape, slots)?);
    }
    let zero_ns = median(&zero);
    let read_ns = (median(&read) - zero_ns).max(1.0);
    Ok(ShapeRate {
        zero_ns,
        bytes_per_ns: probe as f64 / read_ns,
    })
}

/// Sizes every streaming step of `prep` on `e` (see the module docs): its span to the last
/// block to end, + what a profiler sees beyond a span of its shape (the step's `ramp_ns`,
/// from [`crate::stand_in::StandInPlan::ramp_ns`]), is to be the recorded duration.
pub(crate) fn size(e: &Engine, prep: &mut Prepared) -> anyhow::Result<()> {
    let mut scratch = e.zeros::<u64>(Engine::SPIN_SLOT_WORDS)?;
    let mut rates: HashMap<ShapeKey, ShapeRate> = HashMap::new();
    for st in &prep.steps {
        if let Step::Stream { shape, .. } = *st {
            let key = (shape.grid, shape.block);
            if let std::collections::hash_map::Entry::Vacant(v) = rates.entry(key) {
                v.insert(measure_shape(e, &prep.arena, shape, &mut scratch)?);
            }
        }
    }
    let rate_of = |shape: LaunchShape| rates[&(shape.grid, shape.block)];
    for st in prep.steps.iter_mut() {
        if let Step::Stream {
            recorded_ns,
            ramp_ns,
            ref mut bytes,
            shape,
            slot,
            fallback,
            ..
        } = *st
        {
            let rate = rate_of(shape);
            let target = recorded_ns - ramp_ns;
            if target < rate.zero_ns + MIN_READ_NS {
                *st = spin_step(fallback, shape, slot);
            } else {
                *bytes = first_size(rate, target);
            }
        }
    }
    for _ in 0..ROUNDS {
        assign_offsets(&mut prep.steps);
        for i in 0..prep.steps.len() {
            if matches!(prep.steps[i], Step::Stream { .. }) {
                prep.issue_step(e, i)?;
                e.stream().synchronize()?;
            }
        }
        let w = e.dtoh(&prep.slots)?;
        for st in prep.steps.iter_mut() {
            if let Step::Stream {
                recorded_ns,
                ramp_ns,
                bytes,
                shape,
                slot,
                ..
            } = st
            {
                let words = &w[*slot * Engine::SPIN_SLOT_WORDS..][..Engine::SPIN_SLOT_WORDS];
                let span = Engine::stream_span(words).unwrap_or(0) as f64;
                *bytes = corrected(
                    *bytes,
                    span,
                    *recorded_ns - *ramp_ns,
                    rate_of(*shape).zero_ns,
                );
            }
        }
    }
    assign_offsets(&mut prep.steps);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(bytes: usize) -> Step {
        Step::Stream {
            recorded_ns: 3000.0,
            ramp_ns: 680.0,
            bytes,
            offset: 7,
            shape: LaunchShape::linear(1, 32),
            slot: 0,
            fallback: crate::stand_in::Choice::Spin(0),
        }
    }

    fn offsets(steps: &[Step]) -> Vec<usize> {
        steps
            .iter()
            .filter_map(|s| match s {
                Step::Stream { offset, .. } => Some(*offset),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn sizes_are_whole_words_within_the_arena() {
        let rate = ShapeRate {
            zero_ns: 1000.0,
            bytes_per_ns: 3000.0,
        };
        assert_eq!(first_size(rate, 2000.0), 3_000_000 / 16 * 16);
        assert_eq!(first_size(rate, 500.0), 16, "at least one word");
        assert_eq!(first_size(rate, 1e12), ARENA_BYTES);
        assert_eq!(words(f64::NAN), 16);
    }

    #[test]
    fn corrections_scale_the_read_part_and_are_bounded() {
        // Read 1600 ns beyond a 400 ns zero span; 800 ns wanted: half the bytes.
        assert_eq!(corrected(1 << 20, 2000.0, 1200.0, 400.0), 1 << 19);
        // A measurement no longer than the zero span grows the read by the bound.
        assert_eq!(corrected(1 << 20, 300.0, 1200.0, 400.0), 4 << 20);
        // Far too long: shrunk by the bound, not to nothing.
        assert_eq!(corrected(1 << 20, 1e9, 1200.0, 400.0), 1 << 18);
    }

    #[test]
    fn offsets_follow_each_other_and_wrap() {
        let half = ARENA_BYTES / 2;
        let mut steps = vec![
            stream(100),
            Step::Memset { bytes: 4 },
            stream(half),
            stream(half),
            stream(16),
        ];
        assign_offsets(&mut steps);
        // 100 bytes end at 256 (aligned); a second half does not fit after the first: wrap.
        assert_eq!(offsets(&steps), vec![0, 256, 0, half]);
    }
}
