//! `launch-econ [N]`: one round measured every way, the seed's two lines, the breakdown, and
//! the prediction for the user's round.

use anyhow::Context as _;

use crate::commands::{check_outputs, deliver, progress, show, start_engine, UsageError};
use crate::copy_nodes::CopyNodeCosts;
use crate::document::{CommandResult, Device, Document, RunResult};
use crate::measure::{measure_launch_fit, measure_point, Config, LaunchFit, Point, RunFigure};
use crate::model::{predict, ModelInputs, Round};
use crate::options::{RunArgs, TimingArgs, TimingDefaults};
use crate::report::{prediction_text, run_breakdown};
use crate::runner::Context;
use crate::seed::{saving_line, SeedResult};

/// Timing of the default run: short trials (5 rounds), a second of sampling at most, so the
/// whole run, start-up included, takes about as long as `nvidia-smi`.
pub const DEFAULTS: TimingDefaults = TimingDefaults {
    reps: 5,
    warmup: 1,
    min_time_s: 0.3,
    max_time_s: 1.0,
};

/// Timing of the launch-cost fit that follows the point.
const FIT: TimingDefaults = TimingDefaults {
    reps: 10,
    warmup: 1,
    min_time_s: 0.05,
    max_time_s: 0.25,
};

/// Graph sizes for the launch-cost fit: small to the round's own size.
pub fn fit_sizes(n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = [1, 16, 128, 1024].into_iter().filter(|&s| s < n).collect();
    v.push(n);
    v
}

/// Model inputs from a measured point, the launch fit, the graph node gap, the step between
/// the two levels of per-node graph cost (µs), what host↔device copy nodes cost, what GEMMs
/// of two streams cost side by side and the GEMM peaks.
pub fn model_inputs(
    p: &Point,
    fit: Option<&LaunchFit>,
    node_gap_us: Option<f64>,
    level_steps: Option<crate::other_stream::LevelSteps>,
    copy_nodes: Option<CopyNodeCosts>,
    beside: Option<crate::beside::BesideCosts>,
    gemm_peaks: Option<crate::roofline::GemmPeaks>,
) -> ModelInputs {
    let n = p.config.launches as f64;
    let (fixed, per_node) = match fit {
        Some(f) => (f.fixed_us, f.per_node_us),
        None => (p.median(RunFigure::GraphLaunchHostUs), 0.0),
    };
    ModelInputs {
        graph_node_gpu_us: p.median(RunFigure::GraphGpuUs),
        graph_launch_fixed_us: fixed,
        graph_launch_per_node_us: per_node,
        build_per_node_us: p.median(RunFigure::BuildMs) * 1e3 / n,
        eager_issue_us: p.median(RunFigure::EagerIssueUs),
        graph_node_gap_us: node_gap_us,
        spin_ramp_ns: None,
        // The same kernel back to back: eager launch on the GPU less graph node.
        eager_extra_us: node_gap_us
            .map(|_| (p.median(RunFigure::EagerGpuUs) - p.median(RunFigure::GraphGpuUs)).max(0.0)),
        graph_node_other_stream_us: level_steps.map(|l| l.small_us),
        graph_node_other_stream_beyond_l2_us: level_steps.and_then(|l| l.beyond_l2_us),
        copy_nodes,
        graph_node_beside: beside,
        gemm_peaks,
    }
}

pub fn run(args: &RunArgs, argv: &[String]) -> anyhow::Result<()> {
    check_outputs(&args.export, &[])?;
    let rule = args.timing.rule(DEFAULTS).map_err(UsageError)?;
    let e = start_engine(args.device, args.pdl)?;
    let placement = args.timing.place(&e);
    let cfg = Config {
        launches: args.n_launches as usize,
        elems: args.elems as usize,
        reps: args.timing.reps(DEFAULTS),
        warmup: args.timing.warmup(DEFAULTS),
        rule,
        pdl: args.pdl,
    };
    let pb = progress("measuring");
    let show_pb = |p| show(&pb, p);
    let ctx = Context {
        interrupted: &crate::interrupt::requested,
        progress: &show_pb,
    };
    let (point, interrupted) = measure_point(&e, &cfg, &ctx).context("measuring launches")?;
    let device = Some(Device::of(&e));
    if interrupted {
        pb.finish_and_clear();
        return deliver_partial(args, argv, device, point, placement);
    }
    pb.set_prefix("fitting graph launch cost");
    // The fit is short and needs no noise goal of its own beyond the default.
    let fit_rule = TimingArgs::default().rule(FIT).map_err(UsageError)?;
    let fit = measure_launch_fit(
        &e,
        cfg.elems,
        &fit_sizes(cfg.launches),
        fit_rule,
        FIT.reps,
        &ctx,
    )
    .context("measuring graph launch cost")?;
    pb.set_prefix("measuring the graph node gap");
    let mut cal = crate::calibration::calibrate(&e, crate::calibration::DEFAULT_SPIN_RAMP_NS)
        .context("calibrating the spin kernel")?;
    let spin_node_us = crate::node_gap::spin_node_us(&e).context("measuring the graph node gap")?;
    pb.set_prefix("measuring host<->device copy nodes");
    let copy_nodes =
        crate::copy_nodes::measure(&e).context("measuring host<->device copy nodes")?;
    // Last: it leaves the process at the upper level.
    pb.set_prefix("measuring the two levels of graph node cost");
    let level_steps = crate::other_stream::node_extra_us(&e)
        .context("measuring the two levels of graph node cost")?;
    // At the upper level, where the graph step is priced.
    pb.set_prefix("measuring graph nodes beside another stream");
    let (beside, small_warning) =
        crate::beside::measure(&e).context("measuring graph nodes beside another stream")?;
    pb.set_prefix("measuring GEMM peaks");
    let peaks = crate::roofline::GemmPeaks::measure(&e).context("measuring GEMM peaks")?;
    // Last of all: a profiler attached to the process slows the launches measured above.
    pb.set_prefix("measuring the spin kernel's profiled ramp");
    let ramp = crate::calibration::measure_ramp_ns(&e);
    pb.finish_and_clear();
    let mut warnings = point.warnings.clone();
    match &ramp {
        Ok(r) => cal.ramp_ns = *r,
        Err(err) => warnings.push(crate::caveats::ramp_not_measured(&err.to_string())),
    }
    let node_gap_us = crate::node_gap::gap_beyond_profiled_us(spin_node_us, &cal);

    let mut inputs = model_inputs(
        &point,
        fit.as_ref(),
        Some(node_gap_us),
        Some(level_steps),
        Some(copy_nodes),
        Some(beside),
        Some(peaks),
    );
    inputs.spin_ramp_ns = ramp.ok();
    let round = Round {
        launches: args.round.round_launches,
        host_issue_ms: args.round.round_host_issue_ms,
        gpu_ms: args.round.round_gpu_ms,
    };
    let prediction = predict(&inputs, &round);
    let seed = SeedResult {
        launches: args.n_launches,
        eager_us: point.median(RunFigure::EagerWallUs),
        graph_us: point.median(RunFigure::GraphWallUs),
    };
    let mut report = format!(
        "{}\n{}\n",
        seed.line(),
        saving_line(&round, prediction.saving_ms)
    );
    report.push_str(&run_breakdown(device.as_ref(), &point, fit.as_ref()));
    report.push_str(&format!("  {placement}\n"));
    report.push_str(&prediction_text(&inputs, &round, &prediction));
    warnings.extend(small_warning);
    warnings.extend(
        crate::node_gap::shipped_gap_us(&e.device_info().name).and_then(|(shipped, name)| {
            crate::caveats::estimated_gap_above_shipped(node_gap_us, shipped, &name)
        }),
    );
    let mut doc = Document::new(
        argv,
        device,
        CommandResult::Run(Box::new(RunResult {
            point,
            launch_fit: fit,
            model_inputs: Some(inputs),
            round: Some(round),
            prediction: Some(prediction),
        })),
    );
    doc.warnings = warnings;
    doc.placement = Some(placement.to_string());
    // An interrupt during the launch-cost fit cut the fit short: the point is whole, but the
    // document is still marked partial and the exit says it was interrupted.
    doc.partial = crate::interrupt::requested();
    deliver(&doc, &report, &args.export)
}

/// After an interrupt: the trials measured so far, marked partial, and no prediction.
fn deliver_partial(
    args: &RunArgs,
    argv: &[String],
    device: Option<Device>,
    point: Point,
    placement: crate::affinity::Placement,
) -> anyhow::Result<()> {
    let report = if point.trials.is_empty() {
        String::new()
    } else {
        run_breakdown(device.as_ref(), &point, None)
    };
    let mut doc = Document::new(
        argv,
        device,
        CommandResult::Run(Box::new(RunResult {
            point,
            launch_fit: None,
            model_inputs: None,
            round: None,
            prediction: None,
        })),
    );
    doc.partial = true;
    doc.placement = Some(placement.to_string());
    deliver(&doc, &report, &args.export)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_sizes_end_at_the_round() {
        assert_eq!(fit_sizes(1346), vec![1, 16, 128, 1024, 1346]);
        assert_eq!(fit_sizes(64), vec![1, 16, 64]);
        assert_eq!(fit_sizes(1), vec![1]);
    }
}
