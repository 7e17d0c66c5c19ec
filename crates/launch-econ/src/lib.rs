//! The `launch-econ` command line: what one kernel launch costs on this GPU, eager versus
//! CUDA-graph replay, and what that means for a user's round.
//!
//! `main` only calls [`run`]; everything else lives in one module per concept.

pub mod affinity;
pub mod beside;
pub mod buckets;
pub mod calibration;
pub mod captured;
pub mod caveats;
pub mod commands;
pub mod copy_nodes;
pub mod device_loop;
pub mod document;
pub mod export;
pub mod fidelity;
pub mod figures;
pub mod footprint;
pub mod forked_lanes;
pub mod front_end;
pub mod gemm_operands;
pub mod interrupt;
pub mod l2_lanes;
pub(crate) mod laned;
pub mod lanes;
pub mod measure;
pub mod model;
pub mod node_gap;
pub mod occupancy;
pub mod offline;
pub mod operand_pool;
pub mod options;
pub mod other_stream;
pub mod output;
pub mod pipeline;
pub mod plot;
mod prepared;
pub mod price;
pub mod pricing;
pub mod prior_streams;
pub mod replay;
pub mod report;
pub mod roofline;
pub mod runner;
pub mod seed;
pub mod sharing;
pub mod stand_in;
pub mod stats;
pub mod streaming;
pub mod tables;
pub mod timeline;
pub mod trace;
pub mod trace_eager;
pub mod update_walk;
pub mod wide_grids;

use clap::Parser;

use commands::UsageError;
use options::{Cli, Command};

/// Exit status for bad input (clap's usage errors use it too).
pub const EXIT_USAGE: i32 = 2;
/// Exit status for a failure while running (no GPU, driver error).
pub const EXIT_FAILURE: i32 = 1;

/// Parses `args`, runs the command, prints errors, and returns the process exit status.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    // Before any thread exists: the signal thread takes SIGINT and SIGTERM from here on.
    interrupt::install();
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    // Arguments may be any bytes; the document records them read lossily as UTF-8.
    let argv: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    let result = match &cli.command {
        None => commands::run::run(&cli.run, &argv),
        Some(Command::Sweep(a)) => commands::sweep::run(a, &argv),
        Some(Command::Predict(a)) => commands::predict::run(a, &argv),
        Some(Command::Replay(a)) => commands::replay::run(a, &argv),
        Some(Command::Pipeline(a)) => commands::pipeline::run(a, &argv),
        Some(Command::Loop(a)) => commands::device_loop::run(a, &argv),
        Some(Command::Update(a)) => commands::update::run(a, &argv),
        Some(Command::Buckets(a)) => commands::buckets::run(a, &argv),
    };
    match result {
        Ok(()) => 0,
        Err(e) if e.downcast_ref::<interrupt::Interrupted>().is_some() => {
            eprintln!("launch-econ: {e}");
            interrupt::exit_status()
        }
        Err(e) if e.downcast_ref::<UsageError>().is_some() => {
            eprintln!("launch-econ: error: {e:#}");
            EXIT_USAGE
        }
        Err(e) => {
            eprintln!("launch-econ: error: {e:#}");
            EXIT_FAILURE
        }
    }
}
