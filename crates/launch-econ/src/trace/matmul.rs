//! The matrix multiplies behind recorded kernels, where the trace recorded the framework op's
//! input shapes (PyTorch: `torch.profiler.profile(record_shapes=True)`).
//!
//! A Kineto trace links each kernel to the CPU operator that launched it (the innermost, by
//! `External id`), and with `record_shapes` that operator carries its inputs' dims, element
//! types and strides. For PyTorch's GEMM operators that is everything cuBLAS needs to run the
//! same GEMM, so a replay can run it for real (see `crate::prepared`): on concurrent streams a
//! GEMM's demand on the SMs and the memory, which no stand-in of the same duration has,
//! decides how much it slows the other stream (`scripts/two_stream_probe.py`).

use memra_engine::{Gemm, GemmType};

/// What a recorded kernel is to the matrix multiply of the operator that launched it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatmulRole {
    /// The operator's first cuBLAS kernel: replayed as the whole GEMM (in cuBLAS's
    /// column-major terms, see [`memra_engine::Gemm`]).
    Call(Gemm),
    /// A further cuBLAS kernel of the same operator (a split-K reduction, say): the real GEMM
    /// issues its own, so the replay issues nothing for it.
    Part,
}

/// Bytes of a GEMM's A, B and C together.
pub fn operand_bytes(g: &Gemm) -> u64 {
    let (a, b, c) = g.bytes();
    (a as u64).saturating_add(b as u64).saturating_add(c as u64)
}

/// Whether a kernel's name is one of cuBLAS's (its GEMM kernels and their helpers).
pub fn is_blas_kernel(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    lower_names_a_gemm(&n) || ["splitk", "cublas"].iter().any(|k| n.contains(k))
}

/// Whether a cuBLAS kernel's name says it multiplies (a GEMM or GEMV kernel of cuBLAS, cuBLASLt
/// or CUTLASS), not a helper that scales, reduces split-K partials or applies an epilogue.
pub fn names_a_gemm(name: &str) -> bool {
    lower_names_a_gemm(&name.to_ascii_lowercase())
}

/// [`names_a_gemm`] of a name already in lower case.
fn lower_names_a_gemm(n: &str) -> bool {
    ["gemm", "gemv", "nvjet", "cutlass", "xmma"]
        .iter()
        .any(|k| n.contains(k))
}

/// The element type PyTorch's profiler names (`c10::Half`, `c10::BFloat16`, `float`).
fn dtype(name: &str) -> Option<GemmType> {
    match name {
        "c10::Half" => Some(GemmType::F16),
        "c10::BFloat16" => Some(GemmType::Bf16),
        "float" => Some(GemmType::F32),
        _ => None,
    }
}

/// Whether a matrix with these (last two) strides is stored transposed: column by column
/// (`[1, rows]`) rather than row by row. Unknown strides count as row by row (contiguous).
fn transposed(strides: Option<&Vec<i64>>) -> bool {
    match strides.map(|s| &s[s.len().saturating_sub(2)..]) {
        Some([row, col]) => *col != 1 && *row == 1,
        _ => false,
    }
}

/// The GEMM of a PyTorch matmul operator (`aten::mm`, `aten::addmm`, `aten::bmm`,
/// `aten::baddbmm`) from its recorded input dims, types and (if recorded) strides; `None` for
/// other operators and for inputs that do not make a GEMM cuBLAS can run.
///
/// PyTorch computes the row-major C[M, N] = X[M, K] · W[K, N] as cuBLAS's column-major
/// Cᵀ = Wᵀ · Xᵀ: m = N, n = M, A is W and B is X, each transposed where it is stored
/// column by column (a weight used as `linear` uses it). An `addmm` of a linear layer's
/// bias (a vector of N) over more than one row runs with the bias in cuBLASLt's epilogue, as
/// PyTorch runs it (`Gemm::bias`); another `addmm` adds the product to its input (PyTorch
/// copies a bias over one row into the result first).
pub fn of_op(
    name: &str,
    dims: &[Vec<i64>],
    types: &[String],
    strides: Option<&[Vec<i64>]>,
) -> Option<Gemm> {
    let (first, rank, accumulate) = match name {
        "aten::mm" => (0, 2, false),
        "aten::addmm" => (1, 2, true),
        "aten::bmm" => (0, 3, false),
        "aten::baddbmm" => (1, 3, true),
        _ => return None,
    };
    let (x, w) = (dims.get(first)?, dims.get(first + 1)?);
    if x.len() != rank || w.len() != rank {
        return None;
    }
    let ty = dtype(types.get(first)?)?;
    if dtype(types.get(first + 1)?)? != ty {
        return None;
    }
    let (batch, bx, bw) = if rank == 3 {
        (x[0], x[0], w[0])
    } else {
        (1, 1, 1)
    };
    let (rows, inner, inner_w, cols) = (x[rank - 2], x[rank - 1], w[rank - 2], w[rank - 1]);
    if bx != bw || inner != inner_w {
        return None;
    }
    let dim = |d: i64| {
        u32::try_from(d)
            .ok()
            .filter(|&d| d > 0 && d <= i32::MAX as u32)
    };
    let stride = |i: usize| strides.and_then(|s| s.get(i));
    let bias = name == "aten::addmm"
        && dims.first().is_some_and(|b| b.len() == 1 && b[0] == cols)
        && types.first().and_then(|t| dtype(t)) == Some(ty)
        && rows > 1
        && inner > 1
        && cols > 1;
    Some(Gemm {
        dtype: ty,
        m: dim(cols)?,
        n: dim(rows)?,
        k: dim(inner)?,
        trans_a: transposed(stride(first + 1)),
        trans_b: transposed(stride(first)),
        batch: dim(batch)?,
        accumulate: accumulate && !bias,
        bias,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Recorded `Input Dims` from literals.
    pub(crate) fn dims(d: &[&[i64]]) -> Vec<Vec<i64>> {
        d.iter().map(|x| x.to_vec()).collect()
    }

    /// Recorded `Input type`s from literals.
    pub(crate) fn types(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn linear_is_a_gemm_with_the_weight_transposed() {
        // x[8, 1024] · W.t() where W is [4096, 1024] contiguous: the view [1024, 4096] has
        // strides [1, 1024].
        let m = of_op(
            "aten::mm",
            &dims(&[&[8, 1024], &[1024, 4096]]),
            &types(&["c10::Half", "c10::Half"]),
            Some(&dims(&[&[1024, 1], &[1, 1024]])),
        )
        .unwrap();
        assert_eq!((m.m, m.n, m.k, m.batch), (4096, 8, 1024, 1));
        assert!(m.trans_a && !m.trans_b && !m.accumulate);
        assert_eq!(operand_bytes(&m), 2 * (4096 * 1024 + 1024 * 8 + 4096 * 8));
    }

    #[test]
    fn addmm_and_bmm_take_their_matrix_inputs() {
        let m = of_op(
            "aten::addmm",
            &dims(&[&[768], &[4, 768], &[768, 3072], &[], &[]]),
            &types(&[
                "c10::BFloat16",
                "c10::BFloat16",
                "c10::BFloat16",
                "Scalar",
                "Scalar",
            ]),
            None,
        )
        .unwrap();
        assert_eq!((m.dtype, m.m, m.n, m.k), (GemmType::Bf16, 3072, 4, 768));
        assert!(m.accumulate && !m.trans_a);
        let b = of_op(
            "aten::bmm",
            &dims(&[&[12, 1, 64], &[12, 64, 128]]),
            &types(&["float", "float"]),
            None,
        )
        .unwrap();
        assert_eq!((b.batch, b.m, b.n, b.k), (12, 128, 1, 64));
    }

    #[test]
    fn a_linear_layers_bias_over_several_rows_is_added_in_the_epilogue() {
        let t = types(&["float", "float", "float", "Scalar", "Scalar"]);
        let addmm = |bias: &[i64], rows: i64| {
            of_op(
                "aten::addmm",
                &dims(&[bias, &[rows, 3072], &[3072, 1024], &[], &[]]),
                &t,
                None,
            )
            .unwrap()
        };
        let m = addmm(&[1024], 128);
        assert!(m.bias && !m.accumulate, "{m:?}");
        // One row: PyTorch copies the bias into the result and accumulates.
        let one = addmm(&[1024], 1);
        assert!(one.accumulate && !one.bias, "{one:?}");
        // An input of the result's shape is added as C.
        let full = addmm(&[128, 1024], 128);
        assert!(full.accumulate && !full.bias, "{full:?}");
        // A bias of another type (not PyTorch's epilogue) is added as C too.
        let mixed = of_op(
            "aten::addmm",
            &dims(&[&[1024], &[128, 3072], &[3072, 1024], &[], &[]]),
            &types(&["c10::Half", "float", "float", "Scalar", "Scalar"]),
            None,
        )
        .unwrap();
        assert!(mixed.accumulate && !mixed.bias);
    }

    #[test]
    fn what_is_not_a_gemm_is_refused() {
        let t = types(&["c10::Half", "c10::Half"]);
        assert!(of_op("aten::add", &dims(&[&[2, 2], &[2, 2]]), &t, None).is_none());
        assert!(of_op("aten::mm", &dims(&[&[2, 3], &[4, 5]]), &t, None).is_none());
        assert!(of_op("aten::mm", &dims(&[&[0, 3], &[3, 5]]), &t, None).is_none());
        let mixed = types(&["c10::Half", "float"]);
        assert!(of_op("aten::mm", &dims(&[&[2, 3], &[3, 5]]), &mixed, None).is_none());
        assert!(of_op("aten::mm", &dims(&[&[2, 3]]), &t, None).is_none());
        assert!(is_blas_kernel("nvjet_hsh_64x8_64x16_2x1_v_bz_coopA_NTN"));
        assert!(!is_blas_kernel(
            "void at::native::vectorized_elementwise_kernel<4>"
        ));
    }
}
