//! A recorded walk replayed by stand-ins (as `replay` does), whose changed kernels record into
//! a different place every other step: each `spin_grid` stand-in writes its span into a slot,
//! and a changed kernel's slot moves between two buffers (A on even steps, B on odd), the way a
//! decode step's kernels move to new KV-cache pages. The check after each way: the span of
//! every long-enough kernel is in the buffer that step names, and the other buffer is untouched.

use anyhow::bail;
use memra_engine::{DeviceBuffer, Engine, Graph};

use super::ChangingWalk;
use crate::node_gap::NodeGap;
use crate::prepared::{Prepared, Step};
use crate::trace::Walk;

/// Stand-ins at least this long (requested ns) can be changed and checked: their span is
/// never 0 on the GPU timer.
const CHECKABLE_NS: u64 = 1000;

pub struct RecordedWalk {
    prep: Prepared,
    /// The second slot buffer (the first is `prep.slots`).
    slots_b: DeviceBuffer<u64>,
    /// A and B back to back, for the windowed stand-in.
    arena: DeviceBuffer<u64>,
    /// One slot index a kernel, in kernel order.
    win: DeviceBuffer<u32>,
    /// Kernel index of each changed stand-in.
    changed: Vec<usize>,
    is_changed: Vec<bool>,
    kernels: usize,
}

impl RecordedWalk {
    /// Prepares `walk`'s stand-ins on `e` (calibrating the spin kernel) and picks
    /// `changed(m)` of its `m` long-enough kernels, spread evenly, to change.
    pub fn new(
        e: &Engine,
        walk: &Walk,
        changed: impl FnOnce(usize) -> Result<usize, String>,
        ramp_ns: f64,
        gap: Option<&NodeGap>,
    ) -> anyhow::Result<RecordedWalk> {
        let prep = Prepared::for_walk(e, walk, ramp_ns, gap)?;
        let long: Vec<usize> = prep
            .steps
            .iter()
            .filter_map(|s| match *s {
                Step::Spin { ns, slot, .. } if ns >= CHECKABLE_NS => Some(slot),
                _ => None,
            })
            .collect();
        let changed = changed(long.len()).map_err(|e| {
            anyhow::anyhow!(
                "{e} (of the trace's {} kernels long enough to change and check, >= {} us)",
                long.len(),
                CHECKABLE_NS / 1000
            )
        })?;
        if changed == 0 || changed > long.len() {
            bail!(
                "the trace has {} kernels long enough (>= {} us) to change and check; --changed asks for {changed}",
                long.len(),
                CHECKABLE_NS / 1000
            );
        }
        let picked: Vec<usize> = (0..changed)
            .map(|j| long[j * long.len() / changed])
            .collect();
        let kernels = prep
            .steps
            .iter()
            .filter(|s| matches!(s, Step::Spin { .. } | Step::Empty { .. }))
            .count();
        let mut is_changed = vec![false; kernels];
        for &k in &picked {
            is_changed[k] = true;
        }
        let words = prep.slots.len();
        Ok(RecordedWalk {
            slots_b: e.zeros(words)?,
            arena: e.zeros(2 * words)?,
            win: e.zeros(kernels.max(1))?,
            prep,
            changed: picked,
            is_changed,
            kernels,
        })
    }

    /// Whether kernel `k` records into buffer B at step `s`.
    fn in_b(&self, k: usize, s: usize) -> bool {
        self.is_changed[k] && s % 2 == 1
    }
}

/// The spans (word 2 of each 4-word slot) of a slot buffer.
fn spans(e: &Engine, b: &DeviceBuffer<u64>) -> anyhow::Result<Vec<u64>> {
    Ok(e.dtoh(b)?
        .chunks(Engine::SPIN_SLOT_WORDS)
        .map(|c| c[2])
        .collect())
}

impl ChangingWalk for RecordedWalk {
    fn kernels(&self) -> usize {
        self.kernels
    }

    fn changed(&self) -> usize {
        self.changed.len()
    }

    fn issue(&mut self, e: &Engine, s: usize, extra: bool) -> memra_engine::Result<()> {
        let flips: Vec<bool> = (0..self.kernels).map(|k| self.in_b(k, s)).collect();
        let all = 0..self.prep.steps.len();
        self.prep.issue_steps(e, all, |ns, shape, slot, slots| {
            let buf = if flips[slot] {
                &mut self.slots_b
            } else {
                slots
            };
            e.spin_grid(ns, shape, buf, slot)
        })?;
        if extra {
            e.noop()?;
        }
        Ok(())
    }

    fn set_params(&mut self, e: &Engine, g: &mut Graph, s: usize) -> memra_engine::Result<()> {
        for st in &self.prep.steps {
            if let Step::Spin { ns, shape, slot } = *st {
                if self.is_changed[slot] {
                    let buf = if s % 2 == 1 {
                        &mut self.slots_b
                    } else {
                        &mut self.prep.slots
                    };
                    let call = e.spin_grid_call(ns, shape, buf, slot)?;
                    g.set_kernel_node(slot, call)?;
                }
            }
        }
        Ok(())
    }

    fn issue_windowed(&mut self, e: &Engine) -> memra_engine::Result<()> {
        let all = 0..self.prep.steps.len();
        self.prep.issue_steps(e, all, |ns, shape, slot, _| {
            e.spin_grid_window(ns, shape, &mut self.arena, &self.win, slot)
        })
    }

    fn write_windows(&mut self, e: &Engine, s: usize) -> memra_engine::Result<()> {
        let slots_per_buffer = self.prep.slots.len() / Engine::SPIN_SLOT_WORDS;
        let win: Vec<u32> = (0..self.kernels)
            .map(|k| (k + usize::from(self.in_b(k, s)) * slots_per_buffer) as u32)
            .collect();
        e.htod_into(&win, &mut self.win)
    }

    fn clear(&mut self, e: &Engine) -> anyhow::Result<()> {
        for b in [&mut self.prep.slots, &mut self.slots_b, &mut self.arena] {
            let bytes = b.num_bytes();
            e.memset_zero(b, bytes)?;
        }
        Ok(())
    }

    fn check(&mut self, e: &Engine, way: &str, s: usize, windowed: bool) -> anyhow::Result<()> {
        let (a, b) = if windowed {
            let all = spans(e, &self.arena)?;
            let half = all.len() / 2;
            (all[..half].to_vec(), all[half..].to_vec())
        } else {
            (spans(e, &self.prep.slots)?, spans(e, &self.slots_b)?)
        };
        for st in &self.prep.steps {
            if let Step::Spin { ns, slot, .. } = *st {
                let (right, wrong) = if self.in_b(slot, s) {
                    (&b, &a)
                } else {
                    (&a, &b)
                };
                if wrong[slot] != 0 || (ns >= CHECKABLE_NS && right[slot] == 0) {
                    bail!(
                        "{way}: kernel {slot} recorded into the wrong buffer at step {s} (spans {} where it should be, {} where it should not)",
                        right[slot],
                        wrong[slot]
                    );
                }
            }
        }
        Ok(())
    }
}
