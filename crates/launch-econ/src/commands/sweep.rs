//! `launch-econ sweep`: every launch count × kernel size, a table, exports and a chart.

use anyhow::Context;
use memra_engine::Engine;

use crate::commands::{check_outputs, progress};
use crate::export::{targets, write_all};
use crate::measure::{measure_point, Config, LaunchFit};
use crate::options::SweepArgs;
use crate::profile::{Device, Profile};
use crate::report::points_table;

/// Launches per trial the automatic `--reps` aims at.
const LAUNCHES_PER_TRIAL: usize = 16384;

/// Rounds per trial for `n` launches when `--reps` is not given.
pub fn auto_reps(n: usize) -> usize {
    LAUNCHES_PER_TRIAL.div_ceil(n).clamp(3, 200)
}

pub fn run(args: &SweepArgs) -> anyhow::Result<()> {
    check_outputs(&args.export, &[&args.plot])?;
    let e = Engine::new(args.device)
        .with_context(|| format!("starting the engine on GPU {}", args.device))?;
    let per_point = (args.trials + args.warmup) as u64;
    let total = per_point * (args.launches.len() * args.sizes.len()) as u64;
    let pb = progress(total, "sweeping");
    let mut doc = Profile::new("sweep", Some(Device::of(&e)));
    'sizes: for &elems in &args.sizes {
        for &n in &args.launches {
            if crate::interrupt::requested() {
                doc.partial = true;
                break 'sizes;
            }
            let cfg = Config {
                launches: n as usize,
                elems: elems as usize,
                trials: args.trials as usize,
                reps: args
                    .reps
                    .map_or_else(|| auto_reps(n as usize), |r| r as usize),
                warmup: args.warmup as usize,
            };
            pb.set_message(format!("{elems} elems x {n} launches"));
            let p = measure_point(&e, &cfg, &mut || pb.inc(1))
                .with_context(|| format!("measuring {n} launches of {elems} elements"))?;
            doc.warnings.extend(
                p.warnings
                    .iter()
                    .map(|w| format!("{elems} elems x {n} launches: {w}")),
            );
            if p.trials.len() < cfg.trials {
                doc.partial = true;
            }
            if !p.trials.is_empty() {
                doc.points.push(p);
            }
        }
    }
    pb.finish_and_clear();
    let first = doc.points.first().map_or(0, |p| p.config.elems);
    doc.launch_fit = LaunchFit::from_points(
        doc.points
            .iter()
            .filter(|p| p.config.elems == first)
            .filter_map(|p| {
                p.summary
                    .get("graph_launch_host_us")
                    .map(|s| (p.config.launches, *s))
            })
            .collect(),
    );
    print!("{}", points_table(&doc, false));
    println!(
        "(µs per launch or node unless marked ms; medians over {} trials)",
        args.trials
    );
    for w in &doc.warnings {
        eprintln!("warning: {w}");
    }
    write_all(&doc, &targets(&args.export))?;
    if let Some(p) = &args.plot {
        if !doc.points.is_empty() {
            crate::plot::write_svg(&doc, p)?;
        }
    }
    if doc.partial {
        return Err(crate::interrupt::Interrupted.into());
    }
    Ok(())
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
