//! What a CPU operator event recorded of its inputs (`record_shapes=True`): the GEMM of a
//! matmul operator, and the bytes of any operator's input tensors, by `External id`, which
//! links the operator to the kernels it launched; and what those records give the kernels (a
//! matmul's GEMM to its GEMM kernel, an operator's input bytes to its longest kernel).

use memra_engine::{Gemm, LaunchShape};
use serde_json::Value;

use std::collections::HashMap;

use super::{as_uint, Event, Sink};
use crate::trace::across_rows::across_rows;
use crate::trace::matmul::{is_blas_kernel, names_a_gemm, MatmulRole};
use crate::trace::{inputs, matmul, OpKind};

/// A recorded list of lists of integers (`Input Dims`, `Input Strides`); entries that are not
/// (scalars, tensor lists) become empty lists.
fn int_lists(v: &Value) -> Option<Vec<Vec<i64>>> {
    let Value::Array(items) = v else { return None };
    Some(
        items
            .iter()
            .map(|x| match x {
                Value::Array(d) => d.iter().map(|n| n.as_i64().unwrap_or(-1)).collect(),
                _ => Vec::new(),
            })
            .collect(),
    )
}

/// A recorded list of strings (`Input type`, `Concrete Inputs`); entries that are not strings
/// become empty.
fn strings(v: &Value) -> Option<Vec<String>> {
    let Value::Array(items) = v else { return None };
    Some(
        items
            .iter()
            .map(|t| t.as_str().unwrap_or("").to_string())
            .collect(),
    )
}

/// A CPU operator's recorded inputs: `External id`, dims, element types and (if recorded)
/// strides and the values of its scalar arguments (`Concrete Inputs`); `None` without an id,
/// dims or types.
struct RecordedInputs {
    id: u64,
    dims: Vec<Vec<i64>>,
    types: Vec<String>,
    strides: Option<Vec<Vec<i64>>>,
    concrete: Option<Vec<String>>,
}

fn recorded_inputs(ev: &Event) -> Option<RecordedInputs> {
    let args = ev.args.as_ref()?;
    let id = as_uint(&args.external_id, "External id").ok().flatten()?;
    let dims = int_lists(args.input_dims.as_ref()?)?;
    let types = strings(args.input_type.as_ref()?)?;
    let strides = args.input_strides.as_ref().and_then(int_lists);
    let concrete = args.concrete_inputs.as_ref().and_then(strings);
    Some(RecordedInputs {
        id,
        dims,
        types,
        strides,
        concrete,
    })
}

/// A CPU operator's `External id` and GEMM, where it is a matmul with recorded shapes.
pub(super) fn matmul_op(ev: &Event) -> Option<(u64, Gemm)> {
    let name = ev.name.as_ref()?.as_str()?;
    let r = recorded_inputs(ev)?;
    Some((
        r.id,
        matmul::of_op(name, &r.dims, &r.types, r.strides.as_deref())?,
    ))
}

/// A CPU operator's `External id` and the bytes it read of its input tensors, where recorded
/// (a gather of rows: the rows, see [`inputs::operator_sizes`]).
/// An operator whose only tensors come in a list (`cat`) gives their elements instead
/// ([`inputs::list_sizes`]), made bytes by the kernel that copies them ([`assign_inputs`]).
/// With them, what it reads ([`inputs::repeats::OperatorReads`]), for the operators nested in
/// it.
pub(super) fn operator_inputs(
    ev: &Event,
) -> Option<(u64, inputs::InputSizes, inputs::repeats::OperatorReads)> {
    let name = ev.name.as_ref().and_then(Value::as_str).unwrap_or("");
    let r = recorded_inputs(ev)?;
    let sizes = inputs::operator_sizes(
        name,
        &r.dims,
        &r.types,
        r.strides.as_deref(),
        r.concrete.as_deref(),
    )
    .or_else(|| inputs::list_sizes(ev.args.as_ref()?.input_dims.as_ref()?, &r.types))?;
    let across_rows = across_rows(&r.dims, &r.types, r.strides.as_deref());
    let reads = inputs::repeats::OperatorReads::of(name, &r.dims, &r.types, r.strides.as_deref());
    Some((
        r.id,
        inputs::InputSizes {
            across_rows,
            ..sizes
        },
        reads,
    ))
}

/// The bytes of one element a kernel copies, where its name says: PyTorch's concatenation
/// kernels copy `OpaqueType<N>`, N-byte elements whatever their type.
fn opaque_element_bytes(kernel: &str) -> Option<u64> {
    let at = kernel.find("OpaqueType<")? + "OpaqueType<".len();
    let digits: String = kernel[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|&n| n > 0)
}

/// Marks the cuBLAS kernels each matmul operator launched: its GEMM kernel (the first, in issue
/// order, whose name says it multiplies, [`names_a_gemm`]; else its first) as the GEMM, the
/// rest as its parts (see [`MatmulRole`]). cuBLAS's IEEE f32 GEMMs of few tokens launch a
/// `scal_kernel` (C scaled by beta) before `sgemm_largek_…`; the GEMM's time and blocks are
/// the latter's.
pub(super) fn mark_matmuls(sink: &mut Sink) {
    if sink.matmuls.is_empty() {
        return;
    }
    let ops = &mut sink.walk.ops;
    let mut by_op: Vec<(u64, u64, usize)> = sink
        .launched_by
        .iter()
        .filter(|&&(i, id)| sink.matmuls.contains_key(&id) && is_blas_kernel(&ops[i].name))
        .map(|&(i, id)| (id, ops[i].correlation.unwrap_or(u64::MAX), i))
        .collect();
    by_op.sort_unstable();
    for kernels in by_op.chunk_by(|a, b| a.0 == b.0) {
        let id = kernels[0].0;
        let call = kernels
            .iter()
            .find(|&&(_, _, i)| names_a_gemm(&ops[i].name))
            .unwrap_or(&kernels[0])
            .2;
        for &(_, _, i) in kernels {
            ops[i].matmul = Some(if i == call {
                MatmulRole::Call(sink.matmuls[&id])
            } else {
                MatmulRole::Part
            });
        }
    }
}

/// Gives each operator's input bytes to the longest kernel it launched (the first of equals):
/// an operator of several kernels reads its inputs in its main one, and the others read what
/// that one wrote (a split-K reduction, attention's combine step).
pub(super) fn assign_inputs(sink: &mut Sink) {
    let ops = &mut sink.walk.ops;
    let mut longest: HashMap<u64, usize> = HashMap::new();
    for &(i, id) in &sink.launched_by {
        if !sink.inputs.contains_key(&id) || !matches!(ops[i].kind, OpKind::Kernel { .. }) {
            continue;
        }
        let best = longest.entry(id).or_insert(i);
        if ops[i].duration_ns > ops[*best].duration_ns {
            *best = i;
        }
    }
    for (id, i) in longest {
        let sizes = sink.inputs[&id];
        if sizes.elements {
            // A list's elements: bytes only where the kernel says how large one is.
            ops[i].copied_bytes =
                opaque_element_bytes(&ops[i].name).map(|n| sizes.total.saturating_mul(n) as f64);
            continue;
        }
        ops[i].input_bytes = Some(sizes.total as f64);
        ops[i].largest_input_bytes = Some(sizes.largest as f64);
        ops[i].gathered_bytes = (sizes.gathered > 0).then_some(sizes.gathered as f64);
        ops[i].in_place = sizes.in_place;
        let blocks = match ops[i].kind {
            OpKind::Kernel { grid, block } => Some(LaunchShape::of(grid, block).blocks()),
            _ => None,
        };
        let excess = sizes.across_rows.excess(blocks);
        ops[i].across_row_excess_bytes = (excess > 0).then_some(excess as f64);
    }
}
