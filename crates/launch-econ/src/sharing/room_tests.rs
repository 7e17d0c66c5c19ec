//! The room kernels find beside others': waiting beside kernels that fill every SM, and small
//! kernels confined to the SMs that kernels of fewer blocks leave.

use super::tests::node;
use super::*;
use crate::lanes::Basis;

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
        needs: Some(room(64_512)),
        leaves: Some(room(1024)),
        ..node(0.0, work_ns, share)
    }
}

/// A small kernel of `work_ns` whose block takes `registers` registers.
fn small_needing(work_ns: f64, registers: u32) -> NodeCost {
    NodeCost {
        needs: Some(SmRoom {
            threads: 128,
            registers,
            shared_bytes: 1024,
            blocks: 1,
        }),
        ..node(0.0, work_ns, 0.01)
    }
}

/// Two lanes of one op each, op `l` on lane `l`, both ready at once.
fn two_lanes() -> Schedule {
    let items = vec![Item::Op { lane: 0, op: 0 }, Item::Op { lane: 1, op: 1 }];
    Schedule {
        streams: vec![Some(1), Some(2)],
        items,
        basis: Basis::RecordedWaits(0),
        forks_on_join: 0,
        waits_again: 0,
        waits_at_record: 0,
        waits_on_all_before: 0,
    }
}

/// [`two_lanes`] laid out with `costs` (op `l` on lane `l`), no stretch and no bandwidth:
/// each lane's (lane, start, end) in lane order.
fn two_lanes_laid_out(costs: [NodeCost; 2]) -> Vec<(usize, f64, f64)> {
    let mut s = lay_out_sharing(&two_lanes(), |op| costs[op], |_, _| 0.0, 0.0);
    s.sort_by_key(|x| x.0);
    s
}

#[test]
fn a_kernel_that_fits_nowhere_beside_a_full_kernel_waits_for_its_blocks_to_retire() {
    // A GEMV filling every SM for 100 ns, holding three quarters of the GPU beside others,
    // and a LayerNorm block needing 4096 registers where 1024 are left: the norm finds room
    // only in the GEMV's last quarter, and runs its 10 ns from 75.
    let s = two_lanes_laid_out([full(100.0, 0.75), small_needing(10.0, 4096)]);
    assert!((s[0].2 - 100.0).abs() < 1e-6, "{s:?}");
    assert!((s[1].2 - 85.0).abs() < 1e-6, "{s:?}");
    // A block that fits in what the GEMV leaves (one warp) runs beside it from the start.
    let s = two_lanes_laid_out([full(100.0, 0.75), small_needing(10.0, 1024)]);
    assert!((s[1].2 - 10.0).abs() < 1e-6, "{s:?}");
    // A kernel of blocks that hold the GPU to its end (a persistent GEMM: share 1) keeps
    // the norm out until it ends.
    let s = two_lanes_laid_out([full(100.0, 1.0), small_needing(10.0, 4096)]);
    assert!((s[1].2 - 110.0).abs() < 1e-6, "{s:?}");
}

#[test]
fn a_full_kernel_that_begins_later_does_not_hold_back_one_already_running() {
    // Lane 1's norm begins first (the GEMV's node spends 5 ns in the front end before its
    // kernel); the GEMV that fills the SMs after it does not stop it.
    let gemv = NodeCost {
        fixed_ns: 5.0,
        ..full(100.0, 0.75)
    };
    let s = two_lanes_laid_out([gemv, small_needing(10.0, 4096)]);
    assert!((s[1].2 - 10.0).abs() < 1e-6, "{s:?}");
    // Two full kernels beginning together: lane 1's, taken second, waits for lane 0's last
    // quarter, and neither waits for the other forever.
    let s = two_lanes_laid_out([full(100.0, 0.75), full(40.0, 0.75)]);
    // From 75 the two share the GPU (0.75 each, 1.5 together): lane 0's last 25 ns take
    // 37.5, to 112.5, where lane 1 has done 25 of its 40 and runs the rest alone.
    assert!((s[0].2 - 112.5).abs() < 1e-6, "{s:?}");
    assert!((s[1].2 - 127.5).abs() < 1e-6, "{s:?}");
}

/// A kernel of `work_ns` whose `sms` blocks each hold an SM, leaving 1024 registers on it,
/// holding `share` of the GPU beside others.
fn holding(sms: u32, work_ns: f64, share: f64) -> NodeCost {
    NodeCost {
        needs: Some(room(64_512)),
        holds: Some(HeldSms {
            sms,
            room: room(1024),
        }),
        ..node(0.0, work_ns, share)
    }
}

/// A small kernel that waits on its loads: `blocks` blocks of 128 threads (16 an SM), each
/// needing `registers` registers, `work_ns` alone.
fn small_grid(blocks: u64, registers: u32, work_ns: f64) -> NodeCost {
    NodeCost {
        waits_on_loads: true,
        grid: Some(GridFit {
            blocks,
            per_sm: 16,
            sms: 132,
        }),
        share: 0.0,
        ..small_needing(work_ns, registers)
    }
}

#[test]
fn a_small_kernel_beside_whole_sm_blocks_runs_in_the_rounds_the_sms_left_take() {
    // 128 whole-SM blocks for 100 ns, holding them to the end (share 1), leave 4 SMs: an add
    // of 128 blocks of 16 an SM takes two rounds there, 20 ns for its 10.
    let s = two_lanes_laid_out([holding(128, 100.0, 1.0), small_grid(128, 4096, 10.0)]);
    assert!((s[1].2 - 20.0).abs() < 1e-6, "{s:?}");
    // One of 64 blocks fits the 4 SMs at once: no longer than alone.
    let s = two_lanes_laid_out([holding(128, 100.0, 1.0), small_grid(64, 4096, 10.0)]);
    assert!((s[1].2 - 10.0).abs() < 1e-6, "{s:?}");
    // One whose block fits beside the held blocks (a warp's 1024 registers) takes any SM.
    let s = two_lanes_laid_out([holding(128, 100.0, 1.0), small_grid(512, 1024, 10.0)]);
    assert!((s[1].2 - 10.0).abs() < 1e-6, "{s:?}");
    // 512 blocks take 8 rounds on 4 SMs against 1 on 132: 80 ns.
    let s = two_lanes_laid_out([holding(128, 100.0, 1.0), small_grid(512, 4096, 10.0)]);
    assert!((s[1].2 - 80.0).abs() < 1e-6, "{s:?}");
}

#[test]
fn confined_small_kernels_take_the_sms_back_as_the_holding_blocks_retire() {
    // The holder's blocks retire over its last quarter (share 0.75): from 75 ns the add of
    // 128 blocks has every SM again. Two rounds until then: 37.5 ns of it done by 75; the
    // rest at once.
    let s = two_lanes_laid_out([holding(128, 100.0, 0.75), small_grid(128, 4096, 50.0)]);
    assert!((s[1].2 - 87.5).abs() < 1e-6, "{s:?}");
    // A kernel that does not wait on its loads (a GEMM's blocks) is priced by the sharing
    // alone, not confined.
    let gemm = NodeCost {
        waits_on_loads: false,
        ..small_grid(128, 4096, 10.0)
    };
    let s = two_lanes_laid_out([holding(128, 100.0, 1.0), gemm]);
    assert!((s[1].2 - 10.0).abs() < 1e-6, "{s:?}");
}
