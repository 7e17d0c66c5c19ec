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
use crate::occupancy::{Footing, SmLimits};
use crate::roofline::Roofline;
use crate::sharing::{lay_out_sharing_counted, Bandwidths, NodeCost, SharedLayOut};
use crate::trace::matmul::{is_blas_kernel, MatmulRole};
use crate::trace::{
    is_attention, is_element_wise, is_normalisation, CopyDirection, Op, OpKind, Walk,
};
use crate::wide_grids::WideGrids;

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
    /// which it is the trace does not say (see [`crate::footprint::replay_reads_less`], which
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
            step: std::cell::OnceCell::new(),
            unshared: std::cell::OnceCell::new(),
        }
    }

    /// The graph step's lay-out (at its level), made on first use.
    fn laid_out(&self) -> &SharedLayOut {
        self.step
            .get_or_init(|| lay_out_on(&self.schedule, self.walk, &self.dev, self.level.step_us))
    }

    /// The lay-out without sharing (at the step's level), made on first use.
    fn laid_out_unshared(&self) -> &SharedLayOut {
        self.unshared.get_or_init(|| {
            let free = self.dev.without_sharing();
            lay_out_on(&self.schedule, self.walk, &free, self.level.step_us)
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

    /// [`graph_step_model`] at the lower level of per-node graph cost: the lower bound, ms.
    pub fn quiet_ms(&self) -> f64 {
        graph_step_on(&self.schedule, self.walk, &self.dev, 0.0)
    }

    /// How many kernels [`Self::step_ms`] has wait for room beside a kernel filling every SM
    /// (see [`NodeCost::leaves`]).
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
        self.branches().then(|| {
            let serial = self.dev.without_sharing();
            let schedule = Schedule::serialised(self.walk);
            graph_step_on(&schedule, self.walk, &serial, self.level.step_us)
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
        Some(graph_step_on(
            &schedule,
            self.walk,
            &self.dev,
            level.step_us,
        ))
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

fn graph_step_on(schedule: &Schedule, walk: &Walk, dev: &OfflineDevice<'_>, shared_us: f64) -> f64 {
    step_ms_of(&lay_out_on(schedule, walk, dev, shared_us).spans, dev)
}

/// The graph step of nodes laid out as `spans`: the last one's end plus one graph launch, ms.
fn step_ms_of(spans: &[Span], dev: &OfflineDevice<'_>) -> f64 {
    let nodes_ns = spans.iter().map(|s| s.2).fold(0.0, f64::max);
    (nodes_ns + dev.inputs.graph_launch_fixed_us * 1e3) / 1e6
}

/// The walk's nodes laid out on `schedule`: each op's (lane, start, end), ns, and how many
/// kernels waited for room beside a kernel filling every SM.
fn lay_out_on(
    schedule: &Schedule,
    walk: &Walk,
    dev: &OfflineDevice<'_>,
    shared_us: f64,
) -> SharedLayOut {
    let (m, grids) = (dev.inputs, dev.grids);
    let sms = dev.sms.filter(|_| dev.sharing);
    let gap_ns = m.graph_node_gap_us.unwrap_or(0.0).max(0.0) * 1e3;
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
    // (an L2 too small for the measurement): no L2 figure then.
    let l2_gb_s = m.graph_node_beside.map_or(0.0, |c| c.l2_gb_s);
    let bandwidths = Bandwidths {
        device_gb_s: bandwidth,
        l2_gb_s: if l2_gb_s > bandwidth { l2_gb_s } else { 0.0 },
    };
    let in_l2 = bandwidths.l2_gb_s > 0.0
        && dev
            .l2_bytes
            .is_some_and(|l2| within_l2(Footprint::inputs_added(walk), l2));
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
                let gb_s = known_gb_s(
                    o,
                    if from_l2 {
                        bandwidths.l2_gb_s
                    } else {
                        bandwidth
                    },
                );
                let work_ns = if o.is_kernel() || gb_s > 0.0 {
                    o.duration_ns.clamp(0.0, total)
                } else {
                    0.0
                };
                let share = if o.is_kernel() {
                    held_share(o, l, m, roofline.as_ref())
                } else {
                    0.0
                };
                let Footing { needs, leaves } = l.footing(o);
                NodeCost {
                    fixed_ns: total - work_ns,
                    work_ns,
                    share,
                    gb_s,
                    math: roofline.as_ref().map_or(0.0, |r| r.math_share(o)),
                    waits_on_loads: waits_on_loads(o, share, small_gb_s),
                    needs,
                    leaves,
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

/// Whether `o`'s bytes come from the L2 where its walk's data stays there
/// ([`crate::footprint::within_l2`] of all its recorded inputs): a kernel that is not a GEMM.
/// Lanes of element-wise kernels on 1 MiB buffers slowed each other +21% and +54% (two and
/// four lanes, H100) where the stretch measured beside GEMMs streaming their weights, read at
/// their loads, priced four lanes at four times their kernels ([`crate::l2_lanes`]). A GEMM's
/// load stays device memory's: on the H200 small kernels beside GEMMs whose weights the L2
/// held ran as much longer as beside GEMMs streaming theirs.
fn reads_from_l2(o: &Op) -> bool {
    o.is_kernel() && o.matmul.is_none() && !is_blas_kernel(&o.name)
}

/// Whether `o` is a small kernel that waits on its loads, as the profile's small adds do
/// beside another stream's GEMMs ([`crate::beside::BesideCosts::small_stretch`]): a kernel
/// that holds under half the GPU (`share`; one that fills it is held by its bandwidth, which
/// the sharing prices) and is not a fused attention or a GEMM (their blocks stream or
/// compute, and the pair stretch prices them) — but for a recorded GEMM that asks less of
/// device memory than the small adds themselves do (`small_gb_s`, the profile's small pair's
/// load; 0 where not measured): its few loads wait as theirs do. On the H200 the rank-16
/// projections of LoRA adapters (~50 GB/s) ran twice their time alone beside their base
/// lane's GEMVs in the real graph (profiled), where the GEMM pair's stretch gave +35%.
fn waits_on_loads(o: &Op, share: f64, small_gb_s: f64) -> bool {
    let gemm = o.matmul.is_some() || is_blas_kernel(&o.name);
    let moves_little = || {
        let gb_s = gemm_gb_s(o);
        gb_s > 0.0 && gb_s < small_gb_s
    };
    o.is_kernel() && share < 0.5 && !is_attention(&o.name) && (!gemm || moves_little())
}

/// What a device-to-device copy asks of device memory, GB/s: it reads and writes its bytes
/// over its recorded time, at most `bandwidth_gb_s` (where known); 0 for other ops. Beside
/// another stream's kernels such a copy takes bandwidth as a kernel does (a weight prefetch
/// beside decode GEMMs runs nearly one after the other on the H200), where copies from or to
/// the host move at the link's pace.
fn device_copy_gb_s(o: &Op, bandwidth_gb_s: f64) -> f64 {
    match &o.kind {
        OpKind::Memcpy {
            bytes, direction, ..
        } if o.duration_ns > 0.0
            && CopyDirection::of(direction) == CopyDirection::DeviceToDevice =>
        {
            let gb_s = 2.0 * *bytes as f64 / o.duration_ns;
            if bandwidth_gb_s > 0.0 {
                gb_s.min(bandwidth_gb_s)
            } else {
                gb_s
            }
        }
        _ => 0.0,
    }
}

/// At most this many of a kernel's blocks fit an SM for it to count as a kernel of fat
/// blocks: the measured pair's GEMMs hold one an SM, decode attention two.
const FAT_BLOCKS_PER_SM: u32 = 2;

/// The share of the GPU `o` holds while it runs beside other lanes: its blocks' share of
/// what the SMs hold ([`SmLimits::share`]); for one round of fat blocks
/// ([`FAT_BLOCKS_PER_SM`]) at least the share of SMs its blocks spread over, one an SM
/// ([`SmLimits::spread`]: the block scheduler hands idle SMs out first, and a fat block
/// leaves no room on its SM for another kernel's fat block, as a radix sort's 98 blocks of
/// 45 KB beside 128 whole-SM GEMM blocks find); but no more than the profile's widest GEMM
/// pair says ([`crate::beside::BesideCosts::one_round_hold`]) for a kernel like that pair's:
/// one round of fat blocks whose time is not its math. A recorded GEMM is such a kernel where
/// the profile's peaks put it far below the ridge ([`Roofline::far_below_ridge`]: two
/// 256-token prefill GEMMs side by side take as long as one after the other); a cuBLAS
/// kernel they cannot judge (no shapes recorded, or a profile without peaks) keeps its share.
///
/// An IEEE `f32` GEMM ([`on_fma_units`]) holds the SMs its blocks spread over, one an SM,
/// whatever room its registers leave, but no more than the widest pair says: its blocks keep
/// their SMs' schedulers issuing FMAs and loads, and another kernel's blocks on those SMs take
/// issue slots from them rather than idle ones, yet leave some (each block waits on its
/// loads), as the widest pair's blocks do. On the H200 two cuBLASLt f32 GEMMs side by side
/// (96 blocks of 128 threads, room for four an SM) each ran 1.43 times as long as alone; by
/// their blocks' room they hold 0.18 of the GPU each, by their flops 0.38 of the `f32` peak,
/// and `--summary` priced such walks 22-32% short.
fn held_share(o: &Op, l: &SmLimits, m: &ModelInputs, roofline: Option<&Roofline>) -> f64 {
    let share = l.share(o);
    let OpKind::Kernel { block, .. } = &o.kind else {
        return share;
    };
    let pair_hold = m.graph_node_beside.and_then(|c| c.one_round_hold());
    if roofline.is_some_and(|r| on_fma_units(o, r)) {
        let spread = l.spread(o).max(share);
        return pair_hold.map_or(spread, |hold| spread.min(hold).max(share));
    }
    let threads = block.0.saturating_mul(block.1).saturating_mul(block.2);
    let fat = l.resident_blocks(threads, o.resources) <= FAT_BLOCKS_PER_SM;
    if !(fat && l.one_round(o)) {
        return share;
    }
    let spread = l.spread(o).max(share);
    let not_math = match (o.matmul, roofline) {
        (Some(MatmulRole::Call(_)), Some(r)) => r.far_below_ridge(o),
        _ => !is_blas_kernel(&o.name),
    };
    match pair_hold {
        Some(hold) if not_math => spread.min(hold),
        _ => spread,
    }
}

/// Whether `o` is a recorded `f32` GEMM that ran on the FMA units (not TF32 tensor cores,
/// [`Roofline::as_run`]). Those of few tokens too: cuBLAS's f32 kernels for them read their
/// weights at well under the device's bandwidth (8 × 4096 × 4096 in 39 µs, 1.7 TB/s of 4.1;
/// 4 × 4096 × 4096 in 63 µs), held by their blocks' issue as the others are. Held out, that
/// part did no better than leaving them to their blocks' room (five f32 GEMV walks, 2 within
/// 10% either way): two such GEMVs side by side slow each other far less than their hold says
/// (+17.9%), beside an FMA-bound GEMM far more (−15.1%).
fn on_fma_units(o: &Op, r: &Roofline) -> bool {
    r.as_run(o)
        .is_some_and(|g| g.dtype == memra_engine::GemmType::F32)
}

/// What a kernel or a device-to-device copy asks of device memory, GB/s (bytes / ns), where
/// the trace says its bytes: a copy's ([`device_copy_gb_s`]), a recorded GEMM's operands, or
/// for an element-wise or normalisation kernel (by name) its operator's recorded inputs and
/// the result it writes (as large as the largest input), at most `bandwidth_gb_s` (where
/// known: more than the memory it reads from gives means it did not read all it was given;
/// for an element-wise kernel of a walk within the L2 that is the L2's bandwidth, not device
/// memory's: on an H100 two lanes of adds over 4 MiB buffers, 4.5 TB/s each alone, ran +69%
/// side by side, priced +13% with each read at device memory's 3 TB/s,
/// `scripts/elementwise_lanes_probe.py`). 0 for other kernels, whose time is not only their
/// bytes, and other ops.
fn known_gb_s(o: &Op, bandwidth_gb_s: f64) -> f64 {
    let copy = device_copy_gb_s(o, bandwidth_gb_s);
    if copy > 0.0 {
        return copy;
    }
    let gemm = gemm_gb_s(o);
    if gemm > 0.0 || o.duration_ns <= 0.0 {
        return gemm;
    }
    let (Some(read), Some(largest)) = (o.input_bytes, o.largest_input_bytes) else {
        return 0.0;
    };
    if is_attention(&o.name) && !is_element_wise(&o.name) {
        // Keys and values read, the output (a query's size) left out. More than the device
        // could read in the recorded time: the operator was given more than the kernel read
        // (a paged cache's whole pool), and what it read is not known.
        let gb_s = read / o.duration_ns;
        return if bandwidth_gb_s > 0.0 && gb_s > bandwidth_gb_s {
            0.0
        } else {
            gb_s
        };
    }
    if !(is_element_wise(&o.name) || is_normalisation(&o.name)) {
        return 0.0;
    }
    let gb_s = (read + largest) / o.duration_ns;
    if bandwidth_gb_s > 0.0 {
        gb_s.min(bandwidth_gb_s)
    } else {
        gb_s
    }
}

/// A recorded GEMM's operand bytes over its recorded duration, GB/s (bytes / ns); 0 for
/// kernels whose bytes the trace does not say.
fn gemm_gb_s(o: &Op) -> f64 {
    match o.matmul {
        Some(MatmulRole::Call(g)) if o.duration_ns > 0.0 => {
            crate::trace::matmul::operand_bytes(&g) as f64 / o.duration_ns
        }
        _ => 0.0,
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
