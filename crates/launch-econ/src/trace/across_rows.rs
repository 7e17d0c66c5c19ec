//! What an operator's reads across the rows of its inputs move beyond their bytes, from the
//! strides the profiler records.
//!
//! An element-wise kernel walks its output in memory order, which PyTorch's `TensorIterator`
//! takes from its first operand. An input laid out the other way (`y + y.T`, `x.T.contiguous()`)
//! is read a stride apart from one thread to the next: every element of it in a 32-byte L2
//! sector of its own ([`SECTOR_BYTES`]), where a read along the rows takes one sector for
//! sixteen fp16 elements. Its bytes say far less than what such a read moves while it runs.

use super::inputs::{element_bytes, elements};

/// The unit the L2 moves data in (CUDA C++ Best Practices Guide, "Coalesced Access to Global
/// Memory": a warp's loads are served in 32-byte segments).
pub const SECTOR_BYTES: u64 = 32;

/// The bytes an operator of these recorded `dims`, `types` and `strides` moves through the L2
/// beyond its inputs' own bytes by reading some of them across their rows: tensors whose
/// stride, along the dimension the first tensor input runs along (its stride-1 dimension), is
/// more than one element, their dims aligned from the right as broadcasting aligns them. Such
/// a read moves, for each element, the part of a sector that its stride spans
/// (`min(stride × element, SECTOR_BYTES)`), of which the element is its own bytes; a
/// broadcast's elements (stride 0) count once, as its bytes do (`inputs::elements`). 0 without
/// strides, where the first tensor runs along no dimension with stride 1 (the order the
/// kernel walks in is not known), or where every input is read along its rows.
pub fn across_row_excess(dims: &[Vec<i64>], types: &[String], strides: Option<&[Vec<i64>]>) -> u64 {
    let Some(strides) = strides else {
        return 0;
    };
    let tensors: Vec<(&Vec<i64>, &Vec<i64>, u64)> = dims
        .iter()
        .zip(strides)
        .zip(types)
        .filter_map(|((d, s), ty)| {
            let size = element_bytes(ty)?;
            (!d.is_empty() && d.len() == s.len() && d.iter().all(|&n| n >= 0))
                .then_some((d, s, size))
        })
        .collect();
    let Some(((d0, s0, _), rest)) = tensors.split_first() else {
        return 0;
    };
    // The first tensor's dimension of least stride among those it walks (more than one
    // element, a stride other than 0): the kernel's innermost loop, where it has stride 1.
    let Some(inner) = (0..d0.len())
        .filter(|&i| d0[i] > 1 && s0[i] != 0)
        .min_by_key(|&i| s0[i].unsigned_abs())
        .filter(|&i| s0[i].unsigned_abs() == 1)
    else {
        return 0;
    };
    let from_right = d0.len() - inner;
    rest.iter()
        .filter_map(|(d, s, size)| {
            let j = d.len().checked_sub(from_right)?;
            let stride = s[j].unsigned_abs();
            if d[j] <= 1 || stride <= 1 {
                return None;
            }
            let moved = stride.saturating_mul(*size).min(SECTOR_BYTES);
            // The elements its bytes count (a broadcast's once), each moving `moved`.
            Some(elements(d, Some(s))?.saturating_mul(moved.saturating_sub(*size)))
        })
        .fold(0u64, u64::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(n: usize, ty: &str) -> Vec<String> {
        vec![ty.to_string(); n]
    }

    #[test]
    fn a_transposed_operand_moves_a_sector_an_element() {
        // `y + y.T` over 512 x 512 fp16: the transpose's 256 Ki elements move 32 bytes each,
        // 30 of them beyond the element.
        let dims = [vec![512, 512], vec![512, 512], vec![]];
        let strides = [vec![512, 1], vec![1, 512], vec![]];
        let mut ty = types(2, "c10::Half");
        ty.push("Scalar".into());
        assert_eq!(
            across_row_excess(&dims, &ty, Some(&strides)),
            512 * 512 * 30
        );
        // `y.T + y`: the kernel walks the transpose's order, and reads `y` across.
        let swapped = [vec![1, 512], vec![512, 1], vec![]];
        assert_eq!(
            across_row_excess(&dims, &ty, Some(&swapped)),
            512 * 512 * 30
        );
    }

    #[test]
    fn reads_along_the_rows_and_broadcasts_are_not() {
        let ty = types(2, "float");
        // Two contiguous matrices.
        let dims = [vec![256, 512], vec![256, 512]];
        assert_eq!(
            across_row_excess(&dims, &ty, Some(&[vec![512, 1], vec![512, 1]])),
            0
        );
        // A row broadcast over a matrix (stride 0 down the columns), and a bias of one row.
        assert_eq!(
            across_row_excess(&dims, &ty, Some(&[vec![512, 1], vec![0, 1]])),
            0
        );
        let bias = [vec![256, 512], vec![512]];
        assert_eq!(
            across_row_excess(&bias, &ty, Some(&[vec![512, 1], vec![1]])),
            0
        );
        // A column broadcast (one value a row): read once a row, not across.
        let col = [vec![256, 512], vec![256, 1]];
        assert_eq!(
            across_row_excess(&col, &ty, Some(&[vec![512, 1], vec![1, 1]])),
            0
        );
    }

    #[test]
    fn without_strides_or_a_stride_one_dimension_nothing_is_known() {
        let dims = [vec![512, 512], vec![512, 512]];
        let ty = types(2, "c10::Half");
        assert_eq!(across_row_excess(&dims, &ty, None), 0);
        // The first tensor is itself a strided view (every other column): order unknown.
        let strides = [vec![1024, 2], vec![1, 512]];
        assert_eq!(across_row_excess(&dims, &ty, Some(&strides)), 0);
    }

    #[test]
    fn a_copy_of_a_transpose_reads_its_source_across_the_rows() {
        // `x.T.contiguous()`: `copy_(dst, src)`, the destination walked in its order.
        let dims = [vec![1024, 4096], vec![1024, 4096], vec![]];
        let strides = [vec![4096, 1], vec![1, 1024], vec![]];
        let mut ty = types(2, "c10::BFloat16");
        ty.push("Scalar".into());
        assert_eq!(
            across_row_excess(&dims, &ty, Some(&strides)),
            1024 * 4096 * 30
        );
    }

    #[test]
    fn a_short_stride_moves_the_part_of_a_sector_it_spans() {
        // Every other f32 of a wider matrix (`x[:, ::2]` beside a contiguous one): 8 bytes an
        // element, 4 beyond it.
        let dims = [vec![64, 256], vec![64, 256]];
        let strides = [vec![256, 1], vec![512, 2]];
        assert_eq!(
            across_row_excess(&dims, &types(2, "float"), Some(&strides)),
            64 * 256 * 4
        );
    }

    #[test]
    fn a_transpose_broadcast_over_a_batch_counts_its_elements_once() {
        // `x + w.T` with `x` of 4 x 512 x 512 fp16 and `w.T` broadcast along the batch.
        let dims = [vec![4, 512, 512], vec![4, 512, 512]];
        let strides = [vec![512 * 512, 512, 1], vec![0, 1, 512]];
        let ty = types(2, "c10::Half");
        assert_eq!(
            across_row_excess(&dims, &ty, Some(&strides)),
            512 * 512 * 30
        );
    }
}
