//! Replaying a recorded walk on the GPU at hand, eagerly and as one captured graph.
//!
//! Each recorded kernel becomes a `spin_grid` launch with the recorded grid and block (or the
//! empty kernel of that shape) whose graph node lasts as long as the recorded kernel's would
//! (see [`crate::stand_in`]); copies run in their recorded direction and size (host ends in
//! page-locked memory), memsets as memsets (module `prepared`). Each recorded stream
//! runs on a stream of its own where the trace recorded the waits between them, else all on
//! one stream in start order (see [`crate::lanes`]).

use std::time::{Duration, Instant};

use memra_engine::{Engine, GemmType};
use serde::{Deserialize, Serialize};

use crate::calibration::{calibrate, Calibration};
pub use crate::caveats::unreproduced;
use crate::caveats::{
    concurrent_kernels, prior_streams_on_one_stream, process_history, streaming_off_on_lanes,
};
use crate::fidelity::{fidelity, per_kernel_median};
pub use crate::fidelity::{Fidelity, FIDELITY_MIN_NS};
use crate::figures::{headline_warnings, Summaries};
use crate::footprint::{
    l2_paced_from, lanes_within_l2_note, past_whole_l2, replay_memory_unknown, streams_from,
    within_l2, within_l2_note, Footprint, L2Resident, UnknownMemory,
};
use crate::laned::LanedWalk;
use crate::lanes::Schedule;
use crate::node_gap::{GapSource, NodeGap};
use crate::runner::{Context, Convergence, StopRule};
use crate::stand_in::{
    self, ChaseFloor, ConcurrentSpins, ConcurrentStandIn, ElementWise, PacedReads, PastL2, SpinFit,
    SubFloor,
};
use crate::stats::Summary;
use crate::timeline::Timeline;
use crate::trace::matmul::{operand_bytes, MatmulRole};
use crate::trace::{is_element_wise, Walk};

/// Replayed GEMMs whose operands together take more than this are stood in instead, bytes.
const REAL_GEMM_MAX_BYTES: u64 = 8 << 30;

/// One trial of the replay, in ms per walk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayTrial {
    pub eager_issue_ms: f64,
    pub eager_wall_ms: f64,
    pub graph_launch_host_ms: f64,
    pub graph_wall_ms: f64,
    pub graph_gpu_ms: f64,
    pub capture_ms: f64,
    pub instantiate_ms: f64,
    pub upload_ms: f64,
}

crate::figures::figure_set! {
    /// The figures of a replay trial, ms per walk.
    ReplayFigure for ReplayTrial, headline [EagerWallMs, GraphWallMs] {
        EagerIssueMs => "eager_issue_ms", |t| t.eager_issue_ms;
        EagerWallMs => "eager_wall_ms", |t| t.eager_wall_ms;
        GraphLaunchHostMs => "graph_launch_host_ms", |t| t.graph_launch_host_ms;
        GraphWallMs => "graph_wall_ms", |t| t.graph_wall_ms;
        GraphGpuMs => "graph_gpu_ms", |t| t.graph_gpu_ms;
        CaptureMs => "capture_ms", |t| t.capture_ms;
        InstantiateMs => "instantiate_ms", |t| t.instantiate_ms;
        UploadMs => "upload_ms", |t| t.upload_ms;
        BuildMs => "build_ms", |t| t.capture_ms + t.instantiate_ms + t.upload_ms;
    }
}

/// Options of a replay run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayConfig {
    pub rule: StopRule,
    pub reps: usize,
    pub warmup: usize,
    /// Host busy-work before each eager launch, µs, standing for a framework's own overhead.
    pub host_overhead_us: f64,
    /// Profiled duration − own span of the spin kernel, ns.
    pub spin_ramp_ns: f64,
    /// Where it came from; `None` in results written before that was recorded.
    #[serde(default)]
    pub spin_ramp_from: Option<crate::calibration::RampFrom>,
    /// Kernels recorded at least this long stand in by streaming memory, ns (see
    /// [`crate::stand_in`]); `None`: every kernel spins.
    #[serde(default)]
    pub stream_from_ns: Option<f64>,
    /// Kernels replayed with programmatic dependent launch.
    #[serde(default)]
    pub pdl: bool,
    /// After the trials, run one more eager walk and graph replay and keep their GPU stamps
    /// ([`ReplayResult::timeline`]).
    #[serde(default)]
    pub timeline: bool,
    /// Which recorded GEMMs (with shapes) run for real (cuBLAS) instead of standing in.
    #[serde(default)]
    pub gemms: GemmReplay,
    /// Where those GEMMs read and write.
    #[serde(default)]
    pub gemm_operands: crate::operand_pool::GemmOperands,
    /// How kernels below their shape's floor stand in.
    #[serde(default)]
    pub sub_floor: SubFloor,
    /// What stands in for kernels on walks whose streams run side by side.
    #[serde(default)]
    pub concurrent: ConcurrentStandIn,
    /// How timed spins keep their time on walks whose streams run side by side.
    #[serde(default)]
    pub concurrent_spins: ConcurrentSpins,
    /// What stands in for a chasing kernel shorter than a one-read chase.
    #[serde(default)]
    pub chase_floor: ChaseFloor,
    /// How element-wise kernels recorded at `stream_from_ns` or longer stand in on a walk of
    /// one stream.
    #[serde(default)]
    pub element_wise: ElementWise,
    /// What long kernels stand in by where the recorded shapes put the walk's data within 2/3
    /// of the L2.
    #[serde(default)]
    pub l2_resident: L2Resident,
    /// What paced stand-ins read where the lanes' data together pass the whole L2.
    #[serde(default)]
    pub past_l2: PastL2,
    /// Whether timed spins are fitted in the walk's graph.
    #[serde(default)]
    pub spin_fit: SpinFit,
    /// Streams that ran a kernel before the replay's own were created (see
    /// [`crate::prior_streams`]); the caller runs them.
    #[serde(default)]
    pub prior_streams: u32,
    /// The grid table wide kernels' nodes are planned by (see [`crate::wide_grids`]); `None`:
    /// every node at its recorded duration + the one-block gap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid_nodes: Option<crate::wide_grids::WideGrids>,
    /// The front-end gap every node is planned with; `None`: measured on the GPU at the start
    /// (see [`crate::node_gap`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_gap: Option<NodeGap>,
    /// The inputs of the device profile describing this GPU (see
    /// [`crate::node_gap::profile_for`]), which price what a replay reading less than its
    /// trace may miss; `None`: no profile describes it. Not exported: a document names its
    /// profile where the node gap came from one.
    #[serde(skip)]
    pub profile: Option<crate::model::ModelInputs>,
}

/// Which recorded GEMMs a replay runs for real: those whose operator's shapes the trace holds
/// (see `crate::trace::matmul`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum GemmReplay {
    /// On walks whose streams run side by side (where what GEMMs do to each other is what
    /// stand-ins miss) all of them; on single-stream walks those held by their math (see
    /// [`crate::roofline`]) that the engine runs as recorded (`mm`, `bmm`), whose time is
    /// tensor-core math that cuBLAS repeats, while the others, weight reads, stand in.
    #[default]
    Auto,
    /// On every walk.
    Real,
    /// None: every kernel stands in.
    StandIn,
}

/// Everything a replay measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayResult {
    pub config: ReplayConfig,
    pub ops: usize,
    pub kernels: usize,
    pub recorded_gpu_ms: f64,
    pub recorded_span_ms: f64,
    /// How the recorded streams were replayed (see [`crate::lanes`]).
    #[serde(default)]
    pub streams: String,
    /// The lanes the walk replayed on: more than one where its streams ran side by side.
    #[serde(default)]
    pub lanes: usize,
    pub calibration: Calibration,
    /// The front end's gap a graph node adds to its kernel's profiled duration, µs, as
    /// measured for the stand-in plan (see [`crate::stand_in`]).
    #[serde(default)]
    pub node_gap_us: f64,
    /// Where [`Self::node_gap_us`] came from.
    #[serde(default)]
    pub node_gap_source: GapSource,
    /// What the stand-ins were planned to take as graph nodes: Σ (recorded duration + gap)
    /// over kernels, ms. The replayed graph's GPU time is the check of that plan.
    #[serde(default)]
    pub planned_nodes_ms: f64,
    /// Device memory one replay of the stand-ins, real GEMMs, copies and memsets touches
    /// afresh, bytes: past 2/3 of the L2 the replayed graph takes the larger step to the upper
    /// level of node cost ([`crate::footprint`]), so this says which step the replay took.
    #[serde(default)]
    pub touched_bytes: f64,
    pub fidelity: Fidelity,
    pub trials: Vec<ReplayTrial>,
    pub summary: Summaries<ReplayFigure>,
    pub convergence: Vec<Convergence>,
    pub warnings: Vec<String>,
    /// True when an interrupt cut the trials short.
    pub interrupted: bool,
    /// Wall time per replay of the graph, ms, after [`crate::other_stream::activate`]: at the
    /// upper level of graph node cost, the one framework processes were found at; measured
    /// after the trials. `None` when interrupted.
    #[serde(default)]
    pub graph_wall_other_stream_ms: Option<Summary>,
    /// GPU time per replay (events) in the same state, ms.
    #[serde(default)]
    pub graph_gpu_other_stream_ms: Option<Summary>,
    /// Added to the graph step, ms, for memory a trace without shapes does not rule in or out:
    /// half what the larger step to the upper level adds over the smaller, positive where the
    /// stand-ins' reads took the smaller, negative where they took the larger
    /// ([`crate::footprint::replay_memory_unknown`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_memory_ms: Option<f64>,
    /// The replayed walks on the GPU clock, when asked for (`--export-trace`); not part of the
    /// JSON document (it has its own file).
    #[serde(skip)]
    pub timeline: Option<Box<Timeline>>,
}

impl ReplayResult {
    pub fn median(&self, f: ReplayFigure) -> f64 {
        self.summary.median(f)
    }
}

/// The operand bytes of the recorded GEMMs among `kernels` (their first kernels'), summed:
/// what running them for real allocates.
fn operand_bytes_of<'a>(kernels: impl Iterator<Item = &'a crate::trace::Op>) -> u64 {
    kernels
        .filter_map(|o| match o.matmul {
            Some(MatmulRole::Call(g)) => Some(operand_bytes(&g)),
            _ => None,
        })
        .fold(0u64, u64::saturating_add)
}

/// What `--l2-resident` asks (`asked`) comes to on `walk`: `work` keeps the default stand-ins
/// on a walk with recorded GEMMs. Beside GEMV, projection and expert lanes, element-wise
/// stand-ins that do their work priced 14-18% high on an H100 (5 of 14 such walks of held-out
/// batches 68-74 within 5%, against the default's 9: docs/validation-h200.md, "Held-out batch
/// 76 on an H100"), as paced reads did; there the default's chases stretch as the kernels
/// do beside the GEMMs run for real.
pub(crate) fn l2_choice_for(asked: L2Resident, walk: &Walk) -> L2Resident {
    if asked == L2Resident::Work && walk.kernels().any(|o| o.matmul.is_some()) {
        L2Resident::Spin
    } else {
        asked
    }
}

/// Replays `walk` eagerly and as a graph with the trial runner; each trial rebuilds the graph
/// (so build time is sampled too), then runs the eager and graph paths in rotating order.
pub fn replay(
    e: &Engine,
    walk: &Walk,
    cfg: &ReplayConfig,
    ctx: &Context<'_>,
) -> anyhow::Result<ReplayResult> {
    let cal = calibrate(e, cfg.spin_ramp_ns)?;
    let schedule = Schedule::of(walk);
    let overlapping = schedule.lanes() > 1;
    let l2 = e.device_info().l2_bytes.max(0) as f64;
    let resident = Footprint::inputs_added(walk);
    let l2_choice = l2_choice_for(cfg.l2_resident, walk);
    let l2_paced_from =
        l2_paced_from(cfg.stream_from_ns, l2_choice, resident, l2).filter(|_| overlapping);
    let paced_in_l2 = l2_paced_from.is_some();
    let streams_from =
        l2_paced_from.or_else(|| streams_from(cfg.stream_from_ns, l2_choice, resident, l2));
    let stream_from_ns = match streams_from {
        Some(ns) if !overlapping => ns,
        _ => f64::INFINITY,
    };
    // Spins only (`--stream-from-us off`) also stands in for GEMMs held by their math.
    let long_kernels_as_recorded = cfg.stream_from_ns.is_some() && !overlapping;
    let gap = NodeGap::given_or_measured(cfg.node_gap.as_ref(), e, &cal)?;
    // Only where streams run side by side do stand-ins chase.
    let chases = overlapping.then_some(cfg.concurrent);
    let gemm_bytes = operand_bytes_of(walk.kernels());
    let wanted = match cfg.gemms {
        GemmReplay::Auto => overlapping,
        GemmReplay::Real => true,
        GemmReplay::StandIn => false,
    };
    let real_gemms = wanted && gemm_bytes <= REAL_GEMM_MAX_BYTES;
    let mut plan = stand_in::plan(e, walk, &cal, gap.us, stream_from_ns, chases, real_gemms)?;
    plan.chase_floor = cfg.chase_floor;
    plan.stream_element_wise = cfg.element_wise == ElementWise::Stream;
    plan.wide_grids = cfg.grid_nodes.clone();
    plan.gemm_operands = cfg.gemm_operands;
    // The peaks decide which GEMMs are held by their math (on one stream) and which f32 GEMMs
    // ran on TF32 (where all run for real, only f32 ones need them).
    let f32_gemms = walk
        .kernels()
        .any(|o| matches!(o.matmul, Some(MatmulRole::Call(g)) if g.dtype == GemmType::F32));
    if long_kernels_as_recorded || (plan.real_gemms && f32_gemms) {
        plan.roofline = crate::roofline::measure(e, walk.kernels())?;
    }
    if long_kernels_as_recorded && !plan.real_gemms && cfg.gemms == GemmReplay::Auto {
        let math_bytes = operand_bytes_of(walk.kernels().filter(|o| plan.math_gemm_as_recorded(o)));
        plan.real_math_gemms = math_bytes <= REAL_GEMM_MAX_BYTES;
    }
    plan.sub_floor = cfg.sub_floor;
    plan.spin_fit = cfg.spin_fit;
    if overlapping {
        plan.hold_sms = crate::occupancy::SmLimits::of_device(e.device_info());
        plan.spin_per_block = cfg.concurrent_spins == ConcurrentSpins::Blocks;
    }
    if let (true, Some(ns)) = (overlapping, streams_from) {
        if walk
            .kernels()
            .any(|o| o.input_bytes.is_some() && o.duration_ns >= ns)
        {
            plan.paced_from_ns = ns;
            plan.paced = if !paced_in_l2 {
                if cfg.past_l2 == PastL2::Whole && past_whole_l2(resident, l2) {
                    PacedReads::Whole
                } else {
                    PacedReads::Capped
                }
            } else if l2_choice == L2Resident::Work {
                PacedReads::InL2Work
            } else {
                PacedReads::InL2
            };
            if paced_in_l2 {
                // What lanes of adds within the L2 move together: the most such a read asks.
                let l2 = crate::l2_lanes::measure(e)?.together_gb_s;
                plan.bytes_per_ns = l2;
                plan.peak_bytes_per_ns = l2;
            } else {
                plan.bytes_per_ns = match &plan.roofline {
                    Some(r) => r.bytes_per_ns,
                    None => crate::roofline::copy_bandwidth(e)?,
                };
                plan.peak_bytes_per_ns = e.device_info().peak_memory_bytes_per_ns().unwrap_or(0.0);
            }
            plan.deep_registers = e.paced_deep_registers()?;
            if plan.paced.writes() {
                stand_in::measure_work_nodes(e, walk, &mut plan)?;
            }
        }
    }
    let mut laned = LanedWalk::new(e, walk, &schedule, &plan)?;
    let overhead = Duration::from_secs_f64(cfg.host_overhead_us.max(0.0) / 1e6);
    let mut spans = Vec::new();
    let mut done = 0usize;
    let runner = ctx.runner(cfg.rule, cfg.warmup, 2);
    let per = 1e3 / cfg.reps as f64;
    let out = runner.run::<ReplayFigure>(|order| {
        let mut t = ReplayTrial::default();
        let graph = laned.capture()?;
        let ct = graph.timings();
        t.capture_ms = ct.capture.as_secs_f64() * 1e3;
        t.instantiate_ms = ct.instantiate.as_secs_f64() * 1e3;
        t.upload_ms = ct.upload.as_secs_f64() * 1e3;
        for &path in order {
            let s = Instant::now();
            if path == 0 {
                for _ in 0..cfg.reps {
                    laned.issue(overhead)?;
                }
                t.eager_issue_ms = s.elapsed().as_secs_f64() * per;
                e.stream().synchronize()?;
                t.eager_wall_ms = s.elapsed().as_secs_f64() * per;
            } else {
                for _ in 0..cfg.reps {
                    graph.launch()?;
                }
                t.graph_launch_host_ms = s.elapsed().as_secs_f64() * per;
                e.stream().synchronize()?;
                t.graph_wall_ms = s.elapsed().as_secs_f64() * per;
            }
        }
        t.graph_gpu_ms = e.gpu_time_ms(|| graph.launch())?;
        done += 1;
        if done > cfg.warmup {
            spans.push(laned.durations(cal.ramp_ns)?);
        }
        Ok(t)
    })?;
    let timeline = if cfg.timeline && !out.interrupted {
        laned.issue(Duration::ZERO)?;
        e.stream().synchronize()?;
        let eager = laned.stamps()?;
        let graph = laned.capture()?;
        graph.launch()?;
        graph.launch()?;
        e.stream().synchronize()?;
        Some(Box::new(Timeline {
            eager,
            graph: laned.stamps()?,
            lane_streams: schedule.streams.clone(),
        }))
    } else {
        None
    };
    let (wall_other, gpu_other) = if out.interrupted {
        (None, None)
    } else {
        let (w, g) = replay_after_other_stream(e, &mut laned, 7, cfg.reps)?;
        (Some(Summary::of(&w)), Some(Summary::of(&g)))
    };
    let sum: f64 = walk.ops.iter().map(|o| o.duration_ns).sum();
    let kernel_sum_ns: f64 = walk.kernels().map(|o| plan.planned_ns(o)).sum();
    let planned_nodes_ms =
        (kernel_sum_ns / 1e3 + walk.kernels().count() as f64 * plan.gap_us) / 1e3;
    let mut warnings = unreproduced(walk, true);
    let real_gemm_kernels = laned.real_gemm_kernels();
    if wanted && gemm_bytes > REAL_GEMM_MAX_BYTES {
        warnings.push(format!(
            "the recorded GEMMs' operands take {:.1} GiB, more than the {} GiB a replay gives them: they stand in",
            gemm_bytes as f64 / (1u64 << 30) as f64,
            REAL_GEMM_MAX_BYTES >> 30
        ));
    }
    let on_tf32 = walk.kernels().filter(|o| plan.runs_on_tf32(o)).count();
    if on_tf32 > 0 {
        warnings.push(format!(
            "{on_tf32} recorded f32 GEMM(s) took less time than IEEE f32 math on this GPU needs, so ran on TF32 tensor cores (PyTorch's allow_tf32): the replay runs them on TF32 too"
        ));
    }
    if overlapping {
        if streams_from.is_some() {
            warnings.push(streaming_off_on_lanes(cfg.concurrent));
        }
        warnings.push(concurrent_kernels(
            schedule.side_by_side_share(walk),
            Some((real_gemm_kernels, walk.kernels().count())),
        ));
        warnings.push(process_history(cfg.prior_streams));
    } else {
        warnings.extend(prior_streams_on_one_stream(cfg.prior_streams));
    }
    let touched_bytes = laned.touched_bytes();
    let unknown = memory_unknown(e, walk, touched_bytes, cfg.profile.as_ref(), !overlapping)?;
    let unknown_memory_ms = unknown.as_ref().map(|r| r.added_ms).filter(|ms| *ms != 0.0);
    warnings.extend(unknown.map(|r| r.warning));
    if let Some(ns) = cfg.stream_from_ns {
        if walk
            .kernels()
            .any(|o| reads_past_the_line(o, ns, overlapping, cfg.element_wise))
        {
            let streaming = laned.streaming_stand_ins() + laned.paced_stand_ins();
            warnings.extend(within_l2_note(resident, l2, l2_choice, ns / 1e3, streaming));
        }
    }
    if cfg.stream_from_ns.is_some() {
        warnings.extend(lanes_within_l2_note(
            walk,
            resident,
            l2,
            l2_choice,
            overlapping,
        ));
    }
    warnings.extend(stand_in::work_floor_note(walk, &plan));
    if l2_choice != cfg.l2_resident && overlapping && within_l2(resident, l2) {
        warnings.push(
            "--l2-resident work: this walk has recorded GEMMs, beside whose lanes element-wise stand-ins that do their work priced 14-18% high on an H100 (5 of 14 such held-out walks within 5%, the default 9), so it replays with the default stand-ins".to_string(),
        );
    }
    warnings.extend(headline_warnings::<ReplayFigure>(&out.trials));
    warnings.extend(out.convergence_warnings(cfg.rule.max_noise));
    Ok(ReplayResult {
        config: cfg.clone(),
        ops: walk.ops.len(),
        kernels: walk.kernels().count(),
        recorded_gpu_ms: sum / 1e6,
        recorded_span_ms: walk.span_ns() / 1e6,
        streams: schedule.describe(),
        lanes: schedule.lanes(),
        calibration: cal,
        node_gap_us: plan.gap_us,
        node_gap_source: gap.source,
        planned_nodes_ms,
        touched_bytes,
        fidelity: {
            let f = fidelity(walk, &per_kernel_median(&spans));
            let sub_floor = laned.sub_floor();
            Fidelity {
                streaming_stand_ins: laned.streaming_stand_ins(),
                chase_stand_ins: laned.chase_stand_ins(),
                barrier_chase_stand_ins: laned.barrier_chase_stand_ins(),
                block_spin_stand_ins: laned.block_spin_stand_ins(),
                paced_stand_ins: laned.paced_stand_ins(),
                sub_floor_kernels: sub_floor.kernels,
                sub_floor_over_us: sub_floor.over_us,
                sub_floor_reads: sub_floor.reads,
                real_gemm_kernels,
                empty_stand_ins: f.empty_stand_ins.saturating_sub(real_gemm_kernels),
                ..f
            }
        },
        summary: Summaries::of(&out.trials),
        trials: out.trials,
        convergence: out.convergence,
        warnings,
        interrupted: out.interrupted,
        graph_wall_other_stream_ms: wall_other,
        graph_gpu_other_stream_ms: gpu_other,
        unknown_memory_ms,
        timeline,
    })
}

/// Whether `op` stands in by streaming device memory (or, on a walk whose streams overlap,
/// reading its recorded inputs paced) where its walk's data is past the L2's line and long
/// kernels stream from `ns`: on one stream long element-wise kernels spin unless `element_wise`
/// streams them; beside other streams only kernels with recorded inputs read paced.
fn reads_past_the_line(
    op: &crate::trace::Op,
    ns: f64,
    overlapping: bool,
    element_wise: ElementWise,
) -> bool {
    op.duration_ns >= ns
        && if overlapping {
            op.input_bytes.is_some()
        } else {
            element_wise == ElementWise::Stream || !is_element_wise(&op.name)
        }
}

/// [`crate::footprint::replay_memory_unknown`] for `walk` replayed on `e`, the stand-ins touching
/// `touched` bytes a replay: the bound at the bandwidth and the step it may miss from
/// `profile` (as `--summary` prices them), the bandwidth measured on `e` where no profile
/// describes this GPU; `one_stream`: the walk's nodes all add up. Nothing is measured for a
/// walk with recorded shapes.
fn memory_unknown(
    e: &Engine,
    walk: &Walk,
    touched: f64,
    profile: Option<&crate::model::ModelInputs>,
    one_stream: bool,
) -> anyhow::Result<Option<UnknownMemory>> {
    use crate::footprint::FootprintSource;
    if Footprint::stated(walk).source == FootprintSource::Recorded {
        return Ok(None);
    }
    let info = e.device_info();
    let bandwidth = match profile.map(|m| m.bandwidth_gb_s()).filter(|b| *b > 0.0) {
        Some(b) => b,
        None => crate::roofline::copy_bandwidth(e)?,
    };
    let estimate = Footprint::of(walk, bandwidth, u32::try_from(info.sm_count).ok());
    let extra = profile.and_then(|m| {
        Some(m.graph_node_other_stream_beyond_l2_us? - m.graph_node_other_stream_us?)
    });
    Ok(replay_memory_unknown(
        estimate,
        touched,
        info.l2_bytes.max(0) as f64,
        walk.ops.len(),
        extra,
        one_stream,
    ))
}

/// The walk's graph, wall and GPU time per replay (ms), in `samples` fresh captures of
/// `reps` back-to-back replays, after [`crate::other_stream::activate`]. Run last: the
/// process stays at the upper level.
fn replay_after_other_stream(
    e: &Engine,
    laned: &mut LanedWalk,
    samples: usize,
    reps: usize,
) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    crate::other_stream::activate(e)?;
    let (mut wall, mut gpu) = (Vec::with_capacity(samples), Vec::with_capacity(samples));
    let per = 1e3 / reps as f64;
    for _ in 0..samples {
        let graph = laned.capture()?;
        graph.launch()?;
        e.stream().synchronize()?;
        let (a, b) = (e.event()?, e.event()?);
        let s = Instant::now();
        a.record()?;
        for _ in 0..reps {
            graph.launch()?;
        }
        b.record()?;
        b.synchronize()?;
        wall.push(s.elapsed().as_secs_f64() * per);
        gpu.push(a.elapsed_ms(&b)? as f64 / reps as f64);
    }
    Ok((wall, gpu))
}

#[cfg(test)]
mod tests;
