//! The bytes of an operator's recorded inputs.

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
fn a_comparison_writes_a_byte_an_element() {
    // `y > 0` over 8 Mi fp16 elements: 16 MiB read, an 8 MiB bool mask written.
    let n = 8 << 20;
    let d = dims(&[&[n], &[]]);
    let t = types(&["c10::Half", "Scalar"]);
    let s = operator_sizes("aten::gt", &d, &t, None, None).unwrap();
    assert_eq!(
        (s.total, s.largest, s.in_place),
        (2 * n as u64, n as u64, false)
    );
    // Of two f32 tensors, one broadcast: the result is as many bytes as the larger's elements.
    let d = dims(&[&[8, 4096], &[1, 4096]]);
    let t = types(&["float", "float"]);
    let s = operator_sizes("aten::eq", &d, &t, None, None).unwrap();
    assert_eq!((s.total, s.largest), (4 * 9 * 4096, 8 * 4096));
    // The in-place form writes its own type; other operators keep their largest input.
    let d = dims(&[&[n], &[]]);
    let t = types(&["c10::Half", "Scalar"]);
    let s = operator_sizes("aten::gt_", &d, &t, None, None).unwrap();
    assert_eq!((s.largest, s.in_place), (2 * n as u64, true));
    let s = operator_sizes("aten::mul", &d, &t, None, None).unwrap();
    assert_eq!(s.largest, 2 * n as u64);
}

#[test]
fn an_out_tensor_is_written_not_read() {
    let n = 262_144;
    // aten::add(a, b, alpha, out): two inputs read, the out tensor written.
    let d = dims(&[&[n], &[n], &[], &[n]]);
    let t = types(&["float", "float", "Scalar", "float"]);
    let s = operator_sizes("aten::add", &d, &t, None, None).unwrap();
    assert_eq!((s.total, s.largest), (2 * 4 * n as u64, 4 * n as u64));
    // The functional form reads both and writes a result as large as the larger.
    let f = operator_sizes("aten::add", &d[..3], &t[..3], None, None).unwrap();
    assert_eq!((f.total, f.largest), (2 * 4 * n as u64, 4 * n as u64));
    // A broadcast add into a full out tensor writes the out tensor's bytes.
    let d = dims(&[&[8, 1024], &[1024], &[], &[8, 1024]]);
    let s = operator_sizes("aten::add", &d, &t, None, None).unwrap();
    assert_eq!((s.total, s.largest), (4 * 9 * 1024, 4 * 8 * 1024));
    // mul's functional form has two tensors: a third is its out tensor.
    let d = dims(&[&[n], &[n], &[n]]);
    let t3 = types(&["float", "float", "float"]);
    assert_eq!(
        operator_sizes("aten::mul", &d, &t3, None, None).map(|s| s.total),
        Some(2 * 4 * n as u64)
    );
    // clamp(self, min, max, out): the fourth tensor is its out tensor.
    let d4 = dims(&[&[n], &[], &[], &[n]]);
    let t4 = types(&["float", "Scalar", "Scalar", "float"]);
    assert_eq!(
        operator_sizes("aten::clamp", &d4, &t4, None, None).map(|s| s.total),
        Some(4 * n as u64)
    );
    // An in-place operator's result is its first input: no tensor of its own.
    let d2 = dims(&[&[n], &[n], &[]]);
    let t2 = types(&["float", "float", "Scalar"]);
    let add_ = operator_sizes("aten::add_", &d2, &t2, None, None).unwrap();
    assert!(add_.in_place && add_.total == 2 * 4 * n as u64);
    assert!(
        !operator_sizes("aten::add", &d2, &t2, None, None)
            .unwrap()
            .in_place
    );
    assert!(!is_in_place("aten::__iadd__") && is_in_place("aten::copy_"));
    // An operator whose forms are not known here keeps every tensor as read.
    assert_eq!(
        operator_sizes("aten::addcmul", &d, &t3, None, None).map(|s| s.total),
        Some(3 * 4 * n as u64)
    );
    // A trailing scalar is no out tensor.
    let d = dims(&[&[n], &[n], &[]]);
    let t = types(&["float", "float", "Scalar"]);
    assert_eq!(
        operator_sizes("aten::mul", &d, &t, None, None).map(|s| s.total),
        Some(2 * 4 * n as u64)
    );
}

#[test]
fn gathers_read_the_rows_their_index_picks() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    // aten::embedding of one token from an 8192 x 512 fp16 table: one 1 KiB row and the
    // 8-byte index, as recorded by PyTorch's profiler (with its trailing scalars).
    let d = dims(&[&[8192, 512], &[1, 1], &[], &[], &[]]);
    let t = types(&["c10::Half", "long int", "Scalar", "Scalar", "Scalar"]);
    let c = s(&["", "", "-1", "False", "False"]);
    let e = operator_sizes("aten::embedding", &d, &t, None, Some(&c)).unwrap();
    assert_eq!((e.total, e.largest, e.gathered), (1024 + 8, 1024, 1024));
    // The same inputs to an operator that is not a gather count the whole table.
    let whole = operator_sizes("aten::index", &d, &t, None, Some(&c)).unwrap();
    assert_eq!((whole.total, whole.gathered), (8192 * 1024 + 8, 0));
    assert_eq!(input_sizes(&d, &t, None), Some(whole));
    // index_select reads rows only where it selects along dim 0.
    let d = dims(&[&[8192, 512], &[], &[16]]);
    let t = types(&["c10::Half", "Scalar", "long int"]);
    let rows = operator_sizes("aten::index_select", &d, &t, None, Some(&s(&["", "0", ""])));
    assert_eq!(rows.map(|r| r.gathered), Some(16 * 1024));
    let cols = operator_sizes("aten::index_select", &d, &t, None, Some(&s(&["", "1", ""])));
    assert_eq!(cols.map(|r| r.total), Some(8192 * 1024 + 16 * 8));
    let unknown = operator_sizes("aten::index_select", &d, &t, None, None);
    assert_eq!(unknown.map(|r| r.gathered), Some(0));
    // An embedding bag over 10240 indices of a 200000 x 128 f32 table, in 512 bags.
    let d = dims(&[&[200000, 128], &[10240], &[512], &[]]);
    let t = types(&["float", "long int", "long int", "Scalar"]);
    let bag = operator_sizes("aten::_embedding_bag", &d, &t, None, None).unwrap();
    assert_eq!(bag.gathered, 10240 * 512);
    assert_eq!(bag.total, 10240 * 512 + 8 * (10240 + 512));
    // aten::gather of 4096 rows of a 32000 x 2048 bf16 table by an index expanded along
    // the rows (stride 0: it spans 4096 longs), into a 4096 x 2048 result (recorded as
    // its `out`): an element per index element, the rows' 16 MiB, not the table's 125.
    let d = dims(&[&[32000, 2048], &[], &[4096, 2048], &[], &[4096, 2048]]);
    let t = types(&[
        "c10::BFloat16",
        "Scalar",
        "long int",
        "Scalar",
        "c10::BFloat16",
    ]);
    let st = dims(&[&[2048, 1], &[], &[1, 0], &[], &[2048, 1]]);
    let c = s(&["", "0", "", "False", ""]);
    let g = operator_sizes("aten::gather", &d, &t, Some(&st), Some(&c)).unwrap();
    let rows = 4096 * 2048 * 2;
    assert_eq!(g.gathered, rows);
    assert_eq!(g.total, rows + 4096 * 8 + rows);
    // A gather along the last dim picks an element per index element too.
    let d = dims(&[&[8, 1000], &[], &[8, 5]]);
    let t = types(&["float", "Scalar", "long int"]);
    let top = operator_sizes("aten::gather", &d, &t, None, Some(&s(&["", "1", ""])));
    assert_eq!(
        top.map(|g| (g.gathered, g.total)),
        Some((40 * 4, 40 * 4 + 40 * 8))
    );
    // More indices than rows never read more than the table.
    let d = dims(&[&[4, 8], &[100]]);
    let t = types(&["float", "long int"]);
    let small = operator_sizes("aten::embedding", &d, &t, None, None).unwrap();
    assert_eq!(small.gathered, 4 * 8 * 4);
}

#[test]
fn an_indexed_copy_touches_the_slices_it_writes() {
    // aten::index_copy_ of 64 new positions into a 16 x 32 x 4096 x 128 bf16 KV cache
    // along dim 2, as PyTorch's profiler recorded it: the cache counts as the 8 MiB
    // written, not its 512 MiB.
    let d = dims(&[&[16, 32, 4096, 128], &[], &[64], &[16, 32, 64, 128]]);
    let t = types(&["c10::BFloat16", "Scalar", "long int", "c10::BFloat16"]);
    let c: Vec<String> = ["", "2", "", ""].iter().map(|x| x.to_string()).collect();
    let w = operator_sizes("aten::index_copy_", &d, &t, None, Some(&c)).unwrap();
    let written = 16 * 32 * 64 * 128 * 2;
    assert_eq!(w.gathered, written);
    assert_eq!((w.total, w.largest), (2 * written + 64 * 8, written));
    // The out-of-place index_copy copies the whole table first: all of it counts.
    let whole = operator_sizes("aten::index_copy", &d, &t, None, Some(&c)).unwrap();
    assert_eq!(whole.total, 16 * 32 * 4096 * 128 * 2 + written + 64 * 8);
    // Without a recorded source the table counts whole.
    let d = dims(&[&[4, 8], &[], &[2]]);
    let t = types(&["float", "Scalar", "long int"]);
    let bare = operator_sizes("aten::index_copy_", &d, &t, None, None).unwrap();
    assert_eq!((bare.total, bare.gathered), (4 * 8 * 4 + 2 * 8, 0));
}

#[test]
fn lists_of_scalars_are_arguments_not_tensors() {
    // A float layer norm over 8192 x 4096 (the profiler's record of `aten::layer_norm`:
    // the normalized shape is a `ScalarList`, the eps a `Scalar`).
    let d = dims(&[&[8192, 4096], &[], &[4096], &[4096], &[], &[]]);
    let t = types(&["float", "ScalarList", "float", "float", "Scalar", "Scalar"]);
    let norm = input_sizes(&d, &t, None).unwrap();
    assert_eq!(norm.total, (8192 * 4096 + 2 * 4096) * 4);
    assert_eq!(norm.largest, 8192 * 4096 * 4);
    // A mean over dims [-1]: its input alone.
    let d = dims(&[&[64, 1024], &[], &[], &[]]);
    let t = types(&["c10::Half", "ScalarList", "Scalar", ""]);
    assert_eq!(input_bytes(&d, &t, None), Some(64 * 1024 * 2));
}

#[test]
fn a_list_of_tensors_counts_their_elements() {
    let v = serde_json::json!([[[8, 64], [8, 32]], []]);
    let t = types(&["TensorList", "Scalar"]);
    let s = list_sizes(&v, &t).unwrap();
    assert_eq!((s.total, s.largest, s.elements), (768, 512, true));
    // Not a list, a list with a dim that is not a whole number, or nothing in it: none.
    assert_eq!(list_sizes(&v, &types(&["c10::Half", "Scalar"])), None);
    let bad = serde_json::json!([[[8, "n"]], []]);
    assert_eq!(list_sizes(&bad, &t), None);
    assert_eq!(list_sizes(&serde_json::json!([[], []]), &t), None);
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
