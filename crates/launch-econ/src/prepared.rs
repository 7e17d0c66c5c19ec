//! A recorded walk made ready to launch: each kernel's stand-in chosen (streaming ones sized,
//! see [`crate::streaming`]), the buffers its copies and memsets use allocated, and the loop
//! that issues its steps.

use std::time::{Duration, Instant};

use memra_engine::{Chase, ChaseRound, DeviceBuffer, Engine, Gemm, HostStaging, LaunchShape, Pace};

use crate::calibration::calibrate;
use crate::node_gap::NodeGap;
use crate::operand_pool::{GemmSlots, OperandLayout, OperandPool};
use crate::stand_in::{
    self, Choice, StandInPlan, SubFloorCarry, CHASE_RING_LINES, CHASE_SINK_WORDS,
};
use crate::streaming;
use crate::trace::matmul::MatmulRole;
use crate::trace::{CopyDirection, Op, OpKind, Walk};

/// A walk made ready to launch: spin requests, shapes and buffers.
pub(crate) struct Prepared {
    pub(crate) steps: Vec<Step>,
    pub(crate) slots: DeviceBuffer<u64>,
    /// What device-to-device and device-to-host copies read.
    pub(crate) src: DeviceBuffer<u8>,
    /// What copies into device memory and memsets write: see [`WriteTargets`].
    pub(crate) targets: Vec<DeviceBuffer<u8>>,
    /// The host end of host↔device copies (page-locked).
    pub(crate) host: HostStaging,
    /// What streaming stand-ins read (empty when there are none), and where the next read
    /// starts: each read begins where the one before ended, so every replay reads fresh memory.
    pub(crate) arena: DeviceBuffer<u8>,
    /// What stand-ins that do an element-wise kernel's work write (empty when there are none).
    pub(crate) results: DeviceBuffer<u8>,
    pub(crate) cursor: DeviceBuffer<u64>,
    /// The ring chases step through and the sink they write to (empty when there are none).
    pub(crate) ring: DeviceBuffer<u32>,
    pub(crate) sink: DeviceBuffer<u32>,
    /// The GEMMs replayed for real and where their operands lie in `operands`.
    pub(crate) gemms: Vec<(Gemm, GemmSlots)>,
    /// The buffers the real GEMMs read and write.
    pub(crate) operands: OperandPool,
    /// The kernels below their shape's floor and how far their stand-ins' planned nodes sum
    /// over their targets.
    pub(crate) sub_floor: SubFloorCarry,
    /// Each step's planned graph node, ns (recorded duration as planned + the front-end gap),
    /// for kernels that stand in; `None` for the others.
    pub(crate) node_targets: Vec<Option<f64>>,
}

/// One op of a prepared walk.
pub(crate) enum Step {
    Spin {
        ns: u64,
        shape: LaunchShape,
        slot: usize,
    },
    /// A spin whose every block spins `ns` from its own start ([`Engine::spin_blocks`]), for
    /// a kernel the GPU held in one round of blocks, on walks whose streams run side by side.
    BlockSpin {
        ns: u64,
        shape: LaunchShape,
        slot: usize,
    },
    /// A kernel that reads `bytes` of the arena where the last read ended, sized so that its
    /// graph node costs the recorded duration (as planned: [`StandInPlan::planned_ns`]) + the
    /// front-end gap; `fallback` is the spin
    /// stand-in it reverts to if no read can be that short; `ramp_ns`: what its node costs
    /// beyond its span less that gap (its shape's from the stand-in plan, then as measured in
    /// the walk's graph by [`crate::streaming::size`]).
    Stream {
        recorded_ns: f64,
        ramp_ns: f64,
        bytes: usize,
        shape: LaunchShape,
        slot: usize,
        fallback: Choice,
    },
    /// A kernel that reads `bytes` of the arena where the last read ended, paced over
    /// `pace.ns` of GPU time (the spin request for its recorded duration) and lasting at least
    /// that long, on walks whose streams run side by side: its operator's recorded inputs,
    /// asked of the memory system as the recorded kernel asked for them (see
    /// [`crate::stand_in`]). `ramp_ns` as for [`Step::Stream`]; `pace` also says whether it
    /// reads deep (see [`crate::stand_in::StandInPlan::paces_deep`]).
    Paced {
        bytes: usize,
        pace: Pace,
        ramp_ns: f64,
        shape: LaunchShape,
        slot: usize,
        /// Whether it reads the arena's first `bytes` every time, which stay in the L2
        /// ([`crate::footprint::L2Resident::Paced`]), instead of where the last read ended.
        in_l2: bool,
        /// Where it does its kernel's work instead ([`StandInPlan::elementwise_work`]): how
        /// many inputs of `bytes` each, from the arena's start, it sums into
        /// [`Prepared::results`] before waiting out `pace.ns`.
        work: Option<u32>,
    },
    /// A chase (dependent reads through [`Prepared::ring`], each a plain read or a round of a
    /// block-wide reduction, then a spin), on walks whose streams run side by side: see
    /// [`crate::stand_in`] and [`memra_engine::Engine::chase_grid`].
    Chase {
        chase: Chase,
        slot: usize,
    },
    /// A recorded kernel shorter than the spin kernel's floor for its grid: the empty kernel
    /// of the same shape, which is as close as a stand-in can get.
    Empty {
        shape: LaunchShape,
    },
    /// A copy in its recorded direction; host ends are page-locked staging memory, and copies
    /// of other kinds (host to host, peer) run device to device.
    /// `target`: the index in [`Prepared::targets`] it writes (unused by device-to-host
    /// copies).
    Copy {
        bytes: usize,
        direction: CopyDirection,
        target: usize,
    },
    Memset {
        bytes: usize,
        target: usize,
    },
    /// A recorded GEMM run for real by cuBLAS with its recorded shapes: operands `index` of
    /// [`Prepared::gemms`].
    Gemm {
        index: usize,
    },
    /// A further cuBLAS kernel of a GEMM run for real (the real GEMM issues its own).
    Folded,
}

impl Prepared {
    /// Device memory one replay of the prepared walk reads or writes afresh, bytes: what its
    /// streaming and paced stand-ins read, its real GEMMs' operands (as `--gemm-operands`
    /// lays them out) and its copies and memsets.
    pub(crate) fn touched_bytes(&self) -> f64 {
        let gemms = self.operands.bytes();
        let steps: usize = self
            .steps
            .iter()
            .map(|s| match *s {
                Step::Stream { bytes, .. }
                | Step::Paced {
                    bytes,
                    in_l2: false,
                    ..
                }
                | Step::Copy { bytes, .. }
                | Step::Memset { bytes, .. } => bytes,
                _ => 0,
            })
            .sum();
        (gemms + steps) as f64
    }

    /// Calibrates the spin kernel on `e` and prepares `walk`'s stand-ins, all spins (the
    /// walks whose kernels are changed between replays, which the spins' slots make checkable).
    /// Every node is planned at its recorded duration + `gap` (measured on `e` where `None`).
    pub(crate) fn for_walk(
        e: &Engine,
        walk: &Walk,
        ramp_ns: f64,
        gap: Option<&NodeGap>,
    ) -> anyhow::Result<Prepared> {
        let cal = calibrate(e, ramp_ns)?;
        let gap = NodeGap::given_or_measured(gap, e, &cal)?;
        let plan = stand_in::plan(e, walk, &cal, gap.us, f64::INFINITY, None, false)?;
        Prepared::new(e, walk.ops.iter(), &plan)
    }

    /// Stand-ins for `ops`, in that order, with buffers on `e`; streaming stand-ins are sized
    /// on `e` in a graph of these steps ([`crate::streaming::size`]): `ops` must be one stream's
    /// part of a walk.
    pub(crate) fn new<'a>(
        e: &Engine,
        ops: impl Iterator<Item = &'a Op>,
        plan: &StandInPlan,
    ) -> anyhow::Result<Prepared> {
        let mut steps = Vec::new();
        let mut max_bytes = 0usize;
        let mut targets = WriteTargets::default();
        let mut max_host_bytes = 0usize;
        let mut kernels = 0;
        let mut gemms = Vec::new();
        let mut layout = OperandLayout::new(plan.gemm_operands);
        let mut sub_floor = SubFloorCarry::default();
        // Whether the GEMM whose further kernels (a split-K reduction) follow runs for real.
        let mut call_real = false;
        let mut node_targets = Vec::new();
        for op in ops {
            let real = plan.real_role(op, &mut call_real);
            node_targets.push(
                matches!((&op.kind, real), (OpKind::Kernel { .. }, None))
                    .then(|| plan.planned_ns(op) + plan.gap_us * 1e3),
            );
            steps.push(match (&op.kind, real) {
                (OpKind::Kernel { .. }, Some(MatmulRole::Part)) => Step::Folded,
                (OpKind::Kernel { .. }, Some(MatmulRole::Call(gemm))) => {
                    let slots = layout.place(&gemm);
                    gemms.push((gemm, slots));
                    Step::Gemm {
                        index: gemms.len() - 1,
                    }
                }
                (OpKind::Kernel { grid, block }, None) => {
                    let shape = LaunchShape::of(*grid, *block);
                    let planned_ns = plan.planned_ns(op);
                    kernels += 1;
                    if plan.streams_op(op) {
                        let choice = plan.choose(planned_ns, (*grid, *block));
                        Step::Stream {
                            recorded_ns: planned_ns,
                            ramp_ns: plan.ramp_ns((*grid, *block)),
                            bytes: 16,
                            shape,
                            slot: kernels - 1,
                            fallback: choice,
                        }
                    } else if let Some((bytes, Choice::Spin(ns), paced, work)) =
                        plan.paced_bytes(op).and_then(|bytes| {
                            // Timed as its own shape: a grid cut to one round of blocks
                            // launches in less than the recorded one did.
                            let paced = plan.paced_shape(shape, op);
                            let work = plan.work_key(op, paced);
                            // A work-doing stand-in whose work outlasts the kernel's node
                            // leaves it to the default stand-in.
                            if work.is_some_and(|w| !plan.work_fits(&w, planned_ns)) {
                                return None;
                            }
                            let bytes = work.map_or(bytes, |w| w.result_bytes);
                            let key = (paced.grid, paced.block);
                            Some((bytes, plan.choose_spin(planned_ns, key), paced, work))
                        })
                    {
                        Step::Paced {
                            bytes,
                            pace: Pace {
                                ns,
                                deep: plan.paces_deep(op),
                            },
                            ramp_ns: plan.ramp_ns((paced.grid, paced.block)),
                            shape: paced,
                            slot: kernels - 1,
                            in_l2: plan.paced.in_l2(),
                            work: work.map(|w| w.inputs),
                        }
                    } else {
                        default_step(plan, op, planned_ns, shape, kernels - 1, &mut sub_floor)
                    }
                }
                (
                    OpKind::Memcpy {
                        bytes, direction, ..
                    },
                    _,
                ) => {
                    let direction = CopyDirection::of(direction);
                    max_bytes = max_bytes.max(*bytes as usize);
                    if matches!(
                        direction,
                        CopyDirection::HostToDevice | CopyDirection::DeviceToHost
                    ) {
                        max_host_bytes = max_host_bytes.max(*bytes as usize);
                    }
                    let target = if direction == CopyDirection::DeviceToHost {
                        0
                    } else {
                        targets.place(*bytes as usize)
                    };
                    Step::Copy {
                        bytes: *bytes as usize,
                        direction,
                        target,
                    }
                }
                (OpKind::Memset { bytes }, _) => Step::Memset {
                    bytes: *bytes as usize,
                    target: targets.place(*bytes as usize),
                },
            });
        }
        // The GEMMs' operands first, as the loop above placed them.
        let operands = OperandPool::allocate(e, &layout)?;
        let streams = steps
            .iter()
            .any(|s| matches!(s, Step::Stream { .. } | Step::Paced { .. }));
        let chases = steps.iter().any(|s| matches!(s, Step::Chase { .. }));
        // What the stand-ins that do their work write: the largest result.
        let results = steps
            .iter()
            .filter_map(|s| match *s {
                Step::Paced {
                    bytes,
                    work: Some(_),
                    ..
                } => Some(bytes),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let mut prep = Prepared {
            steps,
            slots: e.zeros::<u64>(kernels.max(1) * Engine::SPIN_SLOT_WORDS)?,
            src: e.zeros::<u8>(max_bytes)?,
            targets: targets
                .sizes
                .iter()
                .map(|&n| e.zeros::<u8>(n))
                .collect::<memra_engine::Result<_>>()?,
            host: e.host_staging(max_host_bytes)?,
            arena: e.zeros::<u8>(if streams { streaming::ARENA_BYTES } else { 0 })?,
            results: e.zeros::<u8>(results)?,
            cursor: e.zeros::<u64>(1)?,
            ring: if chases {
                e.chase_ring(CHASE_RING_LINES)?
            } else {
                e.zeros::<u32>(0)?
            },
            sink: e.zeros::<u32>(if chases { CHASE_SINK_WORDS } else { 0 })?,
            gemms,
            operands,
            sub_floor,
            node_targets,
        };
        if streams || plan.spin_fit.fits(false) {
            streaming::size(e, &mut prep, plan.gap_us * 1e3, plan.spin_fit)?;
        }
        if streams {
            streaming::fit_paced(e, &mut prep)?;
        }
        Ok(prep)
    }

    /// Issues step `i` on `e` (the engine owning this walk's buffers).
    pub(crate) fn issue_step(&mut self, e: &Engine, i: usize) -> memra_engine::Result<()> {
        self.issue_steps(e, i..i + 1, |ns, shape, slot, slots| {
            e.spin_grid(ns, shape, slots, slot)
        })
    }

    /// Issues the steps in `range` on `e`: each timed spin through `spin` (request, shape,
    /// slot and this walk's slots, for walks that time into other slots or windows), every
    /// other step as recorded.
    pub(crate) fn issue_steps(
        &mut self,
        e: &Engine,
        range: std::ops::Range<usize>,
        mut spin: impl FnMut(
            u64,
            LaunchShape,
            usize,
            &mut DeviceBuffer<u64>,
        ) -> memra_engine::Result<()>,
    ) -> memra_engine::Result<()> {
        let Prepared {
            steps,
            slots,
            src,
            targets,
            host,
            arena,
            results,
            cursor,
            ring,
            sink,
            gemms,
            operands,
            ..
        } = self;
        for st in &steps[range] {
            match *st {
                Step::Spin { ns, shape, slot } => spin(ns, shape, slot, slots)?,
                Step::Stream {
                    bytes, shape, slot, ..
                } => e.stream_grid_from(arena, cursor, bytes, shape, slots, slot)?,
                Step::Paced {
                    bytes,
                    pace,
                    shape,
                    slot,
                    in_l2,
                    work,
                    ..
                } => {
                    if let Some(inputs) = work {
                        e.elementwise_l2(
                            arena, results, bytes, inputs, pace.ns, shape, slots, slot,
                        )?
                    } else if in_l2 {
                        e.stream_paced(arena, bytes, pace, shape, slots, slot)?
                    } else {
                        e.stream_paced_from(arena, cursor, bytes, pace, shape, slots, slot)?
                    }
                }
                Step::Chase { chase, slot } => e.chase_grid(chase, ring, sink, slots, slot)?,
                Step::BlockSpin { ns, shape, slot } => e.spin_blocks(ns, shape, slots, slot)?,
                Step::Gemm { index } => {
                    let (gemm, slots) = &gemms[index];
                    operands.run(e, gemm, *slots)?
                }
                ref other => issue_untimed(e, other, src, targets, host)?,
            }
        }
        Ok(())
    }

    /// Each kernel step's last replayed duration as a profiler would see it (own span + ramp;
    /// a streaming stand-in's span to the block that ended last + its shape's ramp),
    /// ns, by step index; NaN for kernels replayed by the empty kernel (they time nothing),
    /// `None` for copies and memsets.
    pub(crate) fn durations(
        &self,
        e: &Engine,
        ramp_ns: f64,
    ) -> memra_engine::Result<Vec<Option<f64>>> {
        self.per_step(e, |step, words| match (step, words) {
            (Step::Spin { .. } | Step::BlockSpin { .. } | Step::Chase { .. }, Some(w)) => {
                Some(w[2] as f64 + ramp_ns)
            }
            (Step::Stream { ramp_ns, .. } | Step::Paced { ramp_ns, .. }, Some(w)) => {
                Some(Engine::stream_span(w).map_or(f64::NAN, |s| s as f64 + ramp_ns))
            }
            (Step::Empty { .. }, _) => Some(f64::NAN),
            _ => None,
        })
    }

    /// Each step's last (start, end) on the GPU's global timer, ns, for timed stand-ins; `None`
    /// for steps that stamp nothing (empty kernels, copies, memsets).
    pub(crate) fn stamps(&self, e: &Engine) -> memra_engine::Result<Vec<Option<(u64, u64)>>> {
        self.per_step(e, |_, words| {
            let (span, end) = words.map(|w| (w[2], w[3]))?;
            (end >= span && end > 0).then(|| (end - span, end))
        })
    }

    /// Reads every spin's slot back in one copy and maps each step with its slot's words
    /// (`None` for steps without a slot).
    pub(crate) fn per_step<T>(
        &self,
        e: &Engine,
        f: impl Fn(&Step, Option<&[u64]>) -> Option<T>,
    ) -> memra_engine::Result<Vec<Option<T>>> {
        let s = e.dtoh(&self.slots)?;
        let w = Engine::SPIN_SLOT_WORDS;
        Ok(self
            .steps
            .iter()
            .map(|step| {
                let words = match step {
                    Step::Spin { slot, .. }
                    | Step::BlockSpin { slot, .. }
                    | Step::Stream { slot, .. }
                    | Step::Paced { slot, .. }
                    | Step::Chase { slot, .. } => Some(&s[slot * w..][..w]),
                    _ => None,
                };
                f(step, words)
            })
            .collect())
    }
}

/// The stand-in `op` (recorded with `shape`, planned at `planned_ns`) takes when it neither
/// streams nor paces: the plan's choice by its name ([`StandInPlan::choose_named`], carrying
/// `carry` along its stream), of the held shape where timed, spun per block where the plan
/// says so.
fn default_step(
    plan: &StandInPlan,
    op: &Op,
    planned_ns: f64,
    shape: LaunchShape,
    slot: usize,
    carry: &mut SubFloorCarry,
) -> Step {
    let choice = plan.choose_named(op, planned_ns, (shape.grid, shape.block), carry);
    let timed = !matches!(choice, Choice::Empty);
    let held = if timed {
        plan.held_shape(shape, op)
    } else {
        shape
    };
    match choice {
        Choice::Spin(ns) if plan.spins_per_block(held, op) => Step::BlockSpin {
            ns,
            shape: held,
            slot,
        },
        _ => spin_step(choice, held, slot),
    }
}

/// The step a spin-plan choice makes for a kernel of `shape` timed into `slot`.
pub(crate) fn spin_step(choice: Choice, shape: LaunchShape, slot: usize) -> Step {
    match choice {
        Choice::Empty => Step::Empty { shape },
        Choice::Spin(ns) => Step::Spin { ns, shape, slot },
        Choice::Chase { steps, ns } => Step::Chase {
            chase: Chase {
                ns,
                loads: steps,
                round: ChaseRound::Read,
                shape,
            },
            slot,
        },
        Choice::BarrierChase { steps, ns } => Step::Chase {
            chase: Chase {
                ns,
                loads: steps,
                round: ChaseRound::BlockReduction,
                shape,
            },
            slot,
        },
    }
}

/// Issues a step that times nothing (an empty kernel, a copy, a memset) with a walk's buffers;
/// timed stand-ins are the caller's (their slots differ between uses) and real GEMMs
/// [`Prepared::issue_steps`]'s (they have operands of their own): both issue nothing here.
fn issue_untimed(
    e: &Engine,
    step: &Step,
    src: &DeviceBuffer<u8>,
    targets: &mut [DeviceBuffer<u8>],
    host: &mut HostStaging,
) -> memra_engine::Result<()> {
    match *step {
        Step::Spin { .. }
        | Step::BlockSpin { .. }
        | Step::Stream { .. }
        | Step::Paced { .. }
        | Step::Chase { .. }
        | Step::Gemm { .. }
        | Step::Folded => Ok(()),
        Step::Empty { shape } => e.noop_shaped(shape),
        Step::Copy {
            bytes,
            direction,
            target,
        } => match direction {
            CopyDirection::HostToDevice => e.copy_from_host(host, &mut targets[target], bytes),
            CopyDirection::DeviceToHost => e.copy_to_host(src, host, bytes),
            CopyDirection::DeviceToDevice | CopyDirection::Other => {
                e.copy(src, &mut targets[target], bytes)
            }
        },
        Step::Memset { bytes, target } => e.memset_zero(&mut targets[target], bytes),
    }
}

/// Bytes of write targets a walk gets its own buffer for each write before writes share them:
/// far more than any current GPU's L2 holds, so sharing never brings the writes back into it.
pub(crate) const WRITE_TARGET_BYTES: usize = 1 << 30;

/// Where a walk's copies into device memory and memsets write. Each recorded write wrote its
/// own tensor, and a graph writes the same tensors every replay: a step that writes 128 MiB of
/// them writes back through the L2 what one rewritten buffer would keep in it (on the H200 a
/// 1 MiB copy between small kernels cost a real graph 1.8 µs, its replay into one buffer 1.4).
/// So each write gets a buffer of its own until [`WRITE_TARGET_BYTES`] are placed; after that,
/// writes take the placed buffers in turn (the next one large enough, else a new one).
#[derive(Debug, Default)]
pub(crate) struct WriteTargets {
    pub(crate) sizes: Vec<usize>,
    next: usize,
}

impl WriteTargets {
    /// The index of the buffer a write of `bytes` goes to.
    pub(crate) fn place(&mut self, bytes: usize) -> usize {
        if self.sizes.iter().sum::<usize>() + bytes > WRITE_TARGET_BYTES {
            let n = self.sizes.len();
            if let Some(i) = (0..n)
                .map(|k| (self.next + k) % n)
                .find(|&i| self.sizes[i] >= bytes)
            {
                self.next = (i + 1) % n;
                return i;
            }
        }
        self.sizes.push(bytes);
        self.sizes.len() - 1
    }
}

/// Busy-waits `d` on the host: a framework's own cost before a launch.
pub(crate) fn host_busy(d: Duration) {
    if !d.is_zero() {
        let t = Instant::now();
        while t.elapsed() < d {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests;
