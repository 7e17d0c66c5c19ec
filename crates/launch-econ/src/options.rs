//! Command-line options. Every value is validated here, so bad input is a usage error (exit 2)
//! before any GPU work starts.

use clap::{Args, Parser, Subcommand};

/// The most launches one round may ask for: past this a run takes minutes and the graph
/// gigabytes of host memory, which no question about launch overhead needs.
pub const MAX_LAUNCHES: u64 = 1_000_000;

/// What one kernel launch costs on this GPU: eager issue versus CUDA-graph replay.
#[derive(Debug, Parser)]
#[command(
    name = "launch-econ",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// A subcommand; without one, measures a round of N_LAUNCHES.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The default measurement.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {}

/// The default measurement: N launches eager, then captured and replayed.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Kernel launches per round (1..=1000000).
    #[arg(value_name = "N_LAUNCHES", default_value_t = 1346, value_parser = parse_launches)]
    pub n_launches: u64,

    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
}

/// A launch count: a whole number in 1..=MAX_LAUNCHES.
pub fn parse_launches(s: &str) -> Result<u64, String> {
    let n: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number of launches"))?;
    if n == 0 {
        return Err("the number of launches must be at least 1".into());
    }
    if n > MAX_LAUNCHES {
        return Err(format!(
            "{n} launches is more than the maximum of {MAX_LAUNCHES}"
        ));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_accepts_whole_numbers_in_range() {
        assert_eq!(parse_launches("1346"), Ok(1346));
        assert_eq!(parse_launches("1"), Ok(1));
        assert_eq!(parse_launches("1000000"), Ok(MAX_LAUNCHES));
    }

    #[test]
    fn launches_rejects_what_a_round_cannot_be() {
        for bad in [
            "0",
            "-5",
            "abc",
            "1.5",
            "",
            "1000001",
            "99999999999999999999999",
        ] {
            assert!(parse_launches(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn default_is_the_step37_round() {
        let cli = Cli::try_parse_from(["launch-econ"]).unwrap();
        assert_eq!(cli.run.n_launches, 1346);
        assert_eq!(cli.run.device, 0);
        let cli = Cli::try_parse_from(["launch-econ", "64", "--device", "1"]).unwrap();
        assert_eq!((cli.run.n_launches, cli.run.device), (64, 1));
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
