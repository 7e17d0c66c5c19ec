//! Kernels whose bytes come from the L2 ([`NodeCost::from_l2`]) in the lay-out.

use super::tests::{forked, gemm_asking, lane_end, node, small_kernel};
use super::*;

/// A small kernel's node of 4 ns of work asking `gb_s`, from the L2 or not.
fn small_asking(gb_s: f64, from_l2: bool) -> NodeCost {
    NodeCost {
        gb_s,
        from_l2,
        ..small_kernel()
    }
}

/// `lanes` lanes of one op each forked off a 1 ns op, each op `cost`, laid out with a small
/// kernel's stretch of +100% for each 1000 GB/s the others ask and `memory`.
fn lanes_of(lanes: usize, cost: NodeCost, memory: Bandwidths) -> Vec<(usize, f64, f64)> {
    let s = forked(lanes);
    let small_stretch =
        |others: &mut dyn Iterator<Item = f64>, _: Option<f64>| others.map(|g| g / 1000.0).sum();
    let node_of = |op: usize| match op {
        0 => node(0.0, 1.0, 1.0),
        op if op <= lanes => cost,
        _ => node(0.0, 0.0, 0.0),
    };
    lay_out_sharing_counted(&s, node_of, |_, _| 0.0, small_stretch, memory, 0.0).spans
}

const MEMORY: Bandwidths = Bandwidths {
    device_gb_s: 3000.0,
    l2_gb_s: 6000.0,
};

#[test]
fn small_kernels_from_the_l2_share_its_bandwidth_not_device_memory_s() {
    // Two lanes asking 3000 GB/s each: 6000 together, all the L2 gives, so each keeps its
    // pace (4 ns of work from 1 to 5), and neither waits behind the other's traffic.
    let spans = lanes_of(2, small_asking(3000.0, true), MEMORY);
    for lane in [1, 2] {
        assert!((lane_end(&spans, lane) - 5.0).abs() < 1e-9, "{spans:?}");
    }
    // From device memory the same kernels share its 3000 (twice as long) and each waits
    // behind the other's 1500 as well (+150%): 4 × 2 × 2.5 = 20 ns.
    let spans = lanes_of(2, small_asking(3000.0, false), MEMORY);
    for lane in [1, 2] {
        assert!((lane_end(&spans, lane) - 21.0).abs() < 1e-9, "{spans:?}");
    }
    // Three lanes from the L2 ask 9000 of its 6000: each runs at 2/3 of its pace, 1 to 7.
    let spans = lanes_of(3, small_asking(3000.0, true), MEMORY);
    for lane in [1, 2, 3] {
        assert!((lane_end(&spans, lane) - 7.0).abs() < 1e-9, "{spans:?}");
    }
    // Without the L2's bandwidth measured, nothing is shared (as device memory's without it).
    let l2_unknown = Bandwidths {
        l2_gb_s: 0.0,
        ..MEMORY
    };
    let spans = lanes_of(3, small_asking(3000.0, true), l2_unknown);
    assert!((lane_end(&spans, 3) - 5.0).abs() < 1e-9, "{spans:?}");
}

#[test]
fn a_small_kernel_from_the_l2_still_waits_behind_a_gemm_streaming_device_memory() {
    // Lane 1 a GEMM asking 2000 GB/s of device memory, lane 2 a small kernel from the L2
    // asking 1000. The GEMM's pair stretch (+10% a 1000 GB/s beside it) is read at what runs
    // beside it on device memory, nothing: its 10 ns end at 11. The small kernel is slowed by
    // the GEMM's traffic (+100% a 1000 GB/s: +200%): 10 / 3 ns of its 4 by then, the rest
    // alone.
    let s = forked(2);
    let costs = [
        node(0.0, 1.0, 1.0),
        gemm_asking(2000.0, 0.5),
        small_asking(1000.0, true),
        node(0.0, 0.0, 0.0),
    ];
    let small_stretch =
        |others: &mut dyn Iterator<Item = f64>, _: Option<f64>| others.map(|g| g / 1000.0).sum();
    let stretch = |gb_s: f64, _held: f64| gb_s / 10_000.0;
    let spans =
        lay_out_sharing_counted(&s, |op| costs[op], stretch, small_stretch, MEMORY, 0.0).spans;
    assert!((lane_end(&spans, 1) - 11.0).abs() < 1e-9, "{spans:?}");
    let small_end = 11.0 + (4.0 - 10.0 / 3.0);
    assert!((lane_end(&spans, 2) - small_end).abs() < 1e-9, "{spans:?}");
    // Were the small kernel's bytes device memory's, the GEMM would be read at the 1000 GB/s
    // the small kernel moves at its pace (1000 / 3, twice that beside it): longer than 11.
    let costs = [costs[0], costs[1], small_asking(1000.0, false), costs[3]];
    let spans =
        lay_out_sharing_counted(&s, |op| costs[op], stretch, small_stretch, MEMORY, 0.0).spans;
    assert!(lane_end(&spans, 1) > 11.0 + 1e-6, "{spans:?}");
}

#[test]
fn a_small_kernel_among_kernels_from_the_l2_is_told_its_node_time() {
    // A stretch of +100% where it is not among lanes within the L2, none where it is: two lanes
    // of small kernels from the L2 keep their 4 ns (1 to 5), and the node time they are told
    // is theirs alone.
    let s = forked(2);
    let told = std::cell::RefCell::new(Vec::new());
    let small_stretch = |_: &mut dyn Iterator<Item = f64>, among: Option<f64>| {
        told.borrow_mut().push(among);
        if among.is_some() {
            0.0
        } else {
            1.0
        }
    };
    let lay_out = |second: NodeCost| {
        let costs = [
            node(0.0, 1.0, 1.0),
            small_asking(10.0, true),
            second,
            node(0.0, 0.0, 0.0),
        ];
        lay_out_sharing_counted(&s, |op| costs[op], |_, _| 0.0, small_stretch, MEMORY, 0.0).spans
    };
    let spans = lay_out(small_asking(10.0, true));
    for lane in [1, 2] {
        assert!((lane_end(&spans, lane) - 5.0).abs() < 1e-9, "{spans:?}");
    }
    assert!(!told.borrow().is_empty());
    assert!(
        told.borrow().iter().all(|t| *t == Some(4.0)),
        "{:?}",
        told.borrow()
    );
    // Beside a kernel reading device memory, neither is among lanes within the L2: +100% while
    // they run together (both 4 ns of work at half pace: 1 to 9).
    told.borrow_mut().clear();
    let spans = lay_out(small_asking(10.0, false));
    for lane in [1, 2] {
        assert!((lane_end(&spans, lane) - 9.0).abs() < 1e-9, "{spans:?}");
    }
    assert!(
        told.borrow().iter().all(Option::is_none),
        "{:?}",
        told.borrow()
    );
}

#[test]
fn among_lanes_from_the_l2_the_small_pairs_time_a_node_adds_to_their_share() {
    // A small kernel's stretch beside the others of +25% of its node, however they ask.
    let small_stretch = |_: &mut dyn Iterator<Item = f64>, _: Option<f64>| 0.25;
    let two_lanes_of = |cost: NodeCost| {
        let node_of = |op: usize| match op {
            0 => node(0.0, 1.0, 1.0),
            1 | 2 => cost,
            _ => node(0.0, 0.0, 0.0),
        };
        lay_out_sharing_counted(&forked(2), node_of, |_, _| 0.0, small_stretch, MEMORY, 0.0).spans
    };
    // Two lanes from the L2 asking 6000 GB/s each of its 6000: each at half its pace. Among
    // such lanes the small pair's cost is a time a node, added to that share, not stretched
    // by it: 4 ns of work at 1 / (2 + 0.25), 9 ns, from 1 to 10.
    let spans = two_lanes_of(small_asking(6000.0, true));
    for lane in [1, 2] {
        assert!((lane_end(&spans, lane) - 10.0).abs() < 1e-9, "{spans:?}");
    }
    // From device memory (3000 asked each of its 3000) the stretch multiplies the share, as
    // the pair stretches were measured: 4 × 2 × 1.25 = 10 ns, from 1 to 11.
    let spans = two_lanes_of(small_asking(3000.0, false));
    for lane in [1, 2] {
        assert!((lane_end(&spans, lane) - 11.0).abs() < 1e-9, "{spans:?}");
    }
}
