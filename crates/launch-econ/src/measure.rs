//! The measurements: eager issue through the engine, the raw driver floor, graph replay, GPU
//! time by events, and graph build cost — interleaved within each trial so that machine drift
//! (clocks, other tenants) hits every path alike.

use std::ffi::c_void;
use std::time::{Duration, Instant};

use memra_engine::{launch_raw, DeviceBuffer, Engine, Graph, Kernel, LaunchShape};
use serde::{Deserialize, Serialize};

use crate::figures::{headline_warnings, Summaries};
use crate::runner::{Convergence, Outcome, StopRule};
use crate::stats::{linear_fit, Summary};

/// Threads per block of the `add` kernel (the engine's choice, repeated for the raw floor).
const BLOCK: u32 = 256;

/// What one measurement point runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Launches per round (graph nodes).
    pub launches: usize,
    /// Elements of the `add` kernel.
    pub elems: usize,
    /// Rounds per trial.
    pub reps: usize,
    /// Trials run first and reported apart, not summarised.
    pub warmup: usize,
    /// When to stop taking trials.
    pub rule: StopRule,
    /// Kernels launched with programmatic dependent launch (engine and raw floor alike).
    #[serde(default)]
    pub pdl: bool,
}

/// One trial's raw numbers. Per-launch figures are µs; build phases are ms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// Host time to issue one launch through the engine (clock stopped before synchronize).
    pub eager_issue_us: f64,
    /// Wall time per eager launch, synchronize included (the seed's "eager").
    pub eager_wall_us: f64,
    /// Host time per raw `cuLaunchKernel` of the same function (the driver floor).
    pub floor_issue_us: f64,
    /// Wall time per raw launch, synchronize included.
    pub floor_wall_us: f64,
    /// Host time of one `Graph::launch()` call.
    pub graph_launch_host_us: f64,
    /// Wall time per node of graph replay (the seed's "graph-replay").
    pub graph_wall_us: f64,
    /// GPU time per node of one replay (device events).
    pub graph_gpu_us: f64,
    /// GPU time per kernel when eager launches run back to back (events; the stream held by
    /// a blocking kernel the host releases once it has queued the round, checked).
    pub eager_gpu_us: f64,
    /// Stream capture of the round, ms.
    pub capture_ms: f64,
    /// `cuGraphInstantiate`, ms.
    pub instantiate_ms: f64,
    /// `cuGraphUpload` and its synchronize, ms.
    pub upload_ms: f64,
}

crate::figures::figure_set! {
    /// The figures of a run trial (the fields above and what is derived from them).
    RunFigure for Trial, headline [EagerWallUs, GraphWallUs, EagerIssueUs, FloorIssueUs] {
        EagerIssueUs => "eager_issue_us", |t| t.eager_issue_us;
        EagerWallUs => "eager_wall_us", |t| t.eager_wall_us;
        FloorIssueUs => "floor_issue_us", |t| t.floor_issue_us;
        FloorWallUs => "floor_wall_us", |t| t.floor_wall_us;
        EngineFloorRatio => "engine_floor_ratio", |t| t.eager_issue_us / t.floor_issue_us;
        GraphLaunchHostUs => "graph_launch_host_us", |t| t.graph_launch_host_us;
        GraphWallUs => "graph_wall_us", |t| t.graph_wall_us;
        GraphGpuUs => "graph_gpu_us", |t| t.graph_gpu_us;
        EagerGpuUs => "eager_gpu_us", |t| t.eager_gpu_us;
        CaptureMs => "capture_ms", |t| t.capture_ms;
        InstantiateMs => "instantiate_ms", |t| t.instantiate_ms;
        UploadMs => "upload_ms", |t| t.upload_ms;
        BuildMs => "build_ms", |t| t.capture_ms + t.instantiate_ms + t.upload_ms;
    }
}

/// One measured point: configuration, every trial, and the summaries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub config: Config,
    pub warmup_trials: Vec<Trial>,
    pub trials: Vec<Trial>,
    pub summary: Summaries<RunFigure>,
    /// Whether each headline figure reached the noise goal (empty for a fixed trial count).
    pub convergence: Vec<Convergence>,
    pub warnings: Vec<String>,
}

impl Point {
    /// Builds summaries and warnings from the runner's outcome.
    pub fn from_outcome(config: Config, out: Outcome<Trial>) -> Point {
        let mut warnings = headline_warnings::<RunFigure>(&out.trials);
        warnings.extend(out.convergence_warnings(config.rule.max_noise));
        Point {
            config,
            summary: Summaries::of(&out.trials),
            warmup_trials: out.warmup,
            trials: out.trials,
            convergence: out.convergence,
            warnings,
        }
    }

    /// The median of a figure.
    pub fn median(&self, f: RunFigure) -> f64 {
        self.summary.median(f)
    }

    /// Replays of this round that pay back the graph's build, or `None` if replay is not
    /// faster than eager.
    pub fn break_even_replays(&self) -> Option<f64> {
        let saving_us = (self.median(RunFigure::EagerWallUs) - self.median(RunFigure::GraphWallUs))
            * self.config.launches as f64;
        (saving_us > 0.0).then(|| self.median(RunFigure::BuildMs) * 1e3 / saving_us)
    }
}

/// The buffers and shape of the `add` kernel that every path launches.
struct Work {
    a: DeviceBuffer<f32>,
    b: DeviceBuffer<f32>,
    y: DeviceBuffer<f32>,
    elems: usize,
}

impl Work {
    fn new(e: &Engine, elems: usize) -> memra_engine::Result<Work> {
        Ok(Work {
            a: e.htod(&vec![1.0f32; elems])?,
            b: e.htod(&vec![2.0f32; elems])?,
            y: e.htod(&vec![0.0f32; elems])?,
            elems,
        })
    }

    fn round(&mut self, e: &Engine, n: usize) -> memra_engine::Result<()> {
        for _ in 0..n {
            e.add(&self.a, &self.b, &mut self.y, self.elems)?;
        }
        Ok(())
    }

    fn capture(&mut self, e: &Engine, n: usize) -> memra_engine::Result<Graph> {
        let Work { a, b, y, elems } = self;
        e.capture_graph(|eng| {
            for _ in 0..n {
                eng.add(a, b, y, *elems)?;
            }
            Ok(())
        })
    }

    /// `reps × n` raw launches of the engine's own `add_f32`, no wrapper: `cuLaunchKernel`, or
    /// `cuLaunchKernelEx` with the PDL attribute when the engine launches with PDL.
    fn raw_rounds(&self, e: &Engine, n: usize, reps: usize) -> anyhow::Result<()> {
        let f = e.cu_function(Kernel::AddF32)?;
        let stream = e.stream().cu_stream();
        let n32 = u32::try_from(self.elems)?;
        let (mut pa, mut pb, mut py, mut pn) = (
            self.a.device_ptr()?,
            self.b.device_ptr()?,
            self.y.device_ptr()?,
            n32,
        );
        let mut params: [*mut c_void; 4] = [
            (&mut pa as *mut u64).cast(),
            (&mut pb as *mut u64).cast(),
            (&mut py as *mut u64).cast(),
            (&mut pn as *mut u32).cast(),
        ];
        let shape = LaunchShape::linear(n32.div_ceil(BLOCK), BLOCK);
        let pdl = e.pdl();
        e.bind_to_thread()?;
        for _ in 0..reps * n {
            // SAFETY: the parameters match add_f32(const float*, const float*, float*,
            // unsigned); the buffers hold `elems` floats and outlive the synchronize that
            // follows; the function and stream belong to the engine's current context; with
            // PDL, `f` is add_f32's PDL build (cu_function follows the engine's setting, which
            // nothing changes during a run), which waits for its predecessor before touching
            // memory.
            unsafe { launch_raw(f, shape, stream, &mut params, pdl) }
                .map_err(|e| anyhow::anyhow!("raw kernel launch failed: {e:?}"))?;
        }
        Ok(())
    }
}

/// Times `issue` (host clock stopped before the synchronize) and the whole with synchronize.
fn issue_then_sync(
    e: &Engine,
    launches: usize,
    issue: impl FnOnce() -> anyhow::Result<()>,
) -> anyhow::Result<(f64, f64)> {
    let t = Instant::now();
    issue()?;
    let issued = t.elapsed().as_secs_f64();
    e.stream().synchronize()?;
    let wall = t.elapsed().as_secs_f64();
    let per = 1e6 / launches as f64;
    Ok((issued * per, wall * per))
}

/// GPU time between two events around `work`, in µs.
fn gpu_us(e: &Engine, work: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    Ok(e.gpu_time_ms(work)? * 1e3)
}

fn one_trial(e: &Engine, w: &mut Work, cfg: &Config, order: &[usize]) -> anyhow::Result<Trial> {
    let (n, reps) = (cfg.launches, cfg.reps);
    let mut t = Trial::default();
    let graph = w.capture(e, n)?;
    let ct = graph.timings();
    t.capture_ms = ct.capture.as_secs_f64() * 1e3;
    t.instantiate_ms = ct.instantiate.as_secs_f64() * 1e3;
    t.upload_ms = ct.upload.as_secs_f64() * 1e3;
    graph.launch()?;
    e.stream().synchronize()?;
    for &path in order {
        match path {
            0 => {
                (t.eager_issue_us, t.eager_wall_us) = issue_then_sync(e, reps * n, || {
                    for _ in 0..reps {
                        w.round(e, n)?;
                    }
                    Ok(())
                })?
            }
            1 => {
                (t.floor_issue_us, t.floor_wall_us) =
                    issue_then_sync(e, reps * n, || w.raw_rounds(e, n, reps))?
            }
            _ => {
                let (issue, wall) = issue_then_sync(e, reps * n, || {
                    for _ in 0..reps {
                        graph.launch()?;
                    }
                    Ok(())
                })?;
                t.graph_launch_host_us = issue * n as f64;
                t.graph_wall_us = wall;
            }
        }
    }
    t.graph_gpu_us = gpu_us(e, || Ok(graph.launch()?))? / n as f64;
    t.eager_gpu_us = back_to_back_us(e, w, n)?;
    Ok(t)
}

/// How many times [`back_to_back_us`] halves a round whose hold ran out before it gives up.
const HOLD_ATTEMPTS: usize = 6;
/// The most launches queued behind one hold: the driver's launch queue is finite, and a host
/// that blocks on a full queue behind a held stream waits until the hold times out (H200,
/// driver 580: a spin hold never outlasted 1346 queued launches).
const BACK_TO_BACK_MAX: usize = 256;
/// How long a hold waits for its release; queuing [`BACK_TO_BACK_MAX`] launches takes about a
/// millisecond, so only a host blocked on the launch queue reaches it.
const HOLD_TIMEOUT: Duration = Duration::from_millis(250);

/// GPU time per kernel of eager launches run back to back, µs: a blocking kernel holds the
/// stream while the host queues up to [`BACK_TO_BACK_MAX`] launches between two events, and
/// the host releases it once the last is queued, so the events time the GPU's pace and not the
/// host's. The hold is checked, not assumed: one that ran out before the release (the kernel
/// says so) is measured again with half the launches (down to 16); after [`HOLD_ATTEMPTS`]
/// the result is an error rather than a host-paced number.
fn back_to_back_us(e: &Engine, w: &mut Work, n: usize) -> anyhow::Result<f64> {
    let mut m = n.clamp(1, BACK_TO_BACK_MAX);
    for _ in 0..HOLD_ATTEMPTS {
        let hold = e.hold_stream(HOLD_TIMEOUT)?;
        let (start, end) = (e.event()?, e.event()?);
        start.record()?;
        w.round(e, m)?;
        end.record()?;
        if hold.release()? {
            return Ok(start.elapsed_ms(&end)? as f64 * 1e3 / m as f64);
        }
        m = (m / 2).max(16.min(n.max(1)));
    }
    anyhow::bail!(
        "a hold on the stream ran out before {m} eager launches were queued behind it, {HOLD_ATTEMPTS} times: back-to-back GPU time not measurable"
    )
}

/// The three interleaved paths of a run trial: eager, raw driver floor, graph replay.
pub const RUN_PATHS: usize = 3;

/// Measures one point with the trial runner: warm-up, then trials until the stopping rule
/// holds, each interleaving the paths in a rotating order. Returns the point and whether an
/// interrupt cut it short.
pub fn measure_point(
    e: &Engine,
    cfg: &Config,
    ctx: &crate::runner::Context<'_>,
) -> anyhow::Result<(Point, bool)> {
    let mut w = Work::new(e, cfg.elems)?;
    let runner = ctx.runner(cfg.rule, cfg.warmup, RUN_PATHS);
    let out = runner.run::<RunFigure>(|order| one_trial(e, &mut w, cfg, order))?;
    let interrupted = out.interrupted;
    Ok((Point::from_outcome(*cfg, out), interrupted))
}

/// Host cost of one `Graph::launch()` as a line over node counts: fixed + per node; and the
/// GPU time of one replay (events, GPU idle before it) the same way, whose fixed part is the
/// launch latency and whose slope is the per-node cost, measured with one instrument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchFit {
    /// (nodes, host µs per launch call) medians the line was fitted to.
    pub points: Vec<(usize, Summary)>,
    pub fixed_us: f64,
    pub per_node_us: f64,
    /// (nodes, GPU µs of one replay) medians.
    #[serde(default)]
    pub gpu_points: Vec<(usize, Summary)>,
    /// GPU line: fixed µs (latency) and µs per node.
    #[serde(default)]
    pub gpu_line: Option<(f64, f64)>,
}

impl LaunchFit {
    /// Fits the line to (nodes, summary) pairs.
    pub fn from_points(points: Vec<(usize, Summary)>) -> Option<LaunchFit> {
        let xy: Vec<(f64, f64)> = points.iter().map(|(n, s)| (*n as f64, s.median)).collect();
        let (fixed_us, per_node_us) = linear_fit(&xy)?;
        Some(LaunchFit {
            points,
            fixed_us,
            per_node_us,
            gpu_points: Vec::new(),
            gpu_line: None,
        })
    }
}

/// Measures the host cost of `Graph::launch()` for graphs of each size in `sizes`, one path
/// per size interleaved by the trial runner, and fits fixed + per-node cost.
pub fn measure_launch_fit(
    e: &Engine,
    elems: usize,
    sizes: &[usize],
    rule: StopRule,
    reps: usize,
    ctx: &crate::runner::Context<'_>,
) -> anyhow::Result<Option<LaunchFit>> {
    let mut w = Work::new(e, elems)?;
    let graphs = sizes
        .iter()
        .map(|&n| w.capture(e, n))
        .collect::<memra_engine::Result<Vec<_>>>()?;
    let runner = ctx.runner(rule, 1, graphs.len());
    let k = graphs.len();
    let out = runner.run_with(
        |order| {
            // Host µs per launch call for each size, then GPU µs of one replay.
            let mut sample = vec![0.0; 2 * k];
            for &i in order {
                let (issue, _) = issue_then_sync(e, reps, || {
                    for _ in 0..reps {
                        graphs[i].launch()?;
                    }
                    Ok(())
                })?;
                sample[i] = issue;
                sample[k + i] = gpu_us(e, || Ok(graphs[i].launch()?))?;
            }
            Ok(sample)
        },
        |trials: &[Vec<f64>]| {
            sizes
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let v: Vec<f64> = trials.iter().map(|t| t[i]).collect();
                    (format!("graph launch host, {n} nodes"), v)
                })
                .collect()
        },
    )?;
    let column = |i: usize| -> Vec<(usize, Summary)> {
        sizes
            .iter()
            .enumerate()
            .map(|(j, &n)| {
                let v: Vec<f64> = out.trials.iter().map(|t| t[i + j]).collect();
                (n, Summary::of(&v))
            })
            .collect()
    };
    let gpu_points = column(k);
    let gpu_xy: Vec<(f64, f64)> = gpu_points
        .iter()
        .map(|(n, s)| (*n as f64, s.median))
        .collect();
    Ok(LaunchFit::from_points(column(0)).map(|mut f| {
        f.gpu_line = linear_fit(&gpu_xy);
        f.gpu_points = gpu_points;
        f
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::FigureSet;

    fn trial(eager: f64, graph_wall: f64) -> Trial {
        Trial {
            eager_issue_us: eager,
            eager_wall_us: eager + 0.1,
            floor_issue_us: eager / 1.02,
            floor_wall_us: eager,
            graph_wall_us: graph_wall,
            graph_gpu_us: 1.0,
            capture_ms: 1.0,
            instantiate_ms: 5.0,
            upload_ms: 1.0,
            ..Trial::default()
        }
    }

    fn cfg() -> Config {
        Config {
            launches: 1000,
            elems: 4096,
            reps: 2,
            warmup: 1,
            rule: StopRule::fixed(3),
            pdl: false,
        }
    }

    fn point(trials: Vec<Trial>) -> Point {
        Point::from_outcome(
            cfg(),
            Outcome {
                warmup: vec![],
                trials,
                convergence: vec![],
                interrupted: false,
            },
        )
    }

    #[test]
    fn point_summarises_every_figure() {
        let p = point(vec![trial(4.0, 1.0), trial(4.2, 1.0), trial(3.8, 1.0)]);
        assert_eq!(p.summary.iter().count(), RunFigure::ALL.len());
        assert_eq!(p.median(RunFigure::EagerIssueUs), 4.0);
        assert!((p.median(RunFigure::EngineFloorRatio) - 1.02).abs() < 1e-12);
        assert_eq!(p.median(RunFigure::BuildMs), 7.0);
        // saving per replay: (4.1 - 1.0) µs × 1000 = 3.1 ms; build 7 ms → 2.26 replays
        assert!((p.break_even_replays().unwrap() - 7.0 / 3.1).abs() < 1e-9);
    }

    #[test]
    fn no_break_even_when_replay_is_slower() {
        let p = point(vec![trial(1.0, 5.0)]);
        assert!(p.break_even_replays().is_none());
    }

    #[test]
    fn launch_fit_from_points() {
        let s = |m: f64| Summary {
            median: m,
            min: m,
            max: m,
            mad: 0.0,
            n: 1,
        };
        let fit =
            LaunchFit::from_points(vec![(1, s(2.01)), (100, s(3.0)), (1000, s(12.0))]).unwrap();
        assert!((fit.per_node_us - 0.01).abs() < 1e-3, "{fit:?}");
        assert!((fit.fixed_us - 2.0).abs() < 0.05, "{fit:?}");
        assert!(LaunchFit::from_points(vec![(5, s(1.0))]).is_none());
    }
}
