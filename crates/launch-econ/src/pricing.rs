//! Pricing a recorded step: the library entry points that the `replay` command and the Python
//! package share — read and filter a trace, load a device profile, and price the step offline
//! (the model over the profile) or by replaying it on a GPU.

use std::path::Path;

use anyhow::Context as _;
use memra_engine::Engine;

use crate::document::{
    ModelProfile, ReplayReport, SummaryReport, TraceInfo, DEFAULT_PROFILE, DEFAULT_PROFILE_NAME,
};
use crate::node_gap::GapSource;
use crate::occupancy::SmLimits;
use crate::offline::{build_model, engine_floor_model, ModelledWalk, OfflineDevice};
use crate::price::{EagerSource, GraphSource, StepPrice};
use crate::replay::{replay, ReplayConfig, ReplayFigure};
use crate::runner::Context;
use crate::trace::{self, summarize, Filter, Walk};
use crate::trace_eager::{eager_from_trace, ProfilerReadings};
use crate::wide_grids::WideGrids;

/// Bad input (an unreadable trace, a filter that leaves nothing, a profile that is not one):
/// the CLI exits 2 for it, the Python package raises `ValueError`.
#[derive(Debug)]
pub struct BadInput(pub String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Reads `path` (nsys CSV or Kineto JSON), keeps the marked step and what else `filter`
/// selects, and summarises it (`top` kernels by time).
pub fn read_walk(path: &Path, filter: &Filter, top: usize) -> Result<(Walk, TraceInfo), BadInput> {
    let walk = trace::read(path)
        .map_err(|e| BadInput(e.to_string()))?
        .of_step(filter.step)
        .map_err(|e| BadInput(format!("{}: {e}", path.display())))?
        .filtered(filter);
    if walk.ops.is_empty() {
        return Err(BadInput(format!(
            "{}: no operations left after the filters ({})",
            path.display(),
            describe_filter(filter)
        )));
    }
    let info = TraceInfo {
        path: path.display().to_string(),
        filter: describe_filter(filter),
        steps: describe_steps(&walk),
        summary: summarize(&walk, top),
    };
    Ok((walk, info))
}

/// The device profile at `path`, or the H200 profile shipped with launch-econ; with its origin.
pub fn load_profile(path: Option<&Path>) -> anyhow::Result<(ModelProfile, String)> {
    match path {
        Some(p) => Ok((
            ModelProfile::load(p).map_err(|e| BadInput(format!("{e:#}")))?,
            p.display().to_string(),
        )),
        None => Ok((
            ModelProfile::parse(DEFAULT_PROFILE, DEFAULT_PROFILE_NAME)?,
            DEFAULT_PROFILE_NAME.to_string(),
        )),
    }
}

/// Prices the walk with the offline model over `profile`, no GPU: graph step from the model,
/// eager step from `eager_step_ms`, else the trace's host side, else the engine's floor;
/// wide kernels by `grids` (see [`crate::wide_grids`]). With `timeline`, also where the model
/// put each op, as a Chrome trace beside the recording ([`SummaryReport::timeline`]).
///
/// First the walk's kernels that ran slowed beside other streams' kernels in the recording
/// get their twins' duration apart, where the model adds back what running side by side
/// costs them ([`crate::offline::prices_load`]); [`Walk::uncontended`] says how many, for
/// the report's warnings.
pub fn price_offline(
    walk: &mut Walk,
    info: TraceInfo,
    (profile, origin): (ModelProfile, String),
    eager_step_ms: Option<f64>,
    grids: Option<WideGrids>,
    timeline: bool,
) -> SummaryReport {
    let (sms, l2) = (sm_limits(&profile), l2_bytes(&profile));
    let m = &profile.model_inputs;
    walk.uncontend_where(|o| crate::offline::prices_load(o, m));
    let walk: &Walk = walk;
    let dev = OfflineDevice {
        inputs: m,
        sms: sms.as_ref(),
        sharing: true,
        grids: grids.as_ref(),
        l2_bytes: l2,
    };
    let modelled = ModelledWalk::new(walk, &dev);
    let eager = choose_eager(eager_step_ms, walk, m.eager_issue_us, || {
        engine_floor_model(walk, m)
    });
    // Streams side by side take no longer than the same kernels one after another: where the
    // model's sharing prices them longer, the step is the serial one — unless the lanes'
    // data pass the L2, where no step is shorter than their bytes from device memory.
    let floor = modelled.streamed_floor_ms();
    let held = |side_by_side: f64, serial: Option<f64>| {
        serial.map_or(side_by_side, |s| side_by_side.min(s))
    };
    let bounded = |side_by_side: f64, serial: Option<f64>| {
        let held = held(side_by_side, serial);
        floor.map_or(held, |f| held.max(f))
    };
    let serial = modelled.serial_ms();
    let step = modelled.step_ms();
    let mut prediction = StepPrice::new(
        (bounded(step, serial), GraphSource::Model),
        eager,
        build_model(walk, m),
    )
    .with_profiler_readings(readings_of(walk, eager.1));
    if m.graph_node_other_stream_us.is_some() {
        prediction =
            prediction.with_quiet(bounded(modelled.quiet_ms(), modelled.serial_quiet_ms()));
    }
    if let Some(f) = floor.filter(|&f| f > held(step, serial)) {
        prediction = prediction.with_streamed_floor(f);
    }
    if let Some(serial) = serial {
        prediction = prediction.with_serial(serial).with_branches();
        if sms.is_some() {
            prediction = prediction
                .with_unshared(modelled.unshared_ms())
                .with_waited_for_room(modelled.waited_for_room());
        }
    } else if let Some(independent) = modelled.independent_ms() {
        prediction = prediction.with_independent(independent);
    }
    let timeline = timeline.then(|| {
        let (schedule, spans) = modelled.spans();
        crate::timeline::chrome_trace_offline(walk, &schedule.streams, &spans, &modelled.alone_ns())
    });
    let level_step = Some(modelled.level_step());
    SummaryReport {
        trace: info,
        profile: origin,
        grid_nodes: grids.map(|t| t.device),
        level_step,
        prediction,
        timeline,
    }
}

/// The SM limits of the profile's device, where it names one.
fn sm_limits(profile: &ModelProfile) -> Option<SmLimits> {
    profile
        .device
        .as_ref()
        .and_then(|d| SmLimits::of(&d.compute_capability, u32::try_from(d.sm_count).ok()?))
}

/// The L2 of the profile's device, bytes, where it names one.
fn l2_bytes(profile: &ModelProfile) -> Option<f64> {
    profile
        .device
        .as_ref()
        .map(|d| f64::from(d.l2_bytes))
        .filter(|&b| b > 0.0)
}

/// Replays the walk on `e` (eager and as a graph, with the trial runner) and prices it from
/// what was measured. An interrupt (through `ctx`) returns what was measured, marked.
pub fn price_replayed(
    e: &Engine,
    walk: &Walk,
    info: TraceInfo,
    cfg: &ReplayConfig,
    ctx: &Context<'_>,
    eager_step_ms: Option<f64>,
) -> anyhow::Result<ReplayReport> {
    let mut r = replay(e, walk, cfg, ctx).context("replaying the walk")?;
    if r.node_gap_source == GapSource::Measured {
        r.warnings.extend(gap_above_shipped_profile(
            &e.device_info().name,
            r.node_gap_us,
            r.ops,
        ));
    }
    // The engine's measured cost of one eager launch of this walk stands for an unprofiled
    // launch call when the trace's inflation is removed.
    let launch_floor_us = r.median(ReplayFigure::EagerIssueMs) * 1e3 / r.ops.max(1) as f64;
    let eager = choose_eager(eager_step_ms, walk, launch_floor_us, || {
        r.median(ReplayFigure::EagerWallMs)
    });
    // The graph step in the state of a framework process, when it was measured; the
    // trials' single-stream figure is its quiet lower bound.
    let quiet = r.median(ReplayFigure::GraphWallMs);
    let graph = r
        .graph_wall_other_stream_ms
        .as_ref()
        .map_or(quiet, |s| s.median);
    // Memory a trace without shapes leaves open moves the upper level only.
    let unknown = r
        .unknown_memory_ms
        .filter(|_| r.graph_wall_other_stream_ms.is_some());
    let mut prediction = StepPrice::new(
        (graph + unknown.unwrap_or(0.0), GraphSource::Replay),
        eager,
        r.median(ReplayFigure::BuildMs),
    )
    .with_profiler_readings(readings_of(walk, eager.1));
    if r.graph_wall_other_stream_ms.is_some() {
        prediction = prediction.with_quiet(quiet);
    }
    if let Some(ms) = unknown {
        prediction = prediction.with_unknown_memory(ms);
    }
    if r.lanes > 1 {
        prediction = prediction.with_branches();
    }
    Ok(ReplayReport {
        trace: info,
        replay: r,
        prediction,
    })
}

/// Which figure a GPU replay takes as the graph step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphStepChoice {
    /// The mean where a device profile describes this GPU (the shipped one, or `--profile`
    /// of this kind of GPU), else the replayed graph step alone.
    #[default]
    Auto,
    /// The mean of the replayed graph step and the offline model's over this GPU's profile
    /// (as `Auto`; where no profile describes this GPU, the replayed one, and a warning that
    /// the mean was asked for).
    Mean,
    /// The replayed graph step alone.
    Replay,
}

impl GraphStepChoice {
    /// The profile the offline model beside a replay on `device` uses, if any: the user's
    /// where it describes this kind of GPU, else the shipped one where that does.
    pub fn model_profile(
        self,
        device: &str,
        user_profile: Option<&(ModelProfile, String)>,
    ) -> Option<(ModelProfile, String)> {
        match self {
            GraphStepChoice::Auto | GraphStepChoice::Mean => {
                crate::node_gap::profile_for(device, user_profile)
            }
            GraphStepChoice::Replay => None,
        }
    }
}

/// `report`, a GPU replay of `recorded` (the walk as read, before the replay took its
/// contended kernels apart), with the offline model's graph step of the same walk over
/// `profile` (this GPU's) beside it and the mean of the two as the graph step
/// ([`StepPrice::with_model`]); wide kernels by `grids`, as `--summary` would price them.
pub fn with_offline_model(
    mut report: ReplayReport,
    recorded: &Walk,
    profile: (ModelProfile, String),
    grids: Option<WideGrids>,
    eager_step_ms: Option<f64>,
) -> ReplayReport {
    let mut walk = recorded.clone();
    let model = price_offline(
        &mut walk,
        report.trace.clone(),
        profile,
        eager_step_ms,
        grids,
        false,
    )
    .prediction;
    report.prediction = report.prediction.with_model(&model);
    report
}

/// [`crate::caveats::front_end_gap_above_profile`] against the profile shipped for `device`,
/// where it was measured on that kind of GPU (none on others).
fn gap_above_shipped_profile(device: &str, measured_us: f64, nodes: usize) -> Option<String> {
    let (profile_us, name) = crate::node_gap::shipped_gap_us(device)?;
    crate::caveats::front_end_gap_above_profile(measured_us, profile_us, &name, nodes)
}

/// The eager step and its source: the user's, else the trace's host side, else the engine's
/// own cost (`floor`).
fn choose_eager(
    eager_step_ms: Option<f64>,
    walk: &Walk,
    launch_floor_us: f64,
    floor: impl FnOnce() -> f64,
) -> (f64, EagerSource) {
    if let Some(ms) = eager_step_ms {
        return (ms, EagerSource::User);
    }
    match eager_from_trace(walk, launch_floor_us) {
        Some(ms) => (ms, EagerSource::Trace),
        None => (floor(), EagerSource::EngineFloor),
    }
}

/// What the eager step read the profiler's cost from, where it came from the trace.
fn readings_of(walk: &Walk, source: EagerSource) -> Option<ProfilerReadings> {
    (source == EagerSource::Trace)
        .then(|| ProfilerReadings::of(walk))
        .flatten()
}

/// Which marked step the walk holds, in words; `None` for a trace that marks none.
pub fn describe_steps(walk: &Walk) -> Option<String> {
    let marked = walk.steps.len();
    if marked == 0 {
        return None;
    }
    let list = trace::steps::describe(&walk.steps);
    Some(match walk.step {
        Some(n) => format!(
            "ProfilerStep#{n}, one of {marked} marked steps: {list} (--profiler-step N|all to choose)"
        ),
        None if marked == 1 => format!("the whole trace; it marks one step: {list}"),
        None => format!(
            "the whole trace, {marked} marked steps as one walk: {list} (the price is theirs together)"
        ),
    })
}

/// The filter in words, for reports and documents.
pub fn describe_filter(f: &Filter) -> String {
    let mut parts = Vec::new();
    if let Some(d) = f.device {
        parts.push(format!("device {d}"));
    }
    if let Some(s) = f.stream {
        parts.push(format!("stream {s}"));
    }
    if let Some((a, b)) = f.window_us {
        parts.push(format!("window {a}..{b} us"));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gap_is_checked_against_the_shipped_profile_on_its_gpu_only() {
        let shipped = ModelProfile::parse(DEFAULT_PROFILE, DEFAULT_PROFILE_NAME).unwrap();
        let gap = shipped.model_inputs.graph_node_gap_us.unwrap();
        let w = gap_above_shipped_profile("NVIDIA H200", gap + 0.13, 1000).unwrap();
        assert!(w.contains("NVIDIA H200 profile"), "{w}");
        assert_eq!(gap_above_shipped_profile("NVIDIA H200", gap, 1000), None);
        // Another GPU's front end is not the H200's: nothing to compare with.
        assert_eq!(
            gap_above_shipped_profile("NVIDIA A100-SXM4-80GB", gap + 0.13, 1000),
            None
        );
    }
}
