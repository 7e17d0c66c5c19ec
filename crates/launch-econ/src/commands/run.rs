//! `launch-econ [N]`: one round measured every way, the seed's two lines, the breakdown, and
//! the prediction for the user's round.

use anyhow::Context;
use memra_engine::Engine;

use crate::commands::{check_outputs, progress};
use crate::export::{targets, write_all};
use crate::measure::{measure_launch_fit, measure_point, Config, LaunchFit, Point};
use crate::model::{predict, ModelInputs, Round};
use crate::options::RunArgs;
use crate::profile::{Device, Profile};
use crate::report::{prediction_text, run_breakdown};
use crate::seed::{saving_line, SeedResult};

/// Rounds per trial when `--reps` is not given: the seed's 20.
pub const DEFAULT_REPS: u32 = 20;

/// Graph sizes for the launch-cost fit: small to the round's own size.
pub fn fit_sizes(n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = [1, 16, 128, 1024].into_iter().filter(|&s| s < n).collect();
    v.push(n);
    v
}

/// Model inputs from a measured point and the launch fit.
pub fn model_inputs(p: &Point, fit: Option<&LaunchFit>) -> ModelInputs {
    let n = p.config.launches as f64;
    let (fixed, per_node) = match fit {
        Some(f) => (f.fixed_us, f.per_node_us),
        None => (p.median("graph_launch_host_us"), 0.0),
    };
    ModelInputs {
        graph_node_gpu_us: p.median("graph_gpu_us"),
        graph_launch_fixed_us: fixed,
        graph_launch_per_node_us: per_node,
        build_per_node_us: p.median("build_ms") * 1e3 / n,
        eager_issue_us: p.median("eager_issue_us"),
    }
}

pub fn run(args: &RunArgs) -> anyhow::Result<()> {
    check_outputs(&args.export, &[])?;
    let e = Engine::new(args.device)
        .with_context(|| format!("starting the engine on GPU {}", args.device))?;
    let cfg = Config {
        launches: args.n_launches as usize,
        elems: args.elems as usize,
        trials: args.timing.trials as usize,
        reps: args.timing.reps.unwrap_or(DEFAULT_REPS) as usize,
        warmup: args.timing.warmup as usize,
    };
    let pb = progress((cfg.trials + cfg.warmup) as u64, "measuring");
    let point = measure_point(&e, &cfg, &mut || pb.inc(1)).context("measuring launches")?;
    if point.trials.len() < cfg.trials {
        pb.finish_and_clear();
        return write_partial(args, &e, point);
    }
    pb.set_message("fitting graph launch cost");
    let fit = measure_launch_fit(
        &e,
        cfg.elems,
        &fit_sizes(cfg.launches),
        cfg.trials,
        cfg.reps,
    )
    .context("measuring graph launch cost")?;
    pb.finish_and_clear();

    let inputs = model_inputs(&point, fit.as_ref());
    let round = Round {
        launches: args.round.round_launches,
        host_issue_ms: args.round.round_host_issue_ms,
        gpu_ms: args.round.round_gpu_ms,
    };
    let prediction = predict(&inputs, &round);
    let seed = SeedResult {
        launches: args.n_launches,
        eager_us: point.median("eager_wall_us"),
        graph_us: point.median("graph_wall_us"),
    };
    println!("{}", seed.line());
    println!("{}", saving_line(&round, prediction.saving_ms));

    let mut doc = Profile::new("run", Some(Device::of(&e)));
    doc.warnings = point.warnings.clone();
    doc.points.push(point);
    doc.launch_fit = fit;
    doc.model_inputs = Some(inputs);
    doc.round = Some(round);
    doc.prediction = Some(prediction);
    print!("{}", run_breakdown(&doc, &doc.points[0]));
    print!("{}", prediction_text(&inputs, &round, &prediction));
    for w in &doc.warnings {
        eprintln!("warning: {w}");
    }
    write_all(&doc, &targets(&args.export))
}

/// After Ctrl-C: the trials measured so far, marked partial, and no prediction.
fn write_partial(args: &RunArgs, e: &Engine, point: Point) -> anyhow::Result<()> {
    let mut doc = Profile::new("run", Some(Device::of(e)));
    doc.partial = true;
    if !point.trials.is_empty() {
        print!("{}", run_breakdown(&doc, &point));
        doc.points.push(point);
    }
    write_all(&doc, &targets(&args.export))?;
    Err(crate::interrupt::Interrupted.into())
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
