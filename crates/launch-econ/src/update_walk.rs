//! Walks that change every step: the same step priced five ways when k of its n kernels read a
//! different input each step — eager; capture + instantiate every step; capture + exec update
//! (llama.cpp); set-params on the changed nodes; device-side parameters (each kernel reads its
//! input window from device memory that the host rewrites with one copy a step).
//!
//! Every step ends with a synchronize, as a decode loop waits for its token. After each path's
//! steps, every output is checked against what the last step must have computed.

use std::time::Instant;

use anyhow::{bail, Context as _};
use memra_engine::{DeviceBuffer, Engine, Error, Graph, Kernel, KernelArgs, LaunchShape};
use serde::{Deserialize, Serialize};

use crate::figures::{headline_warnings, Summaries};
use crate::runner::{Context, Convergence, StopRule};
use crate::stats::Summary;

/// Threads per block of the engine's `add`.
const BLOCK: u32 = 256;
/// Input values: X0 everywhere, X1 for a changed node on odd steps; `b` is added.
const X0: f32 = 1.0;
const X1: f32 = 2.0;
const B: f32 = 0.5;

/// What an update run does.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct UpdateConfig {
    /// Kernels in the step.
    pub nodes: usize,
    /// Kernels whose input changes every step.
    pub changed: usize,
    pub elems: usize,
    /// Steps per path per trial.
    pub steps: usize,
    pub rule: StopRule,
    pub warmup: usize,
}

/// One trial, µs per step: host time (the clock stopped before the step's synchronize) and wall
/// time (synchronize included) of each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UpdateTrial {
    pub eager_host_us: f64,
    pub eager_wall_us: f64,
    pub recapture_host_us: f64,
    pub recapture_wall_us: f64,
    /// Of recapture's host time: cuGraphInstantiate + upload.
    pub recapture_instantiate_us: f64,
    pub update_host_us: f64,
    pub update_wall_us: f64,
    /// Of exec update's host time: the capture, and cuGraphExecUpdate.
    pub update_capture_us: f64,
    pub update_apply_us: f64,
    pub set_params_host_us: f64,
    pub set_params_wall_us: f64,
    pub device_params_host_us: f64,
    pub device_params_wall_us: f64,
}

crate::figures::figure_set! {
    /// The figures of an update trial, µs per step.
    UpdateFigure for UpdateTrial, headline [EagerWallUs, RecaptureWallUs, UpdateWallUs, SetParamsWallUs, DeviceParamsWallUs] {
        EagerHostUs => "eager_host_us", |t| t.eager_host_us;
        EagerWallUs => "eager_wall_us", |t| t.eager_wall_us;
        RecaptureHostUs => "recapture_host_us", |t| t.recapture_host_us;
        RecaptureWallUs => "recapture_wall_us", |t| t.recapture_wall_us;
        RecaptureInstantiateUs => "recapture_instantiate_us", |t| t.recapture_instantiate_us;
        UpdateHostUs => "update_host_us", |t| t.update_host_us;
        UpdateWallUs => "update_wall_us", |t| t.update_wall_us;
        UpdateCaptureUs => "update_capture_us", |t| t.update_capture_us;
        UpdateApplyUs => "update_apply_us", |t| t.update_apply_us;
        SetParamsHostUs => "set_params_host_us", |t| t.set_params_host_us;
        SetParamsWallUs => "set_params_wall_us", |t| t.set_params_wall_us;
        DeviceParamsHostUs => "device_params_host_us", |t| t.device_params_host_us;
        DeviceParamsWallUs => "device_params_wall_us", |t| t.device_params_wall_us;
        InstantiateOverUpdate => "instantiate_over_update", |t| t.recapture_instantiate_us / t.update_apply_us;
    }
}

/// The ways, in the order of [`UpdateResult::ways`].
pub const WAYS: [(&str, UpdateFigure, UpdateFigure); 5] = [
    (
        "eager",
        UpdateFigure::EagerHostUs,
        UpdateFigure::EagerWallUs,
    ),
    (
        "capture + instantiate every step",
        UpdateFigure::RecaptureHostUs,
        UpdateFigure::RecaptureWallUs,
    ),
    (
        "capture + exec update",
        UpdateFigure::UpdateHostUs,
        UpdateFigure::UpdateWallUs,
    ),
    (
        "set-params on the changed nodes",
        UpdateFigure::SetParamsHostUs,
        UpdateFigure::SetParamsWallUs,
    ),
    (
        "device-side parameters",
        UpdateFigure::DeviceParamsHostUs,
        UpdateFigure::DeviceParamsWallUs,
    ),
];

/// A topology change: the update refused, and what falling back to a new instantiation costs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopologyChange {
    /// The driver's reason for refusing the update.
    pub refusal: String,
    /// Capture + refused update + instantiate + upload, µs (over several changes).
    pub fallback_us: Summary,
}

/// Everything an update run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateResult {
    pub config: UpdateConfig,
    /// Building the first graph (capture + instantiate + upload), µs: what every graph way pays
    /// once, and what break-even is counted against.
    pub initial_build_us: f64,
    pub trials: Vec<UpdateTrial>,
    pub summary: Summaries<UpdateFigure>,
    pub convergence: Vec<Convergence>,
    pub topology_change: Option<TopologyChange>,
    pub warnings: Vec<String>,
    /// Paths whose outputs were checked against the expected step result.
    pub checked_paths: usize,
    pub interrupted: bool,
}

impl UpdateResult {
    pub fn median(&self, f: UpdateFigure) -> f64 {
        self.summary.median(f)
    }
}

/// The walk: n adds, y_i = x_i + b, where x_i is X1 on odd steps for a changed node, else X0.
struct Walk {
    e: Engine,
    x: [DeviceBuffer<f32>; 2],
    /// X0 then X1, back to back, for the window kernel.
    arena: DeviceBuffer<f32>,
    b: DeviceBuffer<f32>,
    ys: Vec<DeviceBuffer<f32>>,
    win: DeviceBuffer<u32>,
    changed: Vec<bool>,
    changed_nodes: Vec<usize>,
    elems: usize,
    checked: usize,
}

impl Walk {
    fn new(e: &Engine, c: &UpdateConfig) -> anyhow::Result<Walk> {
        let n = c.elems;
        let mut arena = vec![X0; n];
        arena.extend(vec![X1; n]);
        let changed_nodes: Vec<usize> = (0..c.changed).map(|j| j * c.nodes / c.changed).collect();
        let mut changed = vec![false; c.nodes];
        for &i in &changed_nodes {
            changed[i] = true;
        }
        Ok(Walk {
            e: e.clone(),
            x: [e.htod(&vec![X0; n])?, e.htod(&vec![X1; n])?],
            arena: e.htod(&arena)?,
            b: e.htod(&vec![B; n])?,
            ys: (0..c.nodes)
                .map(|_| e.zeros(n))
                .collect::<memra_engine::Result<_>>()?,
            win: e.htod(&vec![0u32; 2 * c.nodes])?,
            changed,
            changed_nodes,
            elems: n,
            checked: 0,
        })
    }

    /// The input of node `i` at step `s`.
    fn input(&self, i: usize, s: usize) -> usize {
        usize::from(self.changed[i] && s % 2 == 1)
    }

    /// Step `s` as pointer arguments (eager, and what the graph ways capture).
    fn step(
        eng: &Engine,
        x: &[DeviceBuffer<f32>; 2],
        b: &DeviceBuffer<f32>,
        ys: &mut [DeviceBuffer<f32>],
        changed: &[bool],
        elems: usize,
        s: usize,
    ) -> memra_engine::Result<()> {
        for (i, y) in ys.iter_mut().enumerate() {
            let which = usize::from(changed[i] && s % 2 == 1);
            eng.add(&x[which], b, y, elems)?;
        }
        Ok(())
    }

    fn run_step(&mut self, eng: &Engine, s: usize) -> memra_engine::Result<()> {
        Self::step(
            eng,
            &self.x,
            &self.b,
            &mut self.ys,
            &self.changed,
            self.elems,
            s,
        )
    }

    fn capture(&mut self, s: usize, cold: bool) -> memra_engine::Result<Graph> {
        let Walk {
            e,
            x,
            b,
            ys,
            changed,
            elems,
            ..
        } = self;
        let mut f = |eng: &Engine| Self::step(eng, x, b, ys, changed, *elems, s);
        if cold {
            e.capture_graph_cold(&mut f)
        } else {
            e.capture_graph(&mut f)
        }
    }

    fn update(
        &mut self,
        g: &mut Graph,
        s: usize,
    ) -> memra_engine::Result<memra_engine::UpdateReport> {
        let Walk {
            x,
            b,
            ys,
            changed,
            elems,
            ..
        } = self;
        g.update(|eng| Self::step(eng, x, b, ys, changed, *elems, s))
    }

    fn window_graph(&mut self) -> memra_engine::Result<Graph> {
        let Walk {
            e,
            arena,
            b,
            ys,
            win,
            ..
        } = self;
        e.capture_graph(|eng| {
            for (i, y) in ys.iter_mut().enumerate() {
                eng.add_window(arena, b, y, win, i)?;
            }
            Ok(())
        })
    }

    fn windows(&self, s: usize) -> Vec<u32> {
        (0..self.ys.len())
            .flat_map(|i| [(self.input(i, s) * self.elems) as u32, self.elems as u32])
            .collect()
    }

    fn set_params(&self, g: &mut Graph, s: usize) -> memra_engine::Result<()> {
        let shape = LaunchShape::linear((self.elems as u32).div_ceil(BLOCK), BLOCK);
        for &i in &self.changed_nodes {
            let args = KernelArgs::new()
                .buf(&self.x[self.input(i, s)])
                .buf(&self.b)
                .buf(&self.ys[i])
                .u32(self.elems as u32);
            g.set_kernel_node(i, Kernel::AddF32, shape, args)?;
        }
        Ok(())
    }

    fn clear(&mut self) -> anyhow::Result<()> {
        for y in &mut self.ys {
            self.e.memset_zero(y, self.elems * 4)?;
        }
        Ok(())
    }

    /// Fails unless every output is what step `s` computes.
    fn check(&mut self, way: &str, s: usize) -> anyhow::Result<()> {
        for (i, y) in self.ys.iter().enumerate() {
            let want = [X0, X1][self.input(i, s)] + B;
            let got = self.e.dtoh(y)?;
            if let Some(bad) = got.iter().position(|&v| v != want) {
                bail!(
                    "{way}: node {i} element {bad} is {} after step {s}, expected {want}",
                    got[bad]
                );
            }
        }
        self.checked += 1;
        Ok(())
    }
}

/// The graphs the ways keep between steps.
struct Graphs {
    update: Graph,
    set_params: Graph,
    window: Graph,
}

fn us(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Runs `steps` steps: `host` does a step's host work (timed), then the stream is synchronized.
/// Returns (host µs, wall µs) per step.
fn stepped(
    e: &Engine,
    steps: usize,
    mut host: impl FnMut(usize) -> anyhow::Result<()>,
) -> anyhow::Result<(f64, f64)> {
    let (mut h, t0) = (0.0, Instant::now());
    for s in 0..steps {
        let t = Instant::now();
        host(s)?;
        h += us(t.elapsed());
        e.stream().synchronize()?;
    }
    Ok((h / steps as f64, us(t0.elapsed()) / steps as f64))
}

fn trial(
    w: &mut Walk,
    g: &mut Graphs,
    c: &UpdateConfig,
    order: &[usize],
) -> anyhow::Result<UpdateTrial> {
    let e = w.e.clone();
    let last = c.steps - 1;
    let mut t = UpdateTrial::default();
    for &way in order {
        w.clear()?;
        match way {
            0 => {
                (t.eager_host_us, t.eager_wall_us) =
                    stepped(&e, c.steps, |s| Ok(w.run_step(&e, s)?))?;
                w.check("eager", last)?;
            }
            1 => {
                let mut inst = 0.0;
                (t.recapture_host_us, t.recapture_wall_us) = stepped(&e, c.steps, |s| {
                    let graph = w.capture(s, true)?;
                    let ct = graph.timings();
                    inst += us(ct.instantiate + ct.upload);
                    graph.launch()?;
                    Ok(())
                })?;
                t.recapture_instantiate_us = inst / c.steps as f64;
                w.check("capture + instantiate every step", last)?;
            }
            2 => {
                let (mut cap, mut apply) = (0.0, 0.0);
                (t.update_host_us, t.update_wall_us) = stepped(&e, c.steps, |s| {
                    let r = w.update(&mut g.update, s)?;
                    cap += us(r.capture);
                    apply += us(r.update);
                    g.update.launch()?;
                    Ok(())
                })?;
                t.update_capture_us = cap / c.steps as f64;
                t.update_apply_us = apply / c.steps as f64;
                w.check("capture + exec update", last)?;
            }
            3 => {
                (t.set_params_host_us, t.set_params_wall_us) = stepped(&e, c.steps, |s| {
                    w.set_params(&mut g.set_params, s)?;
                    g.set_params.launch()?;
                    Ok(())
                })?;
                w.check("set-params", last)?;
            }
            _ => {
                (t.device_params_host_us, t.device_params_wall_us) = stepped(&e, c.steps, |s| {
                    let win = w.windows(s);
                    e.htod_into(&win, &mut w.win)?;
                    g.window.launch()?;
                    Ok(())
                })?;
                w.check("device-side parameters", last)?;
            }
        }
    }
    Ok(t)
}

/// Alternates the step between n and n + 1 kernels: the update is refused each time and the
/// graph instantiated anew. Returns the refusal and the fallback's cost.
fn topology_change(w: &mut Walk, g: &mut Graph, times: usize) -> anyhow::Result<TopologyChange> {
    let mut refusal = String::new();
    let mut costs = Vec::new();
    for k in 0..times {
        let extra = k % 2 == 0;
        let Walk {
            x,
            b,
            ys,
            changed,
            elems,
            ..
        } = w;
        let mut step = |eng: &Engine| {
            Walk::step(eng, x, b, ys, changed, *elems, 0)?;
            if extra {
                eng.add(&x[0], b, &mut ys[0], *elems)?;
            }
            Ok(())
        };
        if k == 0 {
            match g.update(&mut step) {
                Err(Error::GraphUpdate { result, node }) => refusal = format!("{result}{node}"),
                Err(e) => return Err(e.into()),
                Ok(_) => bail!("the driver accepted an update that changed the topology"),
            }
        }
        let t = Instant::now();
        let r = g.update_or_reinstantiate(&mut step)?;
        costs.push(us(t.elapsed()));
        if r.reinstantiate.is_none() {
            bail!("the driver accepted an update that changed the topology");
        }
    }
    Ok(TopologyChange {
        refusal,
        fallback_us: Summary::of(&costs),
    })
}

/// Builds the walk and its graphs, then runs warm-up and measured trials.
pub fn run(e: &Engine, c: &UpdateConfig, ctx: &Context<'_>) -> anyhow::Result<UpdateResult> {
    if c.changed == 0 || c.changed > c.nodes || c.steps < 2 {
        bail!("need 1..={} changed nodes and at least 2 steps", c.nodes);
    }
    let mut w = Walk::new(e, c).context("allocating the walk")?;
    let t = Instant::now();
    let first = w.capture(0, true).context("capturing the step")?;
    let initial_build_us = us(t.elapsed());
    drop(first);
    let mut g = Graphs {
        update: w.capture(0, false)?,
        set_params: w.capture(0, false)?,
        window: w.window_graph()?,
    };
    let runner = ctx.runner(c.rule, c.warmup, WAYS.len());
    let out = runner.run::<UpdateFigure>(|order| trial(&mut w, &mut g, c, order))?;
    let topology = if out.interrupted {
        None
    } else {
        Some(topology_change(&mut w, &mut g.update, 6)?)
    };
    let mut warnings = headline_warnings::<UpdateFigure>(&out.trials);
    warnings.extend(out.convergence_warnings(c.rule.max_noise));
    Ok(UpdateResult {
        config: *c,
        initial_build_us,
        summary: Summaries::of(&out.trials),
        trials: out.trials,
        convergence: out.convergence,
        topology_change: topology,
        warnings,
        checked_paths: w.checked,
        interrupted: out.interrupted,
    })
}
