use super::*;
use crate::lanes::Basis;

/// Lane 0 forks lanes 1 and 2 after op 0, they run ops 1 and 2, lane 0 joins them and
/// runs op 3.
pub(super) fn fork_join() -> Schedule {
    forked(2)
}

/// Op 0 on lane 0, then `lanes` lanes forked off it, lane `l` running op `l`, joined back to
/// lane 0, which runs op `lanes + 1`.
pub(super) fn forked(lanes: usize) -> Schedule {
    let mut items = vec![Item::Op { lane: 0, op: 0 }];
    items.extend((1..=lanes).map(|lane| Item::Wait { lane, on: vec![0] }));
    items.extend((1..=lanes).map(|lane| Item::Op { lane, op: lane }));
    items.push(Item::Wait {
        lane: 0,
        on: (1..=lanes).collect(),
    });
    items.push(Item::Op {
        lane: 0,
        op: lanes + 1,
    });
    on_lanes(lanes + 1, items)
}

/// A schedule of `lanes` lanes (streams 1, 2, ...) issuing `items`, read from recorded waits.
pub(super) fn on_lanes(lanes: usize, items: Vec<Item>) -> Schedule {
    Schedule {
        streams: (1..=lanes as u64).map(Some).collect(),
        items,
        basis: Basis::RecordedWaits(lanes),
        forks_on_join: 0,
        waits_again: 0,
        waits_at_record: 0,
        waits_right_after_record: 0,
        waits_on_producer: 0,
        waits_on_all_before: 0,
    }
}

fn end(spans: &[(usize, f64, f64)]) -> f64 {
    spans.iter().map(|s| s.2).fold(0.0, f64::max)
}

pub(super) fn node(fixed_ns: f64, work_ns: f64, share: f64) -> NodeCost {
    NodeCost {
        fixed_ns,
        work_ns,
        share,
        gb_s: 0.0,
        math: 0.0,
        waits_on_loads: false,
        footing: Footing::default(),
        from_l2: false,
    }
}

#[test]
fn a_wait_on_an_earlier_wait_waits_for_that_wait_s_work() {
    // Lane 0 runs op 0; lane 2 waits on it (and its own nothing), runs a long op 1; lane 1
    // waits on the same recording after op 1 was issued, then runs op 2: it follows op 0,
    // not op 1, as the plain lay-out has it.
    let s = Schedule {
        streams: vec![Some(1), Some(2), Some(3)],
        items: vec![
            Item::Op { lane: 0, op: 0 },
            Item::Wait {
                lane: 2,
                on: vec![0, 2],
            },
            Item::Op { lane: 2, op: 1 },
            Item::WaitOn { lane: 1, at: 1 },
            Item::Op { lane: 1, op: 2 },
        ],
        basis: Basis::RecordedWaits(2),
        forks_on_join: 0,
        waits_again: 1,
        waits_at_record: 0,
        waits_right_after_record: 0,
        waits_on_producer: 0,
        waits_on_all_before: 0,
    };
    let costs = [
        node(0.0, 1.0, 0.1),
        node(0.0, 5.0, 0.1),
        node(0.0, 1.0, 0.1),
    ];
    let mut spans = lay_out_sharing(&s, |op| costs[op], |_, _| 0.0, 0.0);
    spans.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    assert_eq!(spans, vec![(0, 0.0, 1.0), (1, 1.0, 2.0), (2, 1.0, 6.0)]);
    let plain = s.lay_out(|op| costs[op].work_ns);
    assert_eq!(plain[2], (1, 1.0, 2.0));
}

#[test]
fn kernels_that_fit_beside_each_other_run_as_laid_out() {
    let s = fork_join();
    let costs = [
        node(1.0, 10.0, 1.0),
        node(1.0, 20.0, 0.3),
        node(1.0, 30.0, 0.6),
    ];
    let spans = lay_out_sharing(&s, |op| costs[op % 3], |_, _| 0.0, 0.0);
    let plain = s.lay_out(|op| costs[op % 3].fixed_ns + costs[op % 3].work_ns);
    assert_eq!(spans.len(), 4);
    // 11 + max(21, 31) + 11.
    assert!((end(&spans) - 53.0).abs() < 1e-9, "{spans:?}");
    assert!((end(&spans) - end(&plain)).abs() < 1e-9);
}

#[test]
fn kernels_holding_more_than_the_gpu_share_it() {
    let s = fork_join();
    // The two side kernels hold 0.75 each: together 1.5, so each runs at 2/3 while both
    // run. Lane 1's 12 ns of work ends at 18 ns; lane 2 then runs alone.
    let costs = [
        node(0.0, 0.0, 0.0),
        node(0.0, 12.0, 0.75),
        node(0.0, 20.0, 0.75),
    ];
    let spans = lay_out_sharing(&s, |op| costs[op.min(2)], |_, _| 0.0, 0.0);
    let lane1 = spans.iter().find(|s| s.0 == 1).unwrap();
    let lane2 = spans.iter().find(|s| s.0 == 2).unwrap();
    assert!((lane1.2 - 18.0).abs() < 1e-9, "{spans:?}");
    // 12 ns of lane 2's work done by 18 ns, 8 left alone: ends at 26.
    assert!((lane2.2 - 26.0).abs() < 1e-9, "{spans:?}");
    // Work is conserved: 0.75 × (12 + 20) = 24 of GPU, between 20 (perfect overlap)
    // and 32 (one after another).
    let joined = spans
        .iter()
        .filter(|s| s.0 == 0)
        .map(|s| s.1)
        .fold(0.0, f64::max);
    assert!((joined - 26.0).abs() < 1e-9, "{spans:?}");
}

#[test]
fn the_fixed_part_is_not_slowed() {
    let s = fork_join();
    // Lane 2's front end (10 ns) runs while lane 1's kernel holds the whole GPU.
    let costs = [
        node(0.0, 0.0, 0.0),
        node(0.0, 10.0, 1.0),
        node(10.0, 5.0, 1.0),
    ];
    let spans = lay_out_sharing(&s, |op| costs[op.min(2)], |_, _| 0.0, 0.0);
    let lane2 = spans.iter().find(|s| s.0 == 2).unwrap();
    assert!((lane2.2 - 15.0).abs() < 1e-9, "{spans:?}");
}

#[test]
fn one_lane_is_the_plain_lay_out() {
    let s = Schedule {
        streams: vec![None],
        items: (0..5).map(|op| Item::Op { lane: 0, op }).collect(),
        basis: Basis::OneStream,
        forks_on_join: 0,
        waits_again: 0,
        waits_at_record: 0,
        waits_right_after_record: 0,
        waits_on_producer: 0,
        waits_on_all_before: 0,
    };
    let c = |op: usize| node(0.5 * op as f64, 3.0 + op as f64, 1.0);
    let spans = lay_out_sharing(&s, c, |_, _| 0.0, 0.0);
    let plain = s.lay_out(|op| c(op).fixed_ns + c(op).work_ns);
    assert_eq!(spans.len(), plain.len());
    for (a, b) in spans.iter().zip(&plain) {
        assert!(
            (a.1 - b.1).abs() < 1e-9 && (a.2 - b.2).abs() < 1e-9,
            "{a:?} {b:?}"
        );
    }
}

#[test]
fn kernels_of_two_lanes_side_by_side_slow_by_their_load() {
    let s = fork_join();
    let gemm = |gb_s: f64, share: f64| NodeCost {
        gb_s,
        ..node(1.0, 10.0, share)
    };
    // Measured: 10% per 100 GB/s of load, of which the sharing of the SMs prices `held`
    // where the kernels hold more than the GPU (as `BesideCosts::beside_stretch` does).
    let stretch = |gb_s: f64, held: f64| (1.0 + gb_s / 1000.0) / held.max(1.0) - 1.0;
    // Lanes 1 and 2 start their kernels together, beside each other, at a load of 250 +
    // 250 GB/s (each beside the other's half, as the measured pair: read at the total): each
    // node runs half as long again, its 11 ns taking 16.5, the extra laid on the kernel.
    let costs = [node(1.0, 10.0, 1.0), gemm(250.0, 0.2), gemm(250.0, 0.3)];
    let spans = lay_out_sharing(&s, |op| costs[op.min(2)], stretch, 0.0);
    // Ops 0 and 3 run alone and do not stretch: 11 + (1 + 15.5) + 11.
    assert!((end(&spans) - 38.5).abs() < 1e-9, "{spans:?}");
    // Lane 2's kernel starts after lane 1's has ended: alone, neither slows.
    let late = [
        node(1.0, 10.0, 1.0),
        gemm(250.0, 0.2),
        NodeCost {
            fixed_ns: 20.0,
            ..gemm(250.0, 0.3)
        },
    ];
    let spans = lay_out_sharing(&s, |op| late[op.min(2)], stretch, 0.0);
    let lane = |l: usize| *spans.iter().find(|s| s.0 == l).unwrap();
    assert!((lane(1).2 - 22.0).abs() < 1e-9, "{spans:?}");
    assert!((lane(2).2 - 41.0).abs() < 1e-9, "{spans:?}");
    // Lane 2's kernel starts halfway through lane 1's: lane 1's runs alone for 5 ns of
    // its work, then both run slower while they overlap, whichever came first, each by
    // half its node over its kernel. Lane 1 (node 11 over kernel 10) does its last 5 ns in
    // 5 x 1.55 = 7.75 (ends at 12 + 5 + 7.75), lane 2 (node 16 over 10) does 7.75 / 1.8 ns
    // of work in that time and the rest alone.
    let halfway = [
        node(1.0, 10.0, 1.0),
        gemm(250.0, 0.2),
        NodeCost {
            fixed_ns: 6.0,
            ..gemm(250.0, 0.3)
        },
    ];
    let spans = lay_out_sharing(&s, |op| halfway[op.min(2)], stretch, 0.0);
    let lane = |l: usize| *spans.iter().find(|s| s.0 == l).unwrap();
    assert!((lane(1).2 - 24.75).abs() < 1e-9, "{spans:?}");
    assert!(
        (lane(2).2 - (24.75 + 10.0 - 7.75 / 1.8)).abs() < 1e-9,
        "{spans:?}"
    );
    // Kernels that together hold more than the GPU share it: both at rate 1 / 1.2, and
    // slowed by what the measured 1.5x leaves beyond that, 1.5 / 1.2, on the node: 10 ns
    // of work in 1.2 x (10 + 0.25 x 11) = 15.3 ns (the measured 16.5 a node less the
    // sharing's share of the front-end part).
    let full = [node(1.0, 10.0, 1.0), gemm(250.0, 0.6), gemm(250.0, 0.6)];
    let spans = lay_out_sharing(&s, |op| full[op.min(2)], stretch, 0.0);
    assert!((end(&spans) - 38.3).abs() < 1e-9, "{spans:?}");
    // Held beyond what was measured: the sharing alone, 1.8 x 10 ns.
    let fuller = [node(1.0, 10.0, 1.0), gemm(250.0, 0.9), gemm(250.0, 0.9)];
    let spans = lay_out_sharing(&s, |op| fuller[op.min(2)], stretch, 0.0);
    assert!(
        (end(&spans) - (11.0 + 19.0 + 11.0)).abs() < 1e-9,
        "{spans:?}"
    );
}

#[test]
fn which_kernel_starts_first_by_a_hair_does_not_decide_the_step() {
    let s = fork_join();
    let stretch = |gb_s: f64, _: f64| gb_s / 1000.0;
    let at = |lag_ns: f64| {
        let costs = [
            node(1.0, 10.0, 1.0),
            NodeCost {
                gb_s: 250.0,
                ..node(1.0, 10.0, 0.2)
            },
            NodeCost {
                gb_s: 250.0,
                ..node(1.0 + lag_ns, 20.0, 0.2)
            },
            node(1.0, 10.0, 1.0),
        ];
        end(&lay_out_sharing(&s, |op| costs[op], stretch, 0.0))
    };
    // Together: each node half as long again, lane 1's kernel at 1 / 1.55 (node 11 over
    // kernel 10) until its 10 ns are done (15.5 ns), lane 2's at 1 / 1.525 (21 over 20),
    // then lane 2's rest alone: 11 + (1 + 15.5 + 20 - 15.5 / 1.525) + 11. Had only the
    // later starter paid, starting lane 2 a hair first would have left it unslowed
    // (11 + 21 + 11).
    let together = 11.0 + (1.0 + 15.5 + 20.0 - 15.5 / 1.525) + 11.0;
    assert!((at(0.0) - together).abs() < 1e-9, "{}", at(0.0));
    for lag in [1e-6, -1e-6, 1e-3] {
        assert!(
            (at(lag) - at(0.0)).abs() <= 2.0 * lag.abs(),
            "{lag}: {}",
            at(lag)
        );
    }
}

#[test]
fn kernels_keeping_more_than_the_arithmetic_busy_share_it() {
    let s = fork_join();
    let gemm = |math: f64| NodeCost {
        math,
        ..node(0.0, 10.0, 0.2)
    };
    let none = |_: f64, _: f64| 0.0;
    let at = |a: f64, b: f64| {
        let costs = [node(0.0, 0.0, 0.0), gemm(a), gemm(b), node(0.0, 0.0, 0.0)];
        end(&lay_out_sharing(&s, |op| costs[op], none, 0.0))
    };
    // Their blocks fit together (0.2 + 0.2 of the SMs), but 0.75 + 0.75 of the
    // arithmetic: both at 1 / 1.5 of their rate, 15 ns.
    assert!((at(0.75, 0.75) - 15.0).abs() < 1e-9, "{}", at(0.75, 0.75));
    // Together under the peak: each as alone.
    assert!((at(0.5, 0.4) - 10.0).abs() < 1e-9, "{}", at(0.5, 0.4));
    // What the arithmetic's sharing prices is not priced again by the measured stretch:
    // `held` is the arithmetic's 1.5 where that is more than the SMs' 0.4.
    let seen = std::cell::Cell::new(0.0f64);
    let costs = [
        node(0.0, 0.0, 0.0),
        gemm(0.75),
        gemm(0.75),
        node(0.0, 0.0, 0.0),
    ];
    lay_out_sharing(
        &s,
        |op| costs[op],
        |_, held| {
            seen.set(seen.get().max(held));
            0.0
        },
        0.0,
    );
    assert!((seen.get() - 1.5).abs() < 1e-9, "{}", seen.get());
}

#[test]
fn kernels_asking_for_more_than_the_bandwidth_share_it() {
    let s = fork_join();
    let gemm = |gb_s: f64| NodeCost {
        gb_s,
        ..node(0.0, 10.0, 0.1)
    };
    // 1500 + 1500 GB/s against 2000: both at 2000 / 3000 of full rate, 15 ns.
    let costs = [
        node(0.0, 0.0, 0.0),
        gemm(1500.0),
        gemm(1500.0),
        node(0.0, 0.0, 0.0),
    ];
    let spans = lay_out_sharing(&s, |op| costs[op], |_, _| 0.0, 2000.0);
    assert!((end(&spans) - 15.0).abs() < 1e-9, "{spans:?}");
    // A kernel that alone asks for more (3000) is the bandwidth: with 1000 beside it,
    // both at 3000 / 4000.
    let costs = [
        node(0.0, 0.0, 0.0),
        gemm(3000.0),
        gemm(1000.0),
        node(0.0, 0.0, 0.0),
    ];
    let spans = lay_out_sharing(&s, |op| costs[op], |_, _| 0.0, 2000.0);
    assert!((end(&spans) - 40.0 / 3.0).abs() < 1e-9, "{spans:?}");
    // Without a bandwidth they fit the SMs and run as laid out.
    let spans = lay_out_sharing(&s, |op| costs[op], |_, _| 0.0, 0.0);
    assert!((end(&spans) - 10.0).abs() < 1e-9, "{spans:?}");
    // A lone kernel above the bandwidth is not slowed by it.
    let lone = [
        node(0.0, 0.0, 0.0),
        gemm(3000.0),
        node(0.0, 0.0, 0.0),
        node(0.0, 0.0, 0.0),
    ];
    let spans = lay_out_sharing(&s, |op| lone[op], |_, _| 0.0, 2000.0);
    assert!((end(&spans) - 10.0).abs() < 1e-9, "{spans:?}");
}

/// A GEMM's node of 10 ns of work holding `share` of the GPU and asking `gb_s` of memory.
pub(super) fn gemm_asking(gb_s: f64, share: f64) -> NodeCost {
    NodeCost {
        gb_s,
        ..node(0.0, 10.0, share)
    }
}

/// A small kernel's node of 4 ns of work that waits on its loads (asking 10 GB/s).
pub(super) fn small_kernel() -> NodeCost {
    NodeCost {
        gb_s: 10.0,
        waits_on_loads: true,
        ..node(0.0, 4.0, 0.05)
    }
}

/// When the op of `lane` ends in `spans` (the lane's first op).
pub(super) fn lane_end(spans: &[(usize, f64, f64)], lane: usize) -> f64 {
    spans.iter().find(|s| s.0 == lane).unwrap().2
}

#[test]
fn a_kernel_that_waits_on_its_loads_runs_slower_beside_the_others_load() {
    let s = fork_join();
    // Lane 1 runs a GEMM asking 2000 GB/s, lane 2 beside it a small kernel asking 10.
    let (gemm, small) = (gemm_asking(2000.0, 0.5), small_kernel());
    let costs = [node(0.0, 1.0, 1.0), gemm, small];
    // Measured for small kernels: +100% at 2000 GB/s of another kernel, linear from zero,
    // summed over the kernels beside it.
    let small_stretch =
        |others: &mut dyn Iterator<Item = f64>| others.map(|gb_s| gb_s / 2000.0).sum::<f64>();
    let spans = lay_out_sharing_with(&s, |op| costs[op.min(2)], |_, _| 0.0, small_stretch, 0.0);
    // The small kernel runs at half its pace beside the GEMM (the others' 2000 GB/s; its own
    // 10 is not the others'): 4 ns of work from 1 to 9. The GEMM keeps its pace.
    assert!((lane_end(&spans, 2) - 9.0).abs() < 1e-9, "{spans:?}");
    assert!((lane_end(&spans, 1) - 11.0).abs() < 1e-9, "{spans:?}");
    // Where the pair stretch is more, it is the pair stretch.
    let spans = lay_out_sharing_with(&s, |op| costs[op.min(2)], |_, _| 2.0, small_stretch, 0.0);
    assert!((lane_end(&spans, 2) - 13.0).abs() < 1e-9, "{spans:?}");
    // Alone it keeps its pace: lane 1 runs nothing but an empty node.
    let alone = [node(0.0, 1.0, 1.0), node(0.0, 0.0, 0.0), small];
    let spans = lay_out_sharing_with(&s, |op| alone[op.min(2)], |_, _| 0.0, small_stretch, 0.0);
    assert!((lane_end(&spans, 2) - 5.0).abs() < 1e-9, "{spans:?}");
    // And `lay_out_sharing` prices no such stretch.
    let spans = lay_out_sharing(&s, |op| costs[op.min(2)], |_, _| 0.0, 0.0);
    assert!((lane_end(&spans, 2) - 5.0).abs() < 1e-9, "{spans:?}");
}

#[test]
fn a_kernel_that_waits_on_its_loads_is_given_every_other_running_kernels_load() {
    // Three lanes forked off lane 0: two GEMMs asking 1000 GB/s each beside a small kernel.
    let s = forked(3);
    let (gemm, small) = (gemm_asking(1000.0, 0.2), small_kernel());
    let costs = [node(0.0, 1.0, 1.0), gemm, gemm, small, node(0.0, 0.0, 0.0)];
    // The lay-out hands the stretch the loads of the other kernels running, not the small
    // kernel's own: here the two GEMMs' (the profile's model sums what each costs: +50% each,
    // +100% together, so 4 ns of work from 1 to 9).
    let seen = std::cell::RefCell::new(Vec::new());
    let small_stretch = |others: &mut dyn Iterator<Item = f64>| {
        let loads: Vec<f64> = others.collect();
        seen.borrow_mut().push(loads.clone());
        loads.iter().map(|gb_s| gb_s / 2000.0).sum::<f64>()
    };
    let spans = lay_out_sharing_with(&s, |op| costs[op], |_, _| 0.0, small_stretch, 0.0);
    assert!((lane_end(&spans, 3) - 9.0).abs() < 1e-9, "{spans:?}");
    assert!((lane_end(&spans, 1) - 11.0).abs() < 1e-9, "{spans:?}");
    assert!(
        seen.borrow().iter().any(|l| l == &[1000.0, 1000.0]),
        "{seen:?}"
    );
    assert!(seen.borrow().iter().all(|l| !l.contains(&10.0)), "{seen:?}");
}

#[test]
fn a_kernel_that_waits_on_its_loads_is_given_the_load_the_others_run_at() {
    // Two GEMMs asking 2000 GB/s each beside a small kernel asking 10, on a memory of 2000
    // GB/s: together they ask 4010, so every kernel runs at 2000 / 4010 of its pace, and the
    // GEMMs move 2000 × 2000 / 4010 GB/s each. The small kernel is slowed at that, not at
    // what they would move alone.
    let s = forked(3);
    let (gemm, small) = (gemm_asking(2000.0, 0.2), small_kernel());
    let costs = [node(0.0, 1.0, 1.0), gemm, gemm, small, node(0.0, 0.0, 0.0)];
    let seen = std::cell::RefCell::new(Vec::new());
    let small_stretch = |others: &mut dyn Iterator<Item = f64>| {
        seen.borrow_mut().extend(others);
        0.0
    };
    lay_out_sharing_with(&s, |op| costs[op], |_, _| 0.0, small_stretch, 2000.0);
    let moved = 2000.0 * 2000.0 / 4010.0;
    let seen = seen.borrow();
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|&gb_s| (gb_s - moved).abs() < 1e-9),
        "{seen:?}"
    );
}

#[test]
fn a_kernel_is_slowed_at_the_load_beside_it_not_its_own() {
    // Twice what the others ask, at most the total.
    assert_eq!(load_beside(500.0, 250.0), 500.0);
    assert_eq!(load_beside(500.0, 100.0), 500.0);
    assert_eq!(load_beside(2010.0, 2000.0), 20.0);
    assert_eq!(load_beside(300.0, 300.0), 0.0);
    // A GEMV asking 2000 GB/s beside a kernel asking 10 (neither waits on its loads): the
    // stretch is +10% per 100 GB/s. The GEMV is read at the 20 GB/s beside it (+2%: its
    // node of 10 ns takes 10.2), the small kernel at the whole 2010 (+201%): while the GEMV
    // runs it does 10.2 / 3.01 ns of its 4, the rest alone after.
    let s = fork_join();
    let stretch = |gb_s: f64, _held: f64| gb_s / 1000.0;
    let small = NodeCost {
        waits_on_loads: false,
        ..small_kernel()
    };
    let costs = [node(0.0, 1.0, 1.0), gemm_asking(2000.0, 0.5), small];
    let spans = lay_out_sharing(&s, |op| costs[op.min(2)], stretch, 0.0);
    assert!((lane_end(&spans, 1) - 11.2).abs() < 1e-9, "{spans:?}");
    let small_end = 11.2 + (4.0 - 10.2 / 3.01);
    assert!((lane_end(&spans, 2) - small_end).abs() < 1e-9, "{spans:?}");
}

#[test]
fn a_kernel_beside_a_slowed_small_kernel_is_read_at_what_that_kernel_moves() {
    // A GEMM asking 2000 GB/s beside a small kernel asking 1000 that runs at half its pace
    // beside it (+100%): the small kernel moves 500, so the GEMM's stretch (+10% per 1000
    // GB/s) is read at twice that, 1000 (+10%), not at twice the 1000 it would ask alone.
    let s = fork_join();
    let small = NodeCost {
        gb_s: 1000.0,
        ..small_kernel()
    };
    let costs = [node(0.0, 1.0, 1.0), gemm_asking(2000.0, 0.5), small];
    let stretch = |gb_s: f64, _held: f64| gb_s / 10_000.0;
    let small_stretch = |others: &mut dyn Iterator<Item = f64>| {
        if others.count() > 0 {
            1.0
        } else {
            0.0
        }
    };
    let spans = lay_out_sharing_with(&s, |op| costs[op.min(2)], stretch, small_stretch, 0.0);
    // The small kernel's 4 ns of work take 8, from 1 to 9; the GEMM does 8 / 1.1 ns of its
    // 10 by then and the rest alone.
    assert!((lane_end(&spans, 2) - 9.0).abs() < 1e-9, "{spans:?}");
    let gemm_end = 9.0 + (10.0 - 8.0 / 1.1);
    assert!((lane_end(&spans, 1) - gemm_end).abs() < 1e-9, "{spans:?}");
}
