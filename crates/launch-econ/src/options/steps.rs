//! Options of the commands about steps: `loop`, `update` and `buckets`.

use std::path::PathBuf;

use clap::Args;

use super::values::{
    parse_count, parse_elems, parse_launch_list, parse_launches, parse_percent, LaunchList,
    MAX_LAUNCHES,
};
use super::{ExportArgs, TimingArgs};

/// `launch-econ buckets`.
#[derive(Debug, Args)]
pub struct BucketsArgs {
    /// Batch sizes of the buckets: a list `1,2,4`, a doubling range `1..512`, or a stepped
    /// range `8..256:+8`.
    #[arg(long, default_value = "1..512", value_parser = parse_launch_list)]
    pub sizes: LaunchList,

    /// Kernels in each bucket's step.
    #[arg(long, default_value_t = 64, value_parser = parse_launches)]
    pub nodes: u64,

    /// Elements each batch entry adds to every kernel.
    #[arg(long, default_value_t = 1024, value_parser = parse_elems)]
    pub elems_per_batch: u64,

    /// Replays timed per bucket, and switches timed per size.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub repeats: u32,

    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,

    #[command(flatten)]
    pub export: ExportArgs,
}

/// `launch-econ update`.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// A recorded walk to use instead of the synthetic one (nsys CSV or Kineto JSON, as for
    /// `replay`); its kernels are replayed by stand-ins and the changed ones record into a new
    /// place every other step.
    #[arg(long, value_name = "TRACE")]
    pub trace: Option<PathBuf>,

    /// Which step of a trace that marks several (`ProfilerStep#N`) is the walk: N, `last`, or
    /// `all` (see `replay --profiler-step`).
    #[arg(
        long,
        value_name = "N|last|all",
        default_value = "last",
        requires = "trace"
    )]
    pub profiler_step: crate::trace::StepChoice,

    /// Kernels in the synthetic step.
    #[arg(long, default_value_t = 1346, value_parser = parse_launches, conflicts_with = "trace")]
    pub nodes: u64,

    /// Kernels whose input changes every step: a count (`10`) or a share of the step (`5%`);
    /// for a recorded walk, of its kernels long enough to change and check (>= 1 us).
    #[arg(long, default_value = "10%", value_parser = parse_changed)]
    pub changed: Changed,

    /// Elements of each `add` kernel of the synthetic step.
    #[arg(long, default_value_t = 4096, value_parser = parse_elems, conflicts_with = "trace")]
    pub elems: u64,

    /// Steps each way runs per trial (each ends with a synchronize).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(2..=100_000))]
    pub steps: u32,

    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,

    #[command(flatten)]
    pub timing: TimingArgs,

    #[command(flatten)]
    pub export: ExportArgs,
}

/// How many of a step's kernels change: a count, or a share in percent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Changed {
    Count(u64),
    Percent(f64),
}

impl Changed {
    /// The count for a step of `nodes` kernels: at least 1, at most `nodes`; an error when a
    /// count exceeds the step.
    pub fn of(self, nodes: u64) -> Result<u64, String> {
        match self {
            Changed::Count(k) if k > nodes => Err(format!(
                "--changed {k} is more than the step's {nodes} kernels"
            )),
            Changed::Count(k) => Ok(k),
            Changed::Percent(p) => Ok(((nodes as f64 * p / 100.0).round() as u64).clamp(1, nodes)),
        }
    }
}

/// `10` (kernels) or `5%` (of the step; above 0, at most 100).
pub fn parse_changed(s: &str) -> Result<Changed, String> {
    match s.trim().strip_suffix('%') {
        Some(p) => parse_percent(p).map(Changed::Percent),
        None => parse_count(s, "changed kernels", MAX_LAUNCHES).map(Changed::Count),
    }
}

/// `launch-econ loop`.
#[derive(Debug, Args)]
pub struct LoopArgs {
    /// K: steps per loop.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub steps: u32,

    /// `add` kernels per step (each step also runs one counting kernel).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub step_kernels: u32,

    /// Elements of each `add` kernel.
    #[arg(long, default_value_t = 4096, value_parser = parse_elems)]
    pub elems: u64,

    /// J: the step after which the device ends the early-exit loops (1..=K); K/2 by default.
    #[arg(long)]
    pub stop_at: Option<u32>,

    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,

    #[command(flatten)]
    pub timing: TimingArgs,

    #[command(flatten)]
    pub export: ExportArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn changed_reads_counts_and_shares() {
        assert_eq!(parse_changed("10"), Ok(Changed::Count(10)));
        assert_eq!(parse_changed(" 25% "), Ok(Changed::Percent(25.0)));
        assert!(parse_changed("0").is_err());
        assert!(parse_changed("0%").is_err());
        assert!(parse_changed("101%").is_err());
        assert!(parse_changed("%").is_err());
    }

    #[test]
    fn shares_round_to_at_least_one_and_at_most_all() {
        assert_eq!(Changed::Percent(10.0).of(1346), Ok(135));
        assert_eq!(Changed::Percent(0.001).of(100), Ok(1));
        assert_eq!(Changed::Percent(100.0).of(7), Ok(7));
        assert_eq!(Changed::Count(7).of(7), Ok(7));
        assert!(Changed::Count(8)
            .of(7)
            .unwrap_err()
            .contains("more than the step's 7"));
    }

    proptest! {
        #[test]
        fn changed_parser_never_panics_and_stays_in_range(s in ".{0,12}", n in 1u64..100_000) {
            if let Ok(c) = parse_changed(&s) {
                if let Ok(k) = c.of(n) {
                    prop_assert!((1..=n).contains(&k));
                }
            }
        }
    }
}
