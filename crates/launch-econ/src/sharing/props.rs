//! Properties of the sharing lay-out over random walks: it lays every op out once, in finite
//! time, never faster than the op alone nor the walk faster than its perfect overlap,
//! whatever waits for room beside kernels that fill every SM.

use proptest::prelude::*;

use super::*;
use crate::occupancy::SmRoom;

/// `lanes` lanes forked off lane 0's first op, lane `l` running `per_lane` ops, joined back.
fn forked(lanes: usize, per_lane: usize) -> (Schedule, usize) {
    let mut items = vec![Item::Op { lane: 0, op: 0 }];
    let mut op = 1;
    for lane in 1..=lanes {
        items.push(Item::Wait { lane, on: vec![0] });
        for _ in 0..per_lane {
            items.push(Item::Op { lane, op });
            op += 1;
        }
    }
    items.push(Item::Wait {
        lane: 0,
        on: (1..=lanes).collect(),
    });
    items.push(Item::Op { lane: 0, op });
    (super::tests::on_lanes(lanes + 1, items), op + 1)
}

/// What a block needs or an SM has left: a few sizes that do and do not fit each other.
fn room() -> impl Strategy<Value = Option<SmRoom>> {
    prop::option::of((0u32..3).prop_map(|k| SmRoom {
        threads: 128 << k,
        registers: 1024 << (2 * k),
        shared_bytes: 1024 << k,
        blocks: 1,
    }))
}

fn cost() -> impl Strategy<Value = NodeCost> {
    (
        (0.0f64..3.0, 0.0f64..50.0, 0.0f64..1.0, 0.0f64..3000.0),
        (0.0f64..1.0, any::<bool>(), room(), room(), any::<bool>()),
        (0u32..8, 0u32..140, any::<bool>()),
    )
        .prop_map(
            |(
                (fixed_ns, work_ns, share, gb_s),
                (math, waits_on_loads, needs, leaves, from_l2),
                (free_sms, spans_sms, one_an_sm),
            )| {
                NodeCost {
                    fixed_ns,
                    work_ns,
                    share,
                    gb_s,
                    math,
                    waits_on_loads,
                    footing: Footing {
                        needs,
                        leaves,
                        free_sms,
                        spans_sms,
                        one_an_sm,
                    },
                    from_l2,
                }
            },
        )
}

proptest! {
    #[test]
    fn every_op_is_laid_out_once_and_none_runs_faster_than_alone(
        lanes in 1usize..5,
        per_lane in 1usize..6,
        costs in prop::collection::vec(cost(), 32),
        bandwidth in prop::option::of(500.0f64..4000.0),
        l2 in prop::option::of(1000.0f64..8000.0),
    ) {
        let (schedule, ops) = forked(lanes, per_lane);
        let node = |op: usize| costs[op % costs.len()];
        let memory = Bandwidths {
            device_gb_s: bandwidth.unwrap_or(0.0),
            l2_gb_s: l2.unwrap_or(0.0),
        };
        let spans = lay_out_sharing_counted(
            &schedule,
            node,
            |gb_s, _held| gb_s / 2000.0,
            |others, _| others.map(|gb_s| gb_s / 1000.0).sum(),
            memory,
            0.0,
        )
        .spans;
        prop_assert_eq!(spans.len(), ops);
        let plain = schedule.lay_out(|op| node(op).fixed_ns + node(op).work_ns);
        let end = |s: &[(usize, f64, f64)]| s.iter().map(|x| x.2).fold(0.0, f64::max);
        prop_assert!(end(&spans).is_finite());
        prop_assert!(end(&spans) >= end(&plain) - 1e-6, "{} < {}", end(&spans), end(&plain));
        for &(_, start, stop) in &spans {
            prop_assert!(start.is_finite() && stop >= start);
        }
        // Each lane's ops, in order, each no shorter than alone.
        for lane in 0..=lanes {
            let mine: Vec<_> = spans.iter().filter(|s| s.0 == lane).collect();
            let want: Vec<usize> = schedule.items.iter().filter_map(|i| match i {
                Item::Op { lane: l, op } if *l == lane => Some(*op),
                _ => None,
            }).collect();
            prop_assert_eq!(mine.len(), want.len());
            for (s, &op) in mine.iter().zip(&want) {
                let alone = node(op).fixed_ns + node(op).work_ns;
                prop_assert!(s.2 - s.1 >= alone - 1e-6, "op {} took {} of {}", op, s.2 - s.1, alone);
            }
        }
    }
}
