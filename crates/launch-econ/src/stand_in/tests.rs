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
