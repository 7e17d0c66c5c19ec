//! Choosing each recorded kernel's stand-in so that its *graph node* lasts as long as the
//! recorded kernel's would.
//!
//! A kernel in a graph occupies the stream for its profiled duration plus the front end's gap
//! to the next node. A stand-in (a timed spin of the recorded grid and block, or the empty
//! kernel of that shape) has its own node time, which depends on its shape as much as on how
//! long it spins: on an H200 a 2048-block spin asked for nothing already takes ~2 µs a node,
//! a one-block spin ~0.8 µs. So node times are measured here, shape by shape, on this GPU —
//! the spin asked for nothing and for [`PROBE_NS`], and the empty kernel — and each kernel gets
//! the request that puts its stand-in's node time at `recorded + gap` (past the requests the
//! spin's own bookkeeping absorbs, a nanosecond per nanosecond: [`ShapeNodes::spin_knee_ns`]),
//! or the empty kernel where that is nearer.
//! `gap` is measured once, on a one-block spin whose profiled duration the spin calibration
//! knows: its node time less that duration. A kernel of many blocks costs a graph node less
//! beyond its profile than that; with a grid table its recorded duration is shifted first
//! ([`StandInPlan::planned_ns`], [`crate::wide_grids`]).
//!
//! A kernel shorter than its shape's floor (the spin asked for nothing) cannot be matched: the
//! empty kernel's node is shorter than its target, the empty spin's longer. Picking the nearer
//! of the two for each kernel biases a walk with hundreds of them (a decode step's small
//! element-wise kernels all sit in that gap, and the nearer one was the spin for most of them:
//! +0.2 µs a kernel). By default ([`SubFloor::Balance`]) the choice carries, along each stream,
//! what the choices so far came out over their targets and takes whichever of the two leaves
//! that sum nearer zero (error diffusion), so such kernels' nodes sum to their targets.
//!
//! Kernels recorded at [`StandInPlan::stream_from_ns`] or longer stand in by streaming memory
//! instead (see [`crate::streaming`]): a spin occupies the GPU but not its memory system, and
//! on an H200 a graph of kernels that stream from HBM costs more per node than one of spins of
//! the same profiled durations. Shorter kernels spend most of their time launching and
//! retiring blocks; a streaming stand-in cannot be that short and still read, so they spin.
//! Where the recorded shapes put the walk's data within the L2, long kernels spin too (the
//! replay then plans with no streaming at all; see [`crate::footprint::L2Resident`]).
//! Walks on several concurrent streams do not stream (see `crate::replay`): a stand-in that
//! reads as fast as its grid can overstates what a real kernel asks of shared bandwidth.
//! There a long kernel whose operator's inputs the trace recorded, and which read them at a
//! tenth of the device's bandwidth or more ([`StandInPlan::paced_bytes`]), stands in by
//! reading those bytes paced over its recorded time ([`memra_engine::Engine::stream_paced_from`]):
//! it asks of the memory what the recorded kernel asked (decode attention beside another
//! stream's GEMMs reads its KV cache at most of the bandwidth; a spin there left the GEMMs
//! all of it), and stretches where the memory cannot keep that pace. An element-wise kernel
//! paces its result's bytes too, and a grid of several rounds of blocks is cut to one
//! ([`StandInPlan::paced_shape`]). Otherwise an element-wise kernel stands in by a chase
//! instead ([`memra_engine::Engine::chase_grid`], `--concurrent-stand-ins`): dependent reads
//! through a ring in the L2 for as many whole steps as fit its target, then a spin for the
//! rest, measured shape by shape like the spin. Alone it costs what the spin does; beside
//! another stream's GEMMs each step takes as long as a memory round trip takes there, so it
//! stretches as a short element-wise kernel does and a clock spin does not — and more than a
//! reduction does. A kernel named a normalisation or reduction stands in by a barrier chase
//! ([`memra_engine::ChaseRound::BlockReduction`]): each step a read and a block-wide reduction
//! of it, so its reads stretch there and its shuffles and barriers do not, as that kernel's
//! rounds; other kernels (gathers, copies, sorts) spin.

use std::collections::HashMap;

use memra_engine::LaunchShape;

use crate::trace::{is_element_wise, Op};

/// Recorded kernels at least this long stand in by streaming memory by default, ns.
pub const DEFAULT_STREAM_FROM_NS: f64 = 2_000.0;

/// The second spin request each shape is measured at, ns.
pub const PROBE_NS: u64 = 2_000;

/// Dependent steps each shape's chase is measured at.
pub const CHASE_PROBE_STEPS: u32 = 8;

/// Least share of what the device's bandwidth reads in a kernel's recorded time that its
/// inputs must come to for it to stand in by a paced read: below it, the kernel's time is
/// launch, latency and math rather than reads (an element-wise kernel over a few hundred KB
/// asks for a few percent), which the spin or the chase stands for, and its reads load the
/// memory too little to slow what runs beside it.
pub const PACED_MIN_SHARE: f64 = 0.1;

/// Lines of the ring chases step through (128 KiB: resident in the L2 of any current GPU, as
/// a short kernel's operands, just written by the kernel before it, are).
pub const CHASE_RING_LINES: usize = 1024;

/// Words of the sink chases write a word per thread into (4 MiB).
pub const CHASE_SINK_WORDS: usize = 1 << 20;

/// A launch shape as a map key: (grid, block).
pub type ShapeKey = ((u32, u32, u32), (u32, u32, u32));

/// Measured graph-node times of one shape's stand-ins, µs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShapeNodes {
    /// The spin asked for 0 ns.
    pub spin_zero_us: f64,
    /// The spin asked for [`PROBE_NS`].
    pub spin_probe_us: f64,
    /// The empty kernel.
    pub empty_us: f64,
    /// The spin asked for 0 ns: its own span as a graph node, ns.
    pub spin_zero_span_ns: f64,
    /// The chase's node times, where chases were asked for.
    pub chase: Option<ChaseNodes>,
    /// The barrier chase's node times, where barrier chases were asked for.
    pub barrier_chase: Option<ChaseNodes>,
}

/// Measured graph-node times of one shape's chase, µs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChaseNodes {
    /// No steps, no spin.
    pub zero_us: f64,
    /// [`CHASE_PROBE_STEPS`] steps, no spin.
    pub steps_us: f64,
    /// No steps, a spin of [`PROBE_NS`].
    pub spin_us: f64,
}

impl ChaseNodes {
    /// The node of a chase of one read and no spin, µs.
    pub fn one_step_us(&self) -> f64 {
        self.zero_us + ((self.steps_us - self.zero_us) / f64::from(CHASE_PROBE_STEPS)).max(0.0)
    }

    /// The steps and spin that put the chase's node at `target_us`: as many whole steps as
    /// fit, the rest spun; `None` below the chase's floor.
    pub fn request(&self, target_us: f64) -> Option<(u32, u64)> {
        if target_us.is_nan() || target_us < self.zero_us {
            return None;
        }
        let over = target_us - self.zero_us;
        let per_step = (self.steps_us - self.zero_us) / f64::from(CHASE_PROBE_STEPS);
        let steps = if per_step > 0.0 {
            // (a hair over, so that a target a whole number of steps away is that many)
            (over / per_step + 1e-9).floor().min(f64::from(u32::MAX))
        } else {
            0.0
        };
        let rest_us = over - steps * per_step.max(0.0);
        let per_ns = (self.spin_us - self.zero_us) / PROBE_NS as f64;
        let ns = if per_ns > 0.0 {
            rest_us / per_ns
        } else {
            rest_us * 1e3
        };
        Some((steps as u32, ns.max(0.0).round() as u64))
    }
}

/// What stands in for one recorded kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The timed spin, asked for this many ns.
    Spin(u64),
    /// The empty kernel of the shape.
    Empty,
    /// The chase: this many dependent steps, then a spin of `ns`.
    Chase { steps: u32, ns: u64 },
    /// The barrier chase (each step a block-wide reduction of its reads), then a spin of `ns`.
    BarrierChase { steps: u32, ns: u64 },
}

/// Bytes of the arena streaming and paced stand-ins read from, one read after another where
/// the last ended (a cursor in device memory, see `Engine::stream_grid_from`): far larger than
/// any current GPU's L2 cache, so a word is read again only long after it was evicted, and
/// every replay of a walk reads from device memory however little the walk reads. One paced
/// read asks at most this much.
pub const ARENA_BYTES: usize = 1 << 30;

/// Node times by shape and the front end's gap: everything needed to pick stand-ins.
#[derive(Debug, Clone, PartialEq)]
pub struct StandInPlan {
    /// Node time of a real kernel beyond its profiled duration, µs.
    pub gap_us: f64,
    pub shapes: HashMap<ShapeKey, ShapeNodes>,
    /// Kernels recorded at least this long stand in by streaming memory (infinite: none).
    pub stream_from_ns: f64,
    /// Whether element-wise kernels among them stream too (see [`ElementWise`]).
    pub stream_element_wise: bool,
    /// Profiled duration − own span of a timed stand-in, ns (the spin calibration's ramp).
    pub ramp_ns: f64,
    /// Kernels of a GEMM whose shapes the trace recorded run that GEMM for real (cuBLAS)
    /// instead of standing in (see `crate::trace::matmul`).
    pub real_gemms: bool,
    /// Without [`StandInPlan::real_gemms`]: the recorded GEMMs held by their math (by
    /// [`StandInPlan::roofline`]) run for real, where cuBLAS runs them as recorded (see
    /// [`StandInPlan::runs_math_gemm`]).
    pub real_math_gemms: bool,
    /// Where the GEMMs that run for real read and write.
    pub gemm_operands: crate::operand_pool::GemmOperands,
    /// How kernels below their shape's floor stand in.
    pub sub_floor: SubFloor,
    /// Whether timed spins are fitted in the walk's graph.
    pub spin_fit: SpinFit,
    /// Which kernels chase, barrier-chase or spin where their shape's chases were measured
    /// (walks whose streams run side by side).
    pub concurrent: ConcurrentStandIn,
    /// What stands in for a chasing kernel shorter than a one-read chase.
    pub chase_floor: ChaseFloor,
    /// The device's peaks, where the walk has recorded GEMMs: those held by their math spin
    /// instead of streaming (see [`crate::roofline`]).
    pub roofline: Option<crate::roofline::Roofline>,
    /// On walks whose streams run side by side: kernels recorded at least this long whose
    /// operator's input bytes the trace recorded read them paced over their time (infinite:
    /// none), where the device could have read them in it: at its copy bandwidth
    /// (`bytes_per_ns`, reads and writes) for a kernel that writes as much as it reads, at its
    /// peak memory bandwidth (`peak_bytes_per_ns`, 0 where unknown) for one that only reads.
    pub paced_from_ns: f64,
    /// Where those paced reads read from, and how much.
    pub paced: PacedReads,
    pub bytes_per_ns: f64,
    pub peak_bytes_per_ns: f64,
    /// Registers a thread of the deep paced read holds ([`StandInPlan::paces_deep`]); 0: no
    /// paced read is deep.
    pub deep_registers: u32,
    /// On walks whose streams run side by side: what an SM of this device holds, so that
    /// timed stand-ins reserve the shared memory that holds as few of their blocks an SM as
    /// the recorded kernel's needs allowed ([`crate::occupancy::SmLimits::holding_shared_bytes`]).
    pub hold_sms: Option<crate::occupancy::SmLimits>,
    /// With [`StandInPlan::hold_sms`]: timed spins of kernels whose grid the device holds at
    /// once spin per block (see [`ConcurrentSpins`]).
    pub spin_per_block: bool,
    /// The device's grid table: wide kernels are planned shorter by what it says (see
    /// [`StandInPlan::planned_ns`]); `None`: at their recorded durations.
    pub wide_grids: Option<crate::wide_grids::WideGrids>,
    /// With [`PacedReads::InL2Work`]: the node time of each work-doing stand-in asked
    /// for no wait, µs ([`StandInPlan::work_fits`]); empty: not measured.
    pub work_nodes: HashMap<WorkKey, f64>,
}

impl StandInPlan {
    /// The duration `op`'s stand-in is planned at, ns: its recorded one, shifted by the grid
    /// table where there is one (a wide kernel's graph node costs less beyond its profiled
    /// duration than the one-block gap says: [`crate::wide_grids`]).
    pub fn planned_ns(&self, op: &crate::trace::Op) -> f64 {
        let shift = self.wide_grids.as_ref().map_or(0.0, |g| g.op_shift_ns(op));
        (op.duration_ns + shift).max(0.0)
    }

    /// How much longer than its own span a profiler sees a kernel of `shape` run, ns: the
    /// measured node of the spin asked for nothing, less the front end's gap and its span —
    /// the same model of a node the spin requests are chosen by. (CUPTI on an H200 sees this
    /// grow with the grid, 0.74 µs for one block to 1.4 µs for 1024, and a streaming stand-in's
    /// span to its last block about as far, within 0.1 µs up to 132 blocks but 0.25 µs less at
    /// 1024: `scripts/stream_cupti.py`.) The calibration's ramp for a shape not measured.
    pub fn ramp_ns(&self, shape: ShapeKey) -> f64 {
        match self.shapes.get(&shape) {
            Some(n) => ((n.spin_zero_us - self.gap_us) * 1e3 - n.spin_zero_span_ns).max(0.0),
            None => self.ramp_ns,
        }
    }

    /// Whether `op` is the first kernel of a recorded GEMM held by its math that the engine
    /// runs as recorded on one stream (`mm`, `bmm`, and an `addmm` whose bias cuBLASLt adds in
    /// its epilogue; not one that adds a whole matrix, which the engine would read as C).
    pub fn math_gemm_as_recorded(&self, op: &crate::trace::Op) -> bool {
        matches!(op.matmul, Some(crate::trace::matmul::MatmulRole::Call(g)) if !g.accumulate)
            && self.roofline.as_ref().is_some_and(|r| r.math_bound(op))
    }

    /// Whether `op` runs for real under [`StandInPlan::real_math_gemms`]
    /// (see [`StandInPlan::math_gemm_as_recorded`]).
    pub fn runs_math_gemm(&self, op: &crate::trace::Op) -> bool {
        self.real_math_gemms && self.math_gemm_as_recorded(op)
    }

    /// What `op` plays in a GEMM that runs for real: its first kernel, with the GEMM as the
    /// engine runs it ([`crate::roofline::Roofline::as_run`]: TF32 for an `f32` GEMM that ran
    /// on TF32 by its kernel's name or its recorded time), or a further kernel (a split-K
    /// reduction, left to cuBLAS) of a GEMM whose first kernel runs; `None` where it stands in.
    /// `call_real` carries, along one stream, whether the last GEMM's first kernel runs.
    pub fn real_role(
        &self,
        op: &crate::trace::Op,
        call_real: &mut bool,
    ) -> Option<crate::trace::matmul::MatmulRole> {
        use crate::trace::matmul::MatmulRole;
        match op.matmul? {
            MatmulRole::Call(g) => {
                *call_real = self.real_gemms || self.runs_math_gemm(op);
                let run = self.roofline.as_ref().and_then(|r| r.as_run(op));
                call_real.then_some(MatmulRole::Call(run.unwrap_or(g)))
            }
            MatmulRole::Part => call_real.then_some(MatmulRole::Part),
        }
    }

    /// Whether `op` is the first kernel of an `f32` GEMM that runs for real on TF32 tensor
    /// cores (see [`StandInPlan::real_role`]).
    pub fn runs_on_tf32(&self, op: &crate::trace::Op) -> bool {
        matches!(
            self.real_role(op, &mut false),
            Some(crate::trace::matmul::MatmulRole::Call(g)) if g.dtype == memra_engine::GemmType::Tf32
        )
    }

    /// Whether a kernel recorded at `recorded_ns` stands in by streaming memory.
    pub fn streams(&self, recorded_ns: f64) -> bool {
        recorded_ns >= self.stream_from_ns
    }

    /// Whether `op` stands in by streaming memory: long enough, and not a recorded GEMM held
    /// by its math.
    pub fn streams_op(&self, op: &crate::trace::Op) -> bool {
        self.streams(op.duration_ns)
            && !self.roofline.as_ref().is_some_and(|r| r.math_bound(op))
            && (self.stream_element_wise || !is_element_wise(&op.name))
    }

    /// The bytes `op` stands in for by reading them paced over its time (see
    /// [`StandInPlan::paced_from_ns`]), rounded up to whole 16-byte words: its operator's
    /// inputs with what reading some across their rows moves beyond them (whole sectors,
    /// [`crate::trace::across_rows`]), and for an element-wise kernel ([`is_element_wise`])
    /// the result it writes as well, taken as large as its largest input (a write asks of
    /// device memory what a read does: an add of two tensors moves three), at most what the
    /// device moves in the
    /// recorded time (reading only, at its peak bandwidth: decode attention reads its KV
    /// cache faster than a copy moves bytes, at up to 0.9 of the peak on an H200).
    /// `None` for a kernel that does not pace: too short, its inputs not recorded, more inputs
    /// than the device could have read in the recorded time (an operator that gathers from a
    /// large table or writes into a slice of a cache does not read all it is given), or fewer
    /// than [`PACED_MIN_SHARE`] of what it moves in that time (a kernel whose time is not its
    /// reads keeps its spin or chase). At most [`ARENA_BYTES`], what there is to read; with
    /// [`PacedReads::Whole`], not capped by the recorded time.
    pub fn paced_bytes(&self, op: &crate::trace::Op) -> Option<usize> {
        let written = if is_element_wise(&op.name) {
            op.largest_input_bytes.unwrap_or(0.0)
        } else {
            0.0
        };
        let read = op.input_bytes?;
        let most = self.bytes_per_ns * op.duration_ns;
        let most_read = self.peak_bytes_per_ns.max(self.bytes_per_ns) * op.duration_ns;
        // From the L2 every recorded read is asked of it, however slow: the lower bound keeps
        // device memory's paced reads to kernels that stream.
        let least = if self.paced.in_l2() {
            0.0
        } else {
            PACED_MIN_SHARE * most
        };
        let load = (least..=most_read).contains(&read);
        let cap = match (self.paced == PacedReads::Whole, written > 0.0) {
            (true, _) => f64::INFINITY,
            (false, true) => most,
            (false, false) => most_read,
        };
        // Reads across rows move whole sectors: the stand-in reads that much along its rows.
        let moved = op.read_bytes_moved().unwrap_or(read);
        let bytes = (moved + written).min(cap).min(ARENA_BYTES as f64);
        (op.duration_ns >= self.paced_from_ns && load).then(|| (bytes / 16.0).ceil() as usize * 16)
    }

    /// The stand-in for a kernel recorded at `recorded_ns` with `shape`, on its own (a kernel
    /// below its shape's floor gets the nearer of the two floors). A shape that was not
    /// measured gets the spin asked for the recorded duration.
    pub fn choose(&self, recorded_ns: f64, shape: ShapeKey) -> Choice {
        self.choose_carrying(recorded_ns, shape, &mut SubFloorCarry::default())
    }

    /// Whether `op`'s paced read keeps sixteen loads in flight a thread
    /// ([`memra_engine::Pace::deep`]) instead of four: where its kernel's
    /// threads held at least the registers that takes, so its blocks hold no more than the
    /// kernel's did. A grid of few threads with many registers each (decode attention: 128
    /// blocks of 128 threads, 183 registers, reading 4.4 TB/s on an H200) reads with four
    /// loads a thread at a fraction of the pace its kernel kept.
    pub fn paces_deep(&self, op: &crate::trace::Op) -> bool {
        self.deep_registers > 0
            && op
                .resources
                .is_some_and(|r| r.registers_per_thread >= self.deep_registers)
    }

    /// The launch shape of `op`'s timed stand-in (see [`StandInPlan::hold_sms`]): the
    /// dynamic shared memory of [`crate::occupancy::SmLimits::stand_in_shared_bytes`].
    pub fn held_shape(&self, shape: LaunchShape, op: &crate::trace::Op) -> LaunchShape {
        let (x, y, z) = shape.block;
        let threads = x.saturating_mul(y).saturating_mul(z);
        let bytes = self
            .hold_sms
            .map_or(0, |l| l.stand_in_shared_bytes(threads, op.resources));
        shape.with_shared(bytes)
    }

    /// The launch shape of `op`'s paced read: [`StandInPlan::held_shape`], its blocks cut to
    /// what the device holds at once by the recorded kernel's needs (one-dimensional) where
    /// the recorded grid is larger. Every block paces its share of the bytes from the grid's
    /// start, so a block dispatched only when another retires would find its share already
    /// due; in a grid of several rounds the first round's blocks then wait out the whole
    /// time holding every SM, and beside another stream's kernels the walk came out longer
    /// than with the streams one after the other (`scripts/kernel_pair_walks.py`: two chains
    /// of 16M-element adds, 534 µs replayed against 282 real). Without SM limits, as recorded.
    pub fn paced_shape(&self, shape: LaunchShape, op: &crate::trace::Op) -> LaunchShape {
        let held = self.held_shape(shape, op);
        let Some(l) = self.hold_sms else {
            return held;
        };
        let resident = l.resident_grid(held.block, op.resources);
        let cut = if resident == 0 || held.blocks() <= resident {
            held
        } else {
            LaunchShape {
                grid: (u32::try_from(resident).unwrap_or(u32::MAX), 1, 1),
                ..held
            }
        };
        if self.paces_deep(op) {
            self.deep_block(cut, op, l)
        } else {
            cut
        }
    }

    /// The block of `op`'s deep paced read ([`StandInPlan::paces_deep`]): as many threads of
    /// the deep read's registers as the recorded block's threads held registers (whole warps,
    /// no more than a block may hold), and the shared memory that keeps an SM to as many of
    /// them as of the recorded blocks. A stand-in of fewer registers than its kernel leaves
    /// room beside it that the kernel did not: a LayerNorm on another stream ran beside a
    /// stand-in of 128 threads of 32 registers where it had waited for decode attention's 183.
    /// (Asking for the recorded block's shared memory instead, where that holds as many, came
    /// out further from the real graphs on 33 stored walks: median error 6.1% against 5.3%.)
    fn deep_block(
        &self,
        shape: LaunchShape,
        op: &crate::trace::Op,
        l: crate::occupancy::SmLimits,
    ) -> LaunchShape {
        let (x, y, z) = shape.block;
        let threads = x.saturating_mul(y).saturating_mul(z);
        let Some(r) = op.resources else { return shape };
        let own = crate::occupancy::BlockResources {
            registers_per_thread: self.deep_registers,
            shared_bytes: 0,
        };
        let held = u64::from(threads) * u64::from(r.registers_per_thread);
        let wide = (held / u64::from(self.deep_registers.max(1)) / 32 * 32).max(u64::from(threads));
        let wide = u32::try_from(wide)
            .unwrap_or(u32::MAX)
            .min(l.largest_block(Some(own)));
        let want = l.resident_blocks(threads, op.resources);
        LaunchShape {
            block: (wide, 1, 1),
            ..shape
        }
        .with_shared(l.shared_bytes_holding(want, wide, Some(own)))
    }

    /// Whether `op`'s timed spin, of launch shape `held`, spins per block: on walks that hold
    /// SMs, with [`StandInPlan::spin_per_block`], where the device holds all its blocks at once
    /// by the recorded kernel's needs (which `held` reproduces): alone, its kernel ran in one
    /// round of blocks, each taking its time.
    pub fn spins_per_block(&self, held: LaunchShape, op: &crate::trace::Op) -> bool {
        let Some(l) = self.hold_sms.filter(|_| self.spin_per_block) else {
            return false;
        };
        held.blocks() <= l.resident_grid(held.block, op.resources)
    }

    /// [`StandInPlan::choose`] among spins and the empty kernel only (no chase).
    pub fn choose_spin(&self, recorded_ns: f64, shape: ShapeKey) -> Choice {
        self.choose_chasing(recorded_ns, shape, &mut SubFloorCarry::default(), None)
    }

    /// The stand-in for the next kernel of a stream, recorded at `recorded_ns` with `shape`;
    /// `carry` holds what the stream's sub-floor choices so far came out over their targets
    /// (see [`SubFloor`]) and is updated.
    pub fn choose_carrying(
        &self,
        recorded_ns: f64,
        shape: ShapeKey,
        carry: &mut SubFloorCarry,
    ) -> Choice {
        self.choose_chasing(recorded_ns, shape, carry, Some(ChaseKind::Reads))
    }

    /// [`StandInPlan::choose_carrying`] for the kernel `op`: a chase only where its shape's
    /// chase was measured and [`StandInPlan::concurrent`] lets this kernel chase.
    pub fn choose_named(
        &self,
        op: &Op,
        recorded_ns: f64,
        shape: ShapeKey,
        carry: &mut SubFloorCarry,
    ) -> Choice {
        let chase = chase_kind(self.concurrent, op, shape);
        self.choose_chasing(recorded_ns, shape, carry, chase)
    }

    fn choose_chasing(
        &self,
        recorded_ns: f64,
        shape: ShapeKey,
        carry: &mut SubFloorCarry,
        chase: Option<ChaseKind>,
    ) -> Choice {
        let Some(n) = self.shapes.get(&shape) else {
            return Choice::Spin(recorded_ns.max(0.0).round() as u64);
        };
        let target = recorded_ns / 1e3 + self.gap_us;
        let nodes = match chase {
            Some(ChaseKind::Reads) => n.chase.map(|c| (c, ChaseKind::Reads)),
            Some(ChaseKind::Barriers) => n.barrier_chase.map(|c| (c, ChaseKind::Barriers)),
            None => None,
        };
        if let Some((c, kind)) = nodes {
            let chase = |steps, ns| match kind {
                ChaseKind::Reads => Choice::Chase { steps, ns },
                ChaseKind::Barriers => Choice::BarrierChase { steps, ns },
            };
            let one_read_us = c.one_step_us();
            if self.chase_floor == ChaseFloor::OneStep && target < one_read_us {
                // Below one read: the empty kernel or a one-read chase, balanced as below.
                let owed = carry.over_us;
                if carry.takes_empty(owed, n.empty_us - target, one_read_us - target) {
                    return Choice::Empty;
                }
                carry.reads += 1;
                return chase(1, 0);
            }
            if let Some((steps, ns)) = c.request(target) {
                return chase(steps, ns);
            }
        }
        if target <= n.spin_zero_us {
            let owed = match self.sub_floor {
                SubFloor::Nearest => 0.0,
                SubFloor::Balance => carry.over_us,
            };
            return if carry.takes_empty(owed, n.empty_us - target, n.spin_zero_us - target) {
                Choice::Empty
            } else {
                Choice::Spin(0)
            };
        }
        Choice::Spin(n.spin_request_ns(target))
    }
}

impl ShapeNodes {
    /// Requests up to this many ns buy a spin of this shape no time, ns: the spin's own
    /// bookkeeping (the grid's start stamp, a block barrier, the end stamp) outlasts them, so
    /// its node stays at [`Self::spin_zero_us`]. Past it the node grows a nanosecond per
    /// requested nanosecond, which puts the knee where that line through the probe meets the
    /// floor. On an H200 the measured node curve is flat to 100–250 ns, by shape, then
    /// straight (`scripts/spin_node_curve.py`); interpolating straight from the floor to the
    /// probe instead asked a kernel ~0.1 µs over its floor for a request inside the flat part,
    /// and its node came out at the floor.
    pub fn spin_knee_ns(&self) -> f64 {
        let probe = PROBE_NS as f64;
        (probe - (self.spin_probe_us - self.spin_zero_us) * 1e3).clamp(0.0, probe)
    }

    /// The request that puts this shape's spin node at `target_us` (above its floor).
    pub fn spin_request_ns(&self, target_us: f64) -> u64 {
        let over_ns = (target_us - self.spin_zero_us) * 1e3;
        (self.spin_knee_ns() + over_ns.max(0.0)).round() as u64
    }
}

/// What the sub-floor choices along one stream came to: how many, and how far their planned
/// node times sum over their targets, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SubFloorCarry {
    pub kernels: usize,
    pub over_us: f64,
    /// Of those kernels, how many stand in by a one-read chase ([`ChaseFloor::OneStep`]).
    pub reads: usize,
}

impl SubFloorCarry {
    /// Whether the empty kernel (its node `empty_over_us` over the target) rather than the
    /// stand-in above the target (`other_over_us` over it) leaves `owed + over` nearer zero;
    /// counts the kernel and carries what the choice came out over its target.
    fn takes_empty(&mut self, owed: f64, empty_over_us: f64, other_over_us: f64) -> bool {
        let empty = (owed + empty_over_us).abs() < (owed + other_over_us).abs();
        self.over_us += if empty { empty_over_us } else { other_over_us };
        self.kernels += 1;
        empty
    }
}

mod measure;
mod modes;
mod work;

pub use measure::{node_us, node_us_after, plan};
pub use modes::{
    chase_kind, ChaseFloor, ChaseKind, ConcurrentSpins, ConcurrentStandIn, ElementWise, PacedReads,
    PastL2, SpinFit, SubFloor, ROUND_BYTES,
};
pub use work::{measure_work_nodes, work_floor_note, WorkKey};

#[cfg(test)]
mod chase_tests;
#[cfg(test)]
mod paced_tests;
#[cfg(test)]
mod tests;
