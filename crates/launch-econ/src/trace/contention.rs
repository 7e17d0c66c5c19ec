//! Kernels whose recorded durations hold another stream's contention.
//!
//! A replay, and the offline model, take a kernel's recorded duration for what it costs alone
//! and add what running beside other streams' kernels does to it. Where the recording itself
//! ran the streams side by side (long kernels, whose issue the profiler's host cost does not
//! outlast), a kernel that overlapped another stream's kernels was already slowed by them, and
//! pricing its recorded duration adds that slowdown twice: an H200 walk of RMSNorm passes
//! (element-wise kernels over 8192 × 4096) beside decode attention recorded its passes at 170
//! to 202 µs beside the attention and 64 to 85 µs apart from it, and replayed 23% over its real
//! graph. A kernel has *twins* where the walk ran the same kernel (name, grid, block and
//! operator inputs) apart from every other stream's kernels; [`uncontend_where`] gives each kernel
//! that overlapped another stream's kernels for at least [`MIN_OVERLAP_SHARE`] of its time the
//! median duration of its twins, where that is shorter. A kernel without twins keeps its
//! recorded duration (what contention it holds is not known).

use std::collections::HashMap;

use serde::Serialize;

use super::{Op, OpKind, Walk};

/// Least share of a kernel's recorded time that another stream's kernels must overlap for
/// its duration to be taken from its twins: a brief overlap at a kernel's edge (a stream
/// starting as another ends) slows it by little, and its twins' spread would move it more.
pub const MIN_OVERLAP_SHARE: f64 = 0.1;

/// What [`uncontend_where`] changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Uncontended {
    /// Kernels given their twins' duration.
    pub kernels: usize,
    /// By how much their durations came down in all, ns.
    pub ns: f64,
}

/// What identifies a kernel's twins: its name, grid, block and operator inputs' bytes.
type TwinKey<'a> = (&'a str, (u32, u32, u32), (u32, u32, u32), Option<u64>);

/// `op`'s [`TwinKey`]; `None` for an op that is not a kernel.
fn key(op: &Op) -> Option<TwinKey<'_>> {
    match op.kind {
        OpKind::Kernel { grid, block } => {
            Some((&op.name, grid, block, op.input_bytes.map(f64::to_bits)))
        }
        _ => None,
    }
}

/// How much of each kernel's recorded time kernels of other streams (on its device) overlap,
/// ns; 0 for other ops. Two kernels overlapping a third at once count once each, so this can
/// exceed the kernel's time; only whether it reaches a share matters here.
fn overlaps(walk: &Walk) -> Vec<f64> {
    let mut order: Vec<usize> = (0..walk.ops.len())
        .filter(|&i| walk.ops[i].is_kernel())
        .collect();
    order.sort_by(|&a, &b| walk.ops[a].start_ns.total_cmp(&walk.ops[b].start_ns));
    let mut out = vec![0.0; walk.ops.len()];
    for (n, &i) in order.iter().enumerate() {
        let a = &walk.ops[i];
        let a_end = a.start_ns + a.duration_ns;
        for &j in &order[n + 1..] {
            let b = &walk.ops[j];
            if b.start_ns >= a_end {
                break;
            }
            if b.stream == a.stream || b.device != a.device {
                continue;
            }
            let shared = a_end.min(b.start_ns + b.duration_ns) - b.start_ns;
            if shared > 0.0 {
                out[i] += shared;
                out[j] += shared;
            }
        }
    }
    out
}

/// Gives every kernel of `walk` that overlapped other streams' kernels for at least
/// [`MIN_OVERLAP_SHARE`] of its recorded time, and that `adds_back` accepts as it would be
/// priced (with its twins' duration), the median duration of its twins that overlapped none,
/// where that is shorter (see the module). A price that cannot add back what running side by
/// side does to a kernel (the offline model, for a kernel whose memory load it does not know)
/// keeps the contention its recorded duration holds.
pub fn uncontend_where(walk: &mut Walk, adds_back: impl Fn(&Op) -> bool) -> Uncontended {
    let overlap = overlaps(walk);
    let mut twins: HashMap<TwinKey<'_>, Vec<f64>> = HashMap::new();
    for (op, &o) in walk.ops.iter().zip(&overlap) {
        if let Some(k) = key(op).filter(|_| o <= 0.0) {
            twins.entry(k).or_default().push(op.duration_ns);
        }
    }
    let alone: HashMap<TwinKey<'_>, f64> = twins
        .into_iter()
        .map(|(k, d)| (k, crate::stats::median(&d)))
        .collect();
    let changes: Vec<(usize, f64)> = walk
        .ops
        .iter()
        .zip(&overlap)
        .enumerate()
        .filter(|(_, (op, &o))| op.is_kernel() && o >= MIN_OVERLAP_SHARE * op.duration_ns)
        .filter_map(|(i, (op, _))| {
            let d = *alone.get(&key(op)?)?;
            let priced = Op {
                duration_ns: d,
                ..op.clone()
            };
            (d < op.duration_ns && adds_back(&priced)).then_some((i, d))
        })
        .collect();
    let mut done = Uncontended::default();
    for (i, d) in changes {
        done.kernels += 1;
        done.ns += walk.ops[i].duration_ns - d;
        walk.ops[i].duration_ns = d;
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uncontend(walk: &mut Walk) -> Uncontended {
        uncontend_where(walk, |_| true)
    }

    fn on(stream: u64, name: &str, start: f64, duration: f64) -> Op {
        let mut op = Op::kernel(name, start, duration);
        op.stream = Some(stream);
        op
    }

    #[test]
    fn a_kernel_slowed_beside_another_stream_takes_its_lone_twins_duration() {
        let mut walk = Walk {
            ops: vec![
                on(1, "pass", 0.0, 84.0),
                on(1, "pass", 100.0, 86.0),
                on(1, "pass", 200.0, 200.0), // beside the attention
                on(2, "attention", 210.0, 150.0),
                on(1, "other", 420.0, 50.0),
            ],
            ..Walk::default()
        };
        // A price that cannot add the contention back keeps it; the predicate sees the kernel
        // as it would be priced.
        let mut kept = walk.clone();
        let seen = std::cell::Cell::new(0.0);
        let none = uncontend_where(&mut kept, |o| {
            seen.set(o.duration_ns);
            false
        });
        assert_eq!((none, kept), (Uncontended::default(), walk.clone()));
        assert_eq!(seen.get(), 85.0);
        let done = uncontend(&mut walk);
        assert_eq!(done.kernels, 1);
        assert_eq!(done.ns, 200.0 - 85.0);
        let durations: Vec<f64> = walk.ops.iter().map(|o| o.duration_ns).collect();
        // The attention has no twin: it keeps its recorded duration, as does all else.
        assert_eq!(durations, [84.0, 86.0, 85.0, 150.0, 50.0]);
    }

    #[test]
    fn only_kernels_overlapped_enough_by_other_streams_and_with_shorter_twins_change() {
        let mut walk = Walk {
            ops: vec![
                on(1, "pass", 0.0, 80.0),
                // Overlapped 5 of 100 by the other stream: below the share.
                on(1, "pass", 100.0, 100.0),
                on(2, "tail", 195.0, 50.0),
                // Overlapped by its own stream's kernel (as recorded): not contention.
                on(3, "norm", 300.0, 90.0),
                on(3, "norm", 320.0, 40.0),
                // Beside another stream, but its lone twin is longer.
                on(4, "gemm", 500.0, 30.0),
                on(5, "gemm", 505.0, 20.0),
                on(4, "gemm", 600.0, 35.0),
            ],
            ..Walk::default()
        };
        let before: Vec<f64> = walk.ops.iter().map(|o| o.duration_ns).collect();
        assert_eq!(uncontend(&mut walk), Uncontended::default());
        let after: Vec<f64> = walk.ops.iter().map(|o| o.duration_ns).collect();
        assert_eq!(before, after);
    }

    #[test]
    fn twins_differ_in_shape_or_inputs() {
        let mut walk = Walk {
            ops: vec![
                on(1, "pass", 0.0, 40.0),
                on(1, "pass", 100.0, 200.0),
                on(2, "attention", 100.0, 200.0),
            ],
            ..Walk::default()
        };
        walk.ops[0].kind = OpKind::Kernel {
            grid: (2, 1, 1),
            block: (32, 1, 1),
        };
        assert_eq!(uncontend(&mut walk).kernels, 0);
        walk.ops[0].kind = walk.ops[1].kind.clone();
        walk.ops[0].input_bytes = Some(1e6);
        assert_eq!(uncontend(&mut walk).kernels, 0);
        walk.ops[1].input_bytes = Some(1e6);
        assert_eq!(uncontend(&mut walk).kernels, 1);
        assert_eq!(walk.ops[1].duration_ns, 40.0);
    }
}
