//! What the operator behind a recorded kernel was given to read, where the trace recorded its
//! inputs (PyTorch: `torch.profiler.profile(record_shapes=True)`): the bytes of its input
//! tensors.
//!
//! A kernel's duration says how long it ran, not what it asked of device memory meanwhile;
//! beside other streams' kernels that is what decides how much they slow each other. The
//! profiler records an operator's inputs (dims, element types, strides), not its outputs, so
//! the bytes here are what its inputs span: a lower bound on a kernel that reads them all and
//! writes something. An operator that gathers rows of a table by an index tensor (an
//! embedding lookup, an embedding bag, `index_select` along the rows) reads the rows its index
//! picks, not the table: its table counts as those rows (a language model's 8–400 MiB token
//! embedding, read a few rows a decode step, would otherwise count as read whole). `gather`
//! reads one element of its input per element of its index (PyTorch 2.11 runs an embedding
//! lookup of thousands of tokens as a `gather` by an index expanded along the rows: a stride-0
//! view, which spans a row's worth of indices but picks the whole output's worth of elements).
//! An in-place `index_copy_` (a KV-cache update) writes its source into the slices of its
//! destination that its index picks: the destination counts as the source's size.
//! Other gathers (`index`) count their whole inputs, an upper bound, which a replay tells
//! apart by what the device could have read in the recorded time (see `crate::stand_in`).

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
pub(super) fn elements(dims: &[i64], strides: Option<&Vec<i64>>) -> Option<u64> {
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
    /// inputs' broadcast shape), which the profiler does not record; for a comparison, which
    /// writes a `bool` an element, the bytes of that result instead.
    pub largest: u64,
    /// Of the total, the rows a gather read from its table, or the slices an indexed copy
    /// wrote into it (see [`operator_sizes`]); 0 for other operators.
    pub gathered: u64,
    /// Whether `total` and `largest` count elements, not bytes: the tensors of a list (`cat`'s
    /// inputs), whose element type the profiler does not record ([`list_sizes`]); the kernel
    /// that copies them may say it.
    pub elements: bool,
    /// The operator writes its result into one of its inputs (`aten::add_`, `aten::copy_`):
    /// the result is among `total`, not a tensor of its own (`is_in_place`).
    pub in_place: bool,
    /// What reading some inputs across their rows moves ([`super::across_rows::across_rows`]);
    /// nothing where none is or strides are not recorded.
    pub across_rows: super::across_rows::AcrossRows,
}

/// The elements of an operator's tensor-list arguments (`Input type` `TensorList`, whose
/// `Input Dims` entry lists each tensor's dims), total and largest tensor; `None` without such
/// an argument or where a dim is not a whole number. The profiler records no element type for
/// a list, so these are elements, not bytes.
pub fn list_sizes(dims: &serde_json::Value, types: &[String]) -> Option<InputSizes> {
    let serde_json::Value::Array(args) = dims else {
        return None;
    };
    let mut tensors = Vec::new();
    for (arg, ty) in args.iter().zip(types) {
        if ty != "TensorList" {
            continue;
        }
        for t in arg.as_array()? {
            let d: Vec<i64> = t
                .as_array()?
                .iter()
                .map(|n| n.as_i64())
                .collect::<Option<_>>()?;
            tensors.push(elements(&d, None)?);
        }
    }
    let total = tensors.iter().try_fold(0u64, |t, &n| t.checked_add(n))?;
    (total > 0).then(|| InputSizes {
        total,
        largest: tensors.iter().copied().max().unwrap_or(0),
        gathered: 0,
        elements: true,
        in_place: false,
        across_rows: Default::default(),
    })
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
    sizes_of(&argument_bytes(dims, types, strides)?, 0)
}

/// What the operator `name` read of its inputs: [`input_sizes`], but for an operator that
/// gathers rows of a table by an index tensor, the rows its index picks in place of the
/// table (never more than the table). `concrete`: the operator's recorded `Concrete Inputs`,
/// which say along which dimension `index_select` gathers; without them it counts the whole
/// table.
pub fn operator_sizes(
    name: &str,
    dims: &[Vec<i64>],
    types: &[String],
    strides: Option<&[Vec<i64>]>,
    concrete: Option<&[String]>,
) -> Option<InputSizes> {
    let mut bytes = argument_bytes(dims, types, strides)?;
    if let Some(out) = out_argument(name, &bytes) {
        // The result tensor it was given to write: written, not read, and as large as what
        // it writes (a broadcast's inputs may be smaller).
        let written = bytes[out].take().unwrap_or(0);
        let sizes = sizes_of(&bytes, 0)?;
        return Some(InputSizes {
            largest: sizes.largest.max(written),
            ..sizes
        });
    }
    let mut gathered = 0;
    if let Some((table, index, picks)) = gathered_arguments(name, concrete) {
        let rows = gathered_bytes(dims, types, table, index, picks);
        if let (Some(rows), Some(Some(whole))) = (rows, bytes.get(table).copied()) {
            gathered = rows.min(whole);
            bytes[table] = Some(gathered);
        }
    }
    let sizes = sizes_of(&bytes, gathered)?;
    if is_comparison(name) {
        // A comparison writes one byte (a `bool`) an element of its inputs' shape, not a
        // result as large as its largest input: an fp16 `y > 0` over 8 Mi elements writes
        // 8 MiB, not 16.
        let most = dims
            .iter()
            .zip(&bytes)
            .filter(|(_, b)| b.is_some())
            .filter_map(|(d, _)| elements(d, None))
            .max()?;
        return Some(InputSizes {
            largest: most,
            ..sizes
        });
    }
    Some(InputSizes {
        in_place: is_in_place(name),
        ..sizes
    })
}

/// Whether the operator `name` compares or tests its inputs into a new `bool` tensor
/// (`aten::gt`, `aten::eq`, `aten::logical_and`, `aten::isnan`, ...). Their in-place forms
/// (`aten::gt_`) write their own element type and are not among them.
fn is_comparison(name: &str) -> bool {
    matches!(
        name,
        "aten::gt"
            | "aten::ge"
            | "aten::lt"
            | "aten::le"
            | "aten::eq"
            | "aten::ne"
            | "aten::greater"
            | "aten::greater_equal"
            | "aten::less"
            | "aten::less_equal"
            | "aten::not_equal"
            | "aten::logical_and"
            | "aten::logical_or"
            | "aten::logical_xor"
            | "aten::logical_not"
            | "aten::isnan"
            | "aten::isinf"
            | "aten::isfinite"
            | "aten::isposinf"
            | "aten::isneginf"
            | "aten::signbit"
    )
}

/// Whether the operator `name` writes into its first argument, as PyTorch names its in-place
/// operators (`aten::add_`, `aten::mul_`, `aten::copy_`; not the dunder `aten::__iadd__`).
fn is_in_place(name: &str) -> bool {
    let op = name.rsplit("::").next().unwrap_or(name);
    op.ends_with('_') && !op.ends_with("__")
}

/// Each argument's bytes, `None` for a scalar; `None` where a tensor argument cannot be sized
/// (a list of tensors, an element type not known here, a negative dim, past 64 bits).
fn argument_bytes(
    dims: &[Vec<i64>],
    types: &[String],
    strides: Option<&[Vec<i64>]>,
) -> Option<Vec<Option<u64>>> {
    dims.iter()
        .enumerate()
        .map(|(i, d)| {
            let ty = types.get(i).map_or("", String::as_str);
            match element_bytes(ty) {
                Some(size) => Some(Some(
                    elements(d, strides.and_then(|s| s.get(i)))?.checked_mul(size)?,
                )),
                // A scalar argument, or a list of them (a layer norm's normalized shape, a
                // reduction's dims): a `TensorList` (`cat`'s inputs) cannot be sized.
                None if d.is_empty() && ty != "TensorList" => Some(None),
                None => None,
            }
        })
        .collect()
}

/// The total and largest of the tensor arguments' bytes, `gathered` of them rows a gather
/// read; `None` without a tensor or bytes.
fn sizes_of(bytes: &[Option<u64>], gathered: u64) -> Option<InputSizes> {
    let tensors: Vec<u64> = bytes.iter().flatten().copied().collect();
    let total = tensors.iter().try_fold(0u64, |t, &b| t.checked_add(b))?;
    let largest = tensors.iter().copied().max()?;
    (total > 0).then_some(InputSizes {
        total,
        largest,
        gathered,
        elements: false,
        in_place: false,
        across_rows: Default::default(),
    })
}

/// The position of the `out=` tensor among an element-wise operator's recorded arguments
/// (`torch.add(a, b, out=c)`), where the operator has a single functional form whose
/// arguments are one fewer and the extra, last one is a tensor. The profiler records an
/// operator's arguments, not which overload ran: `aten::add` of (self, other, alpha, out) is
/// `add.out`, and the last tensor is its result, which it writes and does not read (an H100
/// probe's lanes of such adds were priced at 4/3 of their load). Only the arithmetic
/// operators whose forms are known here; others keep every tensor as read (an upper bound).
fn out_argument(name: &str, bytes: &[Option<u64>]) -> Option<usize> {
    let functional = match name {
        // (self, other, alpha); (self, min, max)
        "aten::add" | "aten::sub" | "aten::clamp" => 3,
        // (self, other); (self, min)
        "aten::mul" | "aten::div" | "aten::maximum" | "aten::minimum" | "aten::clamp_min"
        | "aten::clamp_max" => 2,
        // (self)
        "aten::neg" | "aten::exp" | "aten::sqrt" | "aten::rsqrt" | "aten::reciprocal"
        | "aten::tanh" | "aten::sigmoid" | "aten::abs" => 1,
        _ => return None,
    };
    (bytes.len() == functional + 1 && bytes[functional].is_some()).then_some(functional)
}

/// What each element of a gather's index picks from its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Picks {
    /// A whole row (the table's elements past its first dimension).
    Row,
    /// One element.
    Element,
    /// As many elements of the table as the argument at this position holds: an indexed
    /// write of that tensor into slices of the table touches the slices it writes.
    Like(usize),
}

/// The (table, index) arguments of an operator that gathers from its table by an index
/// tensor, and what an index element picks: PyTorch's embedding lookups and bags and
/// `index_select` where its recorded `dim` is 0 pick rows; `gather` (along any `dim`) picks an
/// element. `index_copy_(self, dim, index, source)` writes `source` into the slices of `self`
/// its index picks (a KV-cache update: a few positions of a cache of thousands): it touches as
/// much of `self` as `source` holds.
fn gathered_arguments(name: &str, concrete: Option<&[String]>) -> Option<(usize, usize, Picks)> {
    match name {
        "aten::embedding"
        | "aten::embedding_bag"
        | "aten::_embedding_bag"
        | "aten::_embedding_bag_forward_only" => Some((0, 1, Picks::Row)),
        "aten::index_select" => {
            let dim = concrete?.get(1)?.trim().parse::<i64>().ok()?;
            (dim == 0).then_some((0, 2, Picks::Row))
        }
        "aten::gather" => Some((0, 2, Picks::Element)),
        "aten::index_copy_" => Some((0, 2, Picks::Like(3))),
        _ => None,
    }
}

/// Bytes of `dims[table]` that `dims[index]` picks: the index's elements (its shape's, not the
/// memory it spans: an expanded index picks once per element) times what each picks (for
/// [`Picks::Like`], the other argument's elements); `None` where either is not sized.
fn gathered_bytes(
    dims: &[Vec<i64>],
    types: &[String],
    table: usize,
    index: usize,
    picks: Picks,
) -> Option<u64> {
    let t = dims.get(table)?;
    let (&rows, row) = t.split_first()?;
    if rows <= 0 {
        return None;
    }
    let size = element_bytes(types.get(table)?)?;
    let picked = match picks {
        Picks::Row => elements(row, None)?,
        Picks::Element => 1,
        Picks::Like(source) => return elements(dims.get(source)?, None)?.checked_mul(size),
    };
    elements(dims.get(index)?, None)?.checked_mul(picked.checked_mul(size)?)
}

pub mod repeats;

#[cfg(test)]
mod tests;
