//! What the operator behind a recorded kernel was given to read, where the trace recorded its
//! inputs (PyTorch: `torch.profiler.profile(record_shapes=True)`): the bytes of its input
//! tensors.
//!
//! A kernel's duration says how long it ran, not what it asked of device memory meanwhile;
//! beside other streams' kernels that is what decides how much they slow each other. The
//! profiler records an operator's inputs (dims, element types, strides), not its outputs, so
//! the bytes here are what its inputs span: a lower bound on a kernel that reads them all and
//! writes something, an upper bound on one that gathers a few rows of a large table (which a
//! replay tells apart by what the device could have read in the recorded time, see
//! `crate::stand_in`).

/// Bytes of one element of the type PyTorch's profiler names; `None` for types it does not
/// size here (scalars, lists, types this table does not know).
pub fn element_bytes(ty: &str) -> Option<u64> {
    Some(match ty {
        "double" | "long int" | "c10::complex<float>" => 8,
        "float" | "int" => 4,
        "c10::Half" | "c10::BFloat16" | "short int" => 2,
        "bool" | "unsigned char" | "signed char" | "c10::Float8_e4m3fn" | "c10::Float8_e5m2" => 1,
        _ => return None,
    })
}

/// Elements a tensor of `dims` spans in memory: the product of its dims, or with `strides`
/// the distance from its first to its last element + 1 where that is fewer (a broadcast —
/// stride 0 — reads its elements once). `None` for a negative dim (not a tensor's).
fn elements(dims: &[i64], strides: Option<&Vec<i64>>) -> Option<u64> {
    if dims.iter().any(|&d| d < 0) {
        return None;
    }
    if dims.contains(&0) {
        return Some(0);
    }
    let product = dims
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64))?;
    let span = strides.filter(|s| s.len() == dims.len()).and_then(|s| {
        dims.iter().zip(s).try_fold(1u64, |n, (&d, &st)| {
            n.checked_add((d as u64 - 1).checked_mul(st.unsigned_abs())?)
        })
    });
    Some(span.map_or(product, |s| s.min(product)))
}

/// What an operator's input tensors span, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputSizes {
    /// All of them together.
    pub total: u64,
    /// The largest one: an element-wise operator writes a result at least that large (its
    /// inputs' broadcast shape), which the profiler does not record.
    pub largest: u64,
}

/// Bytes of an operator's input tensors from its recorded dims, types and (if recorded)
/// strides; inputs that are not tensors (scalars: empty dims and a type this table does not
/// size) are left out. `None` where a tensor input cannot be sized (a list of tensors, an
/// element type not known here) or there is no tensor input at all.
pub fn input_bytes(
    dims: &[Vec<i64>],
    types: &[String],
    strides: Option<&[Vec<i64>]>,
) -> Option<u64> {
    input_sizes(dims, types, strides).map(|s| s.total)
}

/// [`input_bytes`] with the largest input's bytes beside the total.
pub fn input_sizes(
    dims: &[Vec<i64>],
    types: &[String],
    strides: Option<&[Vec<i64>]>,
) -> Option<InputSizes> {
    let mut total = 0u64;
    let mut largest = 0u64;
    let mut tensors = 0;
    for (i, d) in dims.iter().enumerate() {
        let ty = types.get(i).map_or("", String::as_str);
        let Some(size) = element_bytes(ty) else {
            if d.is_empty() && !ty.ends_with("List") {
                continue; // a scalar argument
            }
            return None;
        };
        let bytes = elements(d, strides.and_then(|s| s.get(i)))?.checked_mul(size)?;
        total = total.checked_add(bytes)?;
        largest = largest.max(bytes);
        tensors += 1;
    }
    (tensors > 0 && total > 0).then_some(InputSizes { total, largest })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::matmul::tests::{dims, types};

    #[test]
    fn attention_reads_its_query_keys_and_values() {
        // aten::_cudnn_attention_forward over 4096 cached positions, 28 heads of 128, bf16,
        // with its trailing scalar and empty arguments.
        let d = dims(&[
            &[1, 28, 1, 128],
            &[1, 28, 4096, 128],
            &[1, 28, 4096, 128],
            &[],
            &[],
        ]);
        let t = types(&[
            "c10::BFloat16",
            "c10::BFloat16",
            "c10::BFloat16",
            "",
            "Scalar",
        ]);
        assert_eq!(
            input_bytes(&d, &t, None),
            Some(2 * (28 * 128 + 2 * 28 * 4096 * 128))
        );
    }

    #[test]
    fn broadcasts_and_views_count_what_they_span() {
        let d = dims(&[&[8, 4096], &[8, 4096]]);
        let t = types(&["float", "float"]);
        // The second input is one row broadcast over eight (stride 0): read once.
        let s = dims(&[&[4096, 1], &[0, 1]]);
        assert_eq!(input_bytes(&d, &t, Some(&s)), Some(4 * (8 * 4096 + 4096)));
        // The largest input is the one not broadcast.
        assert_eq!(
            input_sizes(&d, &t, Some(&s)).map(|s| s.largest),
            Some(4 * 8 * 4096)
        );
        // A transposed view spans as much as its product.
        let s = dims(&[&[1, 8], &[4096, 1]]);
        assert_eq!(input_bytes(&d, &t, Some(&s)), Some(4 * 2 * 8 * 4096));
        // Strides of another rank are not used.
        let s = dims(&[&[1], &[1]]);
        assert_eq!(input_bytes(&d, &t, Some(&s)), Some(4 * 2 * 8 * 4096));
    }

    #[test]
    fn what_cannot_be_sized_is_unknown() {
        // A list of tensors, an unknown element type, a negative dim, no tensor at all.
        assert_eq!(
            input_bytes(&dims(&[&[]]), &types(&["TensorList"]), None),
            None
        );
        assert_eq!(
            input_bytes(&dims(&[&[4]]), &types(&["c10::qint8"]), None),
            None
        );
        assert_eq!(
            input_bytes(&dims(&[&[-1, 4]]), &types(&["float"]), None),
            None
        );
        assert_eq!(input_bytes(&dims(&[&[]]), &types(&["Scalar"]), None), None);
        assert_eq!(
            input_bytes(&dims(&[&[0, 4]]), &types(&["float"]), None),
            None
        );
        // A 0-dim tensor is one element; dims beyond the types are not tensors.
        assert_eq!(
            input_bytes(&dims(&[&[]]), &types(&["float"]), None),
            Some(4)
        );
        assert_eq!(
            input_bytes(&dims(&[&[2], &[]]), &types(&["c10::Half"]), None),
            Some(4)
        );
        // Sizes past 64 bits do not wrap.
        let huge = dims(&[&[1 << 40, 1 << 40]]);
        assert_eq!(input_bytes(&huge, &types(&["float"]), None), None);
    }
}
