//! How long to measure: `--trials`, `--reps`, `--warmup`, the noise rule and thread placement.

use clap::Args;

use super::values::{parse_percent, parse_seconds};
use crate::runner::StopRule;

/// How long to measure: a stopping rule on the headline figures' noise (in the manner of
/// nvbench), or a fixed number of trials. Each command has its own defaults (see `--help`).
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct TimingArgs {
    /// A fixed number of measured trials (turns the noise rule off); each trial interleaves
    /// every measured path.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100000))]
    pub trials: Option<u32>,

    /// Rounds per trial (each round is N launches, or one replay).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100000))]
    pub reps: Option<u32>,

    /// Trials run first and reported apart (not in the summaries).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub warmup: Option<u32>,

    /// Stop once every headline figure's relative noise is below this, in percent.
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    pub max_noise: Option<f64>,

    /// Take trials for at least this long, seconds (warm-up included).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub min_time: Option<f64>,

    /// Stop after this long whatever the noise, seconds (warm-up included).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub max_time: Option<f64>,

    /// Leave the host thread where the scheduler puts it, instead of on the CPUs local to the
    /// GPU (where host launch cost is lowest and steadiest).
    #[arg(long)]
    pub no_pin: bool,
}

impl TimingArgs {
    /// Pins the calling thread near the engine's GPU unless `--no-pin`; says where it runs.
    pub fn place(&self, e: &memra_engine::Engine) -> crate::affinity::Placement {
        if self.no_pin {
            crate::affinity::Placement::Unpinned("--no-pin".into())
        } else {
            crate::affinity::pin_near(&e.device_info().pci_bus_id)
        }
    }
}

/// A command's own defaults for [`TimingArgs`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimingDefaults {
    pub reps: usize,
    pub warmup: usize,
    pub min_time_s: f64,
    pub max_time_s: f64,
}

/// The noise goal when `--max-noise` is not given: 0.5%, as nvbench.
pub const DEFAULT_MAX_NOISE_PERCENT: f64 = 0.5;
/// Fewest measured trials the noise rule trusts.
pub const MIN_TRIALS: usize = 5;

impl TimingArgs {
    /// The stopping rule these options ask for.
    pub fn rule(&self, d: TimingDefaults) -> Result<StopRule, String> {
        let min_time_s = self.min_time.unwrap_or(d.min_time_s);
        let max_time_s = self.max_time.unwrap_or(d.max_time_s.max(min_time_s));
        if min_time_s > max_time_s {
            return Err(format!(
                "--min-time {min_time_s} s is longer than --max-time {max_time_s} s"
            ));
        }
        if let Some(n) = self.trials {
            if self.min_time.is_some() || self.max_time.is_some() || self.max_noise.is_some() {
                return Err(
                    "--trials asks for a fixed count; it cannot be combined with --min-time, --max-time or --max-noise".into(),
                );
            }
            return Ok(StopRule::fixed(n as usize));
        }
        Ok(StopRule {
            fixed_trials: None,
            min_time_s,
            max_time_s,
            max_noise: self.max_noise.unwrap_or(DEFAULT_MAX_NOISE_PERCENT) / 100.0,
            min_trials: MIN_TRIALS,
        })
    }

    pub fn reps(&self, d: TimingDefaults) -> usize {
        self.reps.map_or(d.reps, |r| r as usize)
    }

    pub fn warmup(&self, d: TimingDefaults) -> usize {
        self.warmup.map_or(d.warmup, |w| w as usize)
    }
}
