//! Walks that change every step: the same step priced five ways when k of its kernels take new
//! arguments each step — eager; capture + instantiate every step; capture + exec update
//! (llama.cpp); set-params on the changed nodes; device-side parameters (each kernel reads its
//! changing argument from device memory that the host rewrites with one copy a step).
//!
//! Two walks: a synthetic step of `add` kernels ([`SyntheticWalk`]) and a recorded walk replayed by
//! stand-ins ([`RecordedWalk`]). Every step ends with a synchronize, as a decode loop waits for its
//! token. After each way's timed steps the outputs are cleared, one more step is run the same way,
//! and every output is checked against what that step must have written.

mod recorded;
mod synthetic;

pub use recorded::RecordedWalk;
pub use synthetic::SyntheticWalk;

use std::time::Instant;

use anyhow::bail;
use memra_engine::{Engine, Error, Graph};
use serde::{Deserialize, Serialize};

use crate::figures::{headline_warnings, Summaries};
use crate::runner::{Context, Convergence, StopRule};
use crate::stats::Summary;

/// A step whose changed kernels take new arguments every step, issued each way.
pub trait ChangingWalk {
    /// Kernels in the step, and how many of them change.
    fn kernels(&self) -> usize;
    fn changed(&self) -> usize;
    /// Issues step `s`; with `extra`, one kernel more (a topology change).
    fn issue(&mut self, e: &Engine, s: usize, extra: bool) -> memra_engine::Result<()>;
    /// Sets the changed kernel nodes of `g` (captured from `issue`) to step `s`.
    fn set_params(&mut self, e: &Engine, g: &mut Graph, s: usize) -> memra_engine::Result<()>;
    /// Issues the step with its changing arguments read from device memory.
    fn issue_windowed(&mut self, e: &Engine) -> memra_engine::Result<()>;
    /// Writes step `s`'s device-side arguments (one copy).
    fn write_windows(&mut self, e: &Engine, s: usize) -> memra_engine::Result<()>;
    /// Clears every output.
    fn clear(&mut self, e: &Engine) -> anyhow::Result<()>;
    /// Fails unless the outputs are what step `s` writes (`windowed`: issued by
    /// `issue_windowed`).
    fn check(&mut self, e: &Engine, way: &str, s: usize, windowed: bool) -> anyhow::Result<()>;
}

/// What an update run does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateConfig {
    /// The walk: `synthetic` or the trace's path.
    pub walk: String,
    /// Kernels in the step.
    pub nodes: usize,
    /// Kernels whose arguments change every step.
    pub changed: usize,
    /// Elements of each `add` (synthetic walk; 0 for a recorded one).
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

/// The ways, as the report lists them: (name, host figure, wall figure).
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

/// The graphs the ways keep between steps.
struct Graphs {
    update: Graph,
    set_params: Graph,
    window: Graph,
}

fn us(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Runs `steps` steps: `host` does a step's host work (timed), then the stream is synchronized;
/// then clears the outputs, runs step `steps` the same way (untimed) and checks it. Returns
/// (host µs, wall µs) per timed step.
fn stepped<W: ChangingWalk + ?Sized>(
    e: &Engine,
    w: &mut W,
    steps: usize,
    (way, windowed): (&str, bool),
    mut host: impl FnMut(&mut W, usize) -> anyhow::Result<()>,
) -> anyhow::Result<(f64, f64)> {
    let (mut h, t0) = (0.0, Instant::now());
    for s in 0..steps {
        let t = Instant::now();
        host(w, s)?;
        h += us(t.elapsed());
        e.stream().synchronize()?;
    }
    let wall = us(t0.elapsed()) / steps as f64;
    w.clear(e)?;
    host(w, steps)?;
    e.stream().synchronize()?;
    w.check(e, way, steps, windowed)?;
    Ok((h / steps as f64, wall))
}

fn trial<W: ChangingWalk + ?Sized>(
    e: &Engine,
    w: &mut W,
    g: &mut Graphs,
    c: &UpdateConfig,
    order: &[usize],
) -> anyhow::Result<UpdateTrial> {
    let n = c.steps;
    let mut t = UpdateTrial::default();
    for &way in order {
        match way {
            0 => {
                (t.eager_host_us, t.eager_wall_us) =
                    stepped(e, w, n, ("eager", false), |w, s| Ok(w.issue(e, s, false)?))?;
            }
            1 => {
                let mut inst = Vec::new();
                (t.recapture_host_us, t.recapture_wall_us) = stepped(
                    e,
                    w,
                    n,
                    ("capture + instantiate every step", false),
                    |w, s| {
                        let graph = e.capture_graph_cold(|eng| w.issue(eng, s, false))?;
                        let ct = graph.timings();
                        inst.push(us(ct.instantiate + ct.upload));
                        graph.launch()?;
                        Ok(())
                    },
                )?;
                t.recapture_instantiate_us = inst[..n].iter().sum::<f64>() / n as f64;
            }
            2 => {
                let (mut cap, mut apply) = (Vec::new(), Vec::new());
                (t.update_host_us, t.update_wall_us) =
                    stepped(e, w, n, ("capture + exec update", false), |w, s| {
                        let r = g.update.update(|eng| w.issue(eng, s, false))?;
                        cap.push(us(r.capture));
                        apply.push(us(r.update));
                        g.update.launch()?;
                        Ok(())
                    })?;
                t.update_capture_us = cap[..n].iter().sum::<f64>() / n as f64;
                t.update_apply_us = apply[..n].iter().sum::<f64>() / n as f64;
            }
            3 => {
                (t.set_params_host_us, t.set_params_wall_us) =
                    stepped(e, w, n, ("set-params", false), |w, s| {
                        w.set_params(e, &mut g.set_params, s)?;
                        g.set_params.launch()?;
                        Ok(())
                    })?;
            }
            _ => {
                (t.device_params_host_us, t.device_params_wall_us) =
                    stepped(e, w, n, ("device-side parameters", true), |w, s| {
                        w.write_windows(e, s)?;
                        g.window.launch()?;
                        Ok(())
                    })?;
            }
        }
    }
    Ok(t)
}

/// Alternates the step between its kernels and one more: the update is refused each time and
/// the graph instantiated anew. Returns the refusal and the fallback's cost.
fn topology_change<W: ChangingWalk + ?Sized>(
    w: &mut W,
    g: &mut Graph,
    times: usize,
) -> anyhow::Result<TopologyChange> {
    let mut refusal = String::new();
    let mut costs = Vec::new();
    for k in 0..times {
        let extra = k % 2 == 0;
        if k == 0 {
            match g.update(|eng| w.issue(eng, 0, extra)) {
                Err(Error::GraphUpdate { result, node }) => refusal = format!("{result}{node}"),
                Err(e) => return Err(e.into()),
                Ok(_) => bail!("the driver accepted an update that changed the topology"),
            }
        }
        let t = Instant::now();
        let r = g.update_or_reinstantiate(|eng| w.issue(eng, 0, extra))?;
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

/// Builds the walk's graphs, then runs warm-up and measured trials.
pub fn run<W: ChangingWalk + ?Sized>(
    e: &Engine,
    w: &mut W,
    c: &UpdateConfig,
    ctx: &Context<'_>,
) -> anyhow::Result<UpdateResult> {
    if c.steps < 2 || w.changed() == 0 || w.changed() > w.kernels() {
        bail!(
            "need 1..={} changed kernels and at least 2 steps",
            w.kernels()
        );
    }
    let t = Instant::now();
    let first = e.capture_graph_cold(|eng| w.issue(eng, 0, false))?;
    let initial_build_us = us(t.elapsed());
    drop(first);
    let mut g = Graphs {
        update: e.capture_graph(|eng| w.issue(eng, 0, false))?,
        set_params: e.capture_graph(|eng| w.issue(eng, 0, false))?,
        window: e.capture_graph(|eng| w.issue_windowed(eng))?,
    };
    let mut checked = 0;
    let runner = ctx.runner(c.rule, c.warmup, WAYS.len());
    let out = runner.run::<UpdateFigure>(|order| {
        let t = trial(e, w, &mut g, c, order)?;
        checked += order.len();
        Ok(t)
    })?;
    let topology = if out.interrupted {
        None
    } else {
        Some(topology_change(w, &mut g.update, 6)?)
    };
    let mut warnings = headline_warnings::<UpdateFigure>(&out.trials);
    warnings.extend(out.convergence_warnings(c.rule.max_noise));
    Ok(UpdateResult {
        config: c.clone(),
        initial_build_us,
        summary: Summaries::of(&out.trials),
        trials: out.trials,
        convergence: out.convergence,
        topology_change: topology,
        warnings,
        checked_paths: checked,
        interrupted: out.interrupted,
    })
}
