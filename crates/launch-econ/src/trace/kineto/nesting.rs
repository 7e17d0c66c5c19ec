//! Which operator runs in which, on each host thread, for the inputs an inner operator reads
//! twice that are one tensor of the outer one's ([`crate::trace::inputs::repeats`]). Kineto
//! writes every operator before the runtime calls, so nesting is worked out once all are read.

use std::collections::HashMap;

use crate::trace::host::{HostEvent, HostKind};
use crate::trace::inputs::repeats::{repeated_bytes, OperatorReads};
use crate::trace::inputs::InputSizes;

/// An operator that reads recorded tensors: its `External id`, host thread, span and what it
/// reads.
#[derive(Debug, Clone)]
pub(super) struct OperatorSpan {
    pub id: u64,
    pub thread: u64,
    pub start_ns: f64,
    pub end_ns: f64,
    pub reads: OperatorReads,
}

/// Takes from each operator's input bytes (`inputs`, by `External id`) what its reads repeat of
/// the operator it runs in ([`repeated_reads`], the runtime calls that issue GPU work read from
/// `host`). A gather's total counts the rows it picks, a list's its elements: left alone.
pub(super) fn count_repeats_once(
    inputs: &mut HashMap<u64, InputSizes>,
    spans: Vec<OperatorSpan>,
    host: &[HostEvent],
) {
    let issued = host.iter().filter(|e| e.kind == HostKind::Issue);
    for (id, bytes) in repeated_reads(spans, issued.map(|e| (e.thread, e.ts_ns))) {
        if let Some(sizes) = inputs.get_mut(&id) {
            if sizes.gathered == 0 && !sizes.elements {
                sizes.total = sizes.total.saturating_sub(bytes);
            }
        }
    }
}

/// The bytes of each operator's reads that repeat a tensor of the operator it runs in, by
/// `External id` (only those with any): the innermost operator reading recorded tensors that
/// encloses it on its thread (any between, reading none, made no data without GPU work),
/// where no call in `issued` (each GPU-issuing runtime call's thread and start, ns) started on
/// that thread from the outer one's start to the inner one's, or where the outer one compares
/// its input with itself after such work
/// ([`crate::trace::inputs::repeats::compares_itself_after_work`]).
fn repeated_reads(
    mut spans: Vec<OperatorSpan>,
    issued: impl Iterator<Item = (u64, f64)>,
) -> HashMap<u64, u64> {
    let mut issued_on: HashMap<u64, Vec<f64>> = HashMap::new();
    for (thread, ts) in issued {
        issued_on.entry(thread).or_default().push(ts);
    }
    for starts in issued_on.values_mut() {
        starts.sort_by(f64::total_cmp);
    }
    // Enclosing operators first: by start, the longer of two that start together first.
    spans.sort_by(|a, b| {
        (a.thread, a.start_ns)
            .partial_cmp(&(b.thread, b.start_ns))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.end_ns.total_cmp(&a.end_ns))
    });
    let mut repeated = HashMap::new();
    let mut open: Vec<&OperatorSpan> = Vec::new();
    for s in &spans {
        while open
            .last()
            .is_some_and(|o| o.thread != s.thread || o.end_ns < s.end_ns)
        {
            open.pop();
        }
        if let Some(outer) = open.last() {
            let issued_between = issued_on.get(&s.thread).is_some_and(|starts| {
                let from = starts.partition_point(|&t| t < outer.start_ns);
                starts.get(from).is_some_and(|&t| t <= s.start_ns)
            });
            if !issued_between || outer.reads.compares_itself_after_work {
                let bytes = repeated_bytes(&s.reads.tensors, &outer.reads.tensors);
                if bytes > 0 {
                    repeated.insert(s.id, bytes);
                }
            }
        }
        open.push(s);
    }
    repeated
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::inputs::repeats::TensorArg;

    fn span(id: u64, start_ns: f64, end_ns: f64, reads: usize) -> OperatorSpan {
        let y = TensorArg {
            dims: vec![1024],
            ty: "float".into(),
            strides: Some(vec![1]),
            bytes: 4096,
        };
        OperatorSpan {
            id,
            thread: 7,
            start_ns,
            end_ns,
            reads: OperatorReads {
                tensors: vec![y; reads],
                compares_itself_after_work: false,
            },
        }
    }

    #[test]
    fn an_inner_operator_naming_the_outer_ones_tensor_twice_reads_it_once() {
        // isnan(y) [0, 100] runs ne(y, y) [10, 90]; its launch at 20 is inside the inner one.
        let spans = vec![span(2, 10.0, 90.0, 2), span(1, 0.0, 100.0, 1)];
        let r = repeated_reads(spans.clone(), [(7, 20.0)].into_iter());
        assert_eq!(r, HashMap::from([(2, 4096)]));
        // Work issued between their starts may have made a second tensor of that layout.
        assert!(repeated_reads(spans.clone(), [(7, 5.0)].into_iter()).is_empty());
        // On another thread, or after the outer one ended, the two are not nested.
        let apart = vec![span(2, 110.0, 190.0, 2), span(1, 0.0, 100.0, 1)];
        assert!(repeated_reads(apart, std::iter::empty()).is_empty());
        let mut other = spans;
        other[0].thread = 8;
        assert!(repeated_reads(other, std::iter::empty()).is_empty());
    }

    #[test]
    fn an_operator_that_compares_its_input_with_itself_after_other_work_repeats_it_still() {
        // isfinite(y) [0, 100] runs abs(y) (its launch at 15), then eq(y, y) [40, 60].
        let mut spans = vec![span(2, 40.0, 60.0, 2), span(1, 0.0, 100.0, 1)];
        assert!(repeated_reads(spans.clone(), [(7, 15.0)].into_iter()).is_empty());
        spans[1].reads.compares_itself_after_work = true;
        let r = repeated_reads(spans, [(7, 15.0), (7, 45.0)].into_iter());
        assert_eq!(r, HashMap::from([(2, 4096)]));
    }
}
