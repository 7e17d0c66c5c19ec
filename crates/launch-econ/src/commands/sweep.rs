//! `launch-econ sweep`: every launch count × kernel size, a table, exports and a chart.

use anyhow::Context as _;

use crate::commands::{check_outputs, deliver, progress, show, start_engine, UsageError};
use crate::document::{CommandResult, Device, Document, SweepResult};
use crate::measure::{measure_point, Config, LaunchFit, RunFigure};
use crate::options::{SweepArgs, TimingDefaults};
use crate::report::points_table;
use crate::runner::Context;

/// Launches per trial the automatic `--reps` aims at.
const LAUNCHES_PER_TRIAL: usize = 16384;

/// Timing per point of a sweep (`reps` is replaced by [`auto_reps`] unless given).
pub const DEFAULTS: TimingDefaults = TimingDefaults {
    reps: 0,
    warmup: 1,
    min_time_s: 0.1,
    max_time_s: 0.5,
};

/// Rounds per trial for `n` launches when `--reps` is not given.
pub fn auto_reps(n: usize) -> usize {
    LAUNCHES_PER_TRIAL.div_ceil(n).clamp(3, 200)
}

pub fn run(args: &SweepArgs, argv: &[String]) -> anyhow::Result<()> {
    check_outputs(&args.export, &[&args.plot])?;
    let rule = args.timing.rule(DEFAULTS).map_err(UsageError)?;
    let e = start_engine(args.device, args.pdl)?;
    let placement = args.timing.place(&e);
    let pb = progress("sweeping");
    let show_pb = |p| show(&pb, p);
    let ctx = Context {
        interrupted: &crate::interrupt::requested,
        progress: &show_pb,
    };
    let mut points = Vec::new();
    let mut warnings = Vec::new();
    let mut partial = false;
    'sizes: for &elems in &args.sizes {
        for &n in &args.launches {
            if crate::interrupt::requested() {
                partial = true;
                break 'sizes;
            }
            let cfg = Config {
                launches: n as usize,
                elems: elems as usize,
                reps: args
                    .timing
                    .reps
                    .map_or_else(|| auto_reps(n as usize), |r| r as usize),
                warmup: args.timing.warmup(DEFAULTS),
                rule,
                pdl: args.pdl,
            };
            pb.set_prefix(format!("{elems} elems x {n} launches"));
            let (p, interrupted) = measure_point(&e, &cfg, &ctx)
                .with_context(|| format!("measuring {n} launches of {elems} elements"))?;
            warnings.extend(
                p.warnings
                    .iter()
                    .map(|w| format!("{elems} elems x {n} launches: {w}")),
            );
            partial |= interrupted;
            if !p.trials.is_empty() {
                points.push(p);
            }
        }
    }
    pb.finish_and_clear();
    let first = points.first().map_or(0, |p| p.config.elems);
    let launch_fit = LaunchFit::from_points(
        points
            .iter()
            .filter(|p| p.config.elems == first)
            .map(|p| {
                (
                    p.config.launches,
                    *p.summary.get(RunFigure::GraphLaunchHostUs),
                )
            })
            .collect(),
    );
    let mut report = points_table(&points);
    report.push_str("(µs per launch or node unless marked ms; medians over trials)\n");
    let result = SweepResult { points, launch_fit };
    let mut doc = Document::new(argv, Some(Device::of(&e)), CommandResult::Sweep(result));
    doc.partial = partial;
    doc.warnings = warnings;
    doc.placement = Some(placement.to_string());
    let delivered = deliver(&doc, &report, &args.export);
    let plotted = match (&args.plot, &doc.result) {
        (Some(p), CommandResult::Sweep(s)) if !s.points.is_empty() => {
            crate::plot::write_svg(&doc, s, p)
        }
        _ => Ok(()),
    };
    crate::commands::with_extra_output(delivered, plotted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_reps_keeps_trials_comparable() {
        assert_eq!(auto_reps(1), 200);
        assert_eq!(auto_reps(1346), 13);
        assert_eq!(auto_reps(8192), 3);
        assert_eq!(auto_reps(1_000_000), 3);
    }
}
