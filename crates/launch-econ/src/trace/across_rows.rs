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

/// What an operator's reads across the rows of its inputs move, as its recorded shapes say;
/// how much of it is beyond the inputs' bytes depends on the kernel that does the reads
/// ([`AcrossRows::excess`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AcrossRows {
    /// The elements of the inputs read across their rows, each times the part of a sector its
    /// stride spans (`min(stride × element, SECTOR_BYTES)`).
    pub moved: u64,
    /// The same elements times their own bytes.
    pub own: u64,
    /// The elements of the tensor the kernel walks (the first input).
    pub elements: u64,
    /// The length of that tensor's rows (its stride-1 dimension), elements.
    pub row: u64,
    /// How many elements of one sector of an input read across its rows the kernel's next
    /// rows use (`SECTOR_BYTES` over the element, where the input runs with stride 1 along the
    /// walked tensor's next dimension out; 1 otherwise), the least over such inputs.
    pub shared_by_rows: u64,
}

impl AcrossRows {
    /// The bytes these reads move beyond the inputs' own, for a kernel of `blocks` blocks
    /// (`None`: not known, each sector taken to serve one element). A block of an element-wise
    /// kernel walks a run of the tensor's elements (PyTorch's strided kernel 512), so one that
    /// covers several of its rows reads, from each sector of a transposed operand, the elements
    /// of those rows together: a 64-wide plane of f32 read across its rows by 512-element
    /// blocks uses all eight elements of each sector it touches, nothing beyond its bytes.
    pub fn excess(&self, blocks: Option<u64>) -> u64 {
        let rows_a_block = blocks
            .filter(|&b| b > 0)
            .map_or(1, |b| (self.elements / b) / self.row.max(1));
        let served = rows_a_block.clamp(1, self.shared_by_rows.max(1));
        (self.moved / served).saturating_sub(self.own)
    }
}

/// What an operator of these recorded `dims`, `types` and `strides` moves through the L2 by
/// reading some inputs across their rows: tensors whose stride, along the dimension the first
/// tensor input runs along (its stride-1 dimension), is more than one element, their dims
/// aligned from the right as broadcasting aligns them. Such a read moves, for each element,
/// the part of a sector that its stride spans, of which the element is its own bytes; a
/// broadcast's elements (stride 0) count once, as its bytes do (`inputs::elements`). Nothing
/// without strides, where the first tensor runs along no dimension with stride 1 (the order
/// the kernel walks in is not known), or where every input is read along its rows.
pub fn across_rows(
    dims: &[Vec<i64>],
    types: &[String],
    strides: Option<&[Vec<i64>]>,
) -> AcrossRows {
    let none = AcrossRows::default();
    let Some(strides) = strides else {
        return none;
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
        return none;
    };
    // The first tensor's dimension of least stride among those it walks (more than one
    // element, a stride other than 0): the kernel's innermost loop, where it has stride 1.
    let walked = |i: &usize| d0[*i] > 1 && s0[*i] != 0;
    let Some(inner) = (0..d0.len())
        .filter(walked)
        .min_by_key(|&i| s0[i].unsigned_abs())
        .filter(|&i| s0[i].unsigned_abs() == 1)
    else {
        return none;
    };
    // Its next dimension out, where its rows follow one another in memory.
    let row = d0[inner].unsigned_abs();
    let outer = (0..d0.len())
        .filter(|i| *i != inner && walked(i))
        .min_by_key(|&i| s0[i].unsigned_abs())
        .filter(|&i| s0[i].unsigned_abs() == row);
    let mut out = AcrossRows {
        elements: elements(d0, Some(s0)).unwrap_or(0),
        row,
        shared_by_rows: SECTOR_BYTES,
        ..none
    };
    for (d, s, size) in rest {
        let Some(j) = d.len().checked_sub(d0.len() - inner) else {
            continue;
        };
        let stride = s[j].unsigned_abs();
        if d[j] <= 1 || stride <= 1 {
            continue;
        }
        let Some(n) = elements(d, Some(s)) else {
            continue;
        };
        out.moved = out
            .moved
            .saturating_add(n.saturating_mul(stride.saturating_mul(*size).min(SECTOR_BYTES)));
        out.own = out.own.saturating_add(n.saturating_mul(*size));
        let next_rows_share = outer
            .and_then(|o| d.len().checked_sub(d0.len() - o))
            .is_some_and(|k| s[k].unsigned_abs() == 1);
        let shared = if next_rows_share {
            (SECTOR_BYTES / size).max(1)
        } else {
            1
        };
        out.shared_by_rows = out.shared_by_rows.min(shared);
    }
    if out.moved == 0 {
        return none;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(n: usize, ty: &str) -> Vec<String> {
        vec![ty.to_string(); n]
    }

    /// The bytes [`across_rows`] moves beyond the inputs' own where the kernel is not known
    /// (each sector serving one element).
    fn across_row_excess(dims: &[Vec<i64>], types: &[String], strides: Option<&[Vec<i64>]>) -> u64 {
        across_rows(dims, types, strides).excess(None)
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
    fn a_block_covering_several_rows_reads_their_sectors_together() {
        // `y + y.transpose(1, 2)` over 64 x 64 x 64 f32, in 512 blocks of 512 elements: a
        // block covers eight 64-wide rows, so of each sector of the transposed plane (eight
        // f32) it reads all eight elements: nothing beyond the bytes.
        let dims = [vec![64, 64, 64], vec![64, 64, 64]];
        let strides = [vec![4096, 64, 1], vec![4096, 1, 64]];
        let reads = across_rows(&dims, &types(2, "float"), Some(&strides));
        assert_eq!(reads.excess(None), 64 * 64 * 64 * 28);
        assert_eq!(reads.excess(Some(512)), 0);
        // Over 256 x 256 fp16, 512-element blocks cover two rows: two of a sector's sixteen
        // elements serve them, 16 bytes an element moved, 14 beyond it.
        let dims = [vec![256, 256], vec![256, 256]];
        let strides = [vec![256, 1], vec![1, 256]];
        let reads = across_rows(&dims, &types(2, "c10::Half"), Some(&strides));
        assert_eq!(reads.excess(Some(128)), 256 * 256 * 14);
        // Over 512 x 512, a block covers one row: a sector an element.
        let dims = [vec![512, 512], vec![512, 512]];
        let strides = [vec![512, 1], vec![1, 512]];
        let reads = across_rows(&dims, &types(2, "c10::Half"), Some(&strides));
        assert_eq!(reads.excess(Some(512)), 512 * 512 * 30);
    }

    #[test]
    fn rows_share_no_sector_where_the_operand_does_not_run_along_them() {
        // `x + w` where `w` is strided along both dimensions (every other column of a
        // transpose): the next row's elements lie in other sectors.
        let dims = [vec![64, 64], vec![64, 64]];
        let strides = [vec![64, 1], vec![2, 128]];
        let reads = across_rows(&dims, &types(2, "float"), Some(&strides));
        assert_eq!(reads.excess(Some(8)), reads.excess(None));
        assert_eq!(reads.excess(None), 64 * 64 * 28);
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
