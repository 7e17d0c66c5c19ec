//! What a kernel's name says of what it does: the trace records names, and PyTorch's, Triton's
//! and the attention libraries' kernels name their operator.

/// Whether a kernel's name says it is element-wise: PyTorch's `elementwise_kernel` family
/// (`vectorized_…`, `unrolled_…`) and Triton's pointwise kernels (`triton_poi_…`). Such a
/// kernel's time beyond its launch is its loads and stores (what a chase stands for, and what
/// the grid table's element-wise rows were measured on); a reduction's or normalisation's is
/// not only that.
pub fn is_element_wise(name: &str) -> bool {
    name.contains("elementwise_kernel") || name.starts_with("triton_poi_")
}

/// Whether a kernel's name says it is a normalisation (layer, RMS, batch, group or instance
/// norm; PyTorch's and Triton's kernels name the operator): like an element-wise kernel it
/// reads its input once and writes a result as large, so its recorded inputs say what it asks
/// of device memory.
pub fn is_normalisation(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "layer_norm",
        "layernorm",
        "rms_norm",
        "rmsnorm",
        "batch_norm",
        "batchnorm",
        "group_norm",
        "groupnorm",
        "instance_norm",
    ]
    .iter()
    .any(|k| n.contains(k))
}

/// Whether a kernel's name says it reduces across the threads of its blocks: the
/// normalisations ([`is_normalisation`]), PyTorch's `reduce_kernel` family (sums, means,
/// norms, arg-max), softmax and log-softmax, scans and moments, cuDNN's reductions. Each round
/// of such a kernel is loads, then shuffles and barriers that wait on no memory: what a
/// barrier chase stands for. Gathers, copies, sorts and attention are not.
pub fn is_reduction(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    is_normalisation(name)
        || ["reduce_kernel", "reduction", "softmax", "scan", "moments"]
            .iter()
            .any(|k| n.contains(k))
}

/// Whether a kernel's name says it is a fused attention (cuDNN's SDPA, FlashAttention,
/// PyTorch's memory-efficient `fmha` / `attention_kernel` kernels): at decode its time is reading
/// the keys and values its operator was given, so those recorded inputs say what it asks of
/// device memory (at prefill its math takes longer than they need, and the bytes over its
/// duration come out low, as they should).
pub fn is_attention(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "attention",
        "sdpa",
        "fmha",
        "flash_fwd",
        "flashattn",
        "flash_attn",
    ]
    .iter()
    .any(|k| n.contains(k))
}
