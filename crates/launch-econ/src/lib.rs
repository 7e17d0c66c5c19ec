//! The `launch-econ` command line: what one kernel launch costs on this GPU, eager versus
//! CUDA-graph replay, and what that means for a user's round.
//!
//! `main` only calls [`run`]; everything else lives in one module per concept.

pub mod options;
pub mod seed;

use clap::Parser;

use options::Cli;

/// Exit status for bad command-line input (clap's usage errors use it too).
pub const EXIT_USAGE: i32 = 2;
/// Exit status for a failure while running (no GPU, driver error, unwritable file).
pub const EXIT_FAILURE: i32 = 1;

/// Parses `args`, runs the command, prints errors, and returns the process exit status.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    match dispatch(cli) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("launch-econ: error: {e:#}");
            EXIT_FAILURE
        }
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        None => seed::run(&cli.run),
    }
}
