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

/// A CPU operator's recorded inputs: `External id`, dims, element types and (if recorded)
/// strides; `None` without an id, dims or types.
struct RecordedInputs {
    id: u64,
    dims: Vec<Vec<i64>>,
    types: Vec<String>,
    strides: Option<Vec<Vec<i64>>>,
}

fn recorded_inputs(ev: &Event) -> Option<RecordedInputs> {
    let args = ev.args.as_ref()?;
    let id = as_uint(&args.external_id, "External id").ok().flatten()?;
    let dims = int_lists(args.input_dims.as_ref()?)?;
    let Value::Array(types) = args.input_type.as_ref()? else {
        return None;
    };
    let types = types
        .iter()
        .map(|t| t.as_str().unwrap_or("").to_string())
        .collect();
    let strides = args.input_strides.as_ref().and_then(int_lists);
    Some(RecordedInputs {
        id,
        dims,
        types,
        strides,
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

/// A CPU operator's `External id` and the bytes of its input tensors, where recorded.
pub(super) fn operator_inputs(ev: &Event) -> Option<(u64, inputs::InputSizes)> {
    let r = recorded_inputs(ev)?;
    Some((
        r.id,
        inputs::input_sizes(&r.dims, &r.types, r.strides.as_deref())?,
    ))
}
