//! The room kernels find beside others': waiting beside kernels that fill every SM, and
//! running in more rounds, or waiting, beside kernels of whole-SM blocks that leave SMs empty.

use super::tests::{node, on_lanes};
use super::*;
use crate::occupancy::SmRoom;

/// An SM's room with `registers` registers left (threads, shared memory and block slots to
/// spare).
fn room(registers: u32) -> SmRoom {
    SmRoom {
        threads: 1664,
        registers,
        shared_bytes: 68_000,
        blocks: 31,
    }
}

/// A kernel of `work_ns` whose blocks fill every SM, holding `share` of the GPU beside
/// others, and leaving 1024 registers an SM.
fn full(work_ns: f64, share: f64) -> NodeCost {
    NodeCost {
        footing: Footing {
            needs: Some(room(64_512)),
            leaves: Some(room(1024)),
            spans_sms: 132,
            one_an_sm: true,
            ..Footing::default()
        },
        ..node(0.0, work_ns, share)
    }
}

/// [`full`] of 128 blocks on an H200's 132 SMs: 4 SMs left empty.
fn all_but_four(work_ns: f64, share: f64) -> NodeCost {
    let full = full(work_ns, share);
    NodeCost {
        footing: Footing {
            free_sms: 4,
            spans_sms: 128,
            ..full.footing
        },
        ..full
    }
}

/// A small kernel of `work_ns` whose block takes `registers` registers.
fn small_needing(work_ns: f64, registers: u32) -> NodeCost {
    NodeCost {
        footing: Footing {
            needs: Some(SmRoom {
                threads: 128,
                registers,
                shared_bytes: 1024,
                blocks: 1,
            }),
            spans_sms: 1,
            ..Footing::default()
        },
        ..node(0.0, work_ns, 0.01)
    }
}

/// [`small_needing`] 4096 registers a block, with blocks that take `sms` SMs at once.
fn spanning(work_ns: f64, sms: u32) -> NodeCost {
    let small = small_needing(work_ns, 4096);
    NodeCost {
        footing: Footing {
            spans_sms: sms,
            ..small.footing
        },
        ..small
    }
}

/// Two lanes of one op each, op `l` on lane `l`, both ready at once.
fn two_lanes() -> Schedule {
    on_lanes(
        2,
        vec![Item::Op { lane: 0, op: 0 }, Item::Op { lane: 1, op: 1 }],
    )
}

/// [`two_lanes`] laid out with `costs` (op `l` on lane `l`), no stretch and no bandwidth:
/// each lane's (lane, start, end) in lane order.
fn two_lanes_laid_out(costs: [NodeCost; 2]) -> Vec<(usize, f64, f64)> {
    let mut s = lay_out_sharing(&two_lanes(), |op| costs[op], |_, _| 0.0, 0.0);
    s.sort_by_key(|x| x.0);
    s
}

/// Asserts that [`two_lanes_laid_out`] with `costs` ends each (lane, ns) of `ends` there.
fn assert_ends(costs: [NodeCost; 2], ends: &[(usize, f64)]) {
    let s = two_lanes_laid_out(costs);
    for &(lane, end) in ends {
        assert!((s[lane].2 - end).abs() < 1e-6, "lane {lane}: {s:?}");
    }
}

#[test]
fn a_kernel_that_fits_nowhere_beside_a_full_kernel_waits_for_its_blocks_to_retire() {
    // A GEMV filling every SM for 100 ns, holding three quarters of the GPU beside others,
    // and a LayerNorm block needing 4096 registers where 1024 are left: the norm finds room
    // only in the GEMV's last quarter, and runs its 10 ns from 75.
    assert_ends(
        [full(100.0, 0.75), small_needing(10.0, 4096)],
        &[(0, 100.0), (1, 85.0)],
    );
    // A block that fits in what the GEMV leaves (one warp) runs beside it from the start.
    assert_ends([full(100.0, 0.75), small_needing(10.0, 1024)], &[(1, 10.0)]);
    // A kernel of blocks that hold the GPU to its end (a persistent GEMM: share 1) keeps
    // the norm out until it ends.
    assert_ends([full(100.0, 1.0), small_needing(10.0, 4096)], &[(1, 110.0)]);
}

#[test]
fn a_full_kernel_that_begins_later_does_not_hold_back_one_already_running() {
    // Lane 1's norm begins first (the GEMV's node spends 5 ns in the front end before its
    // kernel); the GEMV that fills the SMs after it does not stop it.
    let gemv = NodeCost {
        fixed_ns: 5.0,
        ..full(100.0, 0.75)
    };
    assert_ends([gemv, small_needing(10.0, 4096)], &[(1, 10.0)]);
    // Two full kernels beginning together: lane 1's, taken second, waits for lane 0's last
    // quarter, and neither waits for the other forever.
    // From 75 the two share the GPU (0.75 each, 1.5 together): lane 0's last 25 ns take
    // 37.5, to 112.5, where lane 1 has done 25 of its 40 and runs the rest alone.
    assert_ends(
        [full(100.0, 0.75), full(40.0, 0.75)],
        &[(0, 112.5), (1, 127.5)],
    );
}

#[test]
fn beside_whole_sm_blocks_that_leave_sms_empty_a_kernel_runs_there_in_rounds_or_waits() {
    // A GEMV of 128 whole-SM blocks for 100 ns, holding three quarters of the GPU: 4 SMs empty.
    // A kernel whose blocks fit on them runs beside it from the start.
    assert_ends([all_but_four(100.0, 0.75), spanning(10.0, 4)], &[(1, 10.0)]);
    // One spanning 8 SMs runs there in two rounds (20 ns) rather than wait 75.
    assert_ends(
        [all_but_four(100.0, 0.75), spanning(10.0, 8)],
        &[(1, 20.0), (0, 100.0)],
    );
    // One spanning 16 SMs with 40 ns of work would take four rounds, 160 ns: it waits for
    // the GEMV's blocks to begin retiring at 75 and runs its 40 ns from there.
    assert_ends(
        [all_but_four(100.0, 0.75), spanning(40.0, 16)],
        &[(1, 115.0)],
    );
    // A kernel of whole-SM blocks beside it does not wait: the two share the GPU, as the
    // profile's GEMM pair measured (0.75 each: both at 1 / 1.5 of their pace).
    assert_ends(
        [all_but_four(100.0, 0.75), all_but_four(40.0, 0.75)],
        &[(1, 60.0)],
    );
}

#[test]
fn a_kernel_that_began_in_rounds_goes_on_in_them_whatever_else_ends_meanwhile() {
    // The GEMV of 128 whole-SM blocks (100 ns, its blocks retiring from 75) and a kernel
    // spanning 8 SMs with 60 ns of work: two rounds (120 ns) beat waiting (75 + 60), so it
    // runs there at half its pace, 37.5 ns done by 75, and the last 22.5 alone: ends at 97.5.
    let costs = [
        all_but_four(100.0, 0.75),
        spanning(60.0, 8),
        small_needing(40.0, 1024),
    ];
    assert_ends([costs[0], costs[1]], &[(1, 97.5)]);
    // A third lane's kernel that fits beside the GEMV and ends at 40 changes nothing for it,
    // though by then waiting for the GEMV's SMs (35 ns more, then 40) would look as short as
    // the rounds left (80): blocks running on the empty SMs do not leave them.
    let three = on_lanes(3, (0..3).map(|l| Item::Op { lane: l, op: l }).collect());
    let mut s = lay_out_sharing(&three, |op| costs[op], |_, _| 0.0, 0.0);
    s.sort_by_key(|x| x.0);
    assert!((s[2].2 - 40.0).abs() < 1e-6, "{s:?}");
    assert!((s[1].2 - 97.5).abs() < 1e-6, "{s:?}");
}
