//! What a CPU operator event recorded of its inputs (`record_shapes=True`): the GEMM of a
//! matmul operator, and the bytes of any operator's input tensors, by `External id`, which
//! links the operator to the kernels it launched.

use memra_engine::Gemm;
use serde_json::Value;

use super::{as_uint, Event};
use crate::trace::{inputs, matmul};

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
pub(super) fn operator_inputs(ev: &Event) -> Option<(u64, inputs::InputSizes)> {
    let name = ev.name.as_ref().and_then(Value::as_str).unwrap_or("");
    let r = recorded_inputs(ev)?;
    Some((
        r.id,
        inputs::operator_sizes(
            name,
            &r.dims,
            &r.types,
            r.strides.as_deref(),
            r.concrete.as_deref(),
        )?,
    ))
}
