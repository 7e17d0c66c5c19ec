use super::*;

#[test]
fn normalisations_are_told_by_name_and_random_normals_are_not() {
    for n in [
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, float, false>",
        "triton_red_fused_native_layer_norm_0",
        "rms_norm_kernel<c10::BFloat16>",
        "cudnn::bn_fw_inf_1C11_kernel_NCHW / batch_norm",
        "RMSNormKernel",
    ] {
        assert!(is_normalisation(n), "{n}");
    }
    for n in [
        "normal_kernel<float>",
        "nvjet_sm90_hsh_64x8",
        "softmax_warp_forward",
    ] {
        assert!(!is_normalisation(n), "{n}");
    }
}

#[test]
fn reductions_are_told_by_name_and_gathers_sorts_and_attention_are_not() {
    for n in [
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float>>>",
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float>",
        "void (anonymous namespace)::softmax_warp_forward<c10::Half, c10::Half, float, 9>",
        "void at::native::tensor_kernel_scan_innermost_dim<float, std::plus<float> >",
        "void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<c10::Half>",
        "void cudnn::fusion::lean_reduction_kernel<false, false, false>",
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, float, false>",
    ] {
        assert!(is_reduction(n), "{n}");
    }
    for n in [
        "void at::native::(anonymous namespace)::indexSelectSmallIndex<c10::BFloat16, long>",
        "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2>",
        "void at::native::(anonymous namespace)::EmbeddingBag_updateOutputKernel_sum_mean<float>",
        "void at::native::radixSortKVInPlace<2, -1, 32, 4, float, long, unsigned int>",
        "fmha_cutlassF_bf16_aligned_64x128_rf_sm80",
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
    ] {
        assert!(!is_reduction(n), "{n}");
    }
}

#[test]
fn fused_attention_is_told_by_name() {
    for n in [
        "cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_35",
        "void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64>>",
        "fmha_cutlassF_bf16_aligned_64x128_rf_sm80",
        "void attention_kernel_batched_impl<AttentionKernel<cutlass::half_t>>",
    ] {
        assert!(is_attention(n), "{n}");
    }
    for n in [
        "softmax_warp_forward",
        "nvjet_sm90_tst_64x8",
        "vectorized_layer_norm_kernel",
    ] {
        assert!(!is_attention(n), "{n}");
    }
}

#[test]
fn copy_directions_from_both_profilers() {
    use CopyDirection::*;
    for (name, want) in [
        ("HtoD", HostToDevice),
        ("DtoH", DeviceToHost),
        ("DtoD", DeviceToDevice),
        ("Host-to-Device", HostToDevice),
        ("Device-to-Host", DeviceToHost),
        ("Device-to-Device", DeviceToDevice),
        ("Peer-to-Peer", Other),
        ("HtoH", Other),
        ("", Other),
    ] {
        assert_eq!(CopyDirection::of(name), want, "{name}");
    }
}

fn op(name: &str, start: f64, dur: f64, stream: u64) -> Op {
    Op {
        device: Some(0),
        stream: Some(stream),
        ..Op::kernel(name, start, dur)
    }
}

#[test]
fn filters_and_summary() {
    let mut w = Walk {
        ops: vec![
            op("b", 5000.0, 100.0, 7),
            op("a", 0.0, 300.0, 7),
            op("a", 2000.0, 300.0, 8),
            Op {
                kind: OpKind::Memcpy {
                    bytes: 64,
                    direction: "HtoD".into(),
                    pageable: false,
                },
                ..op("[CUDA memcpy HtoD]", 1000.0, 50.0, 7)
            },
        ],
        ..Walk::default()
    };
    w.sort();
    assert_eq!(w.ops[0].name, "a");
    let s7 = w.filtered(&Filter {
        stream: Some(7),
        ..Filter::default()
    });
    assert_eq!(s7.ops.len(), 3);
    let win = w.filtered(&Filter {
        window_us: Some((0.5, 3.0)),
        ..Filter::default()
    });
    assert_eq!(win.ops.len(), 2);
    let s = summarize(&w, 1);
    assert_eq!((s.kernels, s.copies, s.distinct_kernels), (3, 1, 2));
    assert_eq!(s.kernel_gpu_ns, 700.0);
    assert_eq!(s.top, vec![("a".to_string(), 2, 600.0)]);
    assert_eq!(s.span_ns, 5100.0);
    assert_eq!(s.streams, vec![7, 8]);
}

#[test]
fn shape_and_duration_checks() {
    assert!(check_shape("grid", (1, 1, 1), false).is_ok());
    assert!(check_shape("grid", (0, 1, 1), false).is_err());
    assert!(check_shape("grid", (1, 70000, 1), false).is_err());
    assert!(check_shape("block", (1024, 2, 1), true).is_err());
    assert!(check_duration(-1.0).unwrap_err().contains("negative"));
    assert!(check_duration(f64::NAN).unwrap_err().contains("finite"));
    assert!(check_duration(10.0).is_ok());
}
