//! Many steps in one graph launch: K host launches of a step's graph against one launch of a
//! conditional WHILE graph that runs the step K times, and a loop that ends early on a value
//! only the GPU knows (a host loop that reads the stop flag back after every step, against a
//! WHILE graph that stops itself).
//!
//! A step is `kernels` `add` launches plus one counting kernel. Before each path the device
//! counter is reset; after it, the counter must show exactly the steps the path should have
//! run (K, or the stop step J), or the run fails.

use std::time::Instant;

use anyhow::{bail, Context as _};
use memra_engine::{DeviceBuffer, Engine, Graph, LoopGraph};
use serde::{Deserialize, Serialize};

use crate::figures::{headline_warnings, Summaries};
use crate::runner::{Context, Convergence, StopRule};

/// What a loop run does.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoopConfig {
    /// K: steps per loop.
    pub steps: u32,
    /// `add` kernels per step (plus one counting kernel).
    pub step_kernels: usize,
    pub elems: usize,
    /// J: the step after which the device stops the early-exit loops.
    pub stop_at: u32,
    pub rule: StopRule,
    pub warmup: usize,
}

/// One trial, µs per step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LoopTrial {
    /// K × `Graph::launch()` of the step graph: host time to issue them, per step.
    pub host_loop_issue_us: f64,
    pub host_loop_wall_us: f64,
    /// GPU time (events) of the K launches, per step.
    pub host_loop_gpu_us: f64,
    /// One `LoopGraph::launch()` for K steps: host time of that call, per step.
    pub while_issue_us: f64,
    pub while_wall_us: f64,
    pub while_gpu_us: f64,
    /// Step graph launched, stop flag read back (a synchronize) after every step, until the
    /// device sets it at step J; per step.
    pub readback_wall_us: f64,
    /// One launch of the WHILE graph that stops itself at step J; per step.
    pub while_exit_wall_us: f64,
}

crate::figures::figure_set! {
    /// The figures of a loop trial, µs per step.
    LoopFigure for LoopTrial, headline [HostLoopWallUs, WhileWallUs, ReadbackWallUs, WhileExitWallUs] {
        HostLoopIssueUs => "host_loop_issue_us", |t| t.host_loop_issue_us;
        HostLoopWallUs => "host_loop_wall_us", |t| t.host_loop_wall_us;
        HostLoopGpuUs => "host_loop_gpu_us", |t| t.host_loop_gpu_us;
        WhileIssueUs => "while_issue_us", |t| t.while_issue_us;
        WhileWallUs => "while_wall_us", |t| t.while_wall_us;
        WhileGpuUs => "while_gpu_us", |t| t.while_gpu_us;
        ReadbackWallUs => "readback_wall_us", |t| t.readback_wall_us;
        WhileExitWallUs => "while_exit_wall_us", |t| t.while_exit_wall_us;
        WallSpeedup => "while_wall_speedup", |t| t.host_loop_wall_us / t.while_wall_us;
        ExitWallSpeedup => "while_exit_wall_speedup", |t| t.readback_wall_us / t.while_exit_wall_us;
        WhileExtraGpuUs => "while_extra_gpu_us", |t| t.while_gpu_us - t.host_loop_gpu_us;
    }
}

/// Everything a loop run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopResult {
    pub config: LoopConfig,
    /// Nodes of the step graph and of the WHILE body (the step plus the loop kernel).
    pub step_nodes: usize,
    pub body_nodes: usize,
    /// Capture + instantiate + upload, ms.
    pub step_graph_build_ms: f64,
    pub while_graph_build_ms: f64,
    pub trials: Vec<LoopTrial>,
    pub summary: Summaries<LoopFigure>,
    pub convergence: Vec<Convergence>,
    pub warnings: Vec<String>,
    /// Loops whose step count was checked on the device counter.
    pub checked_loops: usize,
    pub interrupted: bool,
}

impl LoopResult {
    pub fn median(&self, f: LoopFigure) -> f64 {
        self.summary.median(f)
    }
}

/// The paths of a loop trial.
pub const LOOP_PATHS: usize = 4;

struct Loops {
    e: Engine,
    counter: DeviceBuffer<u32>,
    flag: DeviceBuffer<u32>,
    step: Graph,
    step_flag: Graph,
    while_k: LoopGraph,
    while_exit: LoopGraph,
    checked: usize,
}

/// `kernels` adds (x ← x + one, ping-ponging) and the counting kernel.
fn step(
    e: &Engine,
    bufs: &mut [DeviceBuffer<f32>; 3],
    elems: usize,
    kernels: usize,
    counter: &mut DeviceBuffer<u32>,
    stop: Option<&mut DeviceBuffer<u32>>,
    every: u32,
) -> memra_engine::Result<()> {
    let [one, x, y] = bufs;
    for i in 0..kernels {
        if i % 2 == 0 {
            e.add(x, one, y, elems)?;
        } else {
            e.add(y, one, x, elems)?;
        }
    }
    e.count_step(counter, stop, every)
}

fn build_ms(g: &Graph) -> f64 {
    let t = g.timings();
    (t.capture + t.instantiate + t.upload).as_secs_f64() * 1e3
}

impl Loops {
    fn new(e: &Engine, c: &LoopConfig) -> anyhow::Result<Loops> {
        let n = c.elems;
        let mut bufs = [e.htod(&vec![1.0f32; n])?, e.zeros(n)?, e.zeros(n)?];
        let mut counter = e.zeros::<u32>(1)?;
        let mut flag = e.zeros::<u32>(1)?;
        let (k, j) = (c.step_kernels, c.stop_at);
        let step_g = e
            .capture_graph(|e| step(e, &mut bufs, n, k, &mut counter, None, 0))
            .context("capturing the step graph")?;
        let step_flag = e
            .capture_graph(|e| step(e, &mut bufs, n, k, &mut counter, Some(&mut flag), j))
            .context("capturing the step graph with the stop flag")?;
        let while_k = e
            .capture_while(c.steps, |e, _| {
                step(e, &mut bufs, n, k, &mut counter, None, 0)
            })
            .context("building the WHILE graph")?;
        let while_exit = e
            .capture_while(c.steps, |e, stop| {
                step(e, &mut bufs, n, k, &mut counter, Some(stop), j)
            })
            .context("building the WHILE graph with a device stop")?;
        Ok(Loops {
            e: e.clone(),
            counter,
            flag,
            step: step_g,
            step_flag,
            while_k,
            while_exit,
            checked: 0,
        })
    }

    fn reset(&mut self) -> anyhow::Result<()> {
        self.e.htod_into(&[0u32], &mut self.counter)?;
        self.e.htod_into(&[0u32], &mut self.flag)?;
        Ok(())
    }

    /// Fails unless the device counter shows `want` steps.
    fn check(&mut self, what: &str, want: u32) -> anyhow::Result<()> {
        let got = self.e.dtoh(&self.counter)?[0];
        if got != want {
            bail!("{what} ran {got} steps, expected {want} (device counter)");
        }
        self.checked += 1;
        Ok(())
    }

    /// Times `work` (µs per step): host issue, wall to the synchronize, GPU by events.
    fn timed(
        &self,
        steps: u32,
        work: impl FnOnce() -> anyhow::Result<()>,
    ) -> anyhow::Result<(f64, f64, f64)> {
        let (start, end) = (self.e.event()?, self.e.event()?);
        start.record()?;
        let t = Instant::now();
        work()?;
        let issued = t.elapsed().as_secs_f64();
        end.record()?;
        self.e.stream().synchronize()?;
        let wall = t.elapsed().as_secs_f64();
        let per = 1e6 / f64::from(steps);
        let gpu = f64::from(start.elapsed_ms(&end)?) * 1e3 / f64::from(steps);
        Ok((issued * per, wall * per, gpu))
    }

    fn trial(&mut self, c: &LoopConfig, order: &[usize]) -> anyhow::Result<LoopTrial> {
        let (k, j) = (c.steps, c.stop_at);
        let mut t = LoopTrial::default();
        for &path in order {
            self.reset()?;
            match path {
                0 => {
                    let step = &self.step;
                    (
                        t.host_loop_issue_us,
                        t.host_loop_wall_us,
                        t.host_loop_gpu_us,
                    ) = self.timed(k, || {
                        for _ in 0..k {
                            step.launch()?;
                        }
                        Ok(())
                    })?;
                    self.check("the host loop of graph launches", k)?;
                }
                1 => {
                    let lg = &self.while_k;
                    (t.while_issue_us, t.while_wall_us, t.while_gpu_us) =
                        self.timed(k, || Ok(lg.launch()?))?;
                    self.check("the WHILE graph", k)?;
                }
                2 => {
                    let t0 = Instant::now();
                    let mut ran = 0;
                    while ran < k {
                        self.step_flag.launch()?;
                        ran += 1;
                        if self.e.dtoh(&self.flag)?[0] != 0 {
                            break;
                        }
                    }
                    t.readback_wall_us = t0.elapsed().as_secs_f64() * 1e6 / f64::from(ran);
                    self.check("the host loop reading the stop flag", j)?;
                }
                _ => {
                    let lg = &self.while_exit;
                    (_, t.while_exit_wall_us, _) = self.timed(j, || Ok(lg.launch()?))?;
                    let last = lg.counts()?.last;
                    self.check("the WHILE graph with a device stop", j)?;
                    if last != j {
                        bail!("the WHILE graph reports {last} iterations, expected {j}");
                    }
                }
            }
        }
        Ok(t)
    }
}

/// Builds the graphs, then runs warm-up and measured trials with the runner.
pub fn run(e: &Engine, c: &LoopConfig, ctx: &Context<'_>) -> anyhow::Result<LoopResult> {
    if c.stop_at == 0 || c.stop_at > c.steps {
        bail!(
            "the stop step {} must be between 1 and the loop's {} steps",
            c.stop_at,
            c.steps
        );
    }
    let mut loops = Loops::new(e, c)?;
    let runner = ctx.runner(c.rule, c.warmup, LOOP_PATHS);
    let out = runner.run::<LoopFigure>(|order| loops.trial(c, order))?;
    let mut warnings = headline_warnings::<LoopFigure>(&out.trials);
    warnings.extend(out.convergence_warnings(c.rule.max_noise));
    Ok(LoopResult {
        config: *c,
        step_nodes: loops.step.node_count(),
        body_nodes: loops.while_k.body_nodes(),
        step_graph_build_ms: build_ms(&loops.step),
        while_graph_build_ms: build_ms(loops.while_k.graph()),
        summary: Summaries::of(&out.trials),
        trials: out.trials,
        convergence: out.convergence,
        warnings,
        checked_loops: loops.checked,
        interrupted: out.interrupted,
    })
}
