//! How much memory one replay of a walk touches, and so how far its nodes step between the
//! two levels of per-node graph cost (see [`crate::other_stream`]).
//!
//! On an H200 every node of a graph steps 0.18 µs at the upper level while one replay touches
//! up to 32 MiB, and ~0.33 µs from 48 MiB (the L2 holds 60 MiB): the whole graph, however few
//! of its nodes read — one node reading 128 MiB among 256 empty ones is enough — and reads
//! of the same bytes at every replay, however many, do not count
//! (`scripts/footprint_level_probe.py`, `docs/footprint-level-probe-h200.json`). Real decode
//! steps, which read every layer's weights once a step, step by 0.35 µs a node.
//!
//! A trace does not record addresses, so the footprint is estimated. With recorded shapes
//! (PyTorch, `record_shapes=True`): the larger operand of every GEMM (a weight or a cache, read
//! once a step in an inference step), the rows every gather (an embedding lookup or bag) reads
//! of its table, the bytes every copy and memset touches, and the largest input of any other
//! operator (element-wise operators mostly reread what the step wrote, so theirs are not added
//! up). Without shapes: what each kernel could have read in its recorded time at the memory's
//! bandwidth, its grid's share of it — an upper bound. Where only that bound is past the
//! line, which step the real graph takes is not known, and a walk on one stream is priced
//! halfway between the two, by `replay` ([`replay_memory_unknown`]) and `--summary`
//! ([`crate::offline::OfflineDevice::level_step`]) alike.

use serde::{Deserialize, Serialize};

use crate::trace::matmul::MatmulRole;
use crate::trace::{is_element_wise, CopyDirection, Op, OpKind, Walk};

/// Where only a shapeless walk's upper bound is past the line, the share of what the larger
/// step adds over the smaller that it is priced at: which step it takes is not known and both
/// are bounded, so the middle, whose error either way is at most half the difference.
pub const UNKNOWN_SHARE: f64 = 0.5;

/// A replay touching more than this share of the L2 takes the larger step: between the
/// 32 MiB (0.53 of the H200's L2: the smaller step) and 48 MiB (0.8: the larger) the probe
/// measured.
pub const L2_SHARE: f64 = 2.0 / 3.0;

/// Where a walk's footprint came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FootprintSource {
    /// Recorded shapes and copy sizes.
    Recorded,
    /// Recorded durations at the memory's bandwidth: an upper bound.
    Durations,
}

/// Bytes one replay of a walk touches, estimated (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Footprint {
    pub bytes: f64,
    pub source: FootprintSource,
}

impl Footprint {
    /// The footprint of `walk`: from its recorded shapes where it has any, else from its
    /// kernels' durations at `bandwidth_gb_s` (bytes/ns), each kernel's blocks' share of
    /// `sms` (all of it without `sms`); copies and memsets by their bytes either way.
    pub fn of(walk: &Walk, bandwidth_gb_s: f64, sms: Option<u32>) -> Footprint {
        if has_shapes(walk) {
            return recorded(walk, largest_other_input(walk));
        }
        let moved: f64 = walk.ops.iter().map(moved_bytes).sum();
        let bw = if bandwidth_gb_s.is_finite() {
            bandwidth_gb_s.max(0.0)
        } else {
            0.0
        };
        let read: f64 = walk
            .ops
            .iter()
            .filter_map(|o| match o.kind {
                OpKind::Kernel { grid, .. } => {
                    let blocks = grid.0 as f64 * grid.1 as f64 * grid.2 as f64;
                    let share = sms.map_or(1.0, |s| (blocks / s.max(1) as f64).min(1.0));
                    Some(o.duration_ns.max(0.0) * bw * share)
                }
                _ => None,
            })
            .sum();
        Footprint {
            bytes: moved + read,
            source: FootprintSource::Durations,
        }
    }

    /// What `walk`'s trace itself says it touches: recorded shapes, copies and memsets, with
    /// nothing estimated from durations.
    pub fn stated(walk: &Walk) -> Footprint {
        Footprint::of(walk, 0.0, None)
    }

    /// [`Footprint::stated`] with every recorded operator's inputs added up, not only the largest
    /// (element-wise operators, which reread what the step wrote, left out; never less than the
    /// stated, nor than what lanes of element-wise kernels hold at once,
    /// `lanes_working_set`): an attention's caches, a convolution's weights and activations,
    /// a norm's input, each counted where it is read. Larger than what one replay touches where
    /// operators share inputs, so a walk this puts within the L2 has its data there; `Durations`
    /// for a trace without shapes, as [`Footprint::stated`].
    pub fn inputs_added(walk: &Walk) -> Footprint {
        if !has_shapes(walk) {
            return Footprint::stated(walk);
        }
        let others: f64 = walk
            .ops
            .iter()
            .filter(|o| is_other(o) && !is_element_wise(&o.name))
            .filter_map(|o| o.input_bytes)
            .sum();
        let other_inputs = others
            .max(largest_other_input(walk))
            .max(lanes_working_set(walk));
        recorded(walk, other_inputs)
    }

    /// Whether the replay touches more than [`L2_SHARE`] of an L2 of `l2_bytes`.
    pub fn beyond_l2(&self, l2_bytes: f64) -> bool {
        l2_bytes > 0.0 && self.bytes > L2_SHARE * l2_bytes
    }
}

/// The step to the upper level of per-node graph cost a walk was priced at, from the memory
/// one replay of it touches.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LevelStep {
    pub footprint: Footprint,
    /// The device's L2, bytes, where the profile says.
    pub l2_bytes: Option<f64>,
    /// µs a node.
    pub step_us: f64,
    /// The step is halfway between the smaller and the larger: a walk on one stream without
    /// shapes that may read past the line (see [`crate::offline::OfflineDevice::level_step`]).
    #[serde(default)]
    pub halfway: bool,
}

impl LevelStep {
    /// One line for the report.
    pub fn line(&self) -> String {
        let mib = |b: f64| format!("{:.0} MiB", b / MIB);
        let from = match self.footprint.source {
            FootprintSource::Recorded => "GEMM operands, gathered rows, copies and the largest other input",
            FootprintSource::Durations => {
                "no shapes recorded: what the kernels could read in their recorded time, an upper bound"
            }
        };
        let against = match self.l2_bytes {
            Some(l2) if self.halfway => {
                format!(
                    "more than 2/3 of the {} L2 at most, so halfway between the two steps",
                    mib(l2)
                )
            }
            Some(l2) if self.footprint.beyond_l2(l2) => {
                format!("more than 2/3 of the {} L2", mib(l2))
            }
            Some(l2) => format!("within 2/3 of the {} L2", mib(l2)),
            None => "the profile does not say the L2".into(),
        };
        format!(
            "memory a step: ~{} ({from}), {against}: nodes step {} us to the upper level\n",
            mib(self.footprint.bytes),
            crate::output::num(self.step_us, 3)
        )
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// What a replay of a shapeless walk leaves open about the level its real graph steps to
/// (see [`replay_memory_unknown`]).
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownMemory {
    pub warning: String,
    /// Added to the replayed graph step, ms: half of what the larger step to the upper level
    /// adds to every node over the smaller — positive where the replay took the smaller step,
    /// negative where it took the larger; 0 where that step is not known or the walk's
    /// streams run side by side (their nodes do not all add up).
    pub added_ms: f64,
}

/// A replay's warning where a shapeless walk's trace does not say on which side of the L2
/// line its real step falls: `estimate`, from durations (no shapes recorded), beyond 2/3 of
/// an L2 of `l2_bytes`. The replay, reading `replayed_bytes` a replay, takes one of the two
/// steps to the upper level: the smaller where its stand-ins stay within the line, the larger
/// where they stream past it. The real graph's `nodes` nodes take either, `extra_step_us`
/// apart (the profile's larger step less its smaller, where known). `None` where there is
/// nothing to say: shapes recorded (the stand-ins read them), or the bound itself within the
/// line (so is the real step).
///
/// Which it is a trace without shapes does not say: on the H200 a CuPy chain reading 100 MiB
/// of weights a step ran at the larger step, a CUDA C++ walk of kernels just as wide and long
/// over 4 MiB of buffers at the smaller, and both replayed at the smaller (their kernels of
/// 2048–4096 blocks cannot stream in their recorded time and spin instead). The other way
/// round, stand-ins that stream their kernels' recorded time read the bound itself, while
/// real kernels that reread one buffer, or spend their time computing, read far less. With
/// the answer unknown and both ends bounded, a walk on one stream (`one_stream`: every node
/// adds up) is priced halfway from whichever side the replay took, as `--summary` prices it
/// ([`crate::offline::OfflineDevice::level_step`]), which halves the most it can be off
/// either way.
pub fn replay_memory_unknown(
    estimate: Footprint,
    replayed_bytes: f64,
    l2_bytes: f64,
    nodes: usize,
    extra_step_us: Option<f64>,
    one_stream: bool,
) -> Option<UnknownMemory> {
    if estimate.source != FootprintSource::Durations || !estimate.beyond_l2(l2_bytes) {
        return None;
    }
    let replay_past = Footprint {
        bytes: replayed_bytes,
        source: FootprintSource::Recorded,
    }
    .beyond_l2(l2_bytes);
    let step = extra_step_us.filter(|d| *d > 0.0);
    let up_to_ms = step.map_or(0.0, |d| d * nodes as f64 / 1e3);
    // Which way the real step may lie from the replay's: further up, or back down.
    let (sign, mark, side, other, way) = if replay_past {
        (
            -1.0,
            "-",
            "past",
            "reads less (its kernels reread the same data, or spend their time computing)",
            "shorter",
        )
    } else {
        (
            1.0,
            "+",
            "within",
            "reads more than 2/3 of the L2",
            "further",
        )
    };
    let added_ms = if one_stream {
        sign * UNKNOWN_SHARE * up_to_ms
    } else {
        0.0
    };
    let cost = step
        .map(|d| {
            let how = if one_stream {
                format!(
                    "; which the trace does not say, so the graph step is priced halfway, {mark}{} ms, and may be that much off either way",
                    crate::output::num(added_ms.abs(), 3)
                )
            } else {
                String::new()
            };
            format!(
                ", every node of its graph steps ~{} us {way} to the upper level than the replay's: up to {mark}{} ms a step{how}",
                crate::output::num(d, 2),
                crate::output::num(up_to_ms, 3)
            )
        })
        .unwrap_or_default();
    Some(UnknownMemory {
        warning: format!(
            "no shapes recorded: the stand-ins read ~{:.0} MiB a replay, {side} 2/3 of the {:.0} MiB L2, while the kernels could have read up to ~{:.0} MiB in their recorded time; if the real step {other}{cost} (record PyTorch steps with record_shapes=True)",
            replayed_bytes / MIB,
            l2_bytes / MIB,
            estimate.bytes / MIB
        ),
        added_ms,
    })
}

/// What long kernels (recorded at `--stream-from-us` or longer) stand in by where the recorded
/// shapes put a walk's data within 2/3 of the L2.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum L2Resident {
    /// Timed spins. Data that small stays in the L2 from one replay to the next, so the real
    /// kernels reread it there (convolution weights, a recurrent cell's) and their graph keeps
    /// the lower level of per-node cost; stand-ins streaming fresh device memory take the
    /// upper one. On the H200 a stack of GroupNorm and 3 × 3 convolutions over ~11 MiB of
    /// weights and activations replayed +6.5% streaming and +0.7% spinning, a ResNet-style
    /// stack at batch 1 +1.1% and −0.3% (medians of three replays beside one real graph step,
    /// `docs/validation-l2-resident-h200.json`).
    #[default]
    Spin,
    /// Streaming device memory, as past the line (the replay before this choice existed).
    Stream,
    /// As `spin` on one stream; on walks whose streams run side by side, kernels recorded at 1
    /// µs or longer whose operator's inputs the trace recorded read them paced over their
    /// recorded time (as past the line) but from the same bytes every time, which the L2
    /// keeps: lanes of element-wise kernels over data the L2 holds slow each other, which
    /// spins and chases do less. On an H100 twelve such walks replayed within 5% on 7 (on 3
    /// with spins and chases; two lanes of 4 MiB adds +43%, eight lanes of 32 KiB SiLUs +14%;
    /// `docs/validation-h200.md`, "Lanes within the L2 replayed by paced reads from it"). Not
    /// run on an H200.
    Paced,
    /// As `paced`, except that an element-wise kernel's stand-in does its recorded work
    /// instead of reading: it sums its inputs into its result from bytes the L2 keeps, every
    /// load of a round in flight at once as PyTorch's vectorised kernels issue them, then
    /// waits out its recorded time. What such kernels cost each other side by side follows
    /// the bytes they move in their time: on an H100 PyTorch's own kernels over the recorded
    /// bytes, as long alone as the real lanes, slowed each other by four fifths of what the
    /// real lanes did, reads only or fewer bytes in that time by half
    /// (`docs/validation-h200.md`, "Stand-ins that do an element-wise kernel's reads and
    /// writes"). Read off probes of three walks' lanes; held out, it came within 5% on 5 of
    /// batch 76's 6 walks (the default on 1). On walks with recorded GEMMs it keeps the
    /// default stand-ins (beside GEMM lanes it priced 14-18% high on batches 68-74). A kernel
    /// whose work-doing stand-in, asked for no wait, outlasts its planned node keeps the
    /// default stand-in too ([`crate::stand_in::StandInPlan::work_fits`]): such stand-ins
    /// priced lanes of 1-block adds +53% and of 2 MiB adds +27%, and batch 76's wins came from
    /// them; with that floor `work` came within 5% on 19 of batches 68-77's 60 walks against
    /// the default's 16 (`docs/validation-h200.md`, "Work-doing stand-ins held to their
    /// kernels' nodes"), and on held-out batch 78 3 of 6 as the default: no kernel of 1-1.5 µs
    /// holds its work. Not run on an H200.
    Work,
}

/// Whether the trace's own shapes, `stated`, put a walk's data within 2/3 of an L2 of
/// `l2_bytes`. A footprint from durations is only an upper bound, so it never says so.
pub fn within_l2(stated: Footprint, l2_bytes: f64) -> bool {
    stated.source == FootprintSource::Recorded && l2_bytes > 0.0 && !stated.beyond_l2(l2_bytes)
}

/// Whether the recorded shapes put more data than the whole L2 of `l2_bytes` in the walk's
/// lanes at once ([`Footprint::inputs_added`]): where a kernel beside the others cannot read
/// what the one before it wrote from the L2.
pub fn past_whole_l2(stated: Footprint, l2_bytes: f64) -> bool {
    stated.source == FootprintSource::Recorded && l2_bytes > 0.0 && stated.bytes > l2_bytes
}

/// A replay's note where the recorded shapes put the step's data, `data` (see
/// [`Footprint::inputs_added`]), within 2/3 of an L2 of `l2_bytes` and kernels recorded at
/// `from_us` or longer, which past the line read device memory, stand in as `choice` says;
/// `streaming`: how many do read it (streaming, or paced beside other streams). The trace
/// does not say whether the real kernels reread their data from the L2, so the note names
/// the other price. `None` where the data is past the line or unknown, or, reading chosen,
/// where no kernel reads.
pub fn within_l2_note(
    data: Footprint,
    l2_bytes: f64,
    choice: L2Resident,
    from_us: f64,
    streaming: usize,
) -> Option<String> {
    if !within_l2(data, l2_bytes) {
        return None;
    }
    let fits = format!(
        "the recorded shapes put the step's data at ~{:.0} MiB (every operator's inputs added up, and what lanes of element-wise kernels hold at once), within 2/3 of the {:.0} MiB L2",
        data.bytes / MIB,
        l2_bytes / MIB
    );
    match choice {
        L2Resident::Spin => Some(format!(
            "{fits}, where it stays from one replay to the next: kernels recorded at {} us or longer stand in without reading device memory instead of streaming it as a decode step's weight reads do; if the real kernels read device memory, the replayed graph step is low: --l2-resident stream streams them",
            crate::output::num(from_us, 1)
        )),
        L2Resident::Paced | L2Resident::Work => Some(format!(
            "{fits}, where it stays from one replay to the next: kernels recorded at {} us or longer stand in without reading device memory on one stream, and beside other streams read their recorded inputs paced from bytes the L2 keeps ({streaming} of them)",
            crate::output::num(from_us, 1)
        )),
        L2Resident::Stream => (streaming > 0).then(|| {
            format!(
                "{streaming} kernel(s) stand in by reading fresh device memory (streaming it, or paced beside other streams), as a decode step's weight reads do, while {fits}; if the real kernels reread their data from the L2 (convolution weights, a recurrent cell's), the replayed graph step is high: --l2-resident spin stands them in without reading it"
            )
        }),
    }
}

/// Whether `walk`'s trace recorded shapes (a GEMM's or any operator's inputs).
/// Whether the trace recorded any operator's input shapes (PyTorch: `record_shapes=True`):
/// a GEMM's operands or an operator's inputs on one of its kernels.
pub fn has_shapes(walk: &Walk) -> bool {
    walk.ops
        .iter()
        .any(|o| o.matmul.is_some() || o.input_bytes.is_some())
}

/// A footprint from recorded shapes: copies and memsets, every GEMM's larger operand, the rows
/// every gather read of its table (tables, like weights, are not what the step wrote), and
/// `other_inputs` bytes of the other operators' inputs.
fn recorded(walk: &Walk, other_inputs: f64) -> Footprint {
    let moved: f64 = walk.ops.iter().map(moved_bytes).sum();
    let gathered: f64 = walk.ops.iter().filter_map(|o| o.gathered_bytes).sum();
    let gemms: f64 = walk
        .ops
        .iter()
        .filter_map(|o| match o.matmul {
            Some(MatmulRole::Call(g)) => {
                let (a, b, _) = g.bytes();
                Some(a.max(b) as f64)
            }
            _ => None,
        })
        .sum();
    Footprint {
        bytes: moved + gemms + gathered + other_inputs,
        source: FootprintSource::Recorded,
    }
}

/// The largest recorded input of any operator but a GEMM or a gather, bytes (0 without one).
fn largest_other_input(walk: &Walk) -> f64 {
    walk.ops
        .iter()
        .filter(|o| is_other(o))
        .filter_map(|o| o.input_bytes)
        .fold(0.0, f64::max)
}

/// What lanes of element-wise kernels hold at once, bytes: on each stream, the most one of its
/// element-wise kernels touches (its recorded inputs and, unless it writes in place, a result
/// as large as the largest, as [`crate::offline`] counts what such a kernel writes), added up
/// over the streams, which run side by side on tensors of their own. A kernel reads its inputs
/// and writes its result while the other lanes' kernels read and write theirs, so their data
/// must all stay in the L2 for the lanes to run from it. On an H100
/// (`scripts/graph_lane_memory_probe.py --traces`, 24 adds a lane, each writing a third f32
/// buffer of 16 MiB: 48 MiB a lane) two lanes took 2.4 times one lane's step, at device
/// memory's pace, where counting the largest input alone (16 MiB) had them within the L2 and
/// `--summary` 51% low; four lanes over 4 MiB buffers (48 MiB together) took 4.6 times one
/// lane's step, `--summary` 32% low then. An in-place kernel (`aten::add_`) touches its inputs
/// only: its result is one of them.
fn lanes_working_set(walk: &Walk) -> f64 {
    let mut by_stream: Vec<(Option<u64>, f64)> = Vec::new();
    for o in walk
        .ops
        .iter()
        .filter(|o| o.is_kernel() && is_other(o) && is_element_wise(&o.name))
    {
        let (Some(inputs), Some(largest)) = (o.input_bytes, o.largest_input_bytes) else {
            continue;
        };
        // An in-place kernel's result is one of its inputs.
        let touched = if o.in_place { inputs } else { inputs + largest };
        match by_stream.iter_mut().find(|(s, _)| *s == o.stream) {
            Some((_, most)) => *most = most.max(touched),
            None => by_stream.push((o.stream, touched)),
        }
    }
    by_stream.iter().map(|(_, most)| most).sum()
}

/// Whether `o`'s recorded inputs count as an "other" operator's: neither a GEMM's (counted by
/// its larger operand) nor a gather's (counted by its rows).
fn is_other(o: &Op) -> bool {
    o.matmul.is_none() && o.gathered_bytes.is_none()
}

/// Device memory a copy or memset touches: both ends of a device-to-device copy.
fn moved_bytes(o: &Op) -> f64 {
    match &o.kind {
        OpKind::Memcpy {
            bytes, direction, ..
        } => match CopyDirection::of(direction) {
            CopyDirection::DeviceToDevice => 2.0 * *bytes as f64,
            _ => *bytes as f64,
        },
        OpKind::Memset { bytes } => *bytes as f64,
        OpKind::Kernel { .. } => 0.0,
    }
}

/// From what recorded duration kernels beside other streams read their recorded inputs paced
/// from the L2 under `--l2-resident paced`, at most, ns. On an H100, twelve walks of element-wise
/// lanes over data the L2 holds (held-out batches 68 and 69, after their first runs) replayed
/// within 5% on 7 paced from 1 µs, on 2 from 2 µs (the `--stream-from-us` default), on 3 with
/// chases and spins (the default): most of their kernels take 1–2 µs.
pub(crate) const PACED_IN_L2_FROM_NS: f64 = 1_000.0;

/// From what recorded duration kernels beside other streams read their recorded inputs paced
/// from bytes the L2 keeps, ns: under [`L2Resident::Paced`] (or `Work`), where the walk's data,
/// `resident`, stays in an L2 of `l2_bytes` and reading is not off, the earlier of
/// `stream_from_ns` and [`PACED_IN_L2_FROM_NS`]; else `None`.
pub(crate) fn l2_paced_from(
    stream_from_ns: Option<f64>,
    choice: L2Resident,
    resident: Footprint,
    l2_bytes: f64,
) -> Option<f64> {
    stream_from_ns
        .filter(|_| {
            matches!(choice, L2Resident::Paced | L2Resident::Work) && within_l2(resident, l2_bytes)
        })
        .map(|ns| ns.min(PACED_IN_L2_FROM_NS))
}

/// From what recorded duration long kernels stream device memory (or, beside other streams,
/// read their inputs paced), ns: `stream_from_ns` as asked, unless `choice` spins them where
/// the walk's data, `resident`, stays in an L2 of `l2_bytes` (see [`L2Resident`]).
pub(crate) fn streams_from(
    stream_from_ns: Option<f64>,
    choice: L2Resident,
    resident: Footprint,
    l2_bytes: f64,
) -> Option<f64> {
    stream_from_ns.filter(|_| !(choice != L2Resident::Stream && within_l2(resident, l2_bytes)))
}

/// Threads of a kernel's grid from which lanes of such kernels ran far from side by side: the
/// real graphs of the stored walk runs made only of element-wise kernels, norms and reductions
/// whose median kernel launched this many lay 40-76% of the way from their lanes side by side to
/// one after another (18 runs, H100 and H200), those of smaller kernels a median 19%
/// (`scripts/elementwise_lane_overlap.py`; about a quarter of an H100's or H200's thread slots).
const WIDE_LANE_THREADS: u64 = 64 * 1024;

/// The threads `op` launched; 0 for an op that is not a kernel.
fn launched_threads(op: &Op) -> u64 {
    match op.kind {
        OpKind::Kernel { grid, block } => memra_engine::LaunchShape::of(grid, block).threads(),
        _ => 0,
    }
}

/// A replay's note where `walk`'s streams run side by side (`overlapping`) over data the
/// recorded shapes put within 2/3 of an L2 of `l2_bytes` (`resident`) and `choice` spins its
/// long kernels: how many kernels that are not GEMMs, recorded at `PACED_IN_L2_FROM_NS` or
/// longer with recorded inputs, stand in by chases and spins, which slow each other less than
/// such kernels do over data the L2 holds, and what `--l2-resident paced` did on the held-out
/// walks that tried it: on an H100 it brought lanes made only of such kernels nearer, and
/// priced the small kernels beside GEMM lanes high, so the note says which the walk is (any
/// kernel of a recorded GEMM), and, on lanes without GEMMs, how many of those kernels launch
/// `WIDE_LANE_THREADS` or more, where the replay came low on every stored walk. `None`
/// otherwise.
pub fn lanes_within_l2_note(
    walk: &Walk,
    resident: Footprint,
    l2_bytes: f64,
    choice: L2Resident,
    overlapping: bool,
) -> Option<String> {
    if !overlapping || choice != L2Resident::Spin || !within_l2(resident, l2_bytes) {
        return None;
    }
    let kernels = walk
        .kernels()
        .filter(|o| {
            o.input_bytes.is_some() && o.matmul.is_none() && o.duration_ns >= PACED_IN_L2_FROM_NS
        })
        .count();
    let beside_gemms = walk.kernels().any(|o| o.matmul.is_some());
    // Held-out batches 70-74 on an H100, each batch's first run (docs/validation-h200.md,
    // "`--l2-resident paced` held out on an H100", "Held-out batch 74 on an H100" and "Lanes of
    // element-wise kernels within the L2"); `--summary` priced over each run's own profile.
    // `work`: batch 76's first run and batches 68-74 replayed both ways on one H100 ("Held-out
    // batch 76 on an H100").
    let paced = if beside_gemms {
        "beside GEMMs, as here, --l2-resident paced (inputs read paced from the L2) came within 5% on 5 of 12 held-out H100 walks against the default's 7, up to 16% high, and --l2-resident work (element-wise kernels doing their work from the L2) on 5 of 14 against 9, up to 18% high: keep the default"
    } else {
        "on an H100, 18 held-out walks of such lanes replayed up to 22% low so (4 within 5%): stamped inside unprofiled graphs, such lanes ran side by side and took 1.25-1.7 times one lane's step, where the stand-ins of their short kernels (empty kernels, one-read chases) do not slow each other; --summary came within 10% on 16 of the 18 walks of batches 70, 73 and 74 (element-wise lanes, some beside GEMV lanes), and --l2-resident paced, which reads their inputs paced from the L2, within 5% on 9 of the 18 held out, though up to 35% high on lanes of tiny or mixed-size kernels (the paced reads of 1.1 us adds replayed at 1.8 us); --l2-resident work, whose element-wise stand-ins sum their inputs into their results from the L2 before waiting out their time, came within 5% on 5 of the 6 walks of held-out batch 76 (the default on 1) and on 10 of 28 earlier such walks (the default on 5), though up to 53% high on lanes of 1-block adds"
    };
    let wide = walk
        .kernels()
        .filter(|o| {
            o.input_bytes.is_some()
                && o.matmul.is_none()
                && o.duration_ns >= PACED_IN_L2_FROM_NS
                && launched_threads(o) >= WIDE_LANE_THREADS
        })
        .count();
    // docs/validation-h200.md, "Held-out batches 60–62 and 94 on an H200".
    let wide_note = if wide > 0 && !beside_gemms {
        format!("; {wide} of them launch 64 Ki threads or more: lanes of such kernels ran far from side by side, the real graphs of 18 stored walk runs of them 40-76% of the way from their lanes side by side to one after another, and the replay came below every one (-3.6% to -47.3%; scripts/elementwise_lane_overlap.py): take the replayed graph step as a lower bound here")
    } else {
        String::new()
    };
    (kernels > 0).then(|| format!(
        "the streams run side by side over data within 2/3 of the {:.0} MiB L2: {kernels} kernel(s) of 1 us or longer with recorded inputs stand in by chases and spins, which slow each other less than such kernels do there; {paced} (not yet run on an H200){wide_note}",
        l2_bytes / MIB
    ))
}

#[cfg(test)]
mod tests;
