//! A walk's lanes laid out with kernels that run side by side sharing the GPU.
//!
//! [`Schedule::lay_out`] gives every op its own cost whatever else runs: the lanes overlap
//! perfectly, a lower bound for a graph whose streams' kernels compete for the SMs. Here each node
//! is a front-end part (the graph's per-node cost, which no other kernel slows, though it grows by
//! a measured amount for each other lane running beside it, as the GPU's front end serves them all:
//! [`crate::front_end`]) followed by its kernel, which holds a share of the GPU
//! ([`crate::occupancy`]; a kernel of one round of fat blocks no more than the profile's widest
//! GEMM pair held, see `crate::offline`) and, where its bytes are known, asks for a load on device
//! memory, and where its flops are known, for a share of the GPU's arithmetic. While the kernels
//! running at one moment hold more than the whole GPU, ask for more than the memory's bandwidth, or
//! keep more than the arithmetic's peak busy, every one of them advances at the whole over their
//! demand (the largest of the three): work is conserved, as when blocks that find no room wait for
//! blocks of other kernels to retire, or two f32 GEMMs whose small blocks fit an SM together share
//! its FMA units. While kernels of two or more lanes run together they also advance slower by what
//! was measured for kernels side by side beyond what that sharing already costs
//! ([`crate::beside`]), each read at the load beside it ([`load_beside`]: a decode GEMV beside a
//! lane of small kernels is not slowed by its own traffic as beside a second GEMV, and is read at
//! what those small kernels move at the pace their own stretch leaves them, not at what they would
//! ask alone): the stretch of a whole node, as it was measured (a GEMM's or an add's node time
//! beside the other stream against alone), laid on the node's kernel, which alone runs beside the
//! other lanes (a 1 µs add in a 1.4 µs node takes 0.4 × 1.4 µs more at +40%, not 0.4 × 1). So a
//! pair like the measured one comes out as measured, and a kernel that overlaps another for part of
//! its time is slowed for that part: which of two kernels started first, by a hair or by half their
//! time, does not decide which one pays. A kernel that finds no room for its blocks waits, though:
//! beside a kernel whose blocks fill every SM (one round on each, as a decode GEMV of 132 whole-SM
//! blocks), a block that does not fit in what they leave starts only once that kernel's blocks
//! begin to retire ([`NodeCost::footing`]). Beside a kernel of fewer blocks than SMs that each
//! take a whole SM (a decode GEMV of 128 such blocks leaves 4 of an H200's 132 empty,
//! [`Footing::free_sms`]), a kernel whose blocks do not fit beside them and span more SMs than
//! are empty runs on those in as many more rounds as it needs, or waits for the whole-SM
//! blocks to begin to retire where that ends sooner: on the H200 element-wise lanes of
//! 256-block kernels beside lanes of 1024-wide GEMVs ran about as one lane after the other,
//! where sharing the SMs by the kernels' shares priced them 11–22% short (docs/validation-h200.md,
//! "Kernels beside whole-SM blocks that leave SMs empty run there in rounds or wait"). (An
//! earlier rule that confined every such kernel to the empty SMs through every GEMV of a chain,
//! and stretched the GEMVs by its share as well, priced held-out walks of element-wise chains
//! beside chains of decode GEMVs up to 38% high, where unprofiled graphs show the GEMV lane
//! keeping its pace; "Held-out batches 53–56" and "Held-out batch 58".) A kernel whose
//! bytes come from the L2 ([`NodeCost::from_l2`]: an element-wise kernel of a walk whose data
//! stays there) asks what it writes of the L2's part for writes, not device memory's
//! ([`Bandwidths`]; lanes within the L2 are held by what they write), and is
//! left out of the load other lanes' kernels are slowed at. One lane alone comes out as
//! [`Schedule::lay_out`] does.

use crate::lanes::{Item, Schedule};
use crate::occupancy::Footing;
use room::{holding_left_ns, waiting_for_room};

/// One node as the sharing model sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeCost {
    /// Time on its lane that other lanes' kernels do not slow (the graph's per-node cost), ns.
    pub fixed_ns: f64,
    /// The kernel's own time with the GPU to itself, ns.
    pub work_ns: f64,
    /// The share of the GPU the kernel holds while it runs, 0..=1.
    pub share: f64,
    /// The kernel's demand on device memory, GB/s, where the trace gives its bytes (a GEMM
    /// with recorded shapes, an element-wise or normalisation kernel with recorded inputs),
    /// else 0: what kernels of other lanes running beside it pay depends on it (see
    /// [`crate::beside`]).
    pub gb_s: f64,
    /// The share of the GPU's arithmetic the kernel keeps busy alone (a recorded GEMM's flops
    /// over its recorded time, against the device's peak for its element type), else 0:
    /// kernels whose blocks fit beside each other still share the SMs' math units.
    pub math: f64,
    /// Whether the kernel is a small one that waits on its loads (not a GEMM, holding a
    /// small share of the GPU): beside other lanes' memory load it runs slower by what such
    /// kernels were measured to ([`crate::beside::BesideCosts::small_stretch`]), where that
    /// is more than the pair stretch.
    pub waits_on_loads: bool,
    /// Where the kernel's blocks sit on the SMs ([`crate::occupancy::SmLimits::footing`]),
    /// which decides whether a kernel of another lane finds room beside them
    /// (`room::waiting_for_room`). Beside a kernel that fills the GPU
    /// ([`Footing::leaves`] with no [`Footing::free_sms`]), a kernel that starts while it runs
    /// and whose block ([`Footing::needs`]) does not fit in that room finds no SM for its
    /// blocks until the full kernel's first blocks retire: it waits until the full kernel has
    /// no more than `1 - share` of its work left, the part its blocks no longer hold the SMs
    /// through ([`NodeCost::share`]: a decode GEMV's blocks retire at different times, so it
    /// holds about three quarters of the GPU beside another kernel). Beside one of whole-SM
    /// blocks that leaves SMs empty (a decode GEMV of 128 such blocks leaves 4 of an H200's
    /// 132), a kernel whose blocks run at once ([`Footing::spans_sms`]) on no more SMs than
    /// that runs there beside it; one that spans more runs there in more rounds, or waits as
    /// beside a full kernel where that ends sooner; one of whole-SM blocks itself
    /// ([`Footing::one_an_sm`]) does not wait (two decode GEMVs side by side overlap as the
    /// profile's GEMM pair measured, their blocks retiring at different times).
    pub footing: Footing,
    /// Whether the kernel's bytes come from the L2, not device memory (an element-wise kernel
    /// of a walk whose data the L2 holds; its [`NodeCost::gb_s`] is then what it writes): they
    /// count against the L2's ([`Bandwidths::l2_gb_s`]) and do not slow other lanes' kernels as traffic
    /// queued on device memory does (the stretches were measured beside GEMMs streaming their
    /// weights).
    pub from_l2: bool,
}

impl NodeCost {
    /// The cost with its figures held to their ranges: no negative work or load, shares of
    /// the SMs and of the arithmetic within 0..=1.
    fn clamped(self) -> Self {
        Self {
            work_ns: self.work_ns.max(0.0),
            share: self.share.clamp(0.0, 1.0),
            gb_s: self.gb_s.max(0.0),
            math: self.math.clamp(0.0, 1.0),
            ..self
        }
    }
}

/// The bandwidths kernels side by side share, GB/s (0: not shared).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bandwidths {
    /// Device memory's, which every kernel not [`NodeCost::from_l2`] asks its load of.
    pub device_gb_s: f64,
    /// The L2's for what kernels within it write ([`crate::l2_lanes::WRITTEN_PART`] of the
    /// measured figure), shared by the running kernels' written loads where one reads from it.
    pub l2_gb_s: f64,
}

/// Where a lane is.
#[derive(Debug, Clone, Copy)]
enum State {
    /// Ready to take its next item.
    Ready,
    /// In an op's fixed part; its kernel follows.
    Fixed { left_ns: f64, kernel: NodeCost },
    /// In an op's kernel.
    Kernel {
        left_ns: f64,
        /// The node's cost, its figures held to their ranges ([`NodeCost::clamped`]).
        cost: NodeCost,
        /// The whole node's time over its kernel's: the stretches were measured on whole
        /// nodes, and the lay-out puts a node's extra time on its kernel.
        node_over_work: f64,
        /// When the kernel began among the walk's kernels (0 for the first): a kernel waits
        /// for room only beside a full kernel that began before it.
        order: usize,
    },
}

/// The load a kernel asking `own_gb_s` is slowed at while the running kernels ask `total_gb_s`
/// together: twice what the others ask, at most the total. The measured pair is two like
/// GEMMs, each beside the other's half of the point's load, so a kernel beside its like is
/// read at the total as measured; one that asks most of the load itself (a decode GEMV beside
/// a lane of small kernels) is slowed by what little runs beside it, not by its own traffic.
pub fn load_beside(total_gb_s: f64, own_gb_s: f64) -> f64 {
    (2.0 * (total_gb_s - own_gb_s)).clamp(0.0, total_gb_s)
}

/// The node time alone of running kernel `l`, ns, where it and every other running kernel (none
/// waiting for room) read from the L2; `None` otherwise, or with nothing running beside it.
fn among_l2_lanes(state: &[State], waiting: &[bool], l: usize) -> Option<f64> {
    let State::Kernel {
        cost: NodeCost {
            from_l2: true,
            work_ns,
            ..
        },
        node_over_work,
        ..
    } = state[l]
    else {
        return None;
    };
    let mut beside = state
        .iter()
        .enumerate()
        .filter(|&(m, s)| m != l && !waiting[m] && matches!(s, State::Kernel { .. }))
        .peekable();
    beside.peek()?;
    beside
        .all(|(_, s)| matches!(s, State::Kernel { cost, .. } if cost.from_l2))
        .then_some(work_ns * node_over_work)
}

/// Work left below this is done, ns, besides a relative 1e-12 of the clock (float sums of
/// many small steps).
const DONE_NS: f64 = 1e-6;

/// Lays `schedule` out with side-by-side kernels sharing the GPU's SMs, its arithmetic and, above
/// `bandwidth_gb_s` (0: not shared), its device memory: while the running kernels hold more than
/// the SMs, keep more than the arithmetic busy or ask for more than the bandwidth, each advances at
/// the whole over their demand, the largest of the three. While kernels of two or more lanes run,
/// each advances `1 + stretch(load, held) × node / kernel` times slower again (the stretch is of
/// the whole node, [`NodeCost::fixed_ns`] and [`NodeCost::work_ns`] together, laid on the kernel),
/// the load being [`load_beside`] its own GB/s of what they move together (a small kernel of
/// [`lay_out_sharing_with`] at the pace its stretch leaves it), `held` the larger of their shares
/// of the SMs together and of the arithmetic together (what the sharing already prices). Returns
/// each op's lane, start and end, ns, in the order the ops end.
pub fn lay_out_sharing(
    schedule: &Schedule,
    node: impl FnMut(usize) -> NodeCost,
    stretch: impl Fn(f64, f64) -> f64,
    bandwidth_gb_s: f64,
) -> Vec<(usize, f64, f64)> {
    lay_out_sharing_with(schedule, node, stretch, |_| 0.0, bandwidth_gb_s)
}

/// [`lay_out_sharing`], where a kernel that waits on its loads ([`NodeCost::waits_on_loads`])
/// runs beside other lanes' kernels by `small_stretch(the other running kernels' GB/s)` of
/// its node instead, where that is more — each at the pace the sharing lets it run (where the
/// kernels together ask more than the memory gives, less than it asks alone: two decode GEMV
/// lanes that would each stream 2.4 TB/s move about half the device's bandwidth each); the
/// profile prices it as the sum of what each costs alone
/// ([`crate::beside::BesideCosts::small_stretch`]): the small
/// points were measured beside one lane of GEMMs, and small adds read by clock stamps beside
/// one, two and four lanes of 1024-square decode GEMMs ran +11%, +19%, +42% a node, beside one
/// and three lanes of 1536-square +12%, +38%, one and two of 2048-square +15%, +28%, one and
/// two of 4096-square +114%, +214% (H200, `scripts/small_kernel_kind_probe.py --stamped`):
/// each lane adds about what it costs alone, where a curve read at all lanes' load together
/// gives two 2048-square lanes what one 4096-square costs, and one read at the widest kernel
/// leaves the other lanes out.
pub fn lay_out_sharing_with(
    schedule: &Schedule,
    node: impl FnMut(usize) -> NodeCost,
    stretch: impl Fn(f64, f64) -> f64,
    small_stretch: impl Fn(&mut dyn Iterator<Item = f64>) -> f64,
    bandwidth_gb_s: f64,
) -> Vec<(usize, f64, f64)> {
    let memory = Bandwidths {
        device_gb_s: bandwidth_gb_s,
        l2_gb_s: 0.0,
    };
    let small = |others: &mut dyn Iterator<Item = f64>, _: Option<f64>| small_stretch(others);
    lay_out_sharing_counted(schedule, node, stretch, small, memory, 0.0).spans
}

/// What [`lay_out_sharing_counted`] lays out.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedLayOut {
    /// Each op's lane, start and end, ns, in the order the ops end.
    pub spans: Vec<(usize, f64, f64)>,
    /// The kernels that waited for room beside a kernel filling every SM
    /// ([`NodeCost::footing`]).
    pub waited_for_room: usize,
}

/// [`lay_out_sharing_with`], counting the kernels that waited for room, with every node's
/// front-end part `per_lane_ns` longer for each other lane that runs a node when it starts, or
/// starts one then (a lane waiting on another's work does not: [`crate::front_end`]).
/// `small_stretch` is also given, where the kernel and every kernel running beside it read
/// from the L2 ([`NodeCost::from_l2`]), the kernel's node time alone, ns
/// ([`crate::beside::BesideCosts::small_stretch`]).
pub fn lay_out_sharing_counted(
    schedule: &Schedule,
    mut node: impl FnMut(usize) -> NodeCost,
    stretch: impl Fn(f64, f64) -> f64,
    small_stretch: impl Fn(&mut dyn Iterator<Item = f64>, Option<f64>) -> f64,
    bandwidths: Bandwidths,
    per_lane_ns: f64,
) -> SharedLayOut {
    let lanes = schedule.lanes();
    let per_lane_ns = per_lane_ns.max(0.0);
    // Each lane's items in issue order, a wait holding the counts of ops it waits for.
    let mut queues: Vec<Vec<Queued>> = vec![Vec::new(); lanes];
    let mut issued = vec![0usize; lanes];
    // Each wait item's counts, for the waits that wait on it again.
    let mut counts: Vec<Vec<(usize, usize)>> = vec![Vec::new(); schedule.items.len()];
    for (k, item) in schedule.items.iter().enumerate() {
        match item {
            Item::Op { lane, op } => {
                issued[*lane] += 1;
                queues[*lane].push(Queued::Op(*op));
            }
            Item::Wait { lane, on } => {
                counts[k] = on.iter().map(|&l| (l, issued[l])).collect();
                queues[*lane].push(Queued::Wait(counts[k].clone()))
            }
            Item::Record { on } => counts[k] = on.iter().map(|&l| (l, issued[l])).collect(),
            Item::WaitOn { lane, at } => queues[*lane].push(Queued::Wait(counts[*at].clone())),
        }
    }
    // Each lane's ops from each of its items on: a lane with ops left that can take its next
    // item is a lane the front end serves beside the others ([`crate::front_end`]).
    let ops_from: Vec<Vec<usize>> = queues
        .iter()
        .map(|q| {
            let mut left = vec![0usize; q.len() + 1];
            for i in (0..q.len()).rev() {
                left[i] = left[i + 1] + usize::from(matches!(q[i], Queued::Op(_)));
            }
            left
        })
        .collect();
    let mut next = vec![0usize; lanes];
    let mut done = vec![0usize; lanes];
    let mut state = vec![State::Ready; lanes];
    let mut started = vec![0.0f64; lanes];
    let mut out = Vec::with_capacity(issued.iter().sum());
    let mut now = 0.0f64;
    let mut began = 0usize;
    // Whether each lane's kernel has waited for room, and how many kernels did.
    let mut has_waited = vec![false; lanes];
    let mut waited_for_room = 0usize;
    loop {
        // Every lane that can take its next item takes it; an op ending frees waits, so
        // repeat until nothing moves.
        let mut moved = true;
        while moved {
            moved = false;
            for l in 0..lanes {
                while let State::Ready = state[l] {
                    let Some(q) = queues[l].get(next[l]) else {
                        break;
                    };
                    match q {
                        Queued::Wait(_) if !can_take(q, &done) => break,
                        Queued::Wait(_) => {}
                        Queued::Op(op) => {
                            let c = node(*op);
                            started[l] = now;
                            // Every other lane with a node running, or beginning one now
                            // (ops left and its next item free to take).
                            let others = (0..lanes)
                                .filter(|&m| m != l)
                                .filter(|&m| {
                                    !matches!(state[m], State::Ready)
                                        || (ops_from[m][next[m]] > 0
                                            && queues[m]
                                                .get(next[m])
                                                .is_some_and(|q| can_take(q, &done)))
                                })
                                .count();
                            state[l] = State::Fixed {
                                left_ns: c.fixed_ns.max(0.0) + per_lane_ns * others as f64,
                                kernel: c,
                            };
                        }
                    }
                    next[l] += 1;
                    moved = true;
                }
            }
        }
        let (waiting, rounds) = waiting_for_room(&state);
        for (seen, &w) in has_waited.iter_mut().zip(&waiting) {
            *seen |= w;
        }
        // The running kernels' (share, GB/s, math, from the L2); those waiting for room hold
        // nothing yet.
        let running: Vec<(f64, f64, f64, bool)> = state
            .iter()
            .zip(&waiting)
            .filter_map(|(s, &w)| match *s {
                State::Kernel { cost, .. } if !w => {
                    Some((cost.share, cost.gb_s, cost.math, cost.from_l2))
                }
                _ => None,
            })
            .collect();
        let held: f64 = running.iter().map(|r| r.0).sum();
        let math: f64 = running.iter().map(|r| r.2).sum();
        // What they ask of device memory: the load the stretches are read at.
        let load: f64 = running.iter().filter(|r| !r.3).map(|r| r.1).sum();
        let memory = over_bandwidth(
            running.iter().filter(|r| !r.3).map(|r| r.1),
            bandwidths.device_gb_s,
        )
        .max(if running.iter().any(|r| r.3) {
            over_bandwidth(running.iter().map(|r| r.1), bandwidths.l2_gb_s)
        } else {
            0.0
        });
        let shared = held.max(memory).max(math).max(1.0);
        let together = running.len() >= 2;
        // Kernels of two or more lanes running together slow each other by what was measured
        // side by side beyond the sharing, for as long as they overlap: each kernel at the
        // load beside it ([`load_beside`]) of `total` GB/s together.
        let beside = |total_gb_s: f64, own_gb_s: f64| {
            if together {
                stretch(load_beside(total_gb_s, own_gb_s), held.max(math)).max(0.0)
            } else {
                0.0
            }
        };
        // A kernel that waits on its loads runs slower by what the other running kernels cost
        // it, where that costs it more than the pair stretch. A stretch is of the whole node,
        // as measured (a GEMM's or an add's node time alone against beside), laid on the
        // kernel's part of it.
        let small_stretches: Vec<Option<f64>> = state
            .iter()
            .enumerate()
            .map(|(l, s)| match *s {
                State::Kernel { cost, .. } if cost.waits_on_loads && together && !waiting[l] => {
                    let mut others = state.iter().enumerate().filter_map(|(m, s)| match *s {
                        State::Kernel { cost, .. } if !cost.from_l2 && m != l && !waiting[m] => {
                            Some(cost.gb_s / shared)
                        }
                        _ => None,
                    });
                    let among_l2 = among_l2_lanes(&state, &waiting, l);
                    Some(beside(load, device_gb_s(s)).max(small_stretch(&mut others, among_l2)))
                }
                _ => None,
            })
            .collect();
        // What the running kernels move together, each small kernel at the pace its stretch
        // leaves it (a chain of adds beside a decode GEMV lane, slowed 2-3 times, moves a
        // third of what it asks alone): the load the other kernels' stretch is read at.
        // Unprofiled graphs show the GEMV lane keeping its pace beside such a chain
        // (docs/validation-h200.md, "Held-out batch 58").
        let moved: f64 = state
            .iter()
            .zip(&small_stretches)
            .zip(&waiting)
            .filter_map(|((s, small), &w)| match *s {
                State::Kernel {
                    cost,
                    node_over_work,
                    ..
                } if !cost.from_l2 && !w => {
                    Some(cost.gb_s / (1.0 + small.unwrap_or(0.0) * node_over_work))
                }
                _ => None,
            })
            .sum();
        // Each lane's kernel's rate.
        let rates: Vec<f64> = state
            .iter()
            .enumerate()
            .map(|(l, s)| match *s {
                State::Kernel {
                    cost: NodeCost { from_l2, .. },
                    node_over_work,
                    ..
                } => {
                    if waiting[l] {
                        return 0.0;
                    }
                    let rate = match small_stretches[l] {
                        // Among lanes within the L2 the small pair's cost is a time a
                        // node ([`crate::beside::BesideCosts::small_stretch`]): added to
                        // the kernel's share of the L2, not stretched by it.
                        Some(stretch) if from_l2 => 1.0 / (shared + stretch * node_over_work),
                        small => {
                            let stretch = small.unwrap_or_else(|| beside(moved, device_gb_s(s)));
                            1.0 / (shared * (1.0 + stretch * node_over_work))
                        }
                    };
                    rate / rounds[l]
                }
                _ => 1.0 / shared,
            })
            .collect();
        // The next moment a lane's part ends, or a full kernel's blocks begin to leave room.
        let step = state
            .iter()
            .zip(&rates)
            .flat_map(|(s, &rate)| match *s {
                State::Fixed { left_ns, .. } => [Some(left_ns), None],
                State::Kernel { .. } if rate <= 0.0 => [None, None],
                State::Kernel { left_ns, cost, .. } => {
                    let tail_ns = holding_left_ns(left_ns, cost.work_ns, cost.share);
                    let room =
                        (cost.footing.leaves.is_some() && tail_ns > 0.0).then(|| tail_ns / rate);
                    [Some(left_ns / rate), room]
                }
                State::Ready => [None, None],
            })
            .flatten()
            .fold(f64::INFINITY, f64::min);
        if !step.is_finite() {
            break; // every lane has run its items
        }
        now += step;
        let done_ns = DONE_NS + now * 1e-12;
        for l in 0..lanes {
            state[l] = match state[l] {
                State::Fixed { left_ns, kernel } if left_ns - step <= done_ns => State::Kernel {
                    left_ns: kernel.work_ns.max(0.0),
                    cost: kernel.clamped(),
                    order: {
                        began += 1;
                        began - 1
                    },
                    node_over_work: if kernel.work_ns > 0.0 {
                        (kernel.fixed_ns.max(0.0) + kernel.work_ns) / kernel.work_ns
                    } else {
                        1.0
                    },
                },
                State::Fixed { left_ns, kernel } => State::Fixed {
                    left_ns: left_ns - step,
                    kernel,
                },
                mut kernel @ State::Kernel { .. } => {
                    if let State::Kernel { left_ns, .. } = &mut kernel {
                        *left_ns -= step * rates[l];
                    }
                    kernel
                }
                State::Ready => State::Ready,
            };
            // A kernel with no work left (or none at all) ends now.
            if matches!(state[l], State::Kernel { left_ns, .. } if left_ns <= done_ns) {
                out.push((l, started[l], now));
                done[l] += 1;
                state[l] = State::Ready;
                waited_for_room += usize::from(std::mem::take(&mut has_waited[l]));
            }
        }
    }
    SharedLayOut {
        spans: out,
        waited_for_room,
    }
}

/// How many times more than `bandwidth_gb_s` the `loads` (GB/s) ask together, 0 where not
/// shared (no bandwidth). A kernel that alone asks for more than the bandwidth measured (its
/// recorded time holds that) is the bandwidth then.
fn over_bandwidth(loads: impl Iterator<Item = f64> + Clone, bandwidth_gb_s: f64) -> f64 {
    if bandwidth_gb_s > 0.0 {
        loads.clone().sum::<f64>() / loads.fold(bandwidth_gb_s, f64::max)
    } else {
        0.0
    }
}

/// What a running kernel asks of device memory, GB/s: its load, unless it reads from the L2.
fn device_gb_s(s: &State) -> f64 {
    match *s {
        State::Kernel { cost, .. } if !cost.from_l2 => cost.gb_s,
        _ => 0.0,
    }
}

/// Whether a lane can take `item` with `done` ops ended on each lane.
fn can_take(item: &Queued, done: &[usize]) -> bool {
    match item {
        Queued::Op(_) => true,
        Queued::Wait(on) => on.iter().all(|&(m, n)| done[m] >= n),
    }
}

/// A lane's item: an op, or a wait for (lane, ops issued on it before the wait).
#[derive(Debug, Clone)]
enum Queued {
    Op(usize),
    Wait(Vec<(usize, usize)>),
}

mod room;

#[cfg(test)]
mod l2_tests;
#[cfg(test)]
mod lane_tests;
#[cfg(test)]
mod props;
#[cfg(test)]
mod room_tests;
#[cfg(test)]
mod tests;
