use super::*;

fn res(registers_per_thread: u32, shared_bytes: u32) -> BlockResources {
    BlockResources {
        registers_per_thread,
        shared_bytes,
    }
}

fn h200() -> SmLimits {
    SmLimits::of("9.0", 132).unwrap()
}

fn kernel(grid: (u32, u32, u32), threads: u32, res: Option<BlockResources>) -> Op {
    Op {
        kind: OpKind::Kernel {
            grid,
            block: (threads, 1, 1),
        },
        resources: res,
        ..Op::kernel("k", 0.0, 1000.0)
    }
}

#[test]
fn a_grid_that_fills_every_sm_leaves_room_only_for_blocks_that_fit_beside_its_own() {
    let l = h200();
    // A decode GEMV of (2, 66) blocks of 384 threads, 168 registers and 164 KB each: one
    // an SM, 132 in all, 1024 registers left on each SM.
    let gemv = Op {
        kind: OpKind::Kernel {
            grid: (2, 66, 1),
            block: (384, 1, 1),
        },
        ..kernel((1, 1, 1), 384, Some(res(168, 164_308)))
    };
    let room = l.footing(&gemv).leaves.unwrap();
    assert_eq!(room.registers, 1024);
    assert_eq!(room.threads, 2048 - 384);
    assert_eq!(room.blocks, 31);
    // A LayerNorm's block of 128 threads at 32 registers needs 4096: it does not fit.
    let norm = l
        .block_needs(&kernel((1, 1, 1), 128, Some(res(32, 24))))
        .unwrap();
    assert_eq!(norm.registers, 4096);
    assert!(!room.holds(&norm));
    // One warp of 32 registers a thread does.
    let warp = l
        .block_needs(&kernel((1, 1, 1), 32, Some(res(32, 0))))
        .unwrap();
    assert!(room.holds(&warp));
    assert_eq!(l.footing(&gemv).free_sms, 0);
    assert_eq!(l.footing(&gemv).spans_sms, 132);
    // 128 such blocks sit one an SM and leave 4 SMs empty, the same room on the others.
    let narrow = l.footing(&kernel((128, 1, 1), 384, Some(res(168, 164_308))));
    assert_eq!((narrow.leaves, narrow.free_sms), (Some(room), 4));
    assert_eq!((narrow.spans_sms, narrow.one_an_sm), (128, true));
    // 133 run in rounds: they leave no room that lasts.
    let k = kernel((133, 1, 1), 384, Some(res(168, 164_308)));
    assert_eq!(l.footing(&k).leaves, None);
    // The norm's grid of 256 blocks, 16 an SM, takes 16 SMs at once.
    let norms = l.footing(&kernel((256, 1, 1), 128, Some(res(32, 24))));
    assert_eq!(
        (norms.spans_sms, norms.one_an_sm, norms.leaves),
        (16, false, None)
    );
    // Without recorded registers what a block needs is not known.
    assert_eq!(l.block_needs(&kernel((1, 1, 1), 128, None)), None);
    assert_eq!(l.footing(&kernel((132, 1, 1), 1024, None)).leaves, None);
    // A memset holds no SM: nothing of it is known.
    let memset = Op {
        kind: OpKind::Memset { bytes: 4096 },
        ..kernel((1, 1, 1), 32, Some(res(32, 0)))
    };
    assert_eq!(l.footing(&memset), Footing::default());
}

#[test]
fn stand_ins_reserve_shared_memory_to_hold_as_few_blocks_as_their_kernels() {
    let l = h200();
    // Decode attention: 183 registers x 128 threads and 86 KB a block: 2 an SM, where a
    // 128-thread stand-in alone would fit 16.
    let attention = res(183, 86_336);
    assert_eq!(l.resident_blocks(128, Some(attention)), 2);
    let held = l.holding_shared_bytes(128, Some(attention));
    let stand_in = res(32, held + 64);
    assert_eq!(l.resident_blocks(128, Some(stand_in)), 2);
    // A whole SM's worth: one block, within what a block may ask for (227 KiB).
    let gemm = res(168, 164_308);
    let held = l.holding_shared_bytes(384, Some(gemm));
    assert!(held <= 227 * 1024, "{held}");
    let stand_in = res(32, held + 64);
    assert_eq!(l.resident_blocks(384, Some(stand_in)), 1);
    // Needs that bind no more than the threads do, or none recorded: nothing reserved.
    let light = res(32, 4096);
    assert_eq!(l.holding_shared_bytes(128, Some(light)), 0);
    assert_eq!(l.holding_shared_bytes(128, None), 0);
}

#[test]
fn stand_ins_ask_their_kernels_shared_memory_dynamically() {
    let l = h200();
    // A cuDNN layout kernel: 256 threads, 2112 bytes; its threads bind (8 an SM), so
    // nothing is needed to hold, and the stand-in asks the recorded bytes less its own.
    let layout = res(32, 2112);
    assert_eq!(l.holding_shared_bytes(256, Some(layout)), 0);
    assert_eq!(l.stand_in_shared_bytes(256, Some(layout)), 2112 - 128);
    // Where holding needs more than recorded (registers bind), it keeps the larger.
    let attention = res(183, 1024);
    let held = l.holding_shared_bytes(128, Some(attention));
    assert!(held > 1024, "{held}");
    assert_eq!(l.stand_in_shared_bytes(128, Some(attention)), held);
    // A whole SM's worth is capped at what a block may ask for, less the stand-in's own.
    let conv = res(168, 232_448);
    let asked = l.stand_in_shared_bytes(384, Some(conv));
    assert!(asked + 1024 <= 227 * 1024, "{asked}");
    let stand_in = res(32, asked + 64);
    assert_eq!(l.resident_blocks(384, Some(stand_in)), 1);
    // Two to an SM stays two: the stand-in's block rounds to the kernel's.
    let two = res(32, 115_712);
    assert_eq!(l.resident_blocks(128, Some(two)), 2);
    let stand_in = res(32, l.stand_in_shared_bytes(128, Some(two)) + 64);
    assert_eq!(l.resident_blocks(128, Some(stand_in)), 2);
    // Nothing recorded: nothing asked.
    assert_eq!(l.stand_in_shared_bytes(128, None), 0);
}

#[test]
fn the_limit_that_binds_sets_the_resident_blocks() {
    let l = h200();
    // Threads alone: 2048 / 128 = 16 blocks.
    assert_eq!(l.resident_blocks(128, None), 16);
    // Tiny blocks: the 32-block limit.
    assert_eq!(l.resident_blocks(32, None), 32);
    // 168 registers × 32 threads = 5376 a warp, × 12 warps = 64512 of 65536 (and the
    // shared memory takes most of the SM too).
    let gemm = res(168, 164_308);
    assert_eq!(l.resident_blocks(384, Some(gemm)), 1);
    // Shared memory alone: 233472 / (100000 + 1024) = 2.
    let smem = res(0, 100_000);
    assert_eq!(l.resident_blocks(64, Some(smem)), 2);
    // A block that does not fit is still one.
    let huge = res(255, 300_000);
    assert_eq!(l.resident_blocks(1024, Some(huge)), 1);
}

#[test]
fn share_is_blocks_over_what_the_gpu_holds() {
    let l = h200();
    let gemm = res(168, 164_308);
    // 88 one-per-SM blocks hold two thirds of 132 SMs.
    let s = l.share(&kernel((4, 22, 1), 384, Some(gemm)));
    assert!((s - 88.0 / 132.0).abs() < 1e-12, "{s}");
    // 8 blocks of 128 threads: 8 of 132 × 16.
    let s = l.share(&kernel((8, 1, 1), 128, None));
    assert!((s - 8.0 / 2112.0).abs() < 1e-12, "{s}");
    assert!(l.one_round(&kernel((8, 1, 1), 128, None)));
    // 132 one-an-SM blocks are one round, 133 are two.
    assert!(l.one_round(&kernel((132, 1, 1), 384, Some(gemm))));
    assert!(!l.one_round(&kernel((133, 1, 1), 384, Some(gemm))));
    // Several waves hold the whole GPU, no more.
    assert_eq!(l.share(&kernel((100_000, 1, 1), 256, None)), 1.0);
    let copy = Op {
        kind: OpKind::Memset { bytes: 1 << 20 },
        ..Op::kernel("memset", 0.0, 1000.0)
    };
    assert_eq!(l.share(&copy), 0.0);
    assert!(!l.one_round(&copy));
    // Spread one an SM: 8 blocks take 8 of 132 SMs, 300 all of them; a copy none.
    assert!((l.spread(&kernel((8, 1, 1), 128, None)) - 8.0 / 132.0).abs() < 1e-12);
    assert_eq!(l.spread(&kernel((300, 1, 1), 128, None)), 1.0);
    assert_eq!(l.spread(&copy), 0.0);
}

#[test]
fn unknown_capabilities_have_no_limits() {
    assert!(SmLimits::of("1.0", 10).is_none());
    assert!(SmLimits::of("nine", 10).is_none());
    assert!(SmLimits::of("9.0", 0).is_none());
    // A device's own description gives the same limits as its capability written out.
    let info = memra_engine::DeviceInfo {
        ordinal: 0,
        name: "NVIDIA H200".into(),
        compute_capability: (9, 0),
        sm_count: 132,
        total_memory: 0,
        sm_clock_khz: 0,
        memory_clock_khz: 0,
        memory_bus_bits: 0,
        l2_bytes: 0,
        pci_bus_id: String::new(),
        driver_version: 13000,
        nvrtc_version: (13, 0),
    };
    assert_eq!(SmLimits::of_device(&info), SmLimits::of("9.0", 132));
    let odd = memra_engine::DeviceInfo {
        sm_count: -1,
        ..info
    };
    assert!(SmLimits::of_device(&odd).is_none());
    assert_eq!(SmLimits::of("8.6", 84).unwrap().threads, 1536);
}

#[test]
fn the_largest_block_is_what_an_sms_registers_hold_in_whole_warps() {
    let regs = |registers_per_thread| {
        Some(BlockResources {
            registers_per_thread,
            shared_bytes: 0,
        })
    };
    // 32 registers a thread: 1024 threads take 32 Ki; unknown needs: 1024.
    assert_eq!(h200().largest_block(regs(32)), 1024);
    assert_eq!(h200().largest_block(None), 1024);
    // 90 a thread: a warp takes 2880, allocated as 3072; 21 warps fit 64 Ki, but 21
    // rounded up to 24 do not: 20 (an H200 refused 672 threads of this kernel).
    assert_eq!(h200().largest_block(regs(90)), 640);
    assert_eq!(h200().largest_block(regs(255)), 256);
}

#[test]
fn a_concatenation_holds_only_the_blocks_its_bytes_can_fill() {
    use crate::trace::{Op, OpKind};
    let cat = |bytes: Option<f64>| Op {
        kind: OpKind::Kernel {
            grid: (264, 2, 1),
            block: (512, 1, 1),
        },
        copied_bytes: bytes,
        ..Op::kernel("CatArrayBatchedCopy", 0.0, 1500.0)
    };
    let grid = |o: &Op| match o.kind {
        OpKind::Kernel { grid, .. } => grid,
        _ => unreachable!(),
    };
    // 2 KiB: at most 2048 threads with work, four blocks of 512; the rest exit at once.
    assert_eq!(grid(&working_grid(&cat(Some(2048.0)))), (4, 1, 1));
    let l = SmLimits::of("9.0", 132).unwrap();
    assert!(l.share(&working_grid(&cat(Some(2048.0)))) < 0.01);
    assert!(l.share(&cat(Some(2048.0))) >= 0.99);
    // As many bytes as threads or more, or unknown: the grid as launched.
    assert_eq!(grid(&working_grid(&cat(Some(1e9)))), (264, 2, 1));
    assert_eq!(grid(&working_grid(&cat(None))), (264, 2, 1));
}
