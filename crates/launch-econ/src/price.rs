//! The price of capturing a recorded step: the graph step, the eager step and where it came
//! from, the saving, the build, and when the build pays back.
//!
//! The eager step is the one figure the GPU cannot measure for the user: most of a real eager
//! step is the framework's own host work, which a lean replay does not have. It comes, in this
//! order of preference, from the user (`--eager-step-ms`, the step timed without a profiler),
//! from the trace's host side (the recorded span, less the profiler's inflation of each launch
//! call), or, last and labelled as a lower bound, from the engine's own issue cost.

use serde::{Deserialize, Serialize};

use crate::footprint::{Footprint, LevelStep};
use crate::lanes::Schedule;
use crate::model::ModelInputs;
use crate::occupancy::SmLimits;
use crate::output::num;
use crate::sharing::{lay_out_sharing, NodeCost};
use crate::trace::matmul::MatmulRole;
use crate::trace::{CopyDirection, Op, OpKind, Walk};
use crate::wide_grids::WideGrids;

/// Where the eager step came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EagerSource {
    /// `--eager-step-ms`: the user's unprofiled step.
    User,
    /// The trace's host side.
    Trace,
    /// The engine's own issue cost: no framework work at all, so a lower bound.
    EngineFloor,
}

impl EagerSource {
    pub fn describe(self) -> &'static str {
        match self {
            EagerSource::User => "--eager-step-ms (your unprofiled step)",
            EagerSource::Trace => {
                "the trace's host side: recorded span less the profiler's own work, its inflation of launch calls and, per recorded event, its callbacks' cost read from the trace; off by 0.5-4.6x (56 H200 validation walks at commit f9b3efc: the PyTorch walks mostly high, the CuPy walks low): pass --eager-step-ms"
            }
            EagerSource::EngineFloor => {
                "the engine's own issue cost: a LOWER BOUND with no framework cost; pass --eager-step-ms"
            }
        }
    }
}

/// Where the graph step came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GraphSource {
    /// The walk replayed as a graph on this GPU.
    Replay,
    /// The offline model over a saved profile.
    Model,
}

impl GraphSource {
    /// How far this source's graph step came from the real graph on nearly all of the H200
    /// validation walks (docs/validation-h200.md, 46 walks in one session: the replay within
    /// 5% on 44, the offline model within 10% on 43), as a fraction.
    pub fn validated_error(self) -> f64 {
        match self {
            GraphSource::Replay => 0.05,
            GraphSource::Model => 0.10,
        }
    }
}

/// A saving this small against the graph step's validated error is flagged: that error is at
/// least this share of the saving.
const SMALL_SAVING_SHARE: f64 = 0.1;

/// The prediction block of `replay` and `replay --summary`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepPrice {
    pub graph_step_ms: f64,
    pub graph_source: GraphSource,
    pub eager_step_ms: f64,
    pub eager_source: EagerSource,
    /// Eager minus graph; not positive means no saving.
    pub saving_ms: f64,
    pub build_ms: f64,
    /// Steps of replay that pay back the build; `None` without a saving.
    pub break_even_steps: Option<f64>,
    /// How far the graph step may be off, ms: its source's validated error
    /// ([`GraphSource::validated_error`]) of it; the saving carries the same.
    #[serde(default)]
    pub graph_step_error_ms: f64,
    /// The graph step at the lower level of per-node graph cost (see
    /// [`crate::other_stream`]): a lower bound, ms.
    #[serde(default)]
    pub graph_step_quiet_ms: Option<f64>,
    /// The saving at the lower level (eager minus [`Self::graph_step_quiet_ms`]), ms: where the
    /// saving is small, a process at the lower level saves noticeably more.
    #[serde(default)]
    pub saving_quiet_ms: Option<f64>,
    /// The offline model's graph step with the walk's streams one after another, ms, for a
    /// walk whose streams it runs side by side: where their kernels slow each other down
    /// (which the model does not price) the real step lies between the two.
    #[serde(default)]
    pub graph_step_serial_ms: Option<f64>,
    /// The offline model's graph step with every kernel at its recorded duration however
    /// much of the GPU the kernels side by side hold (the streams overlapping perfectly), ms;
    /// `None` where the model did not share the GPU (one stream, or SM limits unknown).
    #[serde(default)]
    pub graph_step_unshared_ms: Option<f64>,
}

impl StepPrice {
    pub fn new(graph: (f64, GraphSource), eager: (f64, EagerSource), build_ms: f64) -> StepPrice {
        let saving_ms = eager.0 - graph.0;
        StepPrice {
            graph_step_ms: graph.0,
            graph_source: graph.1,
            eager_step_ms: eager.0,
            eager_source: eager.1,
            saving_ms,
            build_ms,
            break_even_steps: (saving_ms > 0.0).then(|| build_ms / saving_ms),
            graph_step_error_ms: graph.1.validated_error() * graph.0,
            graph_step_quiet_ms: None,
            saving_quiet_ms: None,
            graph_step_serial_ms: None,
            graph_step_unshared_ms: None,
        }
    }

    /// The same price with the graph step without SM sharing beside it.
    pub fn with_unshared(self, graph_step_unshared_ms: f64) -> StepPrice {
        StepPrice {
            graph_step_unshared_ms: Some(graph_step_unshared_ms),
            ..self
        }
    }

    /// The same price with the streams-in-series graph step beside it.
    pub fn with_serial(self, graph_step_serial_ms: f64) -> StepPrice {
        StepPrice {
            graph_step_serial_ms: Some(graph_step_serial_ms),
            ..self
        }
    }

    /// The same price with the quiet-process graph step beside it.
    pub fn with_quiet(self, graph_step_quiet_ms: f64) -> StepPrice {
        StepPrice {
            graph_step_quiet_ms: Some(graph_step_quiet_ms),
            saving_quiet_ms: Some(self.eager_step_ms - graph_step_quiet_ms),
            ..self
        }
    }

    /// The terminal block.
    pub fn text(&self) -> String {
        let graph_from = match self.graph_source {
            GraphSource::Replay => "the walk replayed as a graph on this GPU",
            GraphSource::Model => "the offline model over the device profile",
        };
        let at_lower = self
            .saving_quiet_ms
            .filter(|q| *q > 0.0 && (q - self.saving_ms).abs() >= 0.05 * self.saving_ms.abs())
            .map_or(String::new(), |q| {
                format!(" ({} ms at the lower level)", num(q, 4))
            });
        let saving = if self.saving_ms > 0.0 {
            let e = self.graph_source.validated_error();
            let off_ms = self.graph_step_error_ms;
            let small = if off_ms >= SMALL_SAVING_SHARE * self.saving_ms {
                format!(
                    "\n              (a small saving: the graph step's error on the H200 validation walks, up to {:.0}% or {} ms here, is {:.0}% of it)",
                    100.0 * e,
                    num(off_ms, 4),
                    100.0 * off_ms / self.saving_ms
                )
            } else {
                String::new()
            };
            format!(
                "{} ms per step{at_lower}; build {} ms pays back after {} steps{small}",
                num(self.saving_ms, 4),
                num(self.build_ms, 3),
                num(self.break_even_steps.unwrap_or(f64::NAN), 1)
            )
        } else {
            format!(
                "no saving (the graph step is not shorter); build {} ms",
                num(self.build_ms, 3)
            )
        };
        let quiet = self.graph_step_quiet_ms.map_or(String::new(), |q| {
            format!(
                "              (at the upper level of graph node cost, where framework processes ran; {} ms at the lower level)\n",
                num(q, 4)
            )
        });
        let serial = match (self.graph_step_serial_ms, self.graph_step_unshared_ms) {
            (Some(s), Some(u)) => format!(
                "              (streams side by side, kernels that together hold more than the GPU's SMs sharing them; {} ms with every kernel at its recorded duration, {} ms with the streams one after another; device memory shared, and kernels beside other streams' kernels stretched, by the measured load of the recorded GEMMs running with them)\n",
                num(u, 4),
                num(s, 4)
            ),
            (Some(s), None) => format!(
                "              (streams side by side at their recorded durations, a lower bound; {} ms with the streams one after another)\n",
                num(s, 4)
            ),
            _ => String::new(),
        };
        format!(
            "\nprediction:\n  graph step  {} ms   from {graph_from}\n{quiet}{serial}  eager step  {} ms   from {}\n  saving      {saving}\n",
            num(self.graph_step_ms, 4),
            num(self.eager_step_ms, 4),
            self.eager_source.describe()
        )
    }
}

/// The eager step estimated from the trace's host side, ms: from the first CPU event to the
/// end of the last GPU operation, less what the profiler added to each launch call (its
/// recorded duration over `launch_floor_us`, the unprofiled cost of one launch on this GPU),
/// its callbacks' cost outside each recorded event (see [`crate::trace::host`]) and its own
/// work recorded in between, and never below the recorded GPU time.
/// `None` without a host side.
pub fn eager_from_trace(walk: &Walk, launch_floor_us: f64) -> Option<f64> {
    let h = walk.host?;
    let span_ns = walk.end_ns() - h.start_ns;
    if !(span_ns.is_finite() && span_ns > 0.0) {
        return None;
    }
    let excess_ns = (h.launch_call_ns - h.launch_calls as f64 * launch_floor_us * 1e3).max(0.0);
    let gpu_ns: f64 = walk.ops.iter().map(|o| o.duration_ns).sum();
    let callbacks_ns = (h.cpu_ops + h.runtime_calls) as f64 * h.profiler_per_event_ns.max(0.0);
    let own_ns = h.profiler_overhead_ns.max(0.0) + callbacks_ns;
    Some((span_ns - excess_ns - own_ns).max(gpu_ns) / 1e6)
}

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
        let bandwidth = self
            .inputs
            .graph_node_beside
            .map_or(0.0, |c| c.bandwidth_gb_s);
        Footprint::of(walk, bandwidth, self.sms.map(|s| s.sms))
    }

    /// GPU time every node of `walk`'s graph costs at the upper level beyond the lower, µs:
    /// the profile's larger step where the walk touches more than the L2 holds and the
    /// profile measured it, else its step for a graph of empty kernels (0 without either).
    pub fn level_step_us(&self, walk: &Walk) -> f64 {
        self.level_step(walk).step_us
    }

    /// [`Self::level_step_us`] with the footprint and the L2 it was chosen by, for the report.
    pub fn level_step(&self, walk: &Walk) -> LevelStep {
        let m = self.inputs;
        let footprint = self.footprint(walk);
        let step = match (m.graph_node_other_stream_beyond_l2_us, self.l2_bytes) {
            (Some(beyond), Some(l2)) if footprint.beyond_l2(l2) => beyond,
            _ => m.graph_node_other_stream_us.unwrap_or(0.0),
        };
        LevelStep {
            footprint,
            l2_bytes: self.l2_bytes,
            step_us: step.max(0.0),
        }
    }
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
    graph_step_on(&Schedule::of(walk), walk, dev, dev.level_step_us(walk))
}

/// [`graph_step_model`] at the lower level of per-node graph cost: the lower bound, ms.
pub fn graph_step_model_quiet(walk: &Walk, dev: &OfflineDevice<'_>) -> f64 {
    graph_step_on(&Schedule::of(walk), walk, dev, 0.0)
}

/// [`graph_step_model`] with every stream of the walk one after another (in issue order), ms;
/// `None` for a walk the model does not run side by side (one stream, or no recorded waits).
pub fn graph_step_model_serial(walk: &Walk, dev: &OfflineDevice<'_>) -> Option<f64> {
    let schedule = Schedule::of(walk);
    (schedule.lanes() > 1).then(|| {
        let serial = dev.without_sharing();
        graph_step_on(
            &Schedule::serialised(walk),
            walk,
            &serial,
            dev.level_step_us(walk),
        )
    })
}

fn graph_step_on(schedule: &Schedule, walk: &Walk, dev: &OfflineDevice<'_>, shared_us: f64) -> f64 {
    let (m, grids) = (dev.inputs, dev.grids);
    let sms = dev.sms.filter(|_| dev.sharing);
    let gap_ns = m.graph_node_gap_us.unwrap_or(0.0).max(0.0) * 1e3;
    let node_ns = |o: &Op| {
        (o.duration_ns + gap_ns + grids.map_or(0.0, |g| g.op_shift_ns(o)))
            .max(m.graph_node_gpu_us * 1e3)
            .max(copy_node_ns(o, m))
            + shared_us * 1e3
    };
    let spans = match sms {
        Some(l) if schedule.lanes() > 1 => lay_out_sharing(
            schedule,
            |op| {
                let o = &walk.ops[op];
                let total = node_ns(o);
                // The kernel's recorded time is what other kernels can slow; the rest of the
                // node is the graph's own cost.
                let work_ns = if o.is_kernel() {
                    o.duration_ns.clamp(0.0, total)
                } else {
                    0.0
                };
                NodeCost {
                    fixed_ns: total - work_ns,
                    work_ns,
                    share: l.share(o),
                    gb_s: gemm_gb_s(o),
                }
            },
            |gb_s| m.graph_node_beside.map_or(0.0, |c| c.start_stretch(gb_s)),
            m.graph_node_beside.map_or(0.0, |c| c.bandwidth_gb_s),
        ),
        _ => schedule.lay_out(|op| node_ns(&walk.ops[op])),
    };
    let nodes_ns = spans.iter().map(|s| s.2).fold(0.0, f64::max);
    (nodes_ns + m.graph_launch_fixed_us * 1e3) / 1e6
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

/// What the profile says a copy `o` adds to a graph, ns; 0 for other ops, copies of other
/// directions, or profiles without copy-node costs.
fn copy_node_ns(o: &Op, m: &ModelInputs) -> f64 {
    let (
        OpKind::Memcpy {
            bytes, direction, ..
        },
        Some(c),
    ) = (&o.kind, m.copy_nodes)
    else {
        return 0.0;
    };
    match CopyDirection::of(direction) {
        CopyDirection::HostToDevice => c.host_to_device.node_us(*bytes as f64) * 1e3,
        CopyDirection::DeviceToHost => c.device_to_host.node_us(*bytes as f64) * 1e3,
        CopyDirection::DeviceToDevice | CopyDirection::Other => 0.0,
    }
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
mod tests {
    use super::*;
    use crate::trace::HostSide;

    fn walk(durs: &[f64], host: Option<HostSide>) -> Walk {
        let mut t = 0.0;
        let ops = durs
            .iter()
            .map(|&d| {
                let o = Op::kernel("k", t, d);
                t += d + 5000.0;
                o
            })
            .collect();
        Walk {
            ops,
            host,
            ..Walk::default()
        }
    }

    fn inputs() -> ModelInputs {
        ModelInputs {
            graph_node_gpu_us: 1.0,
            graph_launch_fixed_us: 2.0,
            graph_launch_per_node_us: 0.0,
            build_per_node_us: 5.0,
            eager_issue_us: 3.0,
            graph_node_gap_us: None,
            eager_extra_us: None,
            graph_node_other_stream_us: None,
            graph_node_other_stream_beyond_l2_us: None,
            copy_nodes: None,
            graph_node_beside: None,
        }
    }

    #[test]
    fn short_nodes_cost_the_floor_in_the_model() {
        let w = walk(&[500.0, 4000.0], None);
        // max(0.5, 1.0) + 4.0 µs + 2 µs launch = 7 µs
        assert!((graph_step_model(&w, &OfflineDevice::of(&inputs())) - 0.007).abs() < 1e-12);
        assert!((build_model(&w, &inputs()) - 0.010).abs() < 1e-12);
        assert!((engine_floor_model(&w, &inputs()) - 0.006).abs() < 1e-12);
    }

    #[test]
    fn wide_kernels_cost_the_grid_tables_shift_less_in_the_model() {
        let mut w = walk(&[4000.0, 4000.0], None);
        w.ops[1].kind = OpKind::Kernel {
            grid: (2048, 1, 1),
            block: (128, 1, 1),
        };
        let case = |blocks, d| crate::wide_grids::GridCase {
            threads: 128,
            blocks,
            node_minus_profiled_us: d,
        };
        let grids = WideGrids {
            device: "GPU".into(),
            cases: vec![case(8, 0.3), case(2048, -0.2)],
        };
        // 4 + 4 µs + 2 µs launch; the 2048-block kernel's node 0.5 µs shorter.
        assert!((graph_step_model(&w, &OfflineDevice::of(&inputs())) - 0.010).abs() < 1e-12);
        let m = inputs();
        let dev = OfflineDevice {
            grids: Some(&grids),
            ..OfflineDevice::of(&m)
        };
        let priced = graph_step_model(&w, &dev);
        assert!((priced - 0.0095).abs() < 1e-12, "{priced}");
    }

    #[test]
    fn a_walk_touching_more_than_the_l2_steps_further_to_the_upper_level() {
        let copy = |mib: u64| Op {
            kind: OpKind::Memcpy {
                bytes: mib << 20,
                direction: "HtoD".into(),
                pageable: false,
            },
            ..Op::kernel("Memcpy", 0.0, 4000.0)
        };
        let m = ModelInputs {
            graph_launch_fixed_us: 0.0,
            graph_node_other_stream_us: Some(0.25),
            graph_node_other_stream_beyond_l2_us: Some(0.5),
            ..inputs()
        };
        let dev = OfflineDevice {
            l2_bytes: Some(60.0 * 1024.0 * 1024.0),
            ..OfflineDevice::of(&m)
        };
        let mut w = walk(&[4000.0, 4000.0], None);
        w.ops.push(copy(1));
        // 3 MiB a step: well within the L2. Three 4 µs nodes + 0.25 µs each.
        assert_eq!(dev.level_step_us(&w), 0.25);
        assert!((graph_step_model(&w, &dev) - 0.01275).abs() < 1e-12);
        // 128 MiB: every node, not only the copy's, takes the larger step.
        w.ops[2] = copy(128);
        assert_eq!(dev.level_step_us(&w), 0.5);
        assert!((graph_step_model(&w, &dev) - 0.0135).abs() < 1e-12);
        // The lower level is the same either way; without the L2 or the larger step measured,
        // the smaller step.
        assert!((graph_step_model_quiet(&w, &dev) - 0.012).abs() < 1e-12);
        assert_eq!(OfflineDevice::of(&m).level_step_us(&w), 0.25);
        let older = ModelInputs {
            graph_node_other_stream_beyond_l2_us: None,
            ..m
        };
        let dev_older = OfflineDevice {
            inputs: &older,
            ..dev
        };
        assert_eq!(dev_older.level_step_us(&w), 0.25);
        // Without shapes the footprint is what the kernels' grids could read: one block of 132
        // SMs for 4 µs at 4000 GB/s reads ~0.1 MiB; the whole GPU 16 MB. Turning sharing off
        // (the unshared and serial figures) leaves the SMs, and so the step, as they were.
        let sms = SmLimits::of("9.0", 132).unwrap();
        let beside = crate::beside::BesideCosts {
            points: [crate::beside::BesidePoint {
                load_gb_s: 0.0,
                stretch: 0.0,
                gemm_us: 0.0,
            }; 3],
            bandwidth_gb_s: 4000.0,
        };
        let m = ModelInputs {
            graph_node_beside: Some(beside),
            ..m
        };
        let one_block = walk(&[4000.0; 8], None);
        let dev = OfflineDevice {
            sms: Some(&sms),
            ..OfflineDevice { inputs: &m, ..dev }
        };
        assert_eq!(dev.level_step_us(&one_block), 0.25);
        assert_eq!(dev.without_sharing().level_step_us(&one_block), 0.25);
    }

    #[test]
    fn trace_estimate_removes_launch_inflation_and_keeps_gpu_time() {
        // Ops end at 0.5 + 5 + 4 = 9.5 µs; host starts 10 µs earlier; 2 launches of 8 µs
        // against a 3 µs floor: 10 µs of inflation.
        let h = HostSide {
            start_ns: -10_000.0,
            launch_calls: 2,
            launch_call_ns: 16_000.0,
            cpu_ops: 2,
            profiler_overhead_ns: 0.0,
            runtime_calls: 2,
            profiler_per_event_ns: 0.0,
        };
        let w = walk(&[500.0, 4000.0], Some(h));
        let e = eager_from_trace(&w, 3.0).unwrap();
        assert!((e - 0.0095).abs() < 1e-12, "{e}");
        // Each of the 4 recorded events cost the profiler 1 µs outside it.
        let callbacks = HostSide {
            start_ns: -20_000.0,
            profiler_per_event_ns: 1_000.0,
            ..h
        };
        let e = eager_from_trace(&walk(&[500.0, 4000.0], Some(callbacks)), 3.0).unwrap();
        assert!((e - 0.0155).abs() < 1e-12, "{e}");
        // The profiler's own 2 µs of buffer work inside the step is not the step's.
        let busy = HostSide {
            start_ns: -20_000.0,
            profiler_overhead_ns: 2_000.0,
            ..h
        };
        let e = eager_from_trace(&walk(&[500.0, 4000.0], Some(busy)), 3.0).unwrap();
        assert!((e - 0.0175).abs() < 1e-12, "{e}");
        // Never below the recorded GPU time, however much the profiler claims.
        let all = HostSide {
            profiler_overhead_ns: 1e9,
            ..h
        };
        let e = eager_from_trace(&walk(&[500.0, 4000.0], Some(all)), 3.0).unwrap();
        assert!((e - 0.0045).abs() < 1e-12, "{e}");
        assert!(eager_from_trace(&walk(&[1.0], None), 3.0).is_none());
    }

    #[test]
    fn streams_with_recorded_waits_overlap_in_the_model() {
        use crate::trace::StreamWait;
        // main: 10 us; s1 and s2 fork from it, 30 us and 20 us; main joins both, 10 us.
        let k = |stream: u64, corr: u64, us: f64| Op {
            stream: Some(stream),
            correlation: Some(corr),
            ..Op::kernel("k", corr as f64, us * 1e3)
        };
        let wait = |stream, correlation| StreamWait {
            stream,
            correlation,
            step: None,
        };
        let mut w = Walk {
            ops: vec![k(7, 1, 10.0), k(13, 4, 30.0), k(17, 6, 20.0), k(7, 9, 10.0)],
            waits: vec![wait(13, 2), wait(17, 3), wait(7, 7), wait(7, 8)],
            ..Walk::default()
        };
        let m = ModelInputs {
            graph_launch_fixed_us: 0.0,
            ..inputs()
        };
        // 10 + max(30, 20) + 10.
        assert!((graph_step_model(&w, &OfflineDevice::of(&m)) - 0.050).abs() < 1e-12);
        // A measured node gap is added to every node on the chain.
        let with_gap = ModelInputs {
            graph_node_gap_us: Some(0.5),
            ..m
        };
        assert!((graph_step_model(&w, &OfflineDevice::of(&with_gap)) - 0.0515).abs() < 1e-12);
        // The step to the upper level is added to every node on the chain; the quiet step
        // leaves it out.
        let shared = ModelInputs {
            graph_node_other_stream_us: Some(0.25),
            ..with_gap
        };
        assert!((graph_step_model(&w, &OfflineDevice::of(&shared)) - 0.05225).abs() < 1e-12);
        assert!((graph_step_model_quiet(&w, &OfflineDevice::of(&shared)) - 0.0515).abs() < 1e-12);
        // Without the waits the streams add up.
        w.waits.clear();
        assert!((graph_step_model(&w, &OfflineDevice::of(&m)) - 0.070).abs() < 1e-12);
    }

    #[test]
    fn host_device_copies_cost_what_the_profile_measured() {
        use crate::copy_nodes::{CopyCost, CopyNodeCosts};
        let copy = |direction: &str, us: f64| Op {
            kind: OpKind::Memcpy {
                bytes: 1 << 20,
                direction: direction.into(),
                pageable: false,
            },
            ..Op::kernel("Memcpy", 0.0, us * 1e3)
        };
        let mut w = walk(&[4000.0], None);
        w.ops.push(copy("HtoD", 10.0));
        w.ops.push(copy("DtoH", 30.0));
        w.ops.push(copy("DtoD", 2.0));
        let m = ModelInputs {
            graph_launch_fixed_us: 0.0,
            ..inputs()
        };
        // Without copy-node costs: every op its duration (at least the 1 µs floor).
        assert!((graph_step_model(&w, &OfflineDevice::of(&m)) - 0.046).abs() < 1e-12);
        let line = |fixed_us, us_per_mib| CopyCost {
            fixed_us,
            us_per_mib,
        };
        let with = ModelInputs {
            copy_nodes: Some(CopyNodeCosts {
                host_to_device: line(5.0, 10.0),
                device_to_host: line(5.0, 10.0),
            }),
            ..m
        };
        // HtoD 1 MiB costs 15 µs (more than its 10); DtoH keeps its longer 30; DtoD its 2.
        assert!((graph_step_model(&w, &OfflineDevice::of(&with)) - 0.051).abs() < 1e-12);
    }

    #[test]
    fn a_saving_within_the_graph_steps_error_says_so() {
        // 0.04 ms saved on a 0.67 ms graph: 5% of the graph is 0.0335 ms, 84% of the saving.
        let p = StepPrice::new((0.67, GraphSource::Replay), (0.71, EagerSource::User), 1.0);
        let t = p.text();
        assert!((p.graph_step_error_ms - 0.0335).abs() < 1e-12);
        assert!(t.contains("a small saving"), "{t}");
        assert!(
            t.contains("up to 5% or 0.0335 ms here, is 84% of it"),
            "{t}"
        );
        // The offline model's error is wider: 10%.
        let p = StepPrice::new((0.67, GraphSource::Model), (0.71, EagerSource::User), 1.0);
        assert!(p.text().contains("up to 10% or 0.0670 ms"), "{}", p.text());
        // 8 ms saved on a 0.8 ms graph: nothing to flag.
        let p = StepPrice::new((0.8, GraphSource::Replay), (8.8, EagerSource::User), 1.0);
        assert!(!p.text().contains("a small saving"));
    }

    #[test]
    fn no_saving_has_no_break_even() {
        let p = StepPrice::new((2.0, GraphSource::Replay), (1.5, EagerSource::User), 10.0);
        assert!(p.break_even_steps.is_none());
        assert!(p.text().contains("no saving"));
        let p = StepPrice::new(
            (1.0, GraphSource::Model),
            (3.0, EagerSource::EngineFloor),
            10.0,
        );
        assert_eq!(p.break_even_steps, Some(5.0));
        assert!(p.text().contains("LOWER BOUND"));
    }

    #[test]
    fn the_lower_level_is_reported_beside_the_price_not_instead() {
        let p = StepPrice::new((2.0, GraphSource::Replay), (5.0, EagerSource::User), 1.0);
        assert!(!p.text().contains("lower level"));
        let q = p.with_quiet(1.75);
        // The saving stays priced at the upper level; the lower level's is beside it.
        assert_eq!((q.graph_step_ms, q.saving_ms), (2.0, 3.0));
        assert_eq!(q.saving_quiet_ms, Some(3.25));
        assert!(
            q.text()
                .contains("3.0000 ms per step (3.2500 ms at the lower level)"),
            "{}",
            q.text()
        );
        assert!(
            q.text().contains("1.7500 ms at the lower level"),
            "{}",
            q.text()
        );
        let json = serde_json::to_value(q).unwrap();
        assert_eq!(json["graph_step_quiet_ms"], 1.75);
        // Documents written before the field existed still read.
        let mut old = json.clone();
        old.as_object_mut().unwrap().remove("graph_step_quiet_ms");
        old.as_object_mut().unwrap().remove("saving_quiet_ms");
        let back: StepPrice = serde_json::from_value(old).unwrap();
        assert_eq!(back.graph_step_quiet_ms, None);
        assert_eq!(back.saving_quiet_ms, None);
        // Where the two savings are within 5% of each other, only the priced one is printed.
        let close = StepPrice::new((2.0, GraphSource::Replay), (50.0, EagerSource::User), 1.0)
            .with_quiet(1.9);
        assert!(!close.text().contains("ms per step ("), "{}", close.text());
    }
}
