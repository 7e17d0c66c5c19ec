//! The commands: the default run, `sweep`, `predict`, `replay` and `pipeline`, and what they
//! share: output checks, progress, and delivering the report and exports.

pub mod buckets;
pub mod device_loop;
pub mod pipeline;
pub mod predict;
pub mod replay;
pub mod run;
pub mod sweep;
pub mod update;

use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressStyle};

use crate::document::Document;
use crate::export::{check_writable, has_stdout, targets, write_all};
use crate::options::ExportArgs;
use crate::output::ReportTo;
use crate::runner::Progress;

/// Bad input found after parsing (an export path that cannot be written, a profile that
/// cannot be read): reported like clap's usage errors, with exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Starts the engine on `device`, with programmatic dependent launch if asked; a GPU without
/// PDL is a clear error.
pub fn start_engine(device: usize, pdl: bool) -> anyhow::Result<memra_engine::Engine> {
    use anyhow::Context as _;
    let options = memra_engine::EngineOptions {
        pdl,
        ..Default::default()
    };
    memra_engine::Engine::with_options(device, &options)
        .with_context(|| format!("starting the engine on GPU {device}"))
}

/// Checks every output path before measuring, so a long run never ends in an unwritable file.
pub fn check_outputs(export: &ExportArgs, extra: &[&Option<PathBuf>]) -> Result<(), UsageError> {
    let all = [
        &export.export_json,
        &export.export_csv,
        &export.export_markdown,
    ];
    for p in all.into_iter().chain(extra.iter().copied()).flatten() {
        check_writable(p).map_err(UsageError)?;
    }
    let stdout_exports = all
        .iter()
        .filter(|p| p.as_ref().is_some_and(|p| p.as_os_str() == "-"))
        .count();
    if stdout_exports > 1 {
        return Err(UsageError(
            "only one export may go to stdout (`-`) at a time".into(),
        ));
    }
    Ok(())
}

/// The outcome of a command that wrote its document (`delivered`) and one more output
/// (`extra`: a plot, a trace): every failure is reported; an interrupt still decides the exit
/// status, and a failed extra output is then said on stderr rather than lost.
pub fn with_extra_output(
    delivered: anyhow::Result<()>,
    extra: anyhow::Result<()>,
) -> anyhow::Result<()> {
    match (delivered, extra) {
        (Ok(()), Err(e)) => Err(e),
        (Err(d), Err(x)) => {
            if d.downcast_ref::<crate::interrupt::Interrupted>().is_some() {
                eprintln!("error: {x:#}");
                Err(d)
            } else {
                Err(anyhow::anyhow!("{d:#}; {x:#}"))
            }
        }
        (d, _) => d,
    }
}

/// A progress line on stderr: trials done and time spent. indicatif draws nothing when stderr
/// is not a terminal.
pub fn progress(what: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("{spinner} {prefix}: {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_prefix(what.to_string());
    pb
}

/// Shows a runner's progress on `pb`.
pub fn show(pb: &ProgressBar, p: Progress) {
    pb.set_message(format!(
        "{} warm-up + {} trials, {:.1} s",
        p.warmup_done,
        p.trials_done,
        p.elapsed.as_secs_f64()
    ));
    pb.tick();
}

/// Writes the human report (to stdout, or to stderr when an export takes stdout), the
/// warnings, and every export. Every output is attempted; the error names each that failed.
/// A partial document is written too, and then reported as an interrupt.
pub fn deliver(doc: &Document, report: &str, export: &ExportArgs) -> anyhow::Result<()> {
    let targets = targets(export);
    let to = ReportTo::choose(has_stdout(&targets));
    let mut failed = Vec::new();
    if let Err(e) = to.write(report) {
        failed.push(format!("{e:#}"));
    }
    for w in &doc.warnings {
        eprintln!("warning: {w}");
    }
    if let Err(e) = write_all(doc, &targets) {
        failed.push(format!("{e:#}"));
    }
    if !failed.is_empty() {
        anyhow::bail!("{}", failed.join("; "));
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
    fn every_failed_output_is_reported_and_an_interrupt_keeps_its_exit() {
        let fail = |m: &str| -> anyhow::Result<()> { Err(anyhow::anyhow!("{m}")) };
        assert!(with_extra_output(Ok(()), Ok(())).is_ok());
        let e = with_extra_output(Ok(()), fail("cannot write t.json")).unwrap_err();
        assert_eq!(e.to_string(), "cannot write t.json");
        let e = with_extra_output(fail("cannot write j.json"), fail("cannot write t.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("j.json") && e.contains("t.json"), "{e}");
        let e = with_extra_output(Err(crate::interrupt::Interrupted.into()), fail("no trace"))
            .unwrap_err();
        assert!(e.downcast_ref::<crate::interrupt::Interrupted>().is_some());
        let e = with_extra_output(fail("cannot write j.json"), Ok(())).unwrap_err();
        assert_eq!(e.to_string(), "cannot write j.json");
    }
}
