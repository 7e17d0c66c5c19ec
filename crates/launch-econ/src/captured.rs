//! Whether a profiled replay of the captured graph runs the walk the eager recording holds.
//!
//! A price is the recorded walk's. A framework can capture another one: on the H200 a ViT
//! encoder's eager step ran cuDNN's fused attention and its capture PyTorch's f32 math path
//! (377 kernels against 152, the graph 1.9x the recorded kernel time), and transformers'
//! attention mask without a prepared 4-D mask adds 12–18% kernels under capture. One profiled
//! graph replay tells: its kernels, copies and memsets against the recording's, as multisets
//! (a graph's branches interleave otherwise than the eager streams did). A graph can run its
//! copy and memset nodes as driver kernels (`memcpy32_post`, `memcpy128`, `memset32`) where
//! the eager step ran them on a copy engine; those count as the copies and memsets they are.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::trace::{Op, OpKind, Walk};

/// How many differing names the report lists each way.
const LISTED: usize = 4;

/// A recorded walk against a profiled replay of its captured graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapturedWalk {
    /// The graph replay's trace.
    pub path: String,
    /// Kernels, copies and memsets in the recorded walk.
    pub recorded: usize,
    /// Kernels, copies and memsets in the graph replay.
    pub captured: usize,
    /// Whether both run the same work (as multisets).
    pub same: bool,
    /// What the graph runs more often than the recording, most first: (name, how many more).
    pub more: Vec<(String, usize)>,
    /// What the graph runs less often than the recording, most first.
    pub fewer: Vec<(String, usize)>,
}

/// What `op` runs, by a name both recordings share: a kernel's own name, "copy" or "memset".
fn work(op: &Op) -> &str {
    match &op.kind {
        OpKind::Memcpy { .. } => "copy",
        OpKind::Memset { .. } => "memset",
        OpKind::Kernel { .. } if is_driver_kernel(&op.name, "memcpy") => "copy",
        OpKind::Kernel { .. } if is_driver_kernel(&op.name, "memset") => "memset",
        OpKind::Kernel { .. } => &op.name,
    }
}

/// `memcpy32_post`, `memcpy128`, `memset32`: `stem`, digits, an optional `_post`.
fn is_driver_kernel(name: &str, stem: &str) -> bool {
    name.strip_prefix(stem).is_some_and(|rest| {
        let digits = rest.trim_end_matches("_post");
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    })
}

fn counts(walk: &Walk) -> BTreeMap<&str, usize> {
    let mut c = BTreeMap::new();
    for op in &walk.ops {
        *c.entry(work(op)).or_insert(0) += 1;
    }
    c
}

/// Names `a` holds more of than `b`, with how many more, most first (then by name).
fn excess(a: &BTreeMap<&str, usize>, b: &BTreeMap<&str, usize>) -> Vec<(String, usize)> {
    let mut v: Vec<(String, usize)> = a
        .iter()
        .filter_map(|(name, &n)| {
            let m = b.get(name).copied().unwrap_or(0);
            (n > m).then(|| (name.to_string(), n - m))
        })
        .collect();
    v.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
    v
}

/// `recorded` against `captured`, the walk read from a graph replay's trace at `path`.
pub fn compare(recorded: &Walk, captured: &Walk, path: &str) -> CapturedWalk {
    let (r, c) = (counts(recorded), counts(captured));
    let (more, fewer) = (excess(&c, &r), excess(&r, &c));
    CapturedWalk {
        path: path.to_string(),
        recorded: recorded.ops.len(),
        captured: captured.ops.len(),
        same: more.is_empty() && fewer.is_empty(),
        more,
        fewer,
    }
}

/// A kernel's name without what every PyTorch kernel's repeats (`void`, `at::native::`,
/// anonymous namespaces), cut to 72 characters: the functor that tells kernels apart stays.
fn short_name(name: &str) -> String {
    let name = name.strip_prefix("void ").unwrap_or(name);
    let name = name
        .replace("at::native::", "")
        .replace("(anonymous namespace)::", "");
    name.chars().take(72).collect()
}

fn listed(v: &[(String, usize)]) -> String {
    let mut parts: Vec<String> = v
        .iter()
        .take(LISTED)
        .map(|(name, n)| format!("{n} x {}", short_name(name)))
        .collect();
    if v.len() > LISTED {
        parts.push(format!("{} more names", v.len() - LISTED));
    }
    parts.join(", ")
}

impl CapturedWalk {
    /// The report's line.
    pub fn line(&self) -> String {
        if self.same {
            format!(
                "captured graph ({}): runs the recorded walk ({} kernels, copies and memsets)\n",
                self.path, self.recorded
            )
        } else {
            format!(
                "captured graph ({}): ANOTHER WALK: {} kernels, copies and memsets against the recording's {}\n",
                self.path, self.captured, self.recorded
            )
        }
    }

    /// A warning where the graph runs another walk; `None` where it runs the recorded one.
    pub fn warning(&self) -> Option<String> {
        if self.same {
            return None;
        }
        let mut parts = Vec::new();
        if !self.more.is_empty() {
            parts.push(format!("the graph runs more of: {}", listed(&self.more)));
        }
        if !self.fewer.is_empty() {
            parts.push(format!("less of: {}", listed(&self.fewer)));
        }
        Some(format!(
            "the captured graph ({}) runs another walk than the recording ({} kernels, copies and memsets against {}; {}): this price is the recorded walk's, not that graph's; record the step as it is captured (the same attention backend, a prepared attention mask) and price that recording",
            self.path,
            self.captured,
            self.recorded,
            parts.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, kind: OpKind) -> Op {
        Op {
            kind,
            ..Op::kernel(name, 0.0, 1000.0)
        }
    }

    fn kernel(name: &str) -> Op {
        Op::kernel(name, 0.0, 1000.0)
    }

    #[test]
    fn driver_kernels_are_the_copies_and_memsets_they_run() {
        let copy = op(
            "Memcpy DtoD (Device -> Device)",
            OpKind::Memcpy {
                bytes: 4096,
                direction: "DtoD".into(),
                pageable: false,
            },
        );
        let memset = op("Memset (Device)", OpKind::Memset { bytes: 64 });
        let eager = Walk::from(vec![kernel("add"), copy, memset, kernel("add")]);
        let graph = Walk::from(vec![
            kernel("add"),
            kernel("memcpy32_post"),
            kernel("memset32"),
            kernel("add"),
        ]);
        let c = compare(&eager, &graph, "g.json");
        assert!(c.same, "{c:?}");
        assert_eq!(c.warning(), None);
        assert!(c.line().contains("runs the recorded walk (4 kernels"));
    }

    #[test]
    fn other_kernels_under_capture_are_another_walk() {
        let eager = Walk::from(vec![kernel("gemm"), kernel("cudnn_sdpa"), kernel("gemm")]);
        let graph = Walk::from(vec![
            kernel("gemm"),
            kernel("softmax"),
            kernel("f32_gemm"),
            kernel("f32_gemm"),
            kernel("gemm"),
        ]);
        let c = compare(&eager, &graph, "g.json");
        assert!(!c.same);
        assert_eq!((c.recorded, c.captured), (3, 5));
        assert_eq!(
            c.more,
            vec![("f32_gemm".to_string(), 2), ("softmax".to_string(), 1)]
        );
        assert_eq!(c.fewer, vec![("cudnn_sdpa".to_string(), 1)]);
        let w = c.warning().expect("a warning");
        assert!(w.contains("5 kernels, copies and memsets against 3"), "{w}");
        assert!(w.contains("2 x f32_gemm, 1 x softmax"), "{w}");
        assert!(w.contains("less of: 1 x cudnn_sdpa"), "{w}");
        assert!(c.line().contains("ANOTHER WALK"));
    }

    #[test]
    fn order_does_not_matter_but_counts_do() {
        let eager = Walk::from(vec![kernel("a"), kernel("b")]);
        assert!(compare(&eager, &Walk::from(vec![kernel("b"), kernel("a")]), "g").same);
        let twice = compare(
            &eager,
            &Walk::from(vec![kernel("a"), kernel("b"), kernel("b")]),
            "g",
        );
        assert_eq!(twice.more, vec![("b".to_string(), 1)]);
        assert!(twice.fewer.is_empty());
    }

    #[test]
    fn only_driver_names_count_as_copies() {
        assert!(is_driver_kernel("memcpy32_post", "memcpy"));
        assert!(is_driver_kernel("memcpy128", "memcpy"));
        assert!(is_driver_kernel("memset32", "memset"));
        assert!(!is_driver_kernel("memcpy", "memcpy"));
        assert!(!is_driver_kernel("memcpy_kernel_custom", "memcpy"));
        assert!(!is_driver_kernel("memset32_fast", "memset"));
    }

    #[test]
    fn names_lose_what_every_pytorch_kernel_repeats() {
        assert_eq!(
            short_name("void at::native::vectorized_elementwise_kernel<8, at::native::float16_copy_kernel_cuda>"),
            "vectorized_elementwise_kernel<8, float16_copy_kernel_cuda>"
        );
        assert_eq!(short_name(&"k".repeat(100)).len(), 72);
    }

    #[test]
    fn long_lists_are_cut() {
        let eager = Walk::from(vec![]);
        let graph = Walk::from(
            ["a", "b", "c", "d", "e", "f"]
                .iter()
                .map(|n| kernel(n))
                .collect::<Vec<_>>(),
        );
        let w = compare(&eager, &graph, "g").warning().expect("a warning");
        assert!(w.contains("1 x d, 2 more names"), "{w}");
    }
}
