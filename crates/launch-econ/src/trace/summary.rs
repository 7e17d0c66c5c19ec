//! The `--summary` numbers of a walk: what it launched, how long its kernels and copies ran,
//! on which devices and streams, and which kernels took the most time.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{OpKind, Walk};

/// The `--summary` numbers of a walk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub kernels: usize,
    pub copies: usize,
    pub memsets: usize,
    pub kernel_gpu_ns: f64,
    pub copy_gpu_ns: f64,
    pub distinct_kernels: usize,
    pub span_ns: f64,
    pub devices: Vec<u32>,
    pub streams: Vec<u64>,
    /// (name, launches, total ns), largest total first.
    pub top: Vec<(String, usize, f64)>,
}

/// Summarises a walk; `top` names at most that many kernels.
pub fn summarize(w: &Walk, top: usize) -> Summary {
    let mut by_name: HashMap<&str, (usize, f64)> = HashMap::new();
    let (mut copies, mut memsets, mut kns, mut cns) = (0, 0, 0.0, 0.0);
    for o in &w.ops {
        match o.kind {
            OpKind::Kernel { .. } => {
                kns += o.duration_ns;
                let e = by_name.entry(&o.name).or_default();
                e.0 += 1;
                e.1 += o.duration_ns;
            }
            OpKind::Memcpy { .. } => {
                copies += 1;
                cns += o.duration_ns;
            }
            OpKind::Memset { .. } => {
                memsets += 1;
                cns += o.duration_ns;
            }
        }
    }
    let mut top_v: Vec<(String, usize, f64)> = by_name
        .iter()
        .map(|(n, (c, t))| (n.to_string(), *c, *t))
        .collect();
    top_v.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    let distinct = top_v.len();
    top_v.truncate(top);
    let mut devices: Vec<u32> = w.ops.iter().filter_map(|o| o.device).collect();
    devices.sort_unstable();
    devices.dedup();
    let mut streams: Vec<u64> = w.ops.iter().filter_map(|o| o.stream).collect();
    streams.sort_unstable();
    streams.dedup();
    Summary {
        kernels: w.kernels().count(),
        copies,
        memsets,
        kernel_gpu_ns: kns,
        copy_gpu_ns: cns,
        distinct_kernels: distinct,
        span_ns: w.span_ns(),
        devices,
        streams,
        top: top_v,
    }
}
