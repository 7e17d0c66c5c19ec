//! How much of the GPU a kernel holds while it runs: its blocks against what the SMs can keep
//! resident at once.
//!
//! Kernels on different streams of a graph run side by side only as far as the SMs have room
//! for their blocks: a decode GEMM whose blocks each take a whole SM's shared memory holds
//! two thirds of an H200 with 88 blocks, and four of them on four streams cannot all be
//! resident. The offline model ([`crate::sharing`]) lets kernels that ask for more than the
//! GPU holds share it. A block's needs (threads, registers, shared memory) are in the trace;
//! what one SM holds is an architecture fact, from the CUDA C++ Programming Guide's table of
//! technical specifications per compute capability.

use memra_engine::LaunchShape;
use serde::{Deserialize, Serialize};

use crate::trace::{Op, OpKind};

/// What one block of a kernel holds on its SM, as the profiler recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockResources {
    pub registers_per_thread: u32,
    /// Static and dynamic shared memory per block, bytes.
    pub shared_bytes: u32,
}

/// What one SM of a device holds at once, and how many SMs it has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmLimits {
    pub sms: u32,
    pub blocks: u32,
    pub threads: u32,
    pub registers: u32,
    pub shared_bytes: u32,
    /// Shared memory the system takes per resident block (1 KiB from compute capability 8.0).
    pub reserved_shared_bytes: u32,
}

/// What one SM has room for, or what one block takes of it: threads, registers (as the SM
/// allocates them, per warp), shared memory (with the system's per-block reserve) and block
/// slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmRoom {
    pub threads: u32,
    pub registers: u32,
    pub shared_bytes: u32,
    pub blocks: u32,
}

impl SmRoom {
    /// Whether a block that takes `need` fits in this room.
    pub fn holds(&self, need: &SmRoom) -> bool {
        need.threads <= self.threads
            && need.registers <= self.registers
            && need.shared_bytes <= self.shared_bytes
            && need.blocks <= self.blocks
    }
}

/// Where a kernel's blocks sit on the SMs ([`SmLimits::footing`]), which decides what kernels
/// of other lanes find beside them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Footing {
    /// What one block takes of an SM, where the trace records its registers.
    pub needs: Option<SmRoom>,
    /// What every SM the blocks sit on has left beside them where the grid is exactly as many
    /// blocks as all SMs hold at once (a decode GEMV of 132 blocks that each take an SM's
    /// registers, a persistent GEMM of one block an SM), or one round of blocks that each take
    /// a whole SM, on fewer SMs than the GPU has (a decode GEMV of 128 such blocks: the block
    /// scheduler gives each its own SM and leaves [`Footing::free_sms`] empty). `None` for any
    /// other kernel: one of fewer, smaller blocks leaves room on its SMs that the grid does not
    /// take; one of more runs in rounds, whose blocks do not all hold their SMs at once.
    pub leaves: Option<SmRoom>,
    /// The SMs a kernel that [`Footing::leaves`] room leaves empty (0 for any other).
    pub free_sms: u32,
    /// The SMs the kernel's blocks take to run at once: its blocks over as many as an SM
    /// holds, at most every SM (0 for copies and memsets).
    pub spans_sms: u32,
    /// Whether an SM holds only one of the kernel's blocks at once.
    pub one_an_sm: bool,
}

/// Shared memory is allocated to a block in units of this many bytes; a stand-in's own static
/// shared memory (a few words) fits in one.
pub const STAND_IN_OWN_SHARED_BYTES: u32 = 128;

/// Registers are allocated per warp in units of this many.
const REGISTER_UNIT: u32 = 256;

/// The registers a warp of threads needing `registers_per_thread` is allocated.
fn registers_per_warp(registers_per_thread: u32) -> u32 {
    (registers_per_thread * 32).div_ceil(REGISTER_UNIT) * REGISTER_UNIT
}

impl SmLimits {
    /// The limits of a device of `compute_capability` ("9.0") with `sms` SMs; `None` for a
    /// capability the table does not hold or a device without SMs.
    pub fn of(compute_capability: &str, sms: u32) -> Option<SmLimits> {
        let (major, minor) = compute_capability.split_once('.')?;
        let cc = (
            major.trim().parse::<u32>().ok()?,
            minor.trim().parse::<u32>().ok()?,
        );
        SmLimits::of_capability(cc, sms)
    }

    /// The limits of the device `info` describes (see [`SmLimits::of`]).
    pub fn of_device(info: &memra_engine::DeviceInfo) -> Option<SmLimits> {
        let (major, minor) = info.compute_capability;
        SmLimits::of_capability(
            (u32::try_from(major).ok()?, u32::try_from(minor).ok()?),
            u32::try_from(info.sm_count).ok()?,
        )
    }

    fn of_capability(cc: (u32, u32), sms: u32) -> Option<SmLimits> {
        // (max resident blocks, threads, shared memory KiB) per SM.
        let (blocks, threads, shared_kib) = match cc {
            (7, 0) | (7, 2) => (32, 2048, 96),
            (7, 5) => (16, 1024, 64),
            (8, 0) | (8, 7) => (32, 2048, 164),
            (8, 6) => (16, 1536, 100),
            (8, 9) => (24, 1536, 100),
            (9, 0) | (10, 0) | (10, 3) => (32, 2048, 228),
            (12, 0) => (32, 1536, 100),
            _ => return None,
        };
        (sms > 0).then_some(SmLimits {
            sms,
            blocks,
            threads,
            registers: 64 * 1024,
            shared_bytes: shared_kib * 1024,
            reserved_shared_bytes: if cc.0 >= 8 { 1024 } else { 0 },
        })
    }

    /// Blocks of `threads_per_block` threads (and `resources`, where recorded) one SM holds at
    /// once; at least 1 (a block that fits nowhere was not launched).
    pub fn resident_blocks(
        &self,
        threads_per_block: u32,
        resources: Option<BlockResources>,
    ) -> u32 {
        let warps = threads_per_block.div_ceil(32).max(1);
        let mut n = self.blocks.min(self.threads / (warps * 32));
        if let Some(r) = resources {
            if r.registers_per_thread > 0 {
                let per_warp = registers_per_warp(r.registers_per_thread);
                n = n.min(self.registers / (per_warp * warps));
            }
            if r.shared_bytes > 0 {
                n = n.min(self.shared_bytes / (r.shared_bytes + self.reserved_shared_bytes));
            }
        }
        n.max(1)
    }

    /// Dynamic shared memory a block of `threads_per_block` threads (with next to no
    /// registers or shared memory of its own, as a stand-in's) must reserve so that an SM
    /// holds no more of its blocks than of a kernel's with `resources`: 0 where the kernel's
    /// own needs do not bind more than its threads do, or are not recorded. It leaves 1 KiB
    /// for the stand-in's own shared memory and the allocation's rounding.
    pub fn holding_shared_bytes(
        &self,
        threads_per_block: u32,
        resources: Option<BlockResources>,
    ) -> u32 {
        let Some(r) = resources else { return 0 };
        let want = self.resident_blocks(threads_per_block, Some(r));
        self.shared_bytes_holding(want, threads_per_block, None)
    }

    /// Dynamic shared memory a timed stand-in of a kernel with `resources` launches with: what
    /// holds as few of its blocks an SM as the kernel's needs allowed
    /// ([`SmLimits::holding_shared_bytes`]), and at least the kernel's recorded shared memory
    /// less one allocation unit ([`STAND_IN_OWN_SHARED_BYTES`], the stand-in's own), at most
    /// what a block may ask for. A trace gives a kernel's shared memory, static and dynamic
    /// together; library kernels (cuDNN, cuBLAS, CUTLASS) ask theirs dynamically, and on the
    /// H200 a launch that asks dynamic shared memory started no block on an SM that another
    /// kernel's blocks partly held, where the same grid with static shared memory (or none)
    /// did (`scripts/coresidence_probe.cu`: beside 512 blocks of 512 threads, 1024 blocks of
    /// 256 threads started 32 blocks early with 2112 bytes static, none with 2112 dynamic).
    pub fn stand_in_shared_bytes(
        &self,
        threads_per_block: u32,
        resources: Option<BlockResources>,
    ) -> u32 {
        let holding = self.holding_shared_bytes(threads_per_block, resources);
        let recorded = resources.map_or(0, |r| {
            r.shared_bytes
                .saturating_sub(STAND_IN_OWN_SHARED_BYTES)
                .min(self.stand_in_room(self.shared_bytes))
        });
        holding.max(recorded)
    }

    /// The dynamic shared memory a stand-in's block may ask for where a block may hold
    /// `per_block` bytes of an SM: less the SM's per-block reserve, and 1 KiB for the
    /// stand-in's own shared memory and the allocation's rounding.
    fn stand_in_room(&self, per_block: u32) -> u32 {
        per_block.saturating_sub(self.reserved_shared_bytes + 1024)
    }

    /// The most threads, in whole warps, a block needing `resources` (registers a thread) may
    /// have: at most 1024, and no more than a launch may ask registers for. The driver checks
    /// a block's registers as if its warps were allocated to the SM's four partitions at once
    /// (`cuda_occupancy.h`): its warps rounded up to a multiple of four must fit.
    pub fn largest_block(&self, resources: Option<BlockResources>) -> u32 {
        let per_warp = resources
            .map(|r| registers_per_warp(r.registers_per_thread))
            .filter(|&w| w > 0);
        let warps = per_warp.map_or(32, |w| (self.registers / w / 4 * 4).min(32));
        warps.max(1) * 32
    }

    /// Dynamic shared memory a block of `threads_per_block` threads needing `own` (registers;
    /// its shared memory beside the reserve is taken as under 1 KiB) must reserve so that an SM
    /// holds no more than `want` of them: 0 where its threads and registers already hold it
    /// to that.
    pub fn shared_bytes_holding(
        &self,
        want: u32,
        threads_per_block: u32,
        own: Option<BlockResources>,
    ) -> u32 {
        if want == 0 || want >= self.resident_blocks(threads_per_block, own) {
            return 0;
        }
        self.stand_in_room(self.shared_bytes / want)
    }

    /// Blocks of `block` threads (and `resources`, where recorded) all SMs hold at once: one
    /// round of a grid.
    pub fn resident_grid(&self, block: (u32, u32, u32), resources: Option<BlockResources>) -> u64 {
        let threads = block.0.saturating_mul(block.1).saturating_mul(block.2);
        u64::from(self.resident_blocks(threads, resources)) * u64::from(self.sms)
    }

    /// Whether `op` is a kernel whose blocks the SMs hold all at once: one round of blocks.
    pub fn one_round(&self, op: &Op) -> bool {
        let OpKind::Kernel { grid, block } = op.kind else {
            return false;
        };
        LaunchShape::of(grid, block).blocks() <= self.resident_grid(block, op.resources)
    }

    /// What one block of kernel `op` takes of an SM; `None` for copies and memsets, and for a
    /// kernel whose registers the trace did not record (what it needs is not known).
    pub fn block_needs(&self, op: &Op) -> Option<SmRoom> {
        let OpKind::Kernel { block, .. } = op.kind else {
            return None;
        };
        let r = op.resources?;
        let threads = block.0.saturating_mul(block.1).saturating_mul(block.2);
        let warps = threads.div_ceil(32).max(1);
        Some(SmRoom {
            threads,
            registers: registers_per_warp(r.registers_per_thread).saturating_mul(warps),
            shared_bytes: r.shared_bytes.saturating_add(self.reserved_shared_bytes),
            blocks: 1,
        })
    }

    /// Where kernel `op`'s blocks sit on the SMs, from one reckoning of what a block needs;
    /// all `None` for copies and memsets.
    pub fn footing(&self, op: &Op) -> Footing {
        let OpKind::Kernel { grid, block } = op.kind else {
            return Footing::default();
        };
        let threads = block.0.saturating_mul(block.1).saturating_mul(block.2);
        let per_sm = self.resident_blocks(threads, op.resources);
        let blocks = LaunchShape::of(grid, block).blocks();
        let needs = self.block_needs(op);
        // Exactly as many blocks as all SMs hold at once: the block scheduler puts as many on
        // every SM as fit and none is left for later. Or fewer blocks than SMs that each take
        // a whole SM: one on each of as many SMs, the rest empty.
        let sms = u64::from(self.sms);
        let fills = blocks == u64::from(per_sm) * sms;
        let whole_sms = per_sm == 1 && blocks < sms;
        Footing {
            needs,
            leaves: needs
                .filter(|_| fills || whole_sms)
                .map(|need| self.room_beside(need, per_sm)),
            free_sms: if needs.is_some() && whole_sms {
                (sms - blocks) as u32
            } else {
                0
            },
            spans_sms: blocks.div_ceil(u64::from(per_sm)).min(sms) as u32,
            one_an_sm: per_sm == 1,
        }
    }

    /// What one SM has left beside `n` blocks that each take `need`.
    fn room_beside(&self, need: SmRoom, n: u32) -> SmRoom {
        SmRoom {
            threads: self.threads.saturating_sub(n.saturating_mul(need.threads)),
            registers: self
                .registers
                .saturating_sub(n.saturating_mul(need.registers)),
            shared_bytes: self
                .shared_bytes
                .saturating_sub(n.saturating_mul(need.shared_bytes)),
            blocks: self.blocks.saturating_sub(n),
        }
    }

    /// The share of the GPU `op` holds while it runs: its blocks over the blocks all SMs hold
    /// at once, at most 1 (a kernel of several waves holds all of it). 0 for copies and
    /// memsets, which the copy engines and not the SMs run.
    pub fn share(&self, op: &Op) -> f64 {
        let OpKind::Kernel { grid, block } = op.kind else {
            return 0.0;
        };
        let blocks = LaunchShape::of(grid, block).blocks() as f64;
        (blocks / self.resident_grid(block, op.resources) as f64).min(1.0)
    }

    /// The share of the SMs `op`'s blocks take when each goes to an SM of its own, as the
    /// block scheduler places a grid on idle SMs: its blocks over the SMs, at most 1. 0 for
    /// copies and memsets.
    pub fn spread(&self, op: &Op) -> f64 {
        let OpKind::Kernel { grid, block } = op.kind else {
            return 0.0;
        };
        let blocks = LaunchShape::of(grid, block).blocks() as f64;
        (blocks / f64::from(self.sms.max(1))).min(1.0)
    }
}

/// `op` with its grid cut to the blocks that can have any of its data, where the grid is sized
/// to the device rather than to the data: a concatenation (PyTorch launches two blocks an SM
/// for each tensor it joins, whatever their size) whose recorded list of tensors says how many
/// bytes it copies ([`Op::copied_bytes`]). Every working thread copies at least one byte, so at
/// most that many threads have work; the other blocks exit at once and hold no SM. On an H100
/// four lanes of rotary embeddings, each joining two 1 KiB halves in 528 blocks of 512 threads
/// (one round that fills every SM), ran side by side at about one lane's pace in the real
/// graph, where the whole grid's hold laid the lanes' concatenations one after another. Any
/// other op is returned as it is.
pub fn working_grid(op: &Op) -> std::borrow::Cow<'_, Op> {
    use std::borrow::Cow;
    let (&OpKind::Kernel { grid, block }, Some(bytes)) = (&op.kind, op.copied_bytes) else {
        return Cow::Borrowed(op);
    };
    let threads = (block.0 as f64) * (block.1 as f64) * (block.2 as f64);
    let blocks = LaunchShape::of(grid, block).blocks();
    let working = (bytes.max(1.0) / threads.max(1.0)).ceil() as u64;
    if working >= blocks {
        return Cow::Borrowed(op);
    }
    Cow::Owned(Op {
        kind: OpKind::Kernel {
            grid: (u32::try_from(working).unwrap_or(u32::MAX), 1, 1),
            block,
        },
        ..op.clone()
    })
}

#[cfg(test)]
mod tests;
