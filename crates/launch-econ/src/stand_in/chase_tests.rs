//! Unit tests of `stand_in`'s chases: whole steps above a chase's floor, one read or the empty
//! kernel below it, barrier chases for normalisations and reductions, and which reductions
//! chase under each mode.

use super::tests::{chase_of_steps, named, plan_with, WIDE};
use super::*;

#[test]
fn chases_take_whole_steps_and_spin_the_rest_above_their_floor() {
    let mut p = plan_with(4.0);
    let chase = chase_of_steps(0.2);
    p.shapes.get_mut(&WIDE).unwrap().chase = Some(chase);
    // Target 2.5 µs: 1.4 over the floor, 7 steps of 0.2, nothing left to spin.
    assert_eq!(p.choose(2400.0, WIDE), Choice::Chase { steps: 7, ns: 0 });
    // Target 2.65: 7 steps and 0.15 µs of spin (a ns per ns here).
    assert_eq!(p.choose(2550.0, WIDE), Choice::Chase { steps: 7, ns: 150 });
    // With no floor of one read: exactly at the floor no steps; below it the spin plan (the
    // empty kernel here).
    p.chase_floor = ChaseFloor::ZeroSteps;
    assert_eq!(p.choose(1000.0, WIDE), Choice::Chase { steps: 0, ns: 0 });
    assert_eq!(p.choose(900.0, WIDE), Choice::Empty);
    // Steps measured no longer than none (noise): the whole rest spins.
    let flat = ChaseNodes {
        steps_us: 1.0,
        ..chase
    };
    assert_eq!(flat.request(2.1), Some((0, 1000)));
    assert_eq!(flat.request(f64::NAN), None);
    // Element-wise kernels only: a LayerNorm of the same shape spins.
    p.concurrent = ConcurrentStandIn::ChaseElementWise;
    let mut carry = SubFloorCarry::default();
    let add =
        "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::Half>>";
    let norm = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half>";
    assert_eq!(
        p.choose_named(&named(add), 2400.0, WIDE, &mut carry),
        Choice::Chase { steps: 7, ns: 0 }
    );
    assert_eq!(
        p.choose_named(&named(norm), 2400.0, WIDE, &mut carry),
        Choice::Spin(500)
    );
    assert!(is_element_wise("triton_poi_fused_mul_silu_1"));
    assert!(!is_element_wise("triton_red_fused_add_mean_0"));
}

#[test]
fn chases_below_one_read_take_the_empty_kernel_or_one_read_in_turn() {
    let mut p = plan_with(4.0);
    let shape = p.shapes.get_mut(&WIDE).unwrap();
    shape.empty_us = 0.9;
    shape.chase = Some(chase_of_steps(0.2));
    assert_eq!(p.chase_floor, ChaseFloor::OneStep);
    assert!((p.shapes[&WIDE].chase.unwrap().one_step_us() - 1.3).abs() < 1e-12);
    // Targets of 1.1 µs (recorded 1.0 + gap 0.1), between the empty kernel (0.9) and one read
    // (1.3): the two in turn, their nodes summing to the targets along the stream.
    let mut carry = SubFloorCarry::default();
    let picks: Vec<Choice> = (0..10)
        .map(|_| p.choose_carrying(1000.0, WIDE, &mut carry))
        .collect();
    let reads = picks
        .iter()
        .filter(|c| **c == Choice::Chase { steps: 1, ns: 0 })
        .count();
    let empties = picks.iter().filter(|c| **c == Choice::Empty).count();
    assert_eq!((reads, empties), (5, 5));
    assert_eq!((carry.kernels, carry.reads), (10, 5));
    assert!(carry.over_us.abs() < 0.2 + 1e-9);
    // A target between the chase's floor and one read (1.2 µs) is balanced too, never a chase
    // of no reads; one read or more fits from 1.3 on.
    let mut carry = SubFloorCarry::default();
    assert_ne!(
        p.choose_carrying(1100.0, WIDE, &mut carry),
        Choice::Chase { steps: 0, ns: 0 }
    );
    assert_eq!(p.choose(1400.0, WIDE), Choice::Chase { steps: 2, ns: 0 });
    // A kernel that does not chase keeps the sub-floor choice between the empty kernel and
    // the empty spin.
    p.concurrent = ConcurrentStandIn::ChaseElementWise;
    let norm = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half>";
    let mut carry = SubFloorCarry::default();
    assert!(matches!(
        p.choose_named(&named(norm), 1000.0, WIDE, &mut carry),
        Choice::Empty | Choice::Spin(0)
    ));
    // Reads measured no longer than none (noise): one read costs nothing, so a longer target
    // is the chase's spin, never the empty kernel far under it.
    p.concurrent = ConcurrentStandIn::Chase;
    let chase = p.shapes.get_mut(&WIDE).unwrap().chase.as_mut().unwrap();
    chase.steps_us = chase.zero_us;
    assert_eq!(p.choose(2000.0, WIDE), Choice::Chase { steps: 0, ns: 1000 });
}

#[test]
fn barrier_chases_stand_in_for_the_kernels_that_do_not_chase_by_their_own_nodes() {
    let mut p = plan_with(4.0);
    let reads = chase_of_steps(0.2);
    // A barrier step (a read, then a block-wide reduction) takes longer alone: 0.35 µs.
    let barriers = chase_of_steps(0.35);
    let shape = p.shapes.get_mut(&WIDE).unwrap();
    shape.chase = Some(reads);
    shape.barrier_chase = Some(barriers);
    shape.empty_us = 0.9;
    p.concurrent = ConcurrentStandIn::ChaseBarriers;
    let add =
        "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::Half>>";
    let norm = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half>";
    let mut carry = SubFloorCarry::default();
    // Target 2.5 µs: an add chases 7 reads; the LayerNorm 4 barrier steps (1.4 µs) and
    // spins the 0 µs left.
    assert_eq!(
        p.choose_named(&named(add), 2400.0, WIDE, &mut carry),
        Choice::Chase { steps: 7, ns: 0 }
    );
    assert_eq!(
        p.choose_named(&named(norm), 2400.0, WIDE, &mut carry),
        Choice::BarrierChase { steps: 4, ns: 0 }
    );
    // Targets of 1.2 µs, between the empty kernel (0.9) and one barrier step (1.45): the two
    // in turn, as chases do.
    let mut carry = SubFloorCarry::default();
    let picks: Vec<Choice> = (0..4)
        .map(|_| p.choose_named(&named(norm), 1100.0, WIDE, &mut carry))
        .collect();
    assert!(
        picks.contains(&Choice::BarrierChase { steps: 1, ns: 0 }),
        "{picks:?}"
    );
    assert!(picks.contains(&Choice::Empty), "{picks:?}");
    // A kernel not named a reduction (a gather) spins.
    let gather = "void at::native::(anonymous namespace)::indexSelectSmallIndex<c10::Half, long>";
    assert_eq!(
        p.choose_named(&named(gather), 2400.0, WIDE, &mut SubFloorCarry::default()),
        Choice::Spin(500)
    );
    // Without barrier chases the LayerNorm spins; a shape whose barrier chase was not
    // measured spins too.
    p.concurrent = ConcurrentStandIn::ChaseElementWise;
    assert_eq!(
        p.choose_named(&named(norm), 2400.0, WIDE, &mut SubFloorCarry::default()),
        Choice::Spin(500)
    );
    p.concurrent = ConcurrentStandIn::ChaseBarriers;
    p.shapes.get_mut(&WIDE).unwrap().barrier_chase = None;
    assert_eq!(
        p.choose_named(&named(norm), 2400.0, WIDE, &mut SubFloorCarry::default()),
        Choice::Spin(500)
    );
}

#[test]
fn reductions_that_read_several_rounds_a_thread_chase_under_chase_rounds() {
    let mut p = plan_with(4.0);
    let reads = chase_of_steps(0.2);
    let shape = p.shapes.get_mut(&WIDE).unwrap();
    shape.chase = Some(reads);
    shape.barrier_chase = Some(chase_of_steps(0.35));
    p.concurrent = ConcurrentStandIn::ChaseRounds;
    // WIDE holds 2048 × 128 threads: a sum over 32 MiB reads 128 bytes a thread, two rounds.
    let threads = 2048.0 * 128.0;
    let mut sum = named("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>");
    sum.largest_input_bytes = Some(2.0 * ROUND_BYTES * threads);
    let mut carry = SubFloorCarry::default();
    assert_eq!(
        p.choose_named(&sum, 2400.0, WIDE, &mut carry),
        Choice::Chase { steps: 7, ns: 0 }
    );
    // One round a thread, or inputs the trace did not record: the barrier chase.
    sum.largest_input_bytes = Some(ROUND_BYTES * threads);
    assert_eq!(
        p.choose_named(&sum, 2400.0, WIDE, &mut carry),
        Choice::BarrierChase { steps: 4, ns: 0 }
    );
    sum.largest_input_bytes = None;
    assert_eq!(
        p.choose_named(&sum, 2400.0, WIDE, &mut carry),
        Choice::BarrierChase { steps: 4, ns: 0 }
    );
    // Under chase-barriers every reduction barrier-chases, whatever it reads; a gather that
    // reads as much is no reduction and spins under either.
    sum.largest_input_bytes = Some(4.0 * ROUND_BYTES * threads);
    p.concurrent = ConcurrentStandIn::ChaseBarriers;
    assert_eq!(
        p.choose_named(&sum, 2400.0, WIDE, &mut carry),
        Choice::BarrierChase { steps: 4, ns: 0 }
    );
    let mut gather = named("void at::native::(anonymous namespace)::indexSelectSmallIndex<float>");
    gather.input_bytes = sum.largest_input_bytes;
    for mode in [
        ConcurrentStandIn::ChaseBarriers,
        ConcurrentStandIn::ChaseRounds,
    ] {
        p.concurrent = mode;
        assert_eq!(
            p.choose_named(&gather, 2400.0, WIDE, &mut carry),
            Choice::Spin(500)
        );
    }
}
