//! The front end's cost per other lane ([`crate::front_end`]) in the lay-out.

use super::tests::{node, on_lanes};
use super::*;

/// `lanes` lanes of `n` ops each, issued round by round, with no waits between them.
fn side_by_side(lanes: usize, n: usize) -> Schedule {
    on_lanes(
        lanes,
        (0..n)
            .flat_map(|i| {
                (0..lanes).map(move |lane| Item::Op {
                    lane,
                    op: i * lanes + lane,
                })
            })
            .collect(),
    )
}

fn lay_out(s: &Schedule, cost: impl Fn(usize) -> NodeCost, per_lane_ns: f64) -> Vec<Span> {
    lay_out_sharing_counted(
        s,
        cost,
        |_, _| 0.0,
        |_, _| 0.0,
        Bandwidths::default(),
        per_lane_ns,
    )
    .spans
}

type Span = (usize, f64, f64);

fn lane_end(spans: &[Span], lane: usize) -> f64 {
    spans
        .iter()
        .filter(|s| s.0 == lane)
        .map(|s| s.2)
        .fold(0.0, f64::max)
}

#[test]
fn every_node_pays_for_each_other_lane_with_nodes_left() {
    // Three lanes of four nodes (10 ns front end, 10 ns of a kernel holding a tenth of the
    // GPU): every node, the first of each lane included, starts beside two other lanes.
    let s = side_by_side(3, 4);
    let spans = lay_out(&s, |_| node(10.0, 10.0, 0.1), 1.5);
    for lane in 0..3 {
        assert!(
            (lane_end(&spans, lane) - 4.0 * (20.0 + 2.0 * 1.5)).abs() < 1e-9,
            "{spans:?}"
        );
    }
    // Without the cost the lanes overlap perfectly.
    let free = lay_out(&s, |_| node(10.0, 10.0, 0.1), 0.0);
    assert!((lane_end(&free, 2) - 80.0).abs() < 1e-9, "{free:?}");
}

#[test]
fn a_lane_that_has_run_its_nodes_costs_nothing() {
    // Lane 0 runs one node, lane 1 three: lane 1's first node starts beside lane 0's and pays
    // 2 ns; lane 0 has ended when lane 1's second begins.
    let s = on_lanes(
        2,
        vec![
            Item::Op { lane: 0, op: 0 },
            Item::Op { lane: 1, op: 1 },
            Item::Op { lane: 1, op: 2 },
            Item::Op { lane: 1, op: 3 },
        ],
    );
    let spans = lay_out(&s, |_| node(10.0, 10.0, 0.1), 2.0);
    assert!((lane_end(&spans, 0) - 22.0).abs() < 1e-9, "{spans:?}");
    assert!((lane_end(&spans, 1) - 62.0).abs() < 1e-9, "{spans:?}");
}

/// Lane `lane` waits on op `on`.
fn wait(lane: usize, on: usize) -> Item {
    Item::Wait { lane, on: vec![on] }
}

/// Every op's end, ns, in order, on two lanes of `items` whose nodes each take 10 ns of front
/// end and 10 of a kernel holding a tenth of the GPU, 3 ns more for each other lane counted.
fn sorted_ends(items: Vec<Item>) -> Vec<f64> {
    let spans = lay_out(&on_lanes(2, items), |_| node(10.0, 10.0, 0.1), 3.0);
    let mut ends: Vec<f64> = spans.iter().map(|s| s.2).collect();
    ends.sort_by(f64::total_cmp);
    ends
}

#[test]
fn a_lane_waiting_on_another_costs_nothing_while_it_waits() {
    // Two chains that take turns: op 0 on lane 0, op 1 on lane 1 after it, op 2 on lane 0
    // after that. At every node the other lane waits on it, so no node pays the 3 ns.
    let ends = sorted_ends(vec![
        Item::Op { lane: 0, op: 0 },
        wait(1, 0),
        Item::Op { lane: 1, op: 1 },
        wait(0, 1),
        Item::Op { lane: 0, op: 2 },
    ]);
    assert_eq!(ends, vec![20.0, 40.0, 60.0]);
}

#[test]
fn a_lane_whose_wait_is_met_as_a_node_starts_costs_it() {
    // Lane 0 runs ops 0 and 2; lane 1 waits on op 0, then runs op 1. Op 0 runs alone (lane
    // 1's wait is not met); when it ends, op 2 and op 1 start together and each pays 3 ns
    // for the other lane.
    let ends = sorted_ends(vec![
        Item::Op { lane: 0, op: 0 },
        wait(1, 0),
        Item::Op { lane: 1, op: 1 },
        Item::Op { lane: 0, op: 2 },
    ]);
    assert_eq!(ends, vec![20.0, 43.0, 43.0]);
}
