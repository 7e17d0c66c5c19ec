//! Ctrl-C: the first one asks the measurement to stop after the current trial, so what was
//! measured is still written (marked partial) and the process exits 130; a second one exits
//! at once.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Exit status after an interrupt (128 + SIGINT), as shells expect.
pub const EXIT_INTERRUPTED: i32 = 130;

/// Installs the handler; harmless if called twice or if no handler can be installed.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if REQUESTED.swap(true, Ordering::SeqCst) {
            std::process::exit(EXIT_INTERRUPTED);
        }
        eprintln!("\ninterrupted: finishing the current trial, then writing what was measured (Ctrl-C again to quit now)");
    });
}

/// Whether the user asked to stop.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// The error a command returns after writing partial results.
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted; partial results (if any) were written")
    }
}

impl std::error::Error for Interrupted {}
