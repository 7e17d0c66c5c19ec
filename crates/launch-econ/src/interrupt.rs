//! SIGINT (Ctrl-C) and SIGTERM (what batch schedulers send): the first one asks the
//! measurement to stop after the current trial, so what was measured is still written (marked
//! partial) and the process exits 130 (143 for SIGTERM); a second one, a second or more later,
//! exits at once.
//!
//! Both signals are blocked before any other thread exists and taken by one dedicated thread
//! with `sigwait`, so no thread the CUDA driver starts later is ever interrupted by them. A
//! second signal that arrives together with the first is not a second request: `timeout` and
//! shells send the signal to the child *and* to its process group, and quitting on that copy
//! (which calls `exit`, deinitialising the driver under the running measurement) lost every
//! result. A forced quit uses `_exit`, so no exit handler runs under a live GPU call.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The signal that asked to stop (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static FIRST: OnceLock<Instant> = OnceLock::new();

/// A second signal within this time of the first is taken as the same request.
const SAME_REQUEST: Duration = Duration::from_millis(1000);

/// Exit status after SIGINT (128 + 2), as shells expect.
pub const EXIT_INTERRUPTED: i32 = 130;

/// Blocks SIGINT and SIGTERM in the calling thread (and so in every thread started after) and
/// starts the thread that takes them. Call it first thing in `main`, before any thread exists;
/// harmless if called twice.
pub fn install() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(install_once);
}

#[cfg(unix)]
fn install_once() {
    // SAFETY: sigset_t is plain data that sigemptyset initialises; the calls get valid
    // pointers to it, and pthread_sigmask changes only the calling thread's mask.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        set
    };
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || loop {
            let mut sig = 0;
            // SAFETY: `set` is an initialised signal set, blocked in this thread (inherited),
            // and `sig` is a valid place for the result.
            if unsafe { libc::sigwait(&set, &mut sig) } == 0 {
                on_signal(sig);
            }
        });
    if spawned.is_err() {
        // No thread to take them: unblock, so the signals keep their default effect.
        // SAFETY: as above; restores the calling thread's mask.
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
    }
}

#[cfg(not(unix))]
fn install_once() {}

#[cfg(unix)]
fn on_signal(sig: i32) {
    let first = *FIRST.get_or_init(Instant::now);
    if SIGNAL
        .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        eprintln!("\ninterrupted: finishing the current trial, then writing what was measured (interrupt again to quit now)");
    } else if first.elapsed() >= SAME_REQUEST {
        // SAFETY: _exit ends the process at once without running exit handlers; always sound.
        unsafe { libc::_exit(128 + sig) };
    }
}

/// Whether a signal asked to stop.
pub fn requested() -> bool {
    SIGNAL.load(Ordering::SeqCst) != 0
}

/// The exit status for an interrupted run: 128 + the signal (130 for SIGINT, 143 for SIGTERM).
pub fn exit_status() -> i32 {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => EXIT_INTERRUPTED,
        s => 128 + s,
    }
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
