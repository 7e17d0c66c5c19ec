//! Inputs of an operator that are one tensor read twice. PyTorch runs some operators as another
//! over the same tensor twice — `isnan(y)` as `y != y` — and the kernel belongs to the inner
//! operator, recorded with the tensor as both its inputs, though it reads it once (each
//! element's second load finds the first's line). The profiler records arguments' layouts, not
//! which tensor each is; but an operator nested in another, with no GPU work issued on its
//! thread since the outer one began, can read only the outer one's tensors (or views of them:
//! nothing else holds data yet). Where it reads more tensors of one layout (dims, element type,
//! strides) than the outer one was given, the extra ones repeat them. `isfinite(y)` runs
//! `y == y` too, but after `abs(y)`, whose result has `y`'s layout: the work between leaves
//! which tensors the comparison names open, and only what PyTorch's source says of the outer
//! operator settles it ([`compares_itself_after_work`]).

use super::{argument_bytes, is_in_place, out_argument};

/// A tensor argument an operator reads, as the profiler recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorArg {
    pub dims: Vec<i64>,
    pub ty: String,
    /// Where recorded.
    pub strides: Option<Vec<i64>>,
    /// What it spans ([`super::elements`] of its element type).
    pub bytes: u64,
}

/// What an operator reads, for the operators nested in it ([`repeated_bytes`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperatorReads {
    /// Its tensors ([`read_tensors`]).
    pub tensors: Vec<TensorArg>,
    /// [`compares_itself_after_work`] of it.
    pub compares_itself_after_work: bool,
}

impl OperatorReads {
    /// What operator `name` reads of its recorded arguments.
    pub fn of(
        name: &str,
        dims: &[Vec<i64>],
        types: &[String],
        strides: Option<&[Vec<i64>]>,
    ) -> OperatorReads {
        OperatorReads {
            tensors: read_tensors(name, dims, types, strides),
            compares_itself_after_work: compares_itself_after_work(name),
        }
    }
}

impl TensorArg {
    fn same_layout(&self, other: &TensorArg) -> bool {
        self.dims == other.dims && self.ty == other.ty && self.strides == other.strides
    }
}

/// Whether PyTorch runs operator `name` as a comparison of its one input with itself after
/// other work on that input, so that an operator nested in it naming more tensors of the
/// input's layout than it was given repeats the input even with GPU work issued between their
/// starts. `isfinite(y)` on a floating-point `y` is `(y == y) * (y.abs() != inf)`
/// (ATen's `TensorCompare.cpp`), its `abs` issued first: of its nested operators only `eq`
/// names two tensors of `y`'s layout (`ne` names `y.abs()` and a scalar, `mul` two `bool`s),
/// and both are `y`.
pub fn compares_itself_after_work(name: &str) -> bool {
    name == "aten::isfinite"
}

/// The tensors operator `name` reads of its recorded arguments: all but an `out=` result it
/// writes ([`out_argument`]); none for an in-place operator (`add_`), whose first it writes as
/// well, or where an argument cannot be sized.
pub fn read_tensors(
    name: &str,
    dims: &[Vec<i64>],
    types: &[String],
    strides: Option<&[Vec<i64>]>,
) -> Vec<TensorArg> {
    let Some(bytes) = argument_bytes(dims, types, strides).filter(|_| !is_in_place(name)) else {
        return Vec::new();
    };
    let out = out_argument(name, &bytes);
    bytes
        .iter()
        .enumerate()
        .filter(|&(i, _)| Some(i) != out)
        .filter_map(|(i, b)| {
            Some(TensorArg {
                dims: dims[i].clone(),
                ty: types.get(i)?.clone(),
                strides: strides.and_then(|s| s.get(i)).cloned(),
                bytes: (*b)?,
            })
        })
        .collect()
}

/// The bytes of the tensors `inner` reads that repeat one of `outer`'s, the tensors of the
/// operator it runs in (with no GPU work issued between their starts): of each layout, those
/// past as many as `outer` has of it. A layout `outer` does not have is left alone (a view of
/// its tensors, or a tensor the inner operator cannot be shown to share).
pub fn repeated_bytes(inner: &[TensorArg], outer: &[TensorArg]) -> u64 {
    inner
        .iter()
        .enumerate()
        .filter(|&(i, a)| !inner[..i].iter().any(|b| b.same_layout(a)))
        .map(|(_, a)| {
            let given = outer.iter().filter(|b| b.same_layout(a)).count();
            let read = inner.iter().filter(|b| b.same_layout(a)).count();
            if given > 0 && read > given {
                (read - given) as u64 * a.bytes
            } else {
                0
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str, dims: &[&[i64]], ty: &str) -> Vec<TensorArg> {
        let dims: Vec<Vec<i64>> = dims.iter().map(|d| d.to_vec()).collect();
        let types = vec![ty.to_string(); dims.len()];
        read_tensors(name, &dims, &types, None)
    }

    #[test]
    fn isnan_reads_its_tensor_once_though_its_comparison_names_it_twice() {
        let outer = read("aten::isnan", &[&[2_097_152]], "float");
        let inner = read("aten::ne", &[&[2_097_152], &[2_097_152]], "float");
        assert_eq!(repeated_bytes(&inner, &outer), 8 << 20);
    }

    #[test]
    fn tensors_the_outer_operator_was_given_as_many_times_are_not_repeats() {
        // A product of `a` and `b` in an operator given both, of one layout, reads both.
        let outer = read("my::blend", &[&[1024], &[1024]], "float");
        let inner = read("aten::mul", &[&[1024], &[1024]], "float");
        assert_eq!(repeated_bytes(&inner, &outer), 0);
        // A layout the outer one was not given (a view, a reshape) is left alone.
        let outer = read("my::square", &[&[32, 32]], "float");
        assert_eq!(repeated_bytes(&inner, &outer), 0);
    }

    #[test]
    fn only_isfinite_compares_its_input_with_itself_after_other_work() {
        let dims = [vec![1024]];
        let types = ["float".to_string()];
        assert!(
            OperatorReads::of("aten::isfinite", &dims, &types, None).compares_itself_after_work
        );
        // isnan's comparison comes first: no work between, the general rule covers it.
        assert!(!OperatorReads::of("aten::isnan", &dims, &types, None).compares_itself_after_work);
        assert!(!OperatorReads::of("aten::eq", &dims, &types, None).compares_itself_after_work);
    }

    #[test]
    fn written_tensors_are_not_read_ones() {
        // `add(a, b, out=c)`: c is written; an in-place `add_` writes its first.
        let dims = vec![vec![64], vec![64], vec![], vec![64]];
        let types: Vec<String> = ["float", "float", "Scalar", "float"]
            .map(String::from)
            .into();
        let out = read_tensors("aten::add", &dims, &types, None);
        assert_eq!(out.len(), 2);
        assert!(read("aten::add_", &[&[64], &[64]], "float").is_empty());
    }
}
