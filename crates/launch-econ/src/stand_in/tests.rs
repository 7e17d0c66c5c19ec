//! Unit tests of `stand_in`.

use super::*;
use crate::trace::OpKind;

pub(super) const WIDE: ShapeKey = ((2048, 1, 1), (128, 1, 1));

/// A kernel named `name`, as the trace reader gives it (no inputs recorded).
pub(super) fn named(name: &str) -> Op {
    Op::kernel(name, 0.0, 0.0)
}

/// A chase's nodes with `step_us` a read: 1.1 µs with no reads, 8 reads more, a 2 µs spin
/// (the probes `plan` takes) 2 µs more.
pub(super) fn chase_of_steps(step_us: f64) -> ChaseNodes {
    ChaseNodes {
        zero_us: 1.1,
        steps_us: 1.1 + 8.0 * step_us,
        spin_us: 1.1 + 2.0,
    }
}

/// A plan with one measured shape, WIDE: spin nodes 2.0 µs at 0 ns and `probe_us` at
/// the probe, the empty kernel 1.7 µs, the empty spin's span 300 ns.
pub(super) fn plan_with(probe_us: f64) -> StandInPlan {
    let nodes = ShapeNodes {
        spin_zero_us: 2.0,
        spin_probe_us: probe_us,
        empty_us: 1.7,
        spin_zero_span_ns: 300.0,
        chase: None,
        barrier_chase: None,
    };
    StandInPlan {
        gap_us: 0.1,
        shapes: HashMap::from([(WIDE, nodes)]),
        stream_from_ns: 3000.0,
        stream_element_wise: false,
        ramp_ns: 680.0,
        real_gemms: false,
        real_math_gemms: false,
        gemm_operands: Default::default(),
        sub_floor: SubFloor::Balance,
        spin_fit: SpinFit::Off,
        concurrent: ConcurrentStandIn::Chase,
        chase_floor: Default::default(),
        roofline: None,
        paced_from_ns: 2000.0,
        paced: PacedReads::Capped,
        bytes_per_ns: 4000.0,
        peak_bytes_per_ns: 4400.0,
        deep_registers: 0,
        hold_sms: None,
        spin_per_block: false,
        wide_grids: None,
        work_nodes: Default::default(),
    }
}

#[test]
fn wide_kernels_are_planned_shorter_by_the_grid_table_and_small_ones_as_recorded() {
    let case = |blocks, d| crate::wide_grids::GridCase::memory(128, blocks, d);
    let plan = StandInPlan {
        wide_grids: Some(crate::wide_grids::WideGrids {
            device: "GPU".into(),
            cases: vec![case(8, 0.25), case(1024, 0.05)],
        }),
        ..plan_with(4.0)
    };
    let kernel = |blocks| crate::trace::Op {
        kind: OpKind::Kernel {
            grid: (blocks, 1, 1),
            block: (128, 1, 1),
        },
        ..crate::trace::Op::kernel("add", 0.0, 1600.0)
    };
    assert_eq!(plan.planned_ns(&kernel(4)), 1600.0);
    assert!((plan.planned_ns(&kernel(1024)) - 1400.0).abs() < 1e-9);
    // Without a table every kernel is planned at its recorded duration.
    assert_eq!(plan_with(4.0).planned_ns(&kernel(1024)), 1600.0);
}

#[test]
fn spins_run_per_block_only_beside_other_streams_and_for_grids_held_at_once() {
    let h200 = crate::occupancy::SmLimits::of("9.0", 132);
    let lanes = StandInPlan {
        hold_sms: h200,
        spin_per_block: true,
        ..plan_with(4.0)
    };
    let op = crate::trace::Op::kernel("gelu", 0.0, 1300.0);
    // 128 blocks of 128 threads: 16 an SM, 2112 at once on 132 SMs.
    let one_round = LaunchShape::linear(128, 128);
    assert!(lanes.spins_per_block(one_round, &op));
    assert!(lanes.spins_per_block(LaunchShape::linear(2112, 128), &op));
    // More blocks than the GPU holds: the recorded time spans rounds, so the grid's clock.
    assert!(!lanes.spins_per_block(LaunchShape::linear(2113, 128), &op));
    // A kernel whose shared memory let an SM hold one of its blocks: 132 at once.
    let big = crate::trace::Op {
        resources: Some(crate::occupancy::BlockResources {
            registers_per_thread: 32,
            shared_bytes: 200 * 1024,
        }),
        ..op.clone()
    };
    assert!(lanes.spins_per_block(LaunchShape::linear(132, 128), &big));
    assert!(!lanes.spins_per_block(LaunchShape::linear(133, 128), &big));
    // Asked for the grid's clock, or a walk that holds no SMs (one stream): never.
    let grid = StandInPlan {
        spin_per_block: false,
        ..lanes.clone()
    };
    assert!(!grid.spins_per_block(one_round, &op));
    let single = StandInPlan {
        hold_sms: None,
        ..lanes
    };
    assert!(!single.spins_per_block(one_round, &op));
}

#[test]
fn on_one_stream_only_math_bound_gemms_without_an_added_matrix_run_for_real() {
    use crate::trace::matmul::MatmulRole;
    use memra_engine::{Gemm, GemmType};
    let gemm = |m: u32, n: u32, k: u32, accumulate: bool| Gemm {
        accumulate,
        ..Gemm::plain(GemmType::Bf16, m, n, k)
    };
    let op = |g: Gemm| crate::trace::Op {
        matmul: Some(MatmulRole::Call(g)),
        ..crate::trace::Op::kernel("nvjet", 0.0, 10_000.0)
    };
    // 500 Tflop/s and 4 TB/s: a 512-token GEMM's math floor (8.6 us) is the longer, a decode
    // GEMM's memory floor.
    let plan = StandInPlan {
        real_math_gemms: true,
        roofline: Some(crate::roofline::Roofline {
            bytes_per_ns: 4_000.0,
            flops_per_ns: HashMap::from([(GemmType::Bf16, 500_000.0)]),
        }),
        ..plan_with(4.0)
    };
    let prefill = op(gemm(2048, 512, 2048, false));
    assert!(plan.runs_math_gemm(&prefill));
    assert!(!plan.runs_math_gemm(&op(gemm(2048, 1, 2048, false))));
    // An addmm that adds a whole matrix would read it as C: it stands in. One whose bias
    // cuBLASLt adds in its epilogue runs as recorded.
    assert!(!plan.runs_math_gemm(&op(gemm(2048, 512, 2048, true))));
    let biased = Gemm {
        bias: true,
        ..gemm(2048, 512, 2048, false)
    };
    assert!(plan.runs_math_gemm(&op(biased)));
    let off = StandInPlan {
        real_math_gemms: false,
        ..plan
    };
    assert!(!off.runs_math_gemm(&prefill));
}

#[test]
fn real_gemms_run_as_the_engine_runs_them_with_their_further_kernels() {
    use crate::trace::matmul::MatmulRole;
    use memra_engine::{Gemm, GemmType};
    let gemm = Gemm::plain(GemmType::F32, 2048, 512, 2048);
    // 50 Tflop/s in f32: this GEMM's 4.3 Gflop take at least 86 us; recorded in 100 us it
    // runs as recorded, in 20 us it ran on TF32 and runs so.
    let call = |ns: f64| crate::trace::Op {
        matmul: Some(MatmulRole::Call(gemm)),
        ..crate::trace::Op::kernel("gemm", 0.0, ns)
    };
    let part = crate::trace::Op {
        matmul: Some(MatmulRole::Part),
        ..crate::trace::Op::kernel("splitKreduce", 0.0, 2_000.0)
    };
    let plan = StandInPlan {
        real_gemms: true,
        roofline: Some(crate::roofline::Roofline {
            bytes_per_ns: 4_000.0,
            flops_per_ns: HashMap::from([(GemmType::F32, 50_000.0), (GemmType::Tf32, 250_000.0)]),
        }),
        ..plan_with(4.0)
    };
    let mut call_real = false;
    let roles: Vec<_> = [call(100_000.0), part.clone(), call(20_000.0), part.clone()]
        .iter()
        .map(|o| plan.real_role(o, &mut call_real))
        .collect();
    let tf32 = Gemm {
        dtype: GemmType::Tf32,
        ..gemm
    };
    assert_eq!(
        roles,
        vec![
            Some(MatmulRole::Call(gemm)),
            Some(MatmulRole::Part),
            Some(MatmulRole::Call(tf32)),
            Some(MatmulRole::Part)
        ]
    );
    assert!(plan.runs_on_tf32(&call(20_000.0)) && !plan.runs_on_tf32(&call(100_000.0)));
    // Nothing runs for real: the further kernels stand in with their GEMM.
    let none = StandInPlan {
        real_gemms: false,
        ..plan
    };
    assert_eq!(none.real_role(&call(20_000.0), &mut call_real), None);
    assert_eq!(none.real_role(&part, &mut call_real), None);
    assert!(!none.runs_on_tf32(&call(20_000.0)));
    // Without measured peaks every recorded GEMM runs as recorded.
    let unmeasured = StandInPlan {
        roofline: None,
        ..none
    };
    let real = StandInPlan {
        real_gemms: true,
        ..unmeasured
    };
    assert_eq!(
        real.real_role(&call(20_000.0), &mut call_real),
        Some(MatmulRole::Call(gemm))
    );
    assert!(real
        .real_role(&crate::trace::Op::kernel("relu", 0.0, 1.0), &mut call_real)
        .is_none());
}

#[test]
fn long_element_wise_kernels_spin_unless_asked_to_stream() {
    let plan = plan_with(4.0);
    let name = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>";
    let element_wise = crate::trace::Op::kernel(name, 0.0, 5000.0);
    let norm = crate::trace::Op::kernel("vectorized_layer_norm_kernel", 0.0, 5000.0);
    let short = crate::trace::Op::kernel("vectorized_layer_norm_kernel", 0.0, 2000.0);
    // Long enough to stream, but it reads what the step just wrote: it spins.
    assert!(!plan.streams_op(&element_wise));
    assert!(plan.streams_op(&norm));
    assert!(!plan.streams_op(&short));
    let streaming = StandInPlan {
        stream_element_wise: true,
        ..plan
    };
    assert!(streaming.streams_op(&element_wise));
}

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
    let mut add = crate::trace::Op::kernel(
        "void at::native::vectorized_elementwise_kernel<8, add>",
        0.0,
        18_000.0,
    );
    add.input_bytes = Some(32.0 * 1048576.0);
    add.largest_input_bytes = Some(16.0 * 1048576.0);
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
    let mut transposed = crate::trace::Op::kernel(
        "void at::native::elementwise_kernel<128, 4, add>",
        0.0,
        18_000.0,
    );
    transposed.input_bytes = Some(8.0 * 1048576.0);
    transposed.largest_input_bytes = Some(4.0 * 1048576.0);
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
    let mut add = crate::trace::Op::kernel(
        "void at::native::vectorized_elementwise_kernel<4, add>",
        0.0,
        1_300.0,
    );
    add.input_bytes = Some(2.0 * 1048576.0);
    add.largest_input_bytes = Some(1048576.0);
    add
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
    let mut norm = crate::trace::Op::kernel("layer_norm_kernel", 0.0, 5_000.0);
    norm.input_bytes = Some(2.0 * 1048576.0);
    norm.largest_input_bytes = Some(1048576.0);
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

#[test]
fn requests_put_the_node_at_recorded_plus_gap() {
    let p = plan_with(4.0);
    // 2.4 + 0.1 = 2.5 µs: a quarter of the way from 2.0 to 4.0 -> 500 ns.
    assert_eq!(p.choose(2400.0, WIDE), Choice::Spin(500));
    // Beyond the probe: 2000 ns plus a ns per ns past 4.0 µs.
    assert_eq!(p.choose(4900.0, WIDE), Choice::Spin(3000));
    // Shorter than the empty spin: the nearer of the empty kernel and the empty spin.
    assert_eq!(p.choose(1600.0, WIDE), Choice::Empty);
    assert_eq!(p.choose(1880.0, WIDE), Choice::Spin(0));
    assert!(p.streams(3000.0) && !p.streams(2999.0));
    // Node 2.0 µs less the 0.1 µs gap and the 300 ns span; unmeasured: the calibration's.
    assert!((p.ramp_ns(WIDE) - 1600.0).abs() < 1e-9);
    assert_eq!(p.ramp_ns(((1, 1, 1), (32, 1, 1))), 680.0);
}

#[test]
fn balanced_sub_floor_choices_sum_to_their_targets_where_nearest_ones_drift() {
    // Recorded 1.78 µs: target 1.88, between the empty kernel (1.7) and the empty spin (2.0);
    // the spin is nearer (+0.12 against -0.18).
    let mut nearest = plan_with(4.0);
    nearest.sub_floor = SubFloor::Nearest;
    let balance = plan_with(4.0);
    let (mut cn, mut cb) = (SubFloorCarry::default(), SubFloorCarry::default());
    let mut empties = 0;
    for _ in 0..100 {
        assert_eq!(
            nearest.choose_carrying(1780.0, WIDE, &mut cn),
            Choice::Spin(0)
        );
        if balance.choose_carrying(1780.0, WIDE, &mut cb) == Choice::Empty {
            empties += 1;
        }
    }
    assert_eq!((cn.kernels, cb.kernels), (100, 100));
    assert!((cn.over_us - 12.0).abs() < 1e-9, "{}", cn.over_us);
    // 40 × -0.18 + 60 × 0.12 = 0: the empty kernel for 40 of the 100.
    assert_eq!(empties, 40);
    assert!(cb.over_us.abs() <= 0.18 + 1e-9, "{}", cb.over_us);
    // Kernels above the floor neither use nor change the carry.
    let before = cb;
    assert_eq!(
        balance.choose_carrying(2400.0, WIDE, &mut cb),
        Choice::Spin(500)
    );
    assert_eq!(cb, before);
}

proptest::proptest! {
    /// Where every target lies between the two floors, the carried error never exceeds the
    /// widest gap between them.
    #[test]
    fn balanced_carry_stays_within_the_floor_gap(
        kernels in proptest::collection::vec((0.0f64..1.0, 0.0f64..1.0, 0.05f64..1.0), 1..200)
    ) {
        let mut plan = plan_with(4.0);
        let mut carry = SubFloorCarry::default();
        let mut widest = 0.0f64;
        for (i, (empty_frac, at, width)) in kernels.into_iter().enumerate() {
            let shape = ((i as u32 + 1, 1, 1), (32, 1, 1));
            let empty_us = 0.5 + empty_frac;
            plan.shapes.insert(shape, ShapeNodes {
                spin_zero_us: empty_us + width,
                spin_probe_us: empty_us + width + 2.0,
                empty_us,
                spin_zero_span_ns: 100.0,
                chase: None,
                barrier_chase: None,
            });
            widest = widest.max(width);
            let target_us = empty_us + at * width;
            plan.choose_carrying((target_us - plan.gap_us) * 1e3, shape, &mut carry);
            proptest::prop_assert!(carry.over_us.abs() <= widest + 1e-9);
        }
    }
}

#[test]
fn unmeasured_shapes_spin_for_the_recording() {
    let p = plan_with(4.0);
    assert_eq!(
        p.choose(1234.4, ((1, 1, 1), (32, 1, 1))),
        Choice::Spin(1234)
    );
}

#[test]
fn requests_inside_the_spins_own_bookkeeping_buy_nothing() {
    // The probe node 1.9 µs over the floor for 2000 ns asked: the first 100 ns are absorbed.
    let p = plan_with(3.9);
    assert_eq!(p.shapes[&WIDE].spin_knee_ns(), 100.0);
    // Target 2.1 µs, 0.1 over the floor: 100 ns to reach the line and 100 along it (a
    // straight interpolation from the floor to the probe asked for 105 and got the floor).
    assert_eq!(p.choose(2000.0, WIDE), Choice::Spin(200));
    // The probe itself and beyond: the line through it.
    assert_eq!(p.choose(3800.0, WIDE), Choice::Spin(2000));
    assert_eq!(p.choose(4800.0, WIDE), Choice::Spin(3000));
    // A probe node more than a ns per ns over the floor (noise): no knee.
    assert_eq!(plan_with(4.5).shapes[&WIDE].spin_knee_ns(), 0.0);
}

#[test]
fn a_flat_probe_still_gives_a_request() {
    // A probe no longer than the empty spin (noise): requests grow ns for ns.
    let p = plan_with(2.0);
    assert_eq!(p.choose(2400.0, WIDE), Choice::Spin(2500));
}

#[test]
fn streamed_fits_only_the_spins_of_streams_that_stream() {
    assert!(!SpinFit::Off.fits(true));
    assert!(SpinFit::Streamed.fits(true));
    assert!(!SpinFit::Streamed.fits(false));
    // `graph` fits spins alone too, in graph rounds of their own.
    assert!(SpinFit::Graph.fits(false));
}
