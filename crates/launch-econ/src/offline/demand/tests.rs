use super::*;
use crate::offline::tests::inputs;
use memra_engine::{Gemm, GemmType};

/// A kernel `name` of `ns` recorded as the call of `gemm`.
fn gemm_call(name: &str, gemm: Gemm, ns: f64) -> Op {
    Op {
        matmul: Some(MatmulRole::Call(gemm)),
        ..Op::kernel(name, 0.0, ns)
    }
}

/// A 2 µs kernel `name` whose operator read `read` bytes, the largest input `largest`.
fn with_inputs(name: &str, read: f64, largest: f64) -> Op {
    Op::kernel_reading(name, 2000.0, read, largest)
}

#[test]
fn element_wise_normalisation_and_attention_kernels_load_memory_with_their_recorded_bytes() {
    // An add of two 1 MB inputs writes 1 MB more: 3 MB in 2 us.
    let add = with_inputs("vectorized_elementwise_kernel<add>", 2e6, 1e6);
    assert!((known_gb_s(&add, 4000.0) - 1500.0).abs() < 1e-9);
    let norm = with_inputs("vectorized_layer_norm_kernel<c10::Half>", 1e6, 1e6);
    assert!((known_gb_s(&norm, 4000.0) - 1000.0).abs() < 1e-9);
    // More than the device gives: it did not read all it was given.
    let gather = with_inputs("triton_poi_fused_embedding_0", 1e9, 1e9);
    assert_eq!(known_gb_s(&gather, 4000.0), 4000.0);
    assert_eq!(known_gb_s(&gather, 0.0), 1e6);
    // Attention reads its keys and values (8 MB in 2 us); its output is not counted.
    let attention = with_inputs("flash_fwd_kernel", 8e6, 4e6);
    assert!((known_gb_s(&attention, 4000.0) - 4000.0).abs() < 1e-9);
    // A paged pool given whole: more than the device reads in the time, so nothing is known.
    let paged = with_inputs("cudnn_generated_fort_native_sdpa_sm90", 1e9, 9e8);
    assert_eq!(known_gb_s(&paged, 4000.0), 0.0);
    // A Triton pointwise kernel named after the attention operator it was fused from is
    // element-wise: its inputs and its result.
    let pointwise = with_inputs("triton_poi_fused__scaled_dot_product_attention_0", 2e6, 1e6);
    assert!((known_gb_s(&pointwise, 4000.0) - 1500.0).abs() < 1e-9);
    // Other kernels' time is not only their bytes; kernels without recorded inputs have none.
    let softmax = with_inputs("softmax_warp_forward", 8e6, 4e6);
    assert_eq!(known_gb_s(&softmax, 4000.0), 0.0);
    let bare = Op::kernel("vectorized_elementwise_kernel<add>", 0.0, 2000.0);
    assert_eq!(known_gb_s(&bare, 4000.0), 0.0);
}

/// A profile whose widest GEMM pair ran 1.5 times one alone (a kernel like it holds 0.75),
/// and an H200-like roofline: 800 TFLOP/s in f16 and bf16, 400 in TF32, 50 in f32, 4 TB/s.
fn widest_pair_and_peaks() -> (ModelInputs, Roofline) {
    use crate::beside::{BesideCosts, BesidePoint};
    use crate::roofline::GemmPeaks;
    let point = |load_gb_s, stretch| BesidePoint {
        load_gb_s,
        stretch,
        gemm_us: 10.0,
    };
    let m = ModelInputs {
        graph_node_beside: Some(BesideCosts {
            points: [point(1000.0, 0.1), point(2000.0, 0.2), point(5000.0, 0.5)],
            bandwidth_gb_s: 4000.0,
            small: Default::default(),
            small_pair: Default::default(),
            per_lane_us: 0.0,
            l2_gb_s: 0.0,
        }),
        ..inputs()
    };
    let peaks = GemmPeaks {
        f16_tflop_s: 800.0,
        bf16_tflop_s: 800.0,
        tf32_tflop_s: 400.0,
        f32_tflop_s: 50.0,
    };
    (m, peaks.roofline(4000.0))
}

#[test]
fn one_round_fat_kernels_not_held_by_math_hold_what_the_widest_pair_says() {
    use crate::occupancy::BlockResources;
    let l = SmLimits::of("9.0", 132).unwrap();
    // The widest pair ran 1.5 times one alone: such a kernel holds 0.75.
    let (m, r) = widest_pair_and_peaks();
    let fat = BlockResources {
        registers_per_thread: 168,
        shared_bytes: 164_308,
    };
    let kernel = |name: &str, blocks: u32, threads: u32, res, matmul| Op {
        kind: OpKind::Kernel {
            grid: (blocks, 1, 1),
            block: (threads, 1, 1),
        },
        resources: res,
        matmul,
        ..Op::kernel(name, 0.0, 10_000.0)
    };
    let gemm = |n| Some(MatmulRole::Call(Gemm::plain(GemmType::Bf16, 4096, n, 4096)));
    // A decode GEMM (one token) in 128 fat blocks: 0.97 by its blocks, 0.75 as the pair.
    let gemv = kernel("nvjet_gemv", 128, 384, Some(fat), gemm(1));
    assert!((held_share(&gemv, &l, &m, Some(&r)) - 0.75).abs() < 1e-12);
    // The same kernel as a 1024-token GEMM, held by its math, and as one the profile
    // cannot judge (no peaks, or no shapes): its blocks' share.
    let prefill = kernel("nvjet_prefill", 128, 384, Some(fat), gemm(1024));
    assert!((held_share(&prefill, &l, &m, Some(&r)) - 128.0 / 132.0).abs() < 1e-12);
    assert!((held_share(&gemv, &l, &m, None) - 128.0 / 132.0).abs() < 1e-12);
    let unjudged = kernel("nvjet_gemv", 128, 384, Some(fat), None);
    assert!((held_share(&unjudged, &l, &m, Some(&r)) - 128.0 / 132.0).abs() < 1e-12);
    // Attention (not cuBLAS) in fat blocks: 0.75; in two rounds of them: all of the GPU.
    let attention = kernel("flash_fwd", 128, 384, Some(fat), None);
    assert!((held_share(&attention, &l, &m, Some(&r)) - 0.75).abs() < 1e-12);
    let two_rounds = kernel("flash_fwd", 264, 384, Some(fat), None);
    assert_eq!(held_share(&two_rounds, &l, &m, Some(&r)), 1.0);
    // An element-wise kernel of 2048 small blocks (16 an SM) is not of that kind.
    let adds = kernel("add", 2048, 128, None, None);
    assert!((held_share(&adds, &l, &m, Some(&r)) - 2048.0 / 2112.0).abs() < 1e-12);
    // A profile without the pair: the blocks' share.
    assert!((held_share(&gemv, &l, &inputs(), Some(&r)) - 128.0 / 132.0).abs() < 1e-12);
    // Blocks two of which fit an SM (a radix sort's 98 blocks of 384 threads with 45 KB of
    // shared memory) spread one an SM: 98 of the 132 SMs, not 98 of 264 blocks' room; a
    // decode attention of 128 such blocks holds the pair's 0.75 as well.
    let half = BlockResources {
        registers_per_thread: 80,
        shared_bytes: 45_056,
    };
    let sort = kernel("DeviceRadixSortOnesweepKernel", 98, 384, Some(half), None);
    assert!((l.share(&sort) - 98.0 / 264.0).abs() < 1e-12);
    assert!((held_share(&sort, &l, &m, Some(&r)) - 0.75_f64.min(98.0 / 132.0)).abs() < 1e-12);
    let small_sort = kernel("DeviceRadixSortOnesweepKernel", 33, 384, Some(half), None);
    assert!((held_share(&small_sort, &l, &m, Some(&r)) - 0.25).abs() < 1e-12);
    let decode = kernel("flash_fwd", 128, 384, Some(half), None);
    assert!((held_share(&decode, &l, &m, Some(&r)) - 0.75).abs() < 1e-12);
    // Without the pair, nothing caps the spread; in more than one round, all of the GPU.
    assert!((held_share(&sort, &l, &inputs(), Some(&r)) - 98.0 / 132.0).abs() < 1e-12);
    let long_sort = kernel("DeviceRadixSortOnesweepKernel", 300, 384, Some(half), None);
    assert_eq!(held_share(&long_sort, &l, &m, Some(&r)), 1.0);
}

#[test]
fn ieee_f32_gemms_hold_the_sms_their_blocks_spread_over_up_to_the_widest_pair() {
    use crate::occupancy::BlockResources;
    let l = SmLimits::of("9.0", 132).unwrap();
    // The widest pair ran 1.5 times one alone: it holds 0.75.
    let (m, r) = widest_pair_and_peaks();
    // cuBLASLt's f32 GEMM of 128 x 3072 x 3072: blocks of 128 threads, room for four an SM.
    let res = Some(BlockResources {
        registers_per_thread: 126,
        shared_bytes: 16_128,
    });
    let kernel = |name: &str, blocks: u32, dtype, n, ns| Op {
        kind: OpKind::Kernel {
            grid: (1, blocks, 1),
            block: (128, 1, 1),
        },
        resources: res,
        matmul: Some(MatmulRole::Call(Gemm::plain(dtype, 3072, n, 3072))),
        ..Op::kernel(name, 0.0, ns)
    };
    let ffma = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x32x8_ffma";
    // 96 blocks: 96 of the 132 SMs, under the pair's 0.75; their room says 96 of 528.
    let f32_gemm = kernel(ffma, 96, GemmType::F32, 128, 130_000.0);
    assert!((l.share(&f32_gemm) - 96.0 / 528.0).abs() < 1e-12);
    assert!((held_share(&f32_gemm, &l, &m, Some(&r)) - 96.0 / 132.0).abs() < 1e-12);
    // 256 blocks spread over every SM: the pair's 0.75; a profile without the pair: all.
    let wide = kernel(ffma, 256, GemmType::F32, 128, 130_000.0);
    assert!((held_share(&wide, &l, &m, Some(&r)) - 0.75).abs() < 1e-12);
    assert_eq!(held_share(&wide, &l, &inputs(), Some(&r)), 1.0);
    // Without peaks the model cannot tell how it ran: its blocks' share.
    assert!((held_share(&f32_gemm, &l, &m, None) - 96.0 / 528.0).abs() < 1e-12);
    // The same grid on TF32 tensor cores, or in bf16: its blocks' share.
    let tf32 = kernel(
        "sm80_xmma_gemm_f32f32_tf32f32_f32",
        96,
        GemmType::F32,
        128,
        20_000.0,
    );
    assert!((held_share(&tf32, &l, &m, Some(&r)) - 96.0 / 528.0).abs() < 1e-12);
    let bf16 = kernel("nvjet_tst", 96, GemmType::Bf16, 128, 10_000.0);
    assert!((held_share(&bf16, &l, &m, Some(&r)) - 96.0 / 528.0).abs() < 1e-12);
    // An f32 matrix-vector product on the FMA units holds its spread as well.
    let gemv = kernel("gemv_ffma", 96, GemmType::F32, 1, 20_000.0);
    assert!((held_share(&gemv, &l, &m, Some(&r)) - 96.0 / 132.0).abs() < 1e-12);
}

#[test]
fn a_device_to_device_copy_asks_for_its_bytes_read_and_written() {
    let copy = |direction: &str| Op {
        kind: OpKind::Memcpy {
            bytes: 8_000_000,
            direction: direction.into(),
            pageable: false,
        },
        ..Op::kernel("Memcpy", 0.0, 4000.0)
    };
    // 16 MB moved in 4 us: 4000 GB/s, capped at the bandwidth where known.
    assert!((device_copy_gb_s(&copy("DtoD"), 0.0) - 4000.0).abs() < 1e-9);
    assert!((device_copy_gb_s(&copy("DtoD"), 3000.0) - 3000.0).abs() < 1e-9);
    assert_eq!(device_copy_gb_s(&copy("HtoD"), 4000.0), 0.0);
    assert_eq!(device_copy_gb_s(&Op::kernel("k", 0.0, 4000.0), 4000.0), 0.0);
}

#[test]
fn small_kernels_that_are_not_gemms_or_attention_or_that_move_little_wait_on_their_loads() {
    let add = Op::kernel("vectorized_elementwise_kernel<add>", 0.0, 1000.0);
    assert!(waits_on_loads(&add, 0.01, 160.0));
    let reduce = Op::kernel("reduce_kernel<512, 1>", 0.0, 2000.0);
    assert!(waits_on_loads(&reduce, 0.2, 160.0));
    // One that fills half the GPU or more is held by its bandwidth, which the sharing prices.
    assert!(!waits_on_loads(&add, 0.5, 160.0));
    // GEMMs (recorded calls, their further kernels, or by name) and attention stream or
    // compute: the pair stretch prices them.
    let call = gemm_call(
        "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT",
        Gemm::plain(GemmType::Bf16, 4096, 8, 4096),
        8000.0,
    );
    assert!(!waits_on_loads(&call, 0.1, 160.0));
    // A GEMM that moves less than the small adds do (a rank-16 adapter's down projection,
    // ~0.2 MB in 4 us: ~50 GB/s) waits on its loads as they do, where the profile measured
    // them; where it did not, it is a GEMM like the others.
    let adapter = gemm_call(
        "nvjet_sm90_hsh_64x8_64x16_1x1_h_bz_splitK_TNT",
        Gemm::plain(GemmType::F16, 16, 8, 4096),
        4000.0,
    );
    assert!(gemm_gb_s(&adapter) > 0.0 && gemm_gb_s(&adapter) < 160.0);
    assert!(waits_on_loads(&adapter, 0.05, 160.0));
    assert!(!waits_on_loads(&adapter, 0.05, 0.0));
    assert!(!waits_on_loads(&adapter, 0.5, 160.0));
    let part = Op {
        matmul: Some(MatmulRole::Part),
        ..Op::kernel("splitKreduce_kernel", 0.0, 1000.0)
    };
    assert!(!waits_on_loads(&part, 0.01, 160.0));
    let sgemm = Op::kernel("cutlass_80_simt_sgemm_128x32_8x5_nn_align1", 0.0, 3000.0);
    assert!(!waits_on_loads(&sgemm, 0.1, 160.0));
    let attention = Op::kernel("flash_fwd_kernel", 0.0, 5000.0);
    assert!(!waits_on_loads(&attention, 0.1, 160.0));
    // Copies and memsets are not kernels.
    let copy = Op {
        kind: OpKind::Memcpy {
            bytes: 1 << 20,
            direction: "DtoD".into(),
            pageable: false,
        },
        ..Op::kernel("Memcpy DtoD", 0.0, 1000.0)
    };
    assert!(!waits_on_loads(&copy, 0.0, 160.0));
}

#[test]
fn kernels_within_the_l2_ask_for_what_they_write() {
    // An add of two 1 MB inputs and a unary kernel of one write the same 1 MB result in 2 us:
    // both ask 500 GB/s, though the add reads twice as much.
    let add = with_inputs("vectorized_elementwise_kernel<add>", 2e6, 1e6);
    let unary = with_inputs("vectorized_elementwise_kernel<sqrt>", 1e6, 1e6);
    assert!((written_gb_s(&add, 4000.0) - 500.0).abs() < 1e-9);
    assert_eq!(written_gb_s(&add, 4000.0), written_gb_s(&unary, 4000.0));
    // Capped at the bandwidth given, where one is.
    assert_eq!(written_gb_s(&add, 300.0), 300.0);
    let norm = with_inputs("vectorized_layer_norm_kernel<c10::Half>", 1e6, 1e6);
    assert!((written_gb_s(&norm, 0.0) - 500.0).abs() < 1e-9);
    // Kernels whose written bytes the trace does not say: none.
    assert_eq!(
        written_gb_s(&with_inputs("flash_fwd_kernel", 8e6, 4e6), 0.0),
        0.0
    );
    assert_eq!(
        written_gb_s(&with_inputs("softmax_warp_forward", 8e6, 4e6), 0.0),
        0.0
    );
    assert_eq!(
        written_gb_s(
            &Op::kernel("vectorized_elementwise_kernel<add>", 0.0, 2000.0),
            0.0
        ),
        0.0
    );
}

#[test]
fn kernels_moving_more_than_three_times_what_they_write_ask_the_l2_by_a_third_of_it() {
    // `torch.addcmul` of three 1 MB inputs writes 1 MB: 4 MB moved, a third of it (1.33 MB)
    // over 2 us asks more than its writes (500 GB/s).
    let addcmul = with_inputs("vectorized_elementwise_kernel<addcmul>", 3e6, 1e6);
    assert!((written_gb_s(&addcmul, 0.0) - 4e6 / 3.0 / 2000.0).abs() < 1e-9);
    // `y + y.T` over 1 MB fp16 tensors: the transpose's half-million elements move 30 bytes
    // each beyond their own, 18 MB in all, the 15 MB across rows at the pace such reads reach.
    let transposed = Op {
        across_row_excess_bytes: Some(15e6),
        ..with_inputs("elementwise_kernel<add>", 2e6, 1e6)
    };
    let moved = 3e6 + 15e6 / crate::l2_lanes::ACROSS_ROW_PACE;
    assert!((written_gb_s(&transposed, 0.0) - moved / 3.0 / 2000.0).abs() < 1e-9);
    assert_eq!(written_gb_s(&transposed, 2000.0), 2000.0);
    // Read along the rows, the same add asks by its writes.
    let along = with_inputs("elementwise_kernel<add>", 2e6, 1e6);
    assert!((written_gb_s(&along, 0.0) - 500.0).abs() < 1e-9);
}
