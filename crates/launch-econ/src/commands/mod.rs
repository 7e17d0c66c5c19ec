//! The commands: the default run, `sweep` and `predict`, and what they share.

pub mod pipeline;
pub mod predict;
pub mod replay;
pub mod run;
pub mod sweep;

use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressStyle};

use crate::export::check_writable;
use crate::options::ExportArgs;

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

/// A progress bar on stderr; indicatif draws nothing when stderr is not a terminal.
pub fn progress(total: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} trials, {elapsed} (eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}
