//! Unit tests of `stand_in`'s paced reads: which kernels pace and how many bytes, from device
//! memory or the L2, element-wise kernels doing their work, and the blocks and loads a paced
//! read keeps.

use super::tests::plan_with;
use super::*;

#[test]
fn kernels_pace_the_inputs_the_device_could_have_read_in_their_time() {
    let p = plan_with(4.0);
    let mut op = crate::trace::Op::kernel("attention", 0.0, 18_000.0);
    // Unrecorded inputs: no pacing.
    assert_eq!(p.paced_bytes(&op), None);
    // 58.7 MB in 18 µs (3.3 GB/ms, under the 4 of the plan): paced, whole words.
    op.input_bytes = Some(58_720_000.5);
    assert_eq!(p.paced_bytes(&op), Some(58_720_016));
    // More than the device copies but not more than it reads in that time: paced (decode
    // attention reads its KV cache at more than the copy bandwidth).
    op.input_bytes = Some(4200.0 * 18_000.0);
    assert_eq!(p.paced_bytes(&op), Some(75_600_000));
    // More than the device reads in that time: not all read, so no pacing.
    op.input_bytes = Some(4400.0 * 18_000.0 + 16.0);
    assert_eq!(p.paced_bytes(&op), None);
    // A tenth of what the device reads in that time is the least that paces.
    op.input_bytes = Some(0.1 * 4000.0 * 18_000.0 - 16.0);
    assert_eq!(p.paced_bytes(&op), None);
    // Shorter than the plan paces from.
    op.input_bytes = Some(1_000_000.0);
    op.duration_ns = 1500.0;
    assert_eq!(p.paced_bytes(&op), None);
    // A plan that does not pace.
    let off = StandInPlan {
        paced_from_ns: f64::INFINITY,
        ..plan_with(4.0)
    };
    op.duration_ns = 18_000.0;
    assert_eq!(off.paced_bytes(&op), None);
    // An element-wise kernel also writes a result as large as its largest input: an add of
    // two 16 MiB tensors moves 48 MiB.
    let mut add = crate::trace::Op::kernel_reading(
        "void at::native::vectorized_elementwise_kernel<8, add>",
        18_000.0,
        32.0 * 1048576.0,
        16.0 * 1048576.0,
    );
    assert_eq!(p.paced_bytes(&add), Some(48 << 20));
    // Never more than the device moves in the recorded time (4000 bytes/ns for 18 µs).
    add.input_bytes = Some(60e6);
    add.largest_input_bytes = Some(30e6);
    assert_eq!(p.paced_bytes(&add), Some(72_000_000));
    // Lanes past the whole L2 (`--past-l2 whole`): the whole recorded bytes, however long.
    let whole = StandInPlan {
        paced: PacedReads::Whole,
        ..plan_with(4.0)
    };
    assert_eq!(whole.paced_bytes(&add), Some(90_000_000));
    // An add of a 4 MiB fp16 matrix and its transpose: the transpose's 2 Mi elements move 30
    // bytes each beyond their own, which its stand-in reads along the rows: 72 MiB in all,
    // no more than the device moves in the recorded time (72 MB), whole without the cap.
    let mut transposed = crate::trace::Op::kernel_reading(
        "void at::native::elementwise_kernel<128, 4, add>",
        18_000.0,
        8.0 * 1048576.0,
        4.0 * 1048576.0,
    );
    transposed.across_row_excess_bytes = Some(60.0 * 1048576.0);
    assert_eq!(p.paced_bytes(&transposed), Some(72_000_000));
    assert_eq!(whole.paced_bytes(&transposed), Some(72 << 20));
    // Other kernels pace their inputs alone.
    op.largest_input_bytes = Some(16.0 * 1048576.0);
    op.input_bytes = Some(32.0 * 1048576.0);
    assert_eq!(p.paced_bytes(&op), Some(32 << 20));
    // Never more than the arena it reads from: decode attention over a 1 GiB KV cache (and
    // its 128 KiB of queries) in 248 µs asks 1 GiB and 128 KiB; it reads the arena's 1 GiB.
    let mut attention = crate::trace::Op::kernel("flash_fprop", 0.0, 248_000.0);
    attention.input_bytes = Some((1u64 << 30) as f64 + 131_072.0);
    assert_eq!(p.paced_bytes(&attention), Some(ARENA_BYTES));
}

#[test]
fn paced_reads_from_the_l2_take_any_recorded_load() {
    // From the L2 a kernel that read little in its time still reads it paced (a softmax of
    // 128 KiB in 8.8 µs); from device memory a tenth of the bandwidth is the least that paces.
    let mut softmax = crate::trace::Op::kernel("softmax_warp_forward", 0.0, 8_800.0);
    softmax.input_bytes = Some(131_072.0);
    assert_eq!(plan_with(4.0).paced_bytes(&softmax), None);
    let from_l2 = StandInPlan {
        paced: PacedReads::InL2,
        ..plan_with(4.0)
    };
    assert_eq!(from_l2.paced_bytes(&softmax), Some(131_072));
    // More than the plan's device reads in that time (its peak, 4400 bytes/ns) still does not.
    softmax.input_bytes = Some(4400.0 * 8_800.0 + 16.0);
    assert_eq!(from_l2.paced_bytes(&softmax), None);
}

/// An add of two 1 MiB f32 tensors within the L2, recorded at 1.3 µs: two inputs of 1 MiB,
/// a 1 MiB result.
fn add_of_two_mib() -> crate::trace::Op {
    crate::trace::Op::kernel_reading(
        "void at::native::vectorized_elementwise_kernel<4, add>",
        1_300.0,
        2.0 * 1048576.0,
        1048576.0,
    )
}

#[test]
fn element_wise_kernels_do_their_work_only_where_the_plan_asks() {
    let mut add = add_of_two_mib();
    let paced = StandInPlan {
        paced: PacedReads::InL2,
        ..plan_with(4.0)
    };
    assert_eq!(paced.elementwise_work(&add), None, "paced reads only");
    let work = StandInPlan {
        paced: PacedReads::InL2Work,
        ..paced
    };
    assert_eq!(work.elementwise_work(&add), Some((1 << 20, 2)));
    // A scalar multiplication (one input), its result rounded up to whole words.
    add.input_bytes = Some(1000.0);
    add.largest_input_bytes = Some(1000.0);
    assert_eq!(work.elementwise_work(&add), Some((1008, 1)));
    // Inputs whose sizes are not recorded, or a kernel that is not element-wise: none.
    add.largest_input_bytes = None;
    assert_eq!(work.elementwise_work(&add), None);
    let norm =
        crate::trace::Op::kernel_reading("layer_norm_kernel", 5_000.0, 2.0 * 1048576.0, 1048576.0);
    assert_eq!(work.elementwise_work(&norm), None);
}

#[test]
fn a_work_doing_stand_in_is_kept_only_where_its_node_fits_the_kernel_s() {
    let add = add_of_two_mib();
    let shape = LaunchShape::linear(256, 128);
    let mut work = StandInPlan {
        paced: PacedReads::InL2Work,
        ..plan_with(4.0)
    };
    let key = work.work_key(&add, shape).unwrap();
    assert_eq!(
        (key.result_bytes, key.inputs, key.shape),
        (1 << 20, 2, shape)
    );
    // Not measured: taken to fit, as before the floor.
    assert!(work.work_fits(&key, 1_300.0));
    // Planned nodes are the recorded duration + the gap (0.1 µs here).
    work.work_nodes.insert(key, 1.45);
    assert!(work.work_fits(&key, 1_350.0));
    assert!(!work.work_fits(&key, 1_300.0));
    // Another shape of the same work was not measured.
    assert!(work.work_fits(
        &work.work_key(&add, LaunchShape::linear(1, 128)).unwrap(),
        0.0
    ));
    // Without paced writes there is no work-doing stand-in to key.
    let paced = StandInPlan {
        paced: PacedReads::InL2,
        ..work
    };
    assert_eq!(paced.work_key(&add, shape), None);
}

#[test]
fn a_paced_read_has_no_more_blocks_than_the_device_holds_at_once() {
    let limits = crate::occupancy::SmLimits::of("9.0", 132).unwrap();
    let held = StandInPlan {
        hold_sms: Some(limits),
        ..plan_with(4.0)
    };
    let add = crate::trace::Op::kernel("add", 0.0, 25_000.0);
    // 16384 blocks of 128 threads: an H200 holds 16 of them an SM, 2112 in all.
    let wide = LaunchShape::linear(16_384, 128);
    let paced = held.paced_shape(wide, &add);
    assert_eq!((paced.grid, paced.block), ((2112, 1, 1), (128, 1, 1)));
    // A grid the device holds at once keeps its shape, as does every grid without limits.
    let attention = LaunchShape::of((32, 8, 1), (128, 1, 1));
    assert_eq!(held.paced_shape(attention, &add), attention);
    assert_eq!(plan_with(4.0).paced_shape(wide, &add), wide);
}

#[test]
fn only_kernels_of_many_registers_a_thread_pace_with_deep_loads() {
    let p = StandInPlan {
        deep_registers: 96,
        ..plan_with(4.0)
    };
    let mut op = crate::trace::Op::kernel("sdpa", 0.0, 120_000.0);
    // Registers not recorded: four loads a thread.
    assert!(!p.paces_deep(&op));
    let with = |registers_per_thread| {
        Some(crate::occupancy::BlockResources {
            registers_per_thread,
            shared_bytes: 86_336,
        })
    };
    // Decode attention's 183 registers a thread hold the deep read's 96.
    op.resources = with(183);
    assert!(p.paces_deep(&op));
    op.resources = with(96);
    assert!(p.paces_deep(&op));
    // An element-wise kernel's 34 do not, and without a deep read nothing paces deep.
    op.resources = with(34);
    assert!(!p.paces_deep(&op));
    op.resources = with(183);
    assert!(!plan_with(4.0).paces_deep(&op));
}

#[test]
fn a_deep_paced_read_holds_what_its_kernels_blocks_held() {
    let p = StandInPlan {
        deep_registers: 96,
        hold_sms: crate::occupancy::SmLimits::of("9.0", 132),
        ..plan_with(4.0)
    };
    let mut op = crate::trace::Op::kernel("sdpa", 0.0, 120_000.0);
    op.resources = Some(crate::occupancy::BlockResources {
        registers_per_thread: 183,
        shared_bytes: 86_336,
    });
    // 128 threads of 183 registers hold 23 424: 224 threads of 96 hold as many, in whole
    // warps. The SM held two recorded blocks (registers and shared memory both), and would
    // hold three of the stand-in's: it reserves half the SM's shared memory, less 2 KiB.
    let attention = LaunchShape::of((1, 32, 4), (128, 1, 1));
    let paced = p.paced_shape(attention, &op);
    assert_eq!((paced.grid, paced.block), ((1, 32, 4), (224, 1, 1)));
    assert_eq!(paced.shared_bytes, 228 * 1024 / 2 - 2048);
    // 256 threads of 255 registers, with a deep read of 90 (as an H200's driver built it):
    // as many registers would take 704 threads, more than a block may have at 90 a thread
    // (see SmLimits::largest_block): 640.
    let p90 = StandInPlan {
        deep_registers: 90,
        ..p.clone()
    };
    op.resources = Some(crate::occupancy::BlockResources {
        registers_per_thread: 255,
        shared_bytes: 1024,
    });
    let prefill = LaunchShape::of((8, 16, 2), (256, 1, 1));
    assert_eq!(p90.paced_shape(prefill, &op).block, (640, 1, 1));
    // Fewer registers than the deep read's: four loads a thread, the recorded block.
    op.resources = Some(crate::occupancy::BlockResources {
        registers_per_thread: 40,
        shared_bytes: 86_336,
    });
    assert_eq!(p.paced_shape(attention, &op).block, (128, 1, 1));
}
