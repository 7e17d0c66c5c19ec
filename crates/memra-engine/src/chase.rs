//! The latency-bound stand-in: a grid whose time is dependent memory round trips through a
//! small ring (then a spin for the rest), for kernels that run beside other streams' work.
//!
//! A clock spin lasts its requested time whatever runs beside it. A real short kernel does
//! not: most of its time is launch, loads and stores, and beside kernels that keep the memory
//! system busy (another stream's GEMMs streaming weights) each round trip takes longer. On an
//! H200, two gated-MLP experts on two streams with their GEMMs real cost a graph 11–12% less
//! when their element-wise kernels were clock spins sized to the same node time, 2–3% less
//! when they were chases (`scripts/touch_stand_in_probe.py`).

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::kernels::Kernel;
use crate::launch::LaunchShape;
use crate::memory::DeviceBuffer;

/// Words of one ring line: one coalesced 128-byte read per warp a step.
pub const CHASE_LINE_WORDS: usize = 32;

/// The words of a ring of `lines` lines that visits every line once per cycle in an order
/// drawn from `seed` (Sattolo's shuffle: one cycle through all lines, so no warp's chase ends
/// in a short loop that caches apart), every word of a line naming the next line.
pub fn chase_ring_words(lines: usize, seed: u64) -> Vec<u32> {
    let mut next: Vec<u32> = (0..lines as u32).collect();
    let mut state = seed | 1;
    for i in (1..lines).rev() {
        // xorshift64*: reproducible and good enough to scatter lines over the L2's slices.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let j = (r % i as u64) as usize;
        next.swap(i, j);
    }
    next.iter()
        .flat_map(|&n| std::iter::repeat_n(n, CHASE_LINE_WORDS))
        .collect()
}

impl Engine {
    /// A ring of `lines` lines for [`Engine::chase_grid`] in device memory ([`chase_ring_words`]
    /// with a fixed seed).
    pub fn chase_ring(&self, lines: usize) -> Result<DeviceBuffer<u32>> {
        if lines == 0 || u32::try_from(lines).is_err() {
            return Err(Error::InvalidArgument {
                op: "chase_ring",
                what: format!("{lines} lines: need 1 to {}", u32::MAX),
            });
        }
        self.htod(&chase_ring_words(lines, 0x9E37_79B9_7F4A_7C15))
    }

    /// Launches `chase`: a grid of `chase.shape` in which every warp takes `chase.loads`
    /// dependent steps through `ring` (whole lines of [`CHASE_LINE_WORDS`] words; any contents
    /// are safe: indices are taken modulo the ring's lines), each a plain read or a round of a
    /// block-wide reduction as `chase.round` says, then spins `chase.ns` more nanoseconds,
    /// writes the line it reached into `sink` (a word per thread, modulo its length) and
    /// records the grid's span in `slots` like [`Engine::spin_grid`].
    pub fn chase_grid(
        &self,
        chase: Chase,
        ring: &DeviceBuffer<u32>,
        sink: &mut DeviceBuffer<u32>,
        slots: &mut DeviceBuffer<u64>,
        slot: usize,
    ) -> Result<()> {
        let kernel = match chase.round {
            ChaseRound::Read => Kernel::ChaseGrid,
            ChaseRound::BlockReduction => Kernel::BarrierChaseGrid,
        };
        let op = kernel.name();
        let core = &self.inner.core;
        ring.check_owner(core, op, "ring")?;
        sink.check_owner(core, op, "sink")?;
        let lines = ring.len() / CHASE_LINE_WORDS;
        let whole = |len: usize, what: &str| {
            u32::try_from(len).map_err(|_| Error::InvalidArgument {
                op,
                what: format!("{what} of {len} over the kernel's 32-bit index"),
            })
        };
        let (lines, sink_len) = (whole(lines, "ring lines")?, whole(sink.len(), "sink")?);
        if lines == 0 && chase.loads > 0 {
            return Err(Error::InvalidArgument {
                op,
                what: format!(
                    "{} loads through a ring of {} words, less than one line",
                    chase.loads,
                    ring.len()
                ),
            });
        }
        let offset = self.spin_grid_checked(op, slots, slot)?;
        self.kernel(kernel)
            .u64(chase.ns)
            .buf(ring)
            .u32(lines)
            .u32(chase.loads)
            .buf(sink)
            .u32(sink_len)
            .buf_at(slots, offset)
            .run(chase.shape)
    }
}

/// What one chase launch asks: its spin after the reads, its dependent reads, what each
/// step of them is, and its grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chase {
    /// Nanoseconds of spin after the reads.
    pub ns: u64,
    /// Dependent steps through the ring, per warp.
    pub loads: u32,
    /// What each step is.
    pub round: ChaseRound,
    /// The grid and block.
    pub shape: LaunchShape,
}

/// What one step of a chase is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChaseRound {
    /// A dependent coalesced read per warp: the step waits on memory only, so beside other
    /// streams' traffic it stretches as a short element-wise kernel does.
    #[default]
    Read,
    /// The read summed across the warp, the warps' sums across the block through shared
    /// memory between two barriers, and every warp's next line taken from the block's total
    /// (plus its warp index): a normalisation's or reduction's round. The shuffles and
    /// barriers do not wait on memory, so beside other streams' traffic this chase stretches
    /// less than one of plain reads of the same length.
    BlockReduction,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_is_one_cycle_through_every_line() {
        for lines in [1usize, 2, 3, 64, 1024] {
            let words = chase_ring_words(lines, 7);
            assert_eq!(words.len(), lines * CHASE_LINE_WORDS);
            for line in words.chunks(CHASE_LINE_WORDS) {
                assert!(
                    line.iter().all(|&w| w == line[0]),
                    "a line names one next line"
                );
            }
            let next = |l: u32| words[l as usize * CHASE_LINE_WORDS];
            let (mut l, mut seen) = (0u32, vec![false; lines]);
            for _ in 0..lines {
                assert!(!seen[l as usize], "line {l} visited twice in {lines}");
                seen[l as usize] = true;
                l = next(l);
            }
            assert_eq!(l, 0, "back at the start after {lines} steps");
        }
    }
}
