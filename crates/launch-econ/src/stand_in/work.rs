//! Work-doing stand-ins ([`crate::footprint::L2Resident::Work`]): which element-wise kernels
//! stand in by `memra_engine::Engine::elementwise_l2`, and the floor that keeps the rest on
//! the default stand-ins.
//!
//! Such a stand-in moves its kernel's bytes before it waits out the kernel's time, so it can
//! last no less than that work takes on the device. Where that alone outlasts the kernel's
//! node (a grid of few blocks over a small result, whose loads and stores outlast a kernel
//! recorded near the launch floor; a wide result that this kernel moves slower than the
//! recorded one did), the stand-in would price the walk by itself, not by the kernel: on an
//! H100, stand-ins of 2 MiB bf16 adds recorded at 1.9 µs ran 2.9–3.5 µs in their graph. Those
//! kernels keep the default stand-in, and their stream's sub-floor carry.

use memra_engine::{Engine, LaunchShape};

use super::{measure::node_us, StandInPlan, ARENA_BYTES};
use crate::trace::{is_element_wise, Op, OpKind, Walk};

/// A work-doing stand-in as it launches: its shape (the paced one, [`StandInPlan::paced_shape`]),
/// the bytes of its result and how many inputs of that size it sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WorkKey {
    pub shape: LaunchShape,
    pub result_bytes: usize,
    pub inputs: u32,
}

impl StandInPlan {
    /// What `op`'s stand-in sums into its result where it does its work instead of a paced
    /// read ([`super::PacedReads::InL2Work`], an element-wise kernel with recorded inputs):
    /// the result's bytes (its largest input's, in whole 16-byte words) and how many inputs
    /// of that size its recorded inputs come to (at least one), within what there is to read.
    pub fn elementwise_work(&self, op: &Op) -> Option<(usize, u32)> {
        if !(self.paced.writes() && is_element_wise(&op.name)) {
            return None;
        }
        let largest = op.largest_input_bytes.filter(|b| *b > 0.0)?;
        let inputs = (op.input_bytes? / largest).round().clamp(1.0, 16.0) as u32;
        let result = ((largest / 16.0).ceil() as usize * 16).min(ARENA_BYTES / inputs as usize);
        Some((result / 16 * 16, inputs))
    }

    /// `op`'s work-doing stand-in launched as `shape`, where it has one.
    pub fn work_key(&self, op: &Op, shape: LaunchShape) -> Option<WorkKey> {
        self.elementwise_work(op)
            .map(|(result_bytes, inputs)| WorkKey {
                shape,
                result_bytes,
                inputs,
            })
    }

    /// Whether the stand-in `key` can last as short as a node planned at `planned_ns` (plus
    /// the gap, as every stand-in is planned): its node asked for no wait, as measured
    /// ([`measure_work_nodes`]), is no longer. One not measured is taken to fit.
    pub fn work_fits(&self, key: &WorkKey, planned_ns: f64) -> bool {
        self.work_nodes
            .get(key)
            .is_none_or(|&us| us <= planned_ns / 1e3 + self.gap_us)
    }
}

/// Measures, on `e`, the graph-node time of every work-doing stand-in `walk` asks of `plan`
/// with no wait ([`node_us`]), into [`StandInPlan::work_nodes`]. Each runs over the same
/// bytes every node, which the L2 keeps, as in the replay.
pub fn measure_work_nodes(e: &Engine, walk: &Walk, plan: &mut StandInPlan) -> anyhow::Result<()> {
    let mut keys: Vec<WorkKey> = asked(walk, plan).map(|(_, k)| k).collect();
    keys.sort_by_key(|k| (k.result_bytes, k.inputs, k.shape.grid, k.shape.block));
    keys.dedup();
    let Some(read) = keys
        .iter()
        .map(|k| k.result_bytes * k.inputs as usize)
        .max()
    else {
        return Ok(());
    };
    let written = keys.iter().map(|k| k.result_bytes).max().unwrap_or(0);
    let src = e.zeros::<u8>(read)?;
    let mut dst = e.zeros::<u8>(written)?;
    let mut slots = e.zeros::<u64>(Engine::SPIN_SLOT_WORDS)?;
    for k in keys {
        let us = node_us(e, |eng| {
            eng.elementwise_l2(
                &src,
                &mut dst,
                k.result_bytes,
                k.inputs,
                0,
                k.shape,
                &mut slots,
                0,
            )
        })?;
        plan.work_nodes.insert(k, us);
    }
    Ok(())
}

/// What the floor of [`StandInPlan::work_fits`] did on `walk`: how many of its work-doing
/// stand-ins kept the default one, and the nodes of theirs against the kernels', as a note
/// for the replay's warnings; `None` where none did.
pub fn work_floor_note(walk: &Walk, plan: &StandInPlan) -> Option<String> {
    let mut count = 0usize;
    let mut left: Vec<(f64, f64)> = Vec::new();
    for (op, key) in asked(walk, plan) {
        count += 1;
        let planned_ns = plan.planned_ns(op);
        if !plan.work_fits(&key, planned_ns) {
            let node = plan.work_nodes.get(&key).copied().unwrap_or(f64::NAN);
            left.push((node, planned_ns / 1e3 + plan.gap_us));
        }
    }
    if left.is_empty() {
        return None;
    }
    let over: Vec<f64> = left.iter().map(|(n, t)| n - t).collect();
    let lo = over.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = over.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(format!(
        "--l2-resident work: {} of the {count} element-wise kernels that would do their work keep the default stand-in: doing it takes their stand-in {lo:.2}-{hi:.2} µs longer than their planned node, which it must not outlast",
        left.len()
    ))
}

/// The kernels of `walk` that `plan` gives a work-doing stand-in (a paced read of an
/// element-wise kernel, [`super::PacedReads::InL2Work`]), each with its stand-in's key.
fn asked<'a>(walk: &'a Walk, plan: &'a StandInPlan) -> impl Iterator<Item = (&'a Op, WorkKey)> {
    walk.kernels().filter_map(move |op| {
        let OpKind::Kernel { grid, block } = op.kind else {
            return None;
        };
        plan.paced_bytes(op)?;
        let key = plan.work_key(op, plan.paced_shape(LaunchShape::of(grid, block), op))?;
        Some((op, key))
    })
}
