//! The replay's choices of how stand-ins keep their time, each a command-line option
//! (`launch-econ replay --help`): what the planner in [`super`] follows, and which chase a
//! kernel stands in by under each ([`chase_kind`]).

use serde::{Deserialize, Serialize};

use super::ShapeKey;
use crate::trace::{is_element_wise, is_reduction, Op};

/// How kernels shorter than their shape's floor (the spin asked for nothing) stand in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum SubFloor {
    /// Each by the empty kernel or the empty spin, whichever has the nearer node time.
    Nearest,
    /// By the empty kernel or the empty spin so that, along the stream, their node times sum
    /// as near to their targets as they can (the error so far is carried to the next choice).
    #[default]
    Balance,
}

/// What stands in for a kernel (not a real GEMM) on a walk whose streams run side by side.
/// A clock spin lasts its time whatever runs beside it; a real element-wise kernel does not:
/// its time beyond the launch is loads and stores, and beside another stream's GEMMs each
/// round trip takes longer (H200, a two-expert walk: −10% with spins, +2% with chases). A
/// chase stretches as its dependent reads do, more than a reduction or normalisation, whose
/// time is not only round trips (a two-branch MLP with LayerNorms: +5 to +7% with every kernel
/// chasing, −3% with element-wise kernels only), while a spin does not stretch at all
/// (LayerNorms beside GEMV lanes 11–13% low). A barrier chase's rounds are a read and a
/// block-wide reduction, as theirs are: on the H200's stored multi-stream walks, replayed both
/// ways interleaved, 77 of 104 within 5% against 72 with spins, held-out batch 50 (written
/// before it) 4 of 6 against 1. A reduction whose threads each read several rounds of loads
/// before their block reduces (PyTorch's `reduce_kernel` sums, means and arg-maxes over few
/// blocks) waits on loads nearly all its time: barrier-chasing, such reductions beside decode
/// GEMMs replayed 12–17% low; chasing them (`chase-rounds`), the 21 stored walks with such
/// kernels came 17 of 21 within 5% against 12–13, in three interleaved runs.
/// docs/validation-h200.md has the walks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ConcurrentStandIn {
    /// A chase for element-wise kernels (by name, [`crate::trace::is_element_wise`]), the
    /// spin for the others.
    ChaseElementWise,
    /// A chase for every kernel: dependent reads through the L2, then a spin (see the
    /// module).
    Chase,
    /// A chase for element-wise kernels, a barrier chase for normalisations and reductions
    /// (by name, [`crate::trace::is_reduction`]), whose reads each end in a block-wide
    /// reduction as those kernels' rounds do (shuffles and barriers that do not stretch
    /// beside other streams' traffic), the spin for the others.
    ChaseBarriers,
    /// As `chase-barriers`, but a reduction whose threads each read more than one round of
    /// loads before their block reduces (its operator's largest recorded input over the grid's
    /// threads, over 64 bytes; [`ROUND_BYTES`]) chases as element-wise kernels do:
    /// its time is loads, its one reduction a small part.
    #[default]
    ChaseRounds,
    /// The clock spin for every kernel, as on one stream.
    Spin,
}

/// What stands in for a kernel that chases ([`ConcurrentStandIn`]) where its target is shorter
/// than a chase of one dependent read: a chase of no reads (or, below even that, the empty
/// kernel or the empty spin, [`SubFloor`]) reads no memory, so it lasts its time beside
/// another stream's GEMMs where a real element-wise kernel of that size waits longer on its
/// loads. Most of a decode step's element-wise kernels are that short. On the H200's stored
/// multi-stream walks, replayed both ways interleaved on one instance, the one-read floor put
/// 68 of 84 within 5% of their real graphs against 60 (embedding bags beside an MLP −13.0 →
/// −0.4%, adapter lanes −6.3 → −1.3%; docs/validation-h200.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ChaseFloor {
    /// A chase of as many whole reads as fit its target, none where none fits.
    ZeroSteps,
    /// The empty kernel or a chase of one read, balanced along the stream so that their nodes
    /// sum to their targets (as [`SubFloor::Balance`] does): some of such kernels' stand-ins
    /// read memory, about as often as the targets leave room for one read.
    #[default]
    OneStep,
}

/// How a timed spin stand-in keeps its time on walks whose streams run side by side. Beside
/// another stream's kernels a real kernel's blocks may find the SMs taken and run in more
/// rounds than alone, each block still taking its time; a spin timed from the grid's start
/// ends on time however few SMs it got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ConcurrentSpins {
    /// Kernels that ran in one round of blocks alone spin per block
    /// (`Engine::spin_blocks`): each block its time from its own start, so the stand-in
    /// stretches when it waits for SMs as its kernel did.
    #[default]
    Blocks,
    /// Every spin is timed from the grid's start (`Engine::spin_grid`), as on one stream.
    Grid,
}

/// How a long element-wise kernel (by name, [`crate::trace::is_element_wise`]) stands in on a walk
/// of one stream. A graph node of a kernel that reads from device memory costs more at the upper of
/// the two levels of per-node cost than one that reads from the L2 or spins (H200: 0.36 against
/// 0.18 µs a node, `scripts/graph_kernel_probe.py`), which is why long kernels stream, as a decode
/// step's weight reads do. An element-wise kernel reads activations the step has just written, from
/// the L2; a stand-in streaming fresh device memory for it prices its node at the device-memory
/// level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ElementWise {
    /// A timed spin, whose node costs what an L2 reader's does at either level.
    #[default]
    Spin,
    /// A streaming stand-in, as other long kernels (the replay before this choice existed).
    Stream,
}

/// Whether timed spins are fitted in the walk's own graph, as streaming stand-ins are
/// (`crate::streaming::size`). A spin's graph node costs its span + what the spin
/// calibration's ramp and the profile's front-end gap say only where nothing evicted its
/// slots: in decode walks on an H200 the spins' nodes ran a median 0.06–0.16 µs over their
/// planned recorded duration + gap; an RWKV-style chain of short element-wise kernels ran
/// 0.89 of its plan. The fit reads each node from the GPU clock's stamps, which must stay
/// integers (an `f64` of the clock rounds to 256 ns, which made one round's median noise
/// on sub-µs spins until it was read exactly; docs/validation-h200.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum SpinFit {
    /// Spins ask for their planned time less the calibrated ramp, as measured alone.
    Off,
    /// As `graph`, but only on streams that keep streaming stand-ins, in the graph rounds that
    /// size those already (the default before spins were fitted on every stream).
    Streamed,
    /// In the rounds that size streaming stand-ins (or three of their own), every timed
    /// spin of a stream is shifted by the median of what its spins' nodes cost over their
    /// planned recorded duration + gap.
    #[default]
    Graph,
}

impl SpinFit {
    /// Whether a stream's spins are fitted, `streams` saying whether it has streaming
    /// stand-ins.
    pub fn fits(self, streams: bool) -> bool {
        match self {
            SpinFit::Off => false,
            SpinFit::Streamed => streams,
            SpinFit::Graph => true,
        }
    }
}

/// What a paced stand-in reads on a walk whose lanes' recorded data together pass the whole
/// L2. Alone, a lane's kernel may have run faster than device memory gives, reading what the
/// kernel before it wrote from the L2; side by side with lanes past the L2 it cannot, and its
/// real graph waits on device memory for every byte (held-out batch 97 on H100s: the replay,
/// capped, came −13.7 … −54.8%, the offline floor at the bytes +1.1 … +6.6%;
/// docs/validation-h200.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum PastL2 {
    /// At most what device memory gives in the kernel's recorded time.
    #[default]
    Capped,
    /// The kernel's whole recorded bytes (its inputs and, element-wise, its result), however
    /// long that takes (on an H100 it moved batches 97 and 96's replays by under half a point
    /// but three: docs/replay-method.md).
    Whole,
}

/// Where a walk's paced stand-ins read from, and how much ([`super::StandInPlan::paced`]): one of
/// four, so that no plan reads from the L2 and past it at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PacedReads {
    /// From device memory, at most what it gives in the kernel's recorded time.
    #[default]
    Capped,
    /// From device memory, the kernel's whole recorded bytes ([`PastL2::Whole`] on lanes past
    /// the whole L2).
    Whole,
    /// The same bytes every time, which the L2 keeps
    /// ([`crate::footprint::L2Resident::Paced`]).
    InL2,
    /// As [`PacedReads::InL2`], element-wise kernels among them doing their work instead
    /// ([`crate::footprint::L2Resident::Work`], [`super::StandInPlan::elementwise_work`]).
    InL2Work,
}

impl PacedReads {
    /// Whether the reads keep to bytes the L2 holds.
    pub fn in_l2(self) -> bool {
        matches!(self, PacedReads::InL2 | PacedReads::InL2Work)
    }

    /// Whether element-wise kernels do their work (write their results) instead of reading.
    pub fn writes(self) -> bool {
        self == PacedReads::InL2Work
    }
}

/// Which chase a kernel may stand in by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChaseKind {
    /// Dependent reads ([`memra_engine::Engine::chase_grid`]).
    Reads,
    /// Dependent reads each ending in a block-wide reduction
    /// ([`memra_engine::ChaseRound::BlockReduction`]).
    Barriers,
}

/// Bytes a thread of a reduction reads in one round of loads: four loads of 16 bytes in
/// flight (a loop unrolled by four; a modelling choice, not read from the kernel). A reduction
/// whose threads each read more before their block reduces waits on several rounds of loads
/// per barrier.
pub const ROUND_BYTES: f64 = 64.0;

/// What kind of chase `op` (launched as `shape`) stands in by under `mode`, if any.
/// Under [`ConcurrentStandIn::ChaseRounds`] a reduction whose threads each read more than
/// [`ROUND_BYTES`] of its data (its operator's largest recorded input over the grid's threads:
/// a normalisation's weights are read again by every row, from the L2) chases plainly: its
/// time is rounds of loads, which all stretch beside other streams' traffic, and its block
/// reduction a small part.
pub fn chase_kind(mode: ConcurrentStandIn, op: &Op, shape: ShapeKey) -> Option<ChaseKind> {
    let name = op.name.as_str();
    let reduction = || is_reduction(name);
    match mode {
        ConcurrentStandIn::Chase => Some(ChaseKind::Reads),
        ConcurrentStandIn::Spin => None,
        _ if is_element_wise(name) => Some(ChaseKind::Reads),
        ConcurrentStandIn::ChaseElementWise => None,
        ConcurrentStandIn::ChaseBarriers => reduction().then_some(ChaseKind::Barriers),
        ConcurrentStandIn::ChaseRounds if !reduction() => None,
        ConcurrentStandIn::ChaseRounds => {
            let ((gx, gy, gz), (bx, by, bz)) = shape;
            let threads = [gx, gy, gz, bx, by, bz]
                .iter()
                .map(|&d| d as f64)
                .product::<f64>();
            match op.largest_input_bytes {
                Some(bytes) if threads > 0.0 && bytes / threads > ROUND_BYTES => {
                    Some(ChaseKind::Reads)
                }
                _ => Some(ChaseKind::Barriers),
            }
        }
    }
}
