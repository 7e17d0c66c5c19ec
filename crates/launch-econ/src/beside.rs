//! How much longer kernels run side by side with GEMMs of other streams, measured for
//! `--summary`.
//!
//! Kernels of two streams that run side by side in a graph slow each other down even where their
//! blocks fit the SMs together: two chains of decode-shaped GEMMs (weights streamed from device
//! memory, 16 tokens), each GEMM followed by a small add, take longer side by side than one alone
//! although neither holds a fifth of the GPU, and the more so the more bytes a second the GEMMs
//! stream together. A trace gives bytes only for kernels whose operator's shapes it holds: GEMMs
//! (their operands, see [`crate::trace::matmul`]), and element-wise and normalisation kernels,
//! which read their inputs once and write a result as large (see [`crate::trace::inputs`]), and
//! fused attention, which reads its keys and values; the offline model takes the load of the
//! kernels running at one moment as those bytes over their recorded durations. Other kernels' time
//! is not only their bytes (reductions, gathers): they have no load. [`crate::sharing`] shares
//! device memory between the kernels running together where that load is more than its bandwidth
//! (and the SMs where they hold more than the GPU), and slows kernels of different lanes, while
//! they run together, by what the measured stretch at the load beside each
//! (`crate::sharing::load_beside`) leaves beyond that sharing ([`BesideCosts::beside_stretch`]).
//! Every stretch here is measured on whole graph nodes, and the lay-out lays it on whole nodes too.
//!
//! The stretch is measured here on the device, at the upper level of per-node graph cost:
//! for each of three GEMM sizes (1024, 2048, 4096 square, fp16), a chain alone, its GEMMs
//! alone, and two of the chain (each with weights of its own, more than an L2 cache holds)
//! forked and joined in one graph. Side by side the chains run in step, GEMM beside GEMM and
//! add beside add, which is how the lay-out places them too, so the extra time over one
//! chain is put on its GEMMs: extra per GEMM over the GEMM's node time alone, at the load of
//! two such GEMMs. Between the points and below the first it is linear from zero, above the
//! last it stays at the last. The bandwidth is a device-to-device copy's
//! ([`crate::roofline::copy_bandwidth`]).
//!
//! Those chains run in step, so they price a kernel beside its like. A small kernel beside GEMMs
//! that stream their weights fares worse: it waits on its few loads, and they wait longer behind
//! the other stream's traffic (on the H200 decode-sized element-wise kernels beside decode GEMVs
//! ran ~1.7 times as long, where the pair's stretch at that load is +26%). So a chain of small
//! adds, several times longer than the GEMMs, is measured beside the GEMMs alone of each size, too
//! ([`BesideCosts::small`]): how much longer an add node takes while the GEMMs run than after they
//! end, read from clock stamps in one replay, by one GEMM's load. And the same adds beside
//! themselves on another stream ([`BesideCosts::small_pair`]): at the small kernels' own load they
//! cost each other ~17%, which a curve linear from zero to the first GEMM point would leave out; it
//! is the least a small kernel takes beside another lane's kernel. Nothing in it is taken from a
//! recorded walk.

use memra_engine::{DeviceBuffer, Engine, Gemm, GemmType};
use serde::{Deserialize, Serialize};

use crate::stats::median;

mod small;
mod stamps;

/// Tokens of the GEMMs (cuBLAS column-major: n).
const TOKENS: u32 = 16;
/// Square weights of these sizes, fp16.
const SIZES: [u32; 3] = [1024, 2048, 4096];
/// Weight bytes of one chain: more than the H200's 50 MiB L2 (and any other's so far), so a
/// chain streams its weights from device memory alone and beside its twin alike.
const CHAIN_WEIGHT_BYTES: usize = 256 << 20;
/// Timed replays of each graph, interleaved; medians.
const REPLAYS: usize = 9;

/// One measured point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BesidePoint {
    /// What the GEMMs running side by side ask of device memory together: twice one GEMM's
    /// operand bytes over its node time alone, GB/s.
    pub load_gb_s: f64,
    /// How much longer each GEMM node takes beside its twin, relative to its time alone
    /// (at least 0).
    pub stretch: f64,
    /// One GEMM node's time alone, µs.
    pub gemm_us: f64,
}

/// The measured stretch of kernels side by side, by the memory load of what runs together.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BesideCosts {
    /// By rising load.
    pub points: [BesidePoint; SIZES.len()],
    /// Device-memory bandwidth, GB/s (a device-to-device copy,
    /// [`crate::roofline::copy_bandwidth`]): kernels that together ask for more share it. 0 (older
    /// profiles): not shared.
    #[serde(default)]
    pub bandwidth_gb_s: f64,
    /// Small kernels beside another stream's GEMMs, by rising load; zeros (older profiles):
    /// not measured.
    #[serde(default)]
    pub small: [SmallPoint; SIZES.len()],
    /// Small adds beside the same adds on another stream: the small kernels' stretch at the
    /// lowest load, that of small kernels themselves; zeros (older profiles): not measured.
    #[serde(default)]
    pub small_pair: SmallPoint,
    /// How much longer every node of a graph takes for each other lane running beside it, µs
    /// ([`crate::front_end`]): the GPU's front end serves the nodes of all of them. 0 (older profiles): not measured, not priced.
    #[serde(default)]
    pub per_lane_us: f64,
    /// What lanes of small adds whose buffers the L2 holds move together, GB/s
    /// ([`crate::l2_lanes`]): element-wise kernels of a walk whose data stays in the L2 share
    /// this, not device memory. 0 (older profiles): not measured, their loads priced as device
    /// memory's.
    #[serde(default)]
    pub l2_gb_s: f64,
}

/// How much longer a small kernel's node runs beside another stream's load.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SmallPoint {
    /// The other stream's GEMMs' operand bytes over their time alone, GB/s.
    pub load_gb_s: f64,
    /// How much longer an add's node takes while they run, relative to its time alone.
    pub stretch: f64,
}

impl BesideCosts {
    /// The stretch of a kernel that runs with a load of `gb_s` (its own and the others'
    /// known bytes a second): linear from (0, 0) through the points, the last point's above
    /// them; 0 without points.
    pub fn stretch(&self, gb_s: f64) -> f64 {
        through_points(self.points.iter().map(|p| (p.load_gb_s, p.stretch)), gb_s)
    }

    /// [`BesideCosts::per_lane_us`], ns, at least 0.
    pub fn per_lane_ns(&self) -> f64 {
        self.per_lane_us.max(0.0) * 1e3
    }

    /// The stretch of a small kernel (one that waits on its loads) while other lanes' kernels
    /// run beside it, `others` asking those GB/s of device memory each: what each costs it,
    /// through [`BesideCosts::small`] (linear from (0, 0), the last point's above them; each
    /// point was measured beside one lane of GEMMs), summed over them, and never less than
    /// [`BesideCosts::small_pair`]'s stretch: small kernels cost each other that much at their
    /// own small load, and a kernel whose bytes the trace does not give (a reduction, a
    /// gather) still has a load. Summed, as small adds read by clock stamps beside one, two and
    /// four lanes of decode GEMMs ran (`crate::sharing`); the pair was measured beside one lane
    /// of adds only, so it is a floor, not a part of the sum. 0 where nothing was measured.
    ///
    /// Where the kernel and every kernel running beside it read from the L2 (`among_l2_lanes`:
    /// the kernel's node time alone, ns), the floor is the time the pair's adds took beyond
    /// theirs, not the share: the pair's adds were such kernels, and what they cost each other
    /// there is a cost a node — the front end's for each other lane ([`crate::front_end`]) and
    /// the adds' own short contention — that a longer kernel does not pay again for each add's
    /// length of its own. On an H100, softmax and LayerNorm kernels of 5–9 µs beside lanes of
    /// their kind over data the L2 holds ran within 2% of their recorded durations in real
    /// graphs, where the share priced them +21 … +24% (held-out batches 68 and 70, after their
    /// runs). Beside kernels reading device memory the share stays: there the floor also
    /// stands for loads the trace does not give.
    pub fn small_stretch(
        &self,
        others: impl Iterator<Item = f64>,
        among_l2_lanes: Option<f64>,
    ) -> f64 {
        let floor = if self.small_pair.load_gb_s > 0.0 {
            let share = self.small_pair.stretch.max(0.0);
            match among_l2_lanes {
                Some(node_ns) if node_ns > self.pair_node_ns() => {
                    share * self.pair_node_ns() / node_ns
                }
                _ => share,
            }
        } else {
            0.0
        };
        let beside: f64 = others
            .map(|gb_s| through_points(self.small.iter().map(|p| (p.load_gb_s, p.stretch)), gb_s))
            .sum();
        beside.max(floor)
    }

    /// The node time alone of one of [`BesideCosts::small_pair`]'s adds, ns (0 where the pair
    /// was not measured): its bytes over its load.
    pub fn pair_node_ns(&self) -> f64 {
        if self.small_pair.load_gb_s > 0.0 {
            small::PAIR_ADD_BYTES / self.small_pair.load_gb_s
        } else {
            0.0
        }
    }

    /// How much slower kernels run together whose load is `gb_s`, where that is more than
    /// device memory gives: load over bandwidth, at least 1.
    pub fn memory_slowdown(&self, gb_s: f64) -> f64 {
        if self.bandwidth_gb_s > 0.0 && gb_s > self.bandwidth_gb_s {
            gb_s / self.bandwidth_gb_s
        } else {
            1.0
        }
    }

    /// The share of the GPU held, while it runs, by a kernel that fills the SMs in one round
    /// of fat blocks and is held by memory or latency rather than by its math, as the pair at
    /// the highest load measured it: those GEMMs (4096 square at 16 tokens: 96 blocks that
    /// each take a whole SM) ran `1 + stretch` times as long side by side as alone, as two
    /// kernels that each hold `h = (1 + stretch) / 2` of the GPU and share it would (at most
    /// 1). A decode GEMV of 128 such blocks holds 0.97 of the SMs by its blocks, yet two side
    /// by side overlap about as the measured pair does: their blocks retire at different times
    /// and the other's take the SMs they leave. `None` without a measured point.
    pub fn one_round_hold(&self) -> Option<f64> {
        self.points
            .iter()
            .rev()
            .find(|p| p.load_gb_s > 0.0)
            .map(|p| ((1.0 + p.stretch.max(0.0)) / 2.0).min(1.0))
    }

    /// The stretch kernels of different lanes take while they run together at a load of
    /// `gb_s`, holding `held` of the GPU together, beyond what sharing the SMs and the
    /// bandwidth already costs them: the measured pair ran `1 + stretch` times as long, of
    /// which the larger of the memory slowdown at that load and the SMs' (`held`, where more
    /// than 1) is the part [`crate::sharing`] prices as it goes.
    pub fn beside_stretch(&self, gb_s: f64, held: f64) -> f64 {
        let shared = self.memory_slowdown(gb_s).max(held).max(1.0);
        ((1.0 + self.stretch(gb_s)) / shared - 1.0).max(0.0)
    }
}

/// The stretch at `gb_s` over measured (load, stretch) `points` by rising load: linear from
/// (0, 0) through them, the last one's above them, at least 0; points without a load (not
/// measured) are skipped, and without any it is 0.
fn through_points(points: impl Iterator<Item = (f64, f64)>, gb_s: f64) -> f64 {
    if gb_s.is_nan() || gb_s <= 0.0 {
        return 0.0;
    }
    let mut prev = (0.0, 0.0);
    for (load, stretch) in points.filter(|p| p.0 > 0.0) {
        if gb_s <= load {
            let (x0, y0) = prev;
            let t = (gb_s - x0) / (load - x0).max(f64::MIN_POSITIVE);
            return (y0 + t * (stretch - y0)).max(0.0);
        }
        prev = (load, stretch);
    }
    prev.1.max(0.0)
}

/// What a chain issues a layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Nodes {
    Gemms,
    GemmsAndAdds,
}

/// One chain's buffers on one engine: `layers` GEMMs of a `d` × `d` weight, each followed by
/// an add over the GEMM's output count of floats.
struct Chain {
    gemm: Gemm,
    weights: Vec<DeviceBuffer<u16>>,
    x: DeviceBuffer<u16>,
    y: DeviceBuffer<u16>,
    adds: Adds,
}

/// The adds of a chain, on their own buffers: one per layer of the `d`-square chain.
struct Adds {
    bufs: [DeviceBuffer<f32>; 3],
    layers: usize,
}

/// The GEMM of a `d`-square chain and how many layers its weights make.
fn chain_shape(d: u32) -> (Gemm, usize) {
    let gemm = Gemm::plain(GemmType::F16, d, TOKENS, d);
    let layers = (CHAIN_WEIGHT_BYTES / gemm.bytes().0).max(1);
    (gemm, layers)
}

impl Adds {
    /// A `d`-square chain's adds alone, without its weights.
    fn new(e: &Engine, d: u32) -> memra_engine::Result<Adds> {
        let elems = (d * TOKENS) as usize;
        Ok(Adds {
            bufs: [e.zeros(elems)?, e.zeros(elems)?, e.zeros(elems)?],
            layers: chain_shape(d).1,
        })
    }

    fn issue_one(&mut self, e: &Engine) -> memra_engine::Result<()> {
        let [a, b, y] = &mut self.bufs;
        let n = a.len();
        e.add(a, b, y, n)
    }

    /// One add per layer.
    fn issue(&mut self, e: &Engine) -> memra_engine::Result<()> {
        (0..self.layers).try_for_each(|_| self.issue_one(e))
    }
}

impl Chain {
    fn new(e: &Engine, d: u32) -> memra_engine::Result<Chain> {
        Chain::with_layers(e, d, chain_shape(d).1)
    }

    /// A `d`-square chain of `layers` layers, each GEMM on weights of its own.
    fn with_layers(e: &Engine, d: u32, layers: usize) -> memra_engine::Result<Chain> {
        let gemm = chain_shape(d).0;
        let (wa, xb, yb) = gemm.bytes();
        Ok(Chain {
            gemm,
            weights: (0..layers)
                .map(|_| e.zeros::<u16>(wa / 2))
                .collect::<memra_engine::Result<_>>()?,
            x: e.zeros::<u16>(xb / 2)?,
            y: e.zeros::<u16>(yb / 2)?,
            adds: Adds::new(e, d)?,
        })
    }

    fn issue(&mut self, e: &Engine, nodes: Nodes) -> memra_engine::Result<()> {
        self.issue_layers(e, 0..self.weights.len(), nodes)
    }

    /// Layers `range` of the chain.
    fn issue_layers(
        &mut self,
        e: &Engine,
        range: std::ops::Range<usize>,
        nodes: Nodes,
    ) -> memra_engine::Result<()> {
        for w in &self.weights[range] {
            e.gemm(&self.gemm, w, &self.x, &mut self.y)?;
            if nodes == Nodes::GemmsAndAdds {
                self.adds.issue_one(e)?;
            }
        }
        Ok(())
    }
}

/// Measures [`BesideCosts`] on `e`'s device with a second stream of the same context. Run it
/// at the upper level of per-node graph cost (after [`crate::other_stream::activate`]),
/// where the graph step is priced. The warning says where small kernels beside GEMMs could
/// not be measured.
pub fn measure(e: &Engine) -> anyhow::Result<(BesideCosts, Option<String>)> {
    let other = crate::other_stream::second_engine(e)?;
    e.prepare_gemm()?;
    other.prepare_gemm()?;
    let mut points = [BesidePoint {
        load_gb_s: 0.0,
        stretch: 0.0,
        gemm_us: 0.0,
    }; SIZES.len()];
    for (p, d) in points.iter_mut().zip(SIZES) {
        *p = measure_size(e, &other, d)?;
    }
    points.sort_by(|a, b| a.load_gb_s.total_cmp(&b.load_gb_s));
    // Small kernels beside GEMMs: a point that cannot be measured leaves them all unmeasured
    // (priced by the pair's stretch alone), with a warning, rather than the whole run undone.
    let mut small = [SmallPoint::default(); SIZES.len()];
    let mut warning = None;
    for (p, d) in small.iter_mut().zip(SIZES) {
        match small::measure_small(e, &other, d) {
            Ok(point) => *p = point,
            Err(err) => {
                warning = Some(format!(
                    "small kernels beside another stream's GEMMs not measured ({err:#}); replay --summary prices them with the GEMM pair's stretch alone"
                ));
                break;
            }
        }
    }
    if warning.is_some() {
        small = [SmallPoint::default(); SIZES.len()];
    }
    small.sort_by(|a, b| a.load_gb_s.total_cmp(&b.load_gb_s));
    let small_pair = small::measure_small_pair(e, &other).unwrap_or_else(|err| {
        warning.get_or_insert_with(|| format!(
            "small kernels beside small kernels of another stream not measured ({err:#}); replay --summary prices them with the GEMM pair's stretch alone"
        ));
        SmallPoint::default()
    });
    let per_lane_us = crate::front_end::measure_per_lane(e).unwrap_or_else(|err| {
        warning.get_or_insert_with(|| format!(
            "what each other lane costs a graph node not measured ({err:#}); replay --summary prices lanes without it"
        ));
        0.0
    });
    let l2_gb_s = crate::l2_lanes::measure(e).map_or_else(
        |err| {
            warning.get_or_insert_with(|| format!(
                "lanes of adds within the L2 not measured ({err:#}); replay --summary prices element-wise kernels side by side as device memory's load"
            ));
            0.0
        },
        |m| m.together_gb_s,
    );
    Ok((
        BesideCosts {
            points,
            bandwidth_gb_s: crate::roofline::copy_bandwidth(e)?,
            small,
            small_pair,
            per_lane_us,
            l2_gb_s,
        },
        warning,
    ))
}

/// Median GPU times of `graphs` replayed in turn [`REPLAYS`] times, µs each.
pub(crate) fn replay_times(
    e: &Engine,
    graphs: &[&memra_engine::Graph],
) -> anyhow::Result<Vec<f64>> {
    for g in graphs {
        g.launch()?;
    }
    e.stream().synchronize()?;
    let mut times = vec![Vec::with_capacity(REPLAYS); graphs.len()];
    for _ in 0..REPLAYS {
        for (g, t) in graphs.iter().zip(&mut times) {
            t.push(e.gpu_time_ms(|| g.launch())? * 1e3);
        }
    }
    Ok(times.iter().map(|t| median(t)).collect())
}

/// Stamped rounds of a [`BesidePoint`]'s longer chain.
const PAIR_ROUNDS_STAMPED: usize = 16;

/// One [`BesidePoint`]: a `d`-square chain of GEMMs and adds on `e`, twice as long as its
/// twin on `other` beside it (weights of their own), in one graph, the longer one stamped
/// every round ([`stamps`]): a layer's time in the rounds that ran wholly beside the twin
/// against the rounds wholly after it ended, in the same replay (median over replays), over
/// a GEMM's node time alone (a graph of the GEMMs alone). Taken as the difference between
/// the graph of the two chains and one chain's, it also held the per-node level the two
/// graphs ran at: 0.18 at 1024 square on an H200 where the stamps read about 0.10 (PyTorch's
/// GEMMs, `scripts/small_kernel_kind_probe.py --gemm-lanes`), alike at 4096.
fn measure_size(e: &Engine, other: &Engine, d: u32) -> anyhow::Result<BesidePoint> {
    let layers = chain_shape(d).1;
    let mut mine = Chain::with_layers(e, d, 2 * layers)?;
    let mut theirs = Chain::new(other, d)?;
    let gemms = e.capture_graph(|eng| mine.issue_layers(eng, 0..layers, Nodes::Gemms))?;
    let gemm_us = replay_times(e, &[&gemms])?[0] / layers as f64;
    let every = (2 * layers / PAIR_ROUNDS_STAMPED).max(1);
    let rounds = 2 * layers / every;
    let mut my_marks = stamps::Stamps::new(e, rounds + 1)?;
    let mut their_marks = stamps::Stamps::new(other, 2)?;
    let (fork, join) = (e.event()?, other.event()?);
    let (two, _keeper) = e.capture_graph_across(&[other], |eng| {
        // Fork the other stream off this one, run a chain on each, join back.
        fork.record()?;
        other.wait_event(&fork)?;
        their_marks.mark(other, 0)?;
        theirs.issue(other, Nodes::GemmsAndAdds)?;
        their_marks.mark(other, 1)?;
        my_marks.mark(eng, 0)?;
        for r in 0..rounds {
            mine.issue_layers(eng, r * every..(r + 1) * every, Nodes::GemmsAndAdds)?;
            my_marks.mark(eng, r + 1)?;
        }
        join.record()?;
        eng.wait_event(&join)
    })?;
    let extra_us: Vec<f64> =
        stamps::replayed_splits(&two, (&my_marks, e), (&their_marks, other), every, REPLAYS)?
            .into_iter()
            .map(|(during, after)| (during - after) / 1e3)
            .collect();
    anyhow::ensure!(
        gemm_us > 0.0 && !extra_us.is_empty(),
        "{d}-square GEMM chains side by side: no stamped round ran wholly beside the other chain and after it"
    );
    let bytes = crate::trace::matmul::operand_bytes(&mine.gemm) as f64;
    Ok(BesidePoint {
        // Two GEMMs; bytes / µs = MB/s, / 1e3 = GB/s.
        load_gb_s: 2.0 * bytes / gemm_us / 1e3,
        stretch: (median(&extra_us) / gemm_us).max(0.0),
        gemm_us,
    })
}

#[cfg(test)]
mod tests;
