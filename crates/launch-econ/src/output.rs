//! Where the human report goes, and numbers a person can read.
//!
//! The report goes to stdout, except when an export goes to stdout (`-`): then stdout holds
//! only that export and the report goes to stderr, so `--export-json - | jq .` works. Every
//! write is checked: a full disk or a closed pipe is an error naming the target, never a
//! silent success.

use std::io::Write;

use anyhow::Context;

/// The stream the human report is written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportTo {
    Stdout,
    Stderr,
}

impl ReportTo {
    /// Stderr when stdout is taken by an export.
    pub fn choose(stdout_export: bool) -> ReportTo {
        if stdout_export {
            ReportTo::Stderr
        } else {
            ReportTo::Stdout
        }
    }

    /// Writes `text` and flushes, or says which stream failed.
    pub fn write(self, text: &str) -> anyhow::Result<()> {
        let (name, result) = match self {
            ReportTo::Stdout => {
                let mut out = std::io::stdout().lock();
                (
                    "stdout",
                    out.write_all(text.as_bytes()).and_then(|()| out.flush()),
                )
            }
            ReportTo::Stderr => {
                let mut out = std::io::stderr().lock();
                (
                    "stderr",
                    out.write_all(text.as_bytes()).and_then(|()| out.flush()),
                )
            }
        };
        result.with_context(|| format!("writing the report to {name}"))
    }
}

/// `v` with `decimals` decimals, or in scientific form when that would be unreadable (a
/// 300-digit number). Non-finite values print as `n/a`.
pub fn num(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    if v.abs() >= 1e9 {
        format!("{v:.3e}")
    } else {
        format!("{v:.decimals$}")
    }
}

/// `v` as Rust prints it (shortest exact form, `7.9`), or in scientific form when large.
pub fn num_plain(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e9 {
        format!("{v:.3e}")
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_numbers_keep_their_decimals() {
        assert_eq!(num(7.9, 2), "7.90");
        assert_eq!(num(-0.25, 3), "-0.250");
        assert_eq!(num(123456.789, 1), "123456.8");
        assert_eq!(num(0.0, 3), "0.000");
    }

    #[test]
    fn absurd_numbers_go_scientific() {
        assert_eq!(num(1e300, 3), "1.000e300");
        assert_eq!(num(-2.5e12, 2), "-2.500e12");
        assert_eq!(num(1e-9, 3), "0.000");
        assert_eq!(num(f64::NAN, 3), "n/a");
        assert_eq!(num(f64::INFINITY, 3), "n/a");
        assert!(num(f64::MAX, 3).len() < 12);
        assert_eq!(num_plain(7.9), "7.9");
        assert_eq!(num_plain(1e300), "1.000e300");
    }
}
