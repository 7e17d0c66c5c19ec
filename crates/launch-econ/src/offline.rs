//! The graph step of a recorded walk priced without a GPU, from a profile of the device:
//! each node's recorded duration plus what the profile measured a graph node to add, streams
//! side by side as the trace recorded their waits (sharing the SMs and the memory where the
//! device's limits are known), the step to the upper level of per-node cost by the memory a
//! replay touches, and one graph launch. `replay --summary` and `predict` price with it; the
//! GPU replay (`crate::replay`) measures what this estimates.

use std::collections::HashMap;

use crate::footprint::{within_l2, Footprint, FootprintSource, LevelStep, UNKNOWN_SHARE};
use crate::lanes::{Basis, Schedule, Span};
use crate::model::ModelInputs;
use crate::occupancy::SmLimits;
use crate::sharing::{lay_out_sharing_counted, Bandwidths, NodeCost, SharedLayOut};
use crate::trace::{CopyDirection, Op, OpKind, Walk};
use crate::wide_grids::WideGrids;

mod demand;
use demand::{held_share, known_gb_s, reads_from_l2, resident_share, waits_on_loads, written_gb_s};

/// What the offline model knows of the device: the profile's inputs and, where known, its
/// SM limits (with `sharing`, kernels side by side that hold more than the whole GPU share
/// it, see [`crate::sharing`]), its grid table (wide kernels' nodes cost what it says beyond their
/// recorded durations, see [`crate::wide_grids`]) and its L2 (a walk that touches more than
/// it steps further to the upper level, see [`crate::footprint`]).
#[derive(Debug, Clone, Copy)]
pub struct OfflineDevice<'a> {
    pub inputs: &'a ModelInputs,
    pub sms: Option<&'a SmLimits>,
    /// Whether kernels side by side share the SMs (with `sms`); off, they overlap perfectly.
    pub sharing: bool,
    pub grids: Option<&'a WideGrids>,
    pub l2_bytes: Option<f64>,
}

impl<'a> OfflineDevice<'a> {
    /// The profile's inputs alone.
    pub fn of(inputs: &'a ModelInputs) -> OfflineDevice<'a> {
        OfflineDevice {
            inputs,
            sms: None,
            sharing: true,
            grids: None,
            l2_bytes: None,
        }
    }

    /// The same device with kernels side by side overlapping perfectly, whatever they hold.
    pub fn without_sharing(self) -> OfflineDevice<'a> {
        OfflineDevice {
            sharing: false,
            ..self
        }
    }

    /// The memory one replay of `walk` touches, estimated (see [`crate::footprint`]).
    pub fn footprint(&self, walk: &Walk) -> Footprint {
        Footprint::of(walk, self.inputs.bandwidth_gb_s(), self.sms.map(|s| s.sms))
    }

    /// GPU time every node of `walk`'s graph costs at the upper level beyond the lower, µs:
    /// the profile's larger step where the walk touches more than the L2 holds and the
    /// profile measured it, else its step for a graph of empty kernels (0 without either).
    /// A walk on one stream without shapes whose kernels could have read past the line (an
    /// upper bound), while its copies and memsets alone do not, takes the middle of the two:
    /// which it is the trace does not say (see [`crate::footprint::replay_memory_unknown`], which
    /// the replay prices the same way). On several streams such a walk keeps the larger step:
    /// without shapes the model prices no memory load between its streams, which already
    /// leaves it low.
    pub fn level_step_us(&self, walk: &Walk) -> f64 {
        self.level_step(walk).step_us
    }

    /// [`Self::level_step_us`] with the footprint and the L2 it was chosen by, for the report.
    pub fn level_step(&self, walk: &Walk) -> LevelStep {
        self.level_step_with(walk, || on_one_stream(walk))
    }

    /// [`Self::level_step`] where `one_stream` says whether the walk's streams do not run
    /// side by side, asked only where that decides the step (a caller that has the walk's
    /// schedule already need not lay it out again).
    fn level_step_with(&self, walk: &Walk, one_stream: impl FnOnce() -> bool) -> LevelStep {
        let m = self.inputs;
        let footprint = self.footprint(walk);
        let small = m.graph_node_other_stream_us.unwrap_or(0.0);
        let (step, halfway) = match (m.graph_node_other_stream_beyond_l2_us, self.l2_bytes) {
            (Some(beyond), Some(l2)) if footprint.beyond_l2(l2) => {
                // What the trace does say (copies, memsets) may already be past the line.
                if footprint.source == FootprintSource::Durations
                    && !Footprint::stated(walk).beyond_l2(l2)
                    && one_stream()
                {
                    (small + UNKNOWN_SHARE * (beyond - small), true)
                } else {
                    (beyond, false)
                }
            }
            _ => (small, false),
        };
        LevelStep {
            footprint,
            l2_bytes: self.l2_bytes,
            step_us: step.max(0.0),
            halfway,
        }
    }
}

/// Whether `walk`'s streams do not run side by side (one stream, or no recorded waits).
fn on_one_stream(walk: &Walk) -> bool {
    Schedule::of(walk).lanes() <= 1
}

/// The graph step predicted without a GPU, ms: each node occupies its stream for its recorded
/// duration plus the profile's graph node gap, or the replay floor per node, whichever is
/// longer (profiles without a measured gap: the duration alone) — a host↔device copy at
/// least what the profile measured such a copy to add to a graph (see
/// [`crate::copy_nodes`]) — plus the step to the upper level of per-node graph cost (see
/// [`crate::other_stream`] and [`OfflineDevice::level_step_us`]); streams run side by side
/// where the trace recorded the waits between them (the longest chain counts, see
/// [`crate::lanes`]), else one after another; plus one graph launch. The rest of `dev`
/// as [`OfflineDevice`] says.
pub fn graph_step_model(walk: &Walk, dev: &OfflineDevice<'_>) -> f64 {
    ModelledWalk::new(walk, dev).step_ms()
}

/// One walk before the offline model: its schedule and its step to the upper level, found
/// once for every figure `replay --summary` prints of it (each figure lays the walk out again
/// with its own node cost; the schedule and the memory it touches do not change).
pub struct ModelledWalk<'w> {
    walk: &'w Walk,
    dev: OfflineDevice<'w>,
    schedule: Schedule,
    level: LevelStep,
    /// What the walk's lanes hold at once ([`Footprint::inputs_added`]), read once for every
    /// lay-out's L2 test and the streamed floor.
    lanes_data: Footprint,
    /// The step's own lay-out, made once for the step, its waits and its spans.
    step: std::cell::OnceCell<SharedLayOut>,
    /// The lay-out with every kernel at its recorded duration, made once for the unshared
    /// step and each node's time alone.
    unshared: std::cell::OnceCell<SharedLayOut>,
}

impl<'w> ModelledWalk<'w> {
    pub fn new(walk: &'w Walk, dev: &OfflineDevice<'w>) -> ModelledWalk<'w> {
        let schedule = Schedule::of(walk);
        let level = dev.level_step_with(walk, || schedule.lanes() <= 1);
        ModelledWalk {
            walk,
            dev: *dev,
            schedule,
            level,
            lanes_data: Footprint::inputs_added(walk),
            step: std::cell::OnceCell::new(),
            unshared: std::cell::OnceCell::new(),
        }
    }

    /// The graph step's lay-out (at its level), made on first use.
    fn laid_out(&self) -> &SharedLayOut {
        self.step
            .get_or_init(|| self.lay_out(&self.schedule, &self.dev, self.level.step_us))
    }

    /// The lay-out without sharing (at the step's level), made on first use.
    fn laid_out_unshared(&self) -> &SharedLayOut {
        self.unshared.get_or_init(|| {
            let free = self.dev.without_sharing();
            self.lay_out(&self.schedule, &free, self.level.step_us)
        })
    }

    /// Whether the model runs the walk's streams side by side (recorded waits between them).
    pub fn branches(&self) -> bool {
        self.schedule.lanes() > 1
    }

    /// How far the walk's nodes step to the upper level, and why.
    pub fn level_step(&self) -> LevelStep {
        self.level
    }

    /// [`graph_step_model`], ms.
    pub fn step_ms(&self) -> f64 {
        step_ms_of(&self.laid_out().spans, &self.dev)
    }

    /// The least the graph step can take where lanes side by side hold more data than the
    /// whole L2, ms: every kernel's bytes the trace gives (`demand::known_gb_s`: an element-wise or
    /// normalisation kernel's inputs and a result as large as the largest, a GEMM's operands)
    /// moved at device memory's bandwidth, plus one graph launch. Alone, a lane's kernel may
    /// run faster than device memory gives, reading what the kernel before it wrote from the
    /// L2; beside lanes whose data together pass the L2 that is gone, so the lanes take longer
    /// than one after another, and the serial price is no bound (an H100 probe: two lanes of
    /// 4 Mi f32 adds, 96 MiB, 2.38 times one lane). A kernel's bytes count at most what the
    /// profile's L2 figure moves in its recorded time: one that moved more did not read all
    /// its operator was given (a gather from a whole table). `None` for one lane, data
    /// within the L2 or not from recorded shapes, or a profile without device memory's
    /// bandwidth or the L2 figure above it.
    pub fn streamed_floor_ms(&self) -> Option<f64> {
        let bandwidth = self.dev.inputs.bandwidth_gb_s();
        let l2_gb_s = self.dev.inputs.graph_node_beside.map_or(0.0, |c| c.l2_gb_s);
        let l2 = self.dev.l2_bytes?;
        if !self.branches()
            || bandwidth <= 0.0
            || l2_gb_s <= bandwidth
            || !crate::footprint::past_whole_l2(self.lanes_data, l2)
        {
            return None;
        }
        let bytes: f64 = self
            .walk
            .ops
            .iter()
            .map(|o| {
                let o = &*crate::occupancy::working_grid(o);
                known_gb_s(o, l2_gb_s) * o.duration_ns.max(0.0)
            })
            .sum();
        Some((bytes / bandwidth + self.dev.inputs.graph_launch_fixed_us * 1e3) / 1e6)
    }

    /// [`graph_step_model`] at the lower level of per-node graph cost: the lower bound, ms.
    pub fn quiet_ms(&self) -> f64 {
        self.graph_step(&self.schedule, &self.dev, 0.0)
    }

    /// How many kernels [`Self::step_ms`] has wait for room beside a kernel filling every SM
    /// (see [`NodeCost::footing`]).
    pub fn waited_for_room(&self) -> usize {
        self.laid_out().waited_for_room
    }

    /// [`graph_step_model`] with kernels side by side overlapping perfectly, ms.
    pub fn unshared_ms(&self) -> f64 {
        step_ms_of(&self.laid_out_unshared().spans, &self.dev)
    }

    /// [`graph_step_model`] with every stream one after another (in issue order), ms; `None`
    /// where the model does not run the walk's streams side by side.
    pub fn serial_ms(&self) -> Option<f64> {
        self.serial_at(self.level.step_us)
    }

    /// [`Self::serial_ms`] at the lower level of per-node graph cost, ms.
    pub fn serial_quiet_ms(&self) -> Option<f64> {
        self.serial_at(0.0)
    }

    fn serial_at(&self, step_us: f64) -> Option<f64> {
        self.branches().then(|| {
            let serial = self.dev.without_sharing();
            let schedule = Schedule::serialised(self.walk);
            self.graph_step(&schedule, &serial, step_us)
        })
    }

    /// [`graph_step_model`] with the walk's streams side by side, never waiting on each other,
    /// ms: a lower bound for a walk of several streams whose trace records no waits (which the
    /// model runs one after another, an upper bound); `None` for any other walk.
    pub fn independent_ms(&self) -> Option<f64> {
        if self.schedule.basis != Basis::Serialised {
            return None;
        }
        let schedule = Schedule::independent(self.walk)?;
        // At the level of a walk whose streams run side by side, as `--waits none` prices it.
        let level = self.dev.level_step_with(self.walk, || false);
        Some(self.graph_step(&schedule, &self.dev, level.step_us))
    }

    /// Where [`Self::step_ms`] puts each op in the graph step: the schedule's lanes' streams
    /// and each op's (lane, start, end), ns from the step's first node, by op index
    /// (`replay --summary --export-trace`).
    pub fn spans(&self) -> (&Schedule, Vec<Option<Span>>) {
        let by_op = self
            .schedule
            .spans_by_op(&self.laid_out().spans, self.walk.ops.len());
        (&self.schedule, by_op)
    }

    /// Each op's node time with the GPU to itself, ns, by op index (`None` where the lay-out
    /// did not place it): a span of [`Self::spans`] longer than this is what the model adds
    /// beside other lanes' kernels.
    pub fn alone_ns(&self) -> Vec<Option<f64>> {
        self.schedule
            .spans_by_op(&self.laid_out_unshared().spans, self.walk.ops.len())
            .into_iter()
            .map(|s| s.map(|(_, start, end)| end - start))
            .collect()
    }
}

impl ModelledWalk<'_> {
    /// The walk's nodes laid out on `schedule` over `dev` ([`lay_out_on`]).
    fn lay_out(
        &self,
        schedule: &Schedule,
        dev: &OfflineDevice<'_>,
        shared_us: f64,
    ) -> SharedLayOut {
        lay_out_on(schedule, self.walk, self.lanes_data, dev, shared_us)
    }

    /// [`Self::lay_out`]'s graph step, ms.
    fn graph_step(&self, schedule: &Schedule, dev: &OfflineDevice<'_>, shared_us: f64) -> f64 {
        step_ms_of(&self.lay_out(schedule, dev, shared_us).spans, dev)
    }
}

/// The graph step of nodes laid out as `spans`: the last one's end plus one graph launch, ms.
fn step_ms_of(spans: &[Span], dev: &OfflineDevice<'_>) -> f64 {
    let nodes_ns = spans.iter().map(|s| s.2).fold(0.0, f64::max);
    (nodes_ns + dev.inputs.graph_launch_fixed_us * 1e3) / 1e6
}

/// The walk's nodes laid out on `schedule`: each op's (lane, start, end), ns, and how many
/// kernels waited for room beside a kernel filling every SM. `lanes_data`: what its lanes hold
/// at once, which decides whether its element-wise kernels read from the L2.
fn lay_out_on(
    schedule: &Schedule,
    walk: &Walk,
    lanes_data: Footprint,
    dev: &OfflineDevice<'_>,
    shared_us: f64,
) -> SharedLayOut {
    let (m, grids) = (dev.inputs, dev.grids);
    let sms = dev.sms.filter(|_| dev.sharing);
    // Signed: on an H100 a node costs less than its kernel's profiled duration.
    let gap_ns = m.graph_node_gap_us.unwrap_or(0.0) * 1e3;
    let after_copy = after_a_copy(walk);
    let node_ns = |i: usize| {
        let o = &walk.ops[i];
        (o.duration_ns + gap_ns + grids.map_or(0.0, |g| g.op_shift_ns(o)))
            .max(node_floor_ns(o, m))
            .max(copy_node_ns(o, m, after_copy[i]))
            + shared_us * 1e3
    };
    let bandwidth = m.bandwidth_gb_s();
    let small_gb_s = m.graph_node_beside.map_or(0.0, |c| c.small_pair.load_gb_s);
    // Lanes within the L2 that moved no more than a device copy did not keep their data there
    // (an L2 too small for the measurement): no L2 figure then. Kernels within the L2 share
    // the part of it the measured adds wrote, by what they write.
    let l2_gb_s = m.graph_node_beside.map_or(0.0, |c| c.l2_gb_s);
    let bandwidths = Bandwidths {
        device_gb_s: bandwidth,
        l2_gb_s: if l2_gb_s > bandwidth {
            l2_gb_s * crate::l2_lanes::WRITTEN_PART
        } else {
            0.0
        },
    };
    let in_l2 =
        bandwidths.l2_gb_s > 0.0 && dev.l2_bytes.is_some_and(|l2| within_l2(lanes_data, l2));
    let roofline = m
        .gemm_peaks
        .filter(|_| bandwidth > 0.0)
        .map(|p| p.roofline(bandwidth));
    match sms {
        Some(l) if schedule.lanes() > 1 => lay_out_sharing_counted(
            schedule,
            |op| {
                let o = &*crate::occupancy::working_grid(&walk.ops[op]);
                let total = node_ns(op);
                // The kernel's (or device-to-device copy's) recorded time is what other
                // kernels can slow; the rest of the node is the graph's own cost.
                let from_l2 = in_l2 && reads_from_l2(o);
                let gb_s = if from_l2 {
                    written_gb_s(o, bandwidths.l2_gb_s)
                } else {
                    known_gb_s(o, bandwidth)
                };
                let work_ns = if o.is_kernel() || gb_s > 0.0 {
                    o.duration_ns.clamp(0.0, total)
                } else {
                    0.0
                };
                // An element-wise kernel within the L2 holds the others off by what it
                // writes (`gb_s`), and by the SMs its blocks fill only while they run;
                // holding little, it waits on its loads beside other lanes as a small
                // kernel does.
                let share = if !o.is_kernel() {
                    0.0
                } else if from_l2 && crate::trace::is_element_wise(&o.name) {
                    resident_share(o, l, m, roofline.as_ref())
                } else {
                    held_share(o, l, m, roofline.as_ref())
                };
                NodeCost {
                    fixed_ns: total - work_ns,
                    work_ns,
                    share,
                    gb_s,
                    math: roofline.as_ref().map_or(0.0, |r| r.math_share(o)),
                    waits_on_loads: waits_on_loads(o, share, small_gb_s),
                    footing: l.footing(o),
                    from_l2,
                }
            },
            |gb_s, held| {
                m.graph_node_beside
                    .map_or(0.0, |c| c.beside_stretch(gb_s, held))
            },
            |others, among_l2| {
                m.graph_node_beside
                    .map_or(0.0, |c| c.small_stretch(others, among_l2))
            },
            bandwidths,
            m.graph_node_beside.map_or(0.0, |c| c.per_lane_ns()),
        ),
        _ => SharedLayOut {
            spans: schedule.lay_out(node_ns),
            waited_for_room: 0,
        },
    }
}

/// The least a node of `o` costs a graph, ns: for a kernel or a memset, an empty kernel's node
/// (the profile's per-node GPU time); a copy has no such floor. A device-to-device copy node
/// is not a kernel node: on the H200, 128 copies of 1.5 KiB recorded at 0.76 µs each added
/// 0.99 µs a node to a graph of adds at the upper level (recorded + gap + step: 1.01), where
/// the empty kernel's floor made them 1.17 (`adds_small_copies`, docs/validation-h200.md).
fn node_floor_ns(o: &Op, m: &ModelInputs) -> f64 {
    match o.kind {
        OpKind::Memcpy { .. } => 0.0,
        OpKind::Kernel { .. } | OpKind::Memset { .. } => m.graph_node_gpu_us * 1e3,
    }
}

/// What the profile says a copy `o` adds to a graph, ns, right after a copy of its direction
/// on its stream (`after_copy`) or not (see [`crate::copy_nodes`]); 0 for other ops, copies
/// between devices, or profiles without copy-node costs.
fn copy_node_ns(o: &Op, m: &ModelInputs, after_copy: bool) -> f64 {
    let (
        OpKind::Memcpy {
            bytes, direction, ..
        },
        Some(c),
    ) = (&o.kind, m.copy_nodes)
    else {
        return 0.0;
    };
    c.node_us(CopyDirection::of(direction), *bytes as f64, after_copy)
        .map_or(0.0, |us| us * 1e3)
}

/// The direction of a copy between host and device; `None` for every other op.
fn host_copy_direction(o: &Op) -> Option<CopyDirection> {
    let OpKind::Memcpy { direction, .. } = &o.kind else {
        return None;
    };
    Some(CopyDirection::of(direction))
        .filter(|d| matches!(d, CopyDirection::HostToDevice | CopyDirection::DeviceToHost))
}

/// For each op of `walk`, whether it is a host copy whose stream's op before it (in the
/// walk's order) was a host copy of the same direction: no kernel hands over to it.
fn after_a_copy(walk: &Walk) -> Vec<bool> {
    let mut last: HashMap<(Option<u32>, Option<u64>), Option<CopyDirection>> = HashMap::new();
    walk.ops
        .iter()
        .map(|o| {
            let direction = host_copy_direction(o);
            let before = last.insert((o.device, o.stream), direction).flatten();
            direction.is_some() && before == direction
        })
        .collect()
}

/// Whether the offline model over `m` gives `o` a memory load (see `known_gb_s`), so that it
/// slows `o` beside other streams' kernels: a kernel it does not can keep the contention its
/// recorded duration holds ([`crate::trace::Walk::uncontend_where`]).
pub fn prices_load(o: &Op, m: &ModelInputs) -> bool {
    known_gb_s(o, m.bandwidth_gb_s()) > 0.0
}

/// Build cost of a graph of the walk's size, ms, from the profile's per-node build cost.
pub fn build_model(walk: &Walk, m: &ModelInputs) -> f64 {
    walk.ops.len() as f64 * m.build_per_node_us / 1e3
}

/// The engine-floor eager step without a GPU, ms: every op issued at the engine's cost, and
/// never below the recorded GPU time.
pub fn engine_floor_model(walk: &Walk, m: &ModelInputs) -> f64 {
    let gpu_ns: f64 = walk.ops.iter().map(|o| o.duration_ns).sum();
    (walk.ops.len() as f64 * m.eager_issue_us * 1e3).max(gpu_ns) / 1e6
}

#[cfg(test)]
pub(crate) mod tests;
