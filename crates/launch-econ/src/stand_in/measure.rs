//! Measuring stand-ins on the device: a node's GPU time in a graph, and every kernel shape's
//! spin, chase and empty nodes a walk's plan is sized from.

use std::collections::HashMap;

use memra_engine::{Chase, ChaseRound, Engine, LaunchShape};

use super::{
    chase_kind, ChaseKind, ChaseNodes, ConcurrentStandIn, PacedReads, ShapeKey, ShapeNodes,
    SpinFit, StandInPlan, SubFloor, CHASE_PROBE_STEPS, CHASE_RING_LINES, CHASE_SINK_WORDS,
    PROBE_NS,
};
use crate::calibration::Calibration;
use crate::stats::median;
use crate::trace::{OpKind, Walk};

/// GPU time per node of a graph of stand-ins issued by `issue`, µs: the difference between
/// graphs of 128 and 64 nodes (so the launch latency cancels), median of 3 replays each.
pub fn node_us(
    e: &Engine,
    issue: impl FnMut(&Engine) -> memra_engine::Result<()>,
) -> anyhow::Result<f64> {
    node_us_after(e, |_| Ok(()), issue)
}

/// [`node_us`] of graphs that issue `first` before their nodes: what `first` costs cancels
/// in the difference, what it does to the other nodes' cost does not.
pub fn node_us_after(
    e: &Engine,
    mut first: impl FnMut(&Engine) -> memra_engine::Result<()>,
    mut issue: impl FnMut(&Engine) -> memra_engine::Result<()>,
) -> anyhow::Result<f64> {
    let mut per_size = Vec::new();
    for n in [64usize, 128] {
        let g = e.capture_graph(|eng| {
            first(eng)?;
            (0..n).try_for_each(|_| issue(eng))
        })?;
        g.launch()?;
        let mut t = Vec::new();
        for _ in 0..3 {
            t.push(e.gpu_time_ms(|| g.launch())? * 1e3);
        }
        per_size.push(median(&t));
    }
    Ok((per_size[1] - per_size[0]) / 64.0)
}

/// Measures, on `e`, the node times of every kernel shape in `walk`, to plan each node at its
/// recorded duration + `gap_us` (see [`crate::node_gap`]); kernels recorded at
/// `stream_from_ns` or longer will stream. With `chases` (walks whose streams run side by
/// side), the plan follows that mode, and each shape's chase or barrier chase is measured
/// where a kernel of that shape stands in by one under it ([`chase_kind`]). With
/// `real_gemms` ([`StandInPlan::real_gemms`]) the kernels of recorded GEMMs run for real, so
/// none of them (a split-K reduction among them) asks for a chase.
pub fn plan(
    e: &Engine,
    walk: &Walk,
    cal: &Calibration,
    gap_us: f64,
    stream_from_ns: f64,
    chases: Option<ConcurrentStandIn>,
    real_gemms: bool,
) -> anyhow::Result<StandInPlan> {
    let mode = chases.unwrap_or(ConcurrentStandIn::Spin);
    // The chase kinds some kernel of each shape stands in by.
    let mut kinds: HashMap<ShapeKey, (bool, bool)> = HashMap::new();
    for op in walk.kernels() {
        if real_gemms && op.matmul.is_some() {
            continue;
        }
        if let OpKind::Kernel { grid, block } = op.kind {
            let k = kinds.entry((grid, block)).or_default();
            match chase_kind(mode, op, (grid, block)) {
                Some(ChaseKind::Reads) => k.0 = true,
                Some(ChaseKind::Barriers) => k.1 = true,
                None => {}
            }
        }
    }
    let chase = kinds.values().any(|&(r, b)| r || b);
    let mut slots = e.zeros::<u64>(Engine::SPIN_SLOT_WORDS)?;
    let (ring, mut sink) = if chase {
        (
            e.chase_ring(CHASE_RING_LINES)?,
            e.zeros::<u32>(CHASE_SINK_WORDS)?,
        )
    } else {
        (e.zeros::<u32>(0)?, e.zeros::<u32>(0)?)
    };
    let mut shapes = HashMap::new();
    for op in walk.kernels() {
        if let OpKind::Kernel { grid, block } = op.kind {
            if shapes.contains_key(&(grid, block)) {
                continue;
            }
            let shape = LaunchShape::of(grid, block);
            let spin_zero_us = node_us(e, |eng| eng.spin_grid(0, shape, &mut slots, 0))?;
            let spin_zero_span_ns = e.dtoh(&slots)?[2] as f64;
            let nodes = ShapeNodes {
                spin_zero_us,
                spin_probe_us: node_us(e, |eng| eng.spin_grid(PROBE_NS, shape, &mut slots, 0))?,
                empty_us: node_us(e, |eng| eng.noop_shaped(shape))?,
                spin_zero_span_ns,
                chase: None,
                barrier_chase: None,
            };
            let mut chase_nodes = |round: ChaseRound| -> anyhow::Result<ChaseNodes> {
                let mut node = |loads, ns| {
                    let chase = Chase {
                        ns,
                        loads,
                        round,
                        shape,
                    };
                    node_us(e, |eng| {
                        eng.chase_grid(chase, &ring, &mut sink, &mut slots, 0)
                    })
                };
                Ok(ChaseNodes {
                    zero_us: node(0, 0)?,
                    steps_us: node(CHASE_PROBE_STEPS, 0)?,
                    spin_us: node(0, PROBE_NS)?,
                })
            };
            let (reads, barriers) = kinds.get(&(grid, block)).copied().unwrap_or_default();
            let nodes = ShapeNodes {
                chase: if reads {
                    Some(chase_nodes(ChaseRound::Read)?)
                } else {
                    None
                },
                barrier_chase: if barriers {
                    Some(chase_nodes(ChaseRound::BlockReduction)?)
                } else {
                    None
                },
                ..nodes
            };
            shapes.insert((grid, block), nodes);
        }
    }
    Ok(StandInPlan {
        gap_us,
        shapes,
        stream_from_ns,
        stream_element_wise: false,
        ramp_ns: cal.ramp_ns,
        real_gemms,
        real_math_gemms: false,
        gemm_operands: Default::default(),
        sub_floor: SubFloor::default(),
        // Fitted where the caller asks (replay: --spin-fit); the all-spin walks that
        // update-walk prepares replay their spins as calibrated.
        spin_fit: SpinFit::Off,
        concurrent: mode,
        chase_floor: Default::default(),
        roofline: None,
        paced_from_ns: f64::INFINITY,
        paced: PacedReads::Capped,
        bytes_per_ns: 0.0,
        peak_bytes_per_ns: 0.0,
        deep_registers: 0,
        hold_sms: None,
        spin_per_block: false,
        wide_grids: None,
        work_nodes: HashMap::new(),
    })
}
