//! The graph step of a recorded walk priced without a GPU, from a profile of the device:
//! each node's recorded duration plus what the profile measured a graph node to add, streams
//! side by side as the trace recorded their waits (sharing the SMs and the memory where the
//! device's limits are known), the step to the upper level of per-node cost by the memory a
//! replay touches, and one graph launch. `replay --summary` and `predict` price with it; the
//! GPU replay (`crate::replay`) measures what this estimates.

use crate::footprint::{Footprint, FootprintSource, LevelStep};
use crate::lanes::Schedule;
use crate::model::ModelInputs;
use crate::occupancy::SmLimits;
use crate::roofline::Roofline;
use crate::sharing::{lay_out_sharing, NodeCost};
use crate::trace::matmul::{is_blas_kernel, MatmulRole};
use crate::trace::{is_element_wise, is_normalisation, CopyDirection, Op, OpKind, Walk};
use crate::wide_grids::WideGrids;

/// What the offline model knows of the device: the profile's inputs and, where known, its
/// SM limits (with `sharing`, kernels side by side that hold more than the whole GPU share
/// it, see [`crate::sharing`]), its grid table (wide kernels' nodes cost what it says beyond their
/// recorded durations, see [`crate::wide_grids`]) and its L2 (a walk that touches more than
/// it steps further to the upper level, see [`crate::footprint`]).
#[derive(Debug, Clone, Copy)]
pub struct OfflineDevice<'a> {
    pub inputs: &'a ModelInputs,
    pub sms: Option<&'a SmLimits>,
    /// Whether kernels side by side share the SMs (with `sms`); off, they overlap perfectly.
    pub sharing: bool,
    pub grids: Option<&'a WideGrids>,
    pub l2_bytes: Option<f64>,
}

impl<'a> OfflineDevice<'a> {
    /// The profile's inputs alone.
    pub fn of(inputs: &'a ModelInputs) -> OfflineDevice<'a> {
        OfflineDevice {
            inputs,
            sms: None,
            sharing: true,
            grids: None,
            l2_bytes: None,
        }
    }

    /// The same device with kernels side by side overlapping perfectly, whatever they hold.
    pub fn without_sharing(self) -> OfflineDevice<'a> {
        OfflineDevice {
            sharing: false,
            ..self
        }
    }

    /// The memory one replay of `walk` touches, estimated (see [`crate::footprint`]).
    pub fn footprint(&self, walk: &Walk) -> Footprint {
        Footprint::of(walk, self.inputs.bandwidth_gb_s(), self.sms.map(|s| s.sms))
    }

    /// GPU time every node of `walk`'s graph costs at the upper level beyond the lower, µs:
    /// the profile's larger step where the walk touches more than the L2 holds and the
    /// profile measured it, else its step for a graph of empty kernels (0 without either).
    /// A walk on one stream without shapes whose kernels could have read past the line (an
    /// upper bound), while its copies and memsets alone do not, takes the middle of the two: which it is the trace does not say (see
    /// [`crate::footprint::replay_reads_less`], which the replay prices the same way). On
    /// several streams such a walk keeps the larger step: without shapes the model prices no
    /// memory load between its streams, which already leaves it low.
    pub fn level_step_us(&self, walk: &Walk) -> f64 {
        self.level_step(walk).step_us
    }

    /// [`Self::level_step_us`] with the footprint and the L2 it was chosen by, for the report.
    pub fn level_step(&self, walk: &Walk) -> LevelStep {
        let m = self.inputs;
        let footprint = self.footprint(walk);
        let small = m.graph_node_other_stream_us.unwrap_or(0.0);
        let (step, halfway) = match (m.graph_node_other_stream_beyond_l2_us, self.l2_bytes) {
            (Some(beyond), Some(l2)) if footprint.beyond_l2(l2) => {
                // What the trace does say (copies, memsets) may already be past the line.
                let known = Footprint::of(walk, 0.0, None);
                if footprint.source == FootprintSource::Durations
                    && !known.beyond_l2(l2)
                    && on_one_stream(walk)
                {
                    ((small + beyond) / 2.0, true)
                } else {
                    (beyond, false)
                }
            }
            _ => (small, false),
        };
        LevelStep {
            footprint,
            l2_bytes: self.l2_bytes,
            step_us: step.max(0.0),
            halfway,
        }
    }
}

/// Whether `walk`'s streams do not run side by side (one stream, or no recorded waits).
fn on_one_stream(walk: &Walk) -> bool {
    Schedule::of(walk).lanes() <= 1
}

/// The graph step predicted without a GPU, ms: each node occupies its stream for its recorded
/// duration plus the profile's graph node gap, or the replay floor per node, whichever is
/// longer (profiles without a measured gap: the duration alone) — a host↔device copy at
/// least what the profile measured such a copy to add to a graph (see
/// [`crate::copy_nodes`]) — plus the step to the upper level of per-node graph cost (see
/// [`crate::other_stream`] and [`OfflineDevice::level_step_us`]); streams run side by side
/// where the trace recorded the waits between them (the longest chain counts, see
/// [`crate::lanes`]), else one after another; plus one graph launch. The rest of `dev`
/// as [`OfflineDevice`] says.
pub fn graph_step_model(walk: &Walk, dev: &OfflineDevice<'_>) -> f64 {
    graph_step_on(&Schedule::of(walk), walk, dev, dev.level_step_us(walk))
}

/// [`graph_step_model`] at the lower level of per-node graph cost: the lower bound, ms.
pub fn graph_step_model_quiet(walk: &Walk, dev: &OfflineDevice<'_>) -> f64 {
    graph_step_on(&Schedule::of(walk), walk, dev, 0.0)
}

/// [`graph_step_model`] with every stream of the walk one after another (in issue order), ms;
/// `None` for a walk the model does not run side by side (one stream, or no recorded waits).
pub fn graph_step_model_serial(walk: &Walk, dev: &OfflineDevice<'_>) -> Option<f64> {
    let schedule = Schedule::of(walk);
    (schedule.lanes() > 1).then(|| {
        let serial = dev.without_sharing();
        graph_step_on(
            &Schedule::serialised(walk),
            walk,
            &serial,
            dev.level_step_us(walk),
        )
    })
}

fn graph_step_on(schedule: &Schedule, walk: &Walk, dev: &OfflineDevice<'_>, shared_us: f64) -> f64 {
    let (m, grids) = (dev.inputs, dev.grids);
    let sms = dev.sms.filter(|_| dev.sharing);
    let gap_ns = m.graph_node_gap_us.unwrap_or(0.0).max(0.0) * 1e3;
    let node_ns = |o: &Op| {
        (o.duration_ns + gap_ns + grids.map_or(0.0, |g| g.op_shift_ns(o)))
            .max(node_floor_ns(o, m))
            .max(copy_node_ns(o, m))
            + shared_us * 1e3
    };
    let bandwidth = m.bandwidth_gb_s();
    let roofline = m
        .gemm_peaks
        .filter(|_| bandwidth > 0.0)
        .map(|p| p.roofline(bandwidth));
    let spans = match sms {
        Some(l) if schedule.lanes() > 1 => lay_out_sharing(
            schedule,
            |op| {
                let o = &walk.ops[op];
                let total = node_ns(o);
                // The kernel's recorded time is what other kernels can slow; the rest of the
                // node is the graph's own cost.
                let work_ns = if o.is_kernel() {
                    o.duration_ns.clamp(0.0, total)
                } else {
                    0.0
                };
                NodeCost {
                    fixed_ns: total - work_ns,
                    work_ns,
                    share: held_share(o, l, m, roofline.as_ref()),
                    gb_s: known_gb_s(o, bandwidth),
                }
            },
            |gb_s, held| {
                m.graph_node_beside
                    .map_or(0.0, |c| c.start_stretch(gb_s, held))
            },
            bandwidth,
        ),
        _ => schedule.lay_out(|op| node_ns(&walk.ops[op])),
    };
    let nodes_ns = spans.iter().map(|s| s.2).fold(0.0, f64::max);
    (nodes_ns + m.graph_launch_fixed_us * 1e3) / 1e6
}

/// At most this many of a kernel's blocks fit an SM for it to count as a kernel of fat
/// blocks: the measured pair's GEMMs hold one an SM, decode attention two.
const FAT_BLOCKS_PER_SM: u32 = 2;

/// The share of the GPU `o` holds while it runs beside other lanes: its blocks' share of
/// what the SMs hold ([`SmLimits::share`]), but no more than the profile's widest GEMM pair
/// says ([`crate::beside::BesideCosts::one_round_hold`]) for a kernel like that pair's: one
/// round of fat blocks ([`FAT_BLOCKS_PER_SM`]) whose time is not its math. A recorded GEMM is
/// such a kernel where the profile's peaks put it far below the ridge
/// ([`Roofline::far_below_ridge`]: two 256-token prefill GEMMs side by side take as long as
/// one after the other); a cuBLAS kernel they cannot judge (no shapes recorded, or a profile
/// without peaks) keeps its share.
fn held_share(o: &Op, l: &SmLimits, m: &ModelInputs, roofline: Option<&Roofline>) -> f64 {
    let share = l.share(o);
    let (Some(hold), OpKind::Kernel { block, .. }) = (
        m.graph_node_beside.and_then(|c| c.one_round_hold()),
        &o.kind,
    ) else {
        return share;
    };
    let threads = block.0.saturating_mul(block.1).saturating_mul(block.2);
    let fat = l.resident_blocks(threads, o.resources) <= FAT_BLOCKS_PER_SM;
    let not_math = match (o.matmul, roofline) {
        (Some(MatmulRole::Call(_)), Some(r)) => r.far_below_ridge(o),
        _ => !is_blas_kernel(&o.name),
    };
    if fat && not_math && l.one_round(o) {
        share.min(hold)
    } else {
        share
    }
}

/// What a kernel asks of device memory, GB/s (bytes / ns), where the trace says its bytes: a
/// recorded GEMM's operands, or for an element-wise or normalisation kernel (by name) its
/// operator's recorded inputs and the result it writes (as large as the largest input), at
/// most `bandwidth_gb_s` (where known: more than the device gives means it did not read all
/// it was given). 0 for other kernels, whose time is not only their bytes.
fn known_gb_s(o: &Op, bandwidth_gb_s: f64) -> f64 {
    let gemm = gemm_gb_s(o);
    if gemm > 0.0
        || o.duration_ns <= 0.0
        || !(is_element_wise(&o.name) || is_normalisation(&o.name))
    {
        return gemm;
    }
    let (Some(read), Some(largest)) = (o.input_bytes, o.largest_input_bytes) else {
        return 0.0;
    };
    let gb_s = (read + largest) / o.duration_ns;
    if bandwidth_gb_s > 0.0 {
        gb_s.min(bandwidth_gb_s)
    } else {
        gb_s
    }
}

/// A recorded GEMM's operand bytes over its recorded duration, GB/s (bytes / ns); 0 for
/// kernels whose bytes the trace does not say.
fn gemm_gb_s(o: &Op) -> f64 {
    match o.matmul {
        Some(MatmulRole::Call(g)) if o.duration_ns > 0.0 => {
            crate::trace::matmul::operand_bytes(&g) as f64 / o.duration_ns
        }
        _ => 0.0,
    }
}

/// The least a node of `o` costs a graph, ns: for a kernel or a memset, an empty kernel's node
/// (the profile's per-node GPU time); a copy has no such floor. A device-to-device copy node
/// is not a kernel node: on the H200, 128 copies of 1.5 KiB recorded at 0.76 µs each added
/// 0.99 µs a node to a graph of adds at the upper level (recorded + gap + step: 1.01), where
/// the empty kernel's floor made them 1.17 (`adds_small_copies`, docs/validation-h200.md).
fn node_floor_ns(o: &Op, m: &ModelInputs) -> f64 {
    match o.kind {
        OpKind::Memcpy { .. } => 0.0,
        OpKind::Kernel { .. } | OpKind::Memset { .. } => m.graph_node_gpu_us * 1e3,
    }
}

/// What the profile says a copy `o` adds to a graph, ns; 0 for other ops, copies of other
/// directions, or profiles without copy-node costs.
fn copy_node_ns(o: &Op, m: &ModelInputs) -> f64 {
    let (
        OpKind::Memcpy {
            bytes, direction, ..
        },
        Some(c),
    ) = (&o.kind, m.copy_nodes)
    else {
        return 0.0;
    };
    match CopyDirection::of(direction) {
        CopyDirection::HostToDevice => c.host_to_device.node_us(*bytes as f64) * 1e3,
        CopyDirection::DeviceToHost => c.device_to_host.node_us(*bytes as f64) * 1e3,
        CopyDirection::DeviceToDevice | CopyDirection::Other => 0.0,
    }
}

/// Build cost of a graph of the walk's size, ms, from the profile's per-node build cost.
pub fn build_model(walk: &Walk, m: &ModelInputs) -> f64 {
    walk.ops.len() as f64 * m.build_per_node_us / 1e3
}

/// The engine-floor eager step without a GPU, ms: every op issued at the engine's cost, and
/// never below the recorded GPU time.
pub fn engine_floor_model(walk: &Walk, m: &ModelInputs) -> f64 {
    let gpu_ns: f64 = walk.ops.iter().map(|o| o.duration_ns).sum();
    (walk.ops.len() as f64 * m.eager_issue_us * 1e3).max(gpu_ns) / 1e6
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::trace::HostSide;

    pub(crate) fn walk(durs: &[f64], host: Option<HostSide>) -> Walk {
        let mut t = 0.0;
        let ops = durs
            .iter()
            .map(|&d| {
                let o = Op::kernel("k", t, d);
                t += d + 5000.0;
                o
            })
            .collect();
        Walk {
            ops,
            host,
            ..Walk::default()
        }
    }

    fn inputs() -> ModelInputs {
        ModelInputs::core(1.0, 2.0, 0.0, 5.0, 3.0)
    }

    #[test]
    fn short_nodes_cost_the_floor_in_the_model() {
        let w = walk(&[500.0, 4000.0], None);
        // max(0.5, 1.0) + 4.0 µs + 2 µs launch = 7 µs
        assert!((graph_step_model(&w, &OfflineDevice::of(&inputs())) - 0.007).abs() < 1e-12);
        assert!((build_model(&w, &inputs()) - 0.010).abs() < 1e-12);
        assert!((engine_floor_model(&w, &inputs()) - 0.006).abs() < 1e-12);
    }

    #[test]
    fn a_device_copy_node_has_no_kernel_floor() {
        // A 0.5 µs kernel costs the 1 µs floor; a 0.5 µs device-to-device copy its recorded
        // time (the walk's 4 µs kernel + 2 µs launch around both).
        let mut w = walk(&[500.0, 4000.0], None);
        let kernel = graph_step_model(&w, &OfflineDevice::of(&inputs()));
        w.ops[0].kind = OpKind::Memcpy {
            bytes: 1536,
            direction: "DtoD".into(),
            pageable: false,
        };
        let copy = graph_step_model(&w, &OfflineDevice::of(&inputs()));
        assert!((kernel - 0.007).abs() < 1e-12, "{kernel}");
        assert!((copy - 0.0065).abs() < 1e-12, "{copy}");
    }

    #[test]
    fn wide_kernels_cost_the_grid_tables_shift_less_in_the_model() {
        let mut w = walk(&[4000.0, 4000.0], None);
        w.ops[1].kind = OpKind::Kernel {
            grid: (2048, 1, 1),
            block: (128, 1, 1),
        };
        let case = |blocks, d| crate::wide_grids::GridCase::memory(128, blocks, d);
        let grids = WideGrids {
            device: "GPU".into(),
            cases: vec![case(8, 0.3), case(2048, -0.2)],
        };
        // 4 + 4 µs + 2 µs launch; the 2048-block kernel's node 0.5 µs shorter.
        assert!((graph_step_model(&w, &OfflineDevice::of(&inputs())) - 0.010).abs() < 1e-12);
        let m = inputs();
        let dev = OfflineDevice {
            grids: Some(&grids),
            ..OfflineDevice::of(&m)
        };
        let priced = graph_step_model(&w, &dev);
        assert!((priced - 0.0095).abs() < 1e-12, "{priced}");
    }

    #[test]
    fn a_walk_touching_more_than_the_l2_steps_further_to_the_upper_level() {
        let copy = |mib: u64| Op {
            kind: OpKind::Memcpy {
                bytes: mib << 20,
                direction: "HtoD".into(),
                pageable: false,
            },
            ..Op::kernel("Memcpy", 0.0, 4000.0)
        };
        let m = ModelInputs {
            graph_launch_fixed_us: 0.0,
            graph_node_other_stream_us: Some(0.25),
            graph_node_other_stream_beyond_l2_us: Some(0.5),
            ..inputs()
        };
        let dev = OfflineDevice {
            l2_bytes: Some(60.0 * 1024.0 * 1024.0),
            ..OfflineDevice::of(&m)
        };
        let mut w = walk(&[4000.0, 4000.0], None);
        w.ops.push(copy(1));
        // 3 MiB a step: well within the L2. Three 4 µs nodes + 0.25 µs each.
        assert_eq!(dev.level_step_us(&w), 0.25);
        assert!((graph_step_model(&w, &dev) - 0.01275).abs() < 1e-12);
        // 128 MiB: every node, not only the copy's, takes the larger step.
        w.ops[2] = copy(128);
        assert_eq!(dev.level_step_us(&w), 0.5);
        assert!((graph_step_model(&w, &dev) - 0.0135).abs() < 1e-12);
        // The lower level is the same either way; without the L2 or the larger step measured,
        // the smaller step.
        assert!((graph_step_model_quiet(&w, &dev) - 0.012).abs() < 1e-12);
        assert_eq!(OfflineDevice::of(&m).level_step_us(&w), 0.25);
        let older = ModelInputs {
            graph_node_other_stream_beyond_l2_us: None,
            ..m
        };
        let dev_older = OfflineDevice {
            inputs: &older,
            ..dev
        };
        assert_eq!(dev_older.level_step_us(&w), 0.25);
        // Without shapes the footprint is what the kernels' grids could read: one block of 132
        // SMs for 4 µs at 4000 GB/s reads ~0.1 MiB; the whole GPU 16 MB. Turning sharing off
        // (the unshared and serial figures) leaves the SMs, and so the step, as they were.
        let sms = SmLimits::of("9.0", 132).unwrap();
        let beside = crate::beside::BesideCosts {
            points: [crate::beside::BesidePoint {
                load_gb_s: 0.0,
                stretch: 0.0,
                gemm_us: 0.0,
            }; 3],
            bandwidth_gb_s: 4000.0,
        };
        let m = ModelInputs {
            graph_node_beside: Some(beside),
            ..m
        };
        let one_block = walk(&[4000.0; 8], None);
        let dev = OfflineDevice {
            sms: Some(&sms),
            ..OfflineDevice { inputs: &m, ..dev }
        };
        assert_eq!(dev.level_step_us(&one_block), 0.25);
        assert_eq!(dev.without_sharing().level_step_us(&one_block), 0.25);
        // Kernels that could have read past the line (264 blocks for 4 ms: 16 GB), copies
        // within it: which step, the trace does not say, so halfway on one stream, and the
        // report's line says so; with 128 MiB of copies the trace says it is past: the larger.
        let mut wide = walk(&[4e6, 4000.0], None);
        for o in &mut wide.ops {
            o.kind = OpKind::Kernel {
                grid: (264, 1, 1),
                block: (128, 1, 1),
            };
        }
        let half = dev.level_step(&wide);
        assert!(half.halfway);
        assert_eq!(half.step_us, 0.375);
        assert!(
            half.line().contains("halfway between the two steps"),
            "{}",
            half.line()
        );
        wide.ops.push(copy(128));
        let known = dev.level_step(&wide);
        assert_eq!((known.halfway, known.step_us), (false, 0.5));
    }

    #[test]
    fn streams_with_recorded_waits_overlap_in_the_model() {
        use crate::trace::StreamWait;
        // main: 10 us; s1 and s2 fork from it, 30 us and 20 us; main joins both, 10 us.
        let k = |stream: u64, corr: u64, us: f64| Op {
            stream: Some(stream),
            correlation: Some(corr),
            ..Op::kernel("k", corr as f64, us * 1e3)
        };
        let wait = |stream, correlation| StreamWait {
            stream,
            correlation,
            step: None,
        };
        let mut w = Walk {
            ops: vec![k(7, 1, 10.0), k(13, 4, 30.0), k(17, 6, 20.0), k(7, 9, 10.0)],
            waits: vec![wait(13, 2), wait(17, 3), wait(7, 7), wait(7, 8)],
            ..Walk::default()
        };
        let m = ModelInputs {
            graph_launch_fixed_us: 0.0,
            ..inputs()
        };
        // 10 + max(30, 20) + 10.
        assert!((graph_step_model(&w, &OfflineDevice::of(&m)) - 0.050).abs() < 1e-12);
        // A measured node gap is added to every node on the chain.
        let with_gap = ModelInputs {
            graph_node_gap_us: Some(0.5),
            ..m
        };
        assert!((graph_step_model(&w, &OfflineDevice::of(&with_gap)) - 0.0515).abs() < 1e-12);
        // The step to the upper level is added to every node on the chain; the quiet step
        // leaves it out.
        let shared = ModelInputs {
            graph_node_other_stream_us: Some(0.25),
            ..with_gap
        };
        assert!((graph_step_model(&w, &OfflineDevice::of(&shared)) - 0.05225).abs() < 1e-12);
        assert!((graph_step_model_quiet(&w, &OfflineDevice::of(&shared)) - 0.0515).abs() < 1e-12);
        // Without the waits the streams add up.
        w.waits.clear();
        assert!((graph_step_model(&w, &OfflineDevice::of(&m)) - 0.070).abs() < 1e-12);
    }

    #[test]
    fn host_device_copies_cost_what_the_profile_measured() {
        use crate::copy_nodes::{CopyCost, CopyNodeCosts};
        let copy = |direction: &str, us: f64| Op {
            kind: OpKind::Memcpy {
                bytes: 1 << 20,
                direction: direction.into(),
                pageable: false,
            },
            ..Op::kernel("Memcpy", 0.0, us * 1e3)
        };
        let mut w = walk(&[4000.0], None);
        w.ops.push(copy("HtoD", 10.0));
        w.ops.push(copy("DtoH", 30.0));
        w.ops.push(copy("DtoD", 2.0));
        let m = ModelInputs {
            graph_launch_fixed_us: 0.0,
            ..inputs()
        };
        // Without copy-node costs: every op its duration (at least the 1 µs floor).
        assert!((graph_step_model(&w, &OfflineDevice::of(&m)) - 0.046).abs() < 1e-12);
        let line = |fixed_us, us_per_mib| CopyCost {
            fixed_us,
            us_per_mib,
        };
        let with = ModelInputs {
            copy_nodes: Some(CopyNodeCosts {
                host_to_device: line(5.0, 10.0),
                device_to_host: line(5.0, 10.0),
            }),
            ..m
        };
        // HtoD 1 MiB costs 15 µs (more than its 10); DtoH keeps its longer 30; DtoD its 2.
        assert!((graph_step_model(&w, &OfflineDevice::of(&with)) - 0.051).abs() < 1e-12);
    }

    #[test]
    fn element_wise_and_normalisation_kernels_load_memory_with_their_recorded_bytes() {
        let with_inputs = |name: &str, read: f64, largest: f64| Op {
            input_bytes: Some(read),
            largest_input_bytes: Some(largest),
            ..Op::kernel(name, 0.0, 2000.0)
        };
        // An add of two 1 MB inputs writes 1 MB more: 3 MB in 2 us.
        let add = with_inputs("vectorized_elementwise_kernel<add>", 2e6, 1e6);
        assert!((known_gb_s(&add, 4000.0) - 1500.0).abs() < 1e-9);
        let norm = with_inputs("vectorized_layer_norm_kernel<c10::Half>", 1e6, 1e6);
        assert!((known_gb_s(&norm, 4000.0) - 1000.0).abs() < 1e-9);
        // More than the device gives: it did not read all it was given.
        let gather = with_inputs("triton_poi_fused_embedding_0", 1e9, 1e9);
        assert_eq!(known_gb_s(&gather, 4000.0), 4000.0);
        assert_eq!(known_gb_s(&gather, 0.0), 1e6);
        // Attention's time is not only its bytes; kernels without recorded inputs have none.
        let attention = with_inputs("flash_fwd_kernel", 8e6, 4e6);
        assert_eq!(known_gb_s(&attention, 4000.0), 0.0);
        let bare = Op::kernel("vectorized_elementwise_kernel<add>", 0.0, 2000.0);
        assert_eq!(known_gb_s(&bare, 4000.0), 0.0);
    }

    #[test]
    fn one_round_fat_kernels_not_held_by_math_hold_what_the_widest_pair_says() {
        use crate::beside::{BesideCosts, BesidePoint};
        use crate::occupancy::BlockResources;
        use crate::roofline::GemmPeaks;
        use memra_engine::{Gemm, GemmType};
        let l = SmLimits::of("9.0", 132).unwrap();
        let point = |load_gb_s, stretch| BesidePoint {
            load_gb_s,
            stretch,
            gemm_us: 10.0,
        };
        // The widest pair ran 1.5 times one alone: such a kernel holds 0.75.
        let m = ModelInputs {
            graph_node_beside: Some(BesideCosts {
                points: [point(1000.0, 0.1), point(2000.0, 0.2), point(5000.0, 0.5)],
                bandwidth_gb_s: 4000.0,
            }),
            ..inputs()
        };
        let peaks = GemmPeaks {
            f16_tflop_s: 800.0,
            bf16_tflop_s: 800.0,
            tf32_tflop_s: 400.0,
            f32_tflop_s: 50.0,
        };
        let r = peaks.roofline(4000.0);
        let fat = BlockResources {
            registers_per_thread: 168,
            shared_bytes: 164_308,
        };
        let kernel = |name: &str, blocks: u32, threads: u32, res, matmul| Op {
            kind: OpKind::Kernel {
                grid: (blocks, 1, 1),
                block: (threads, 1, 1),
            },
            resources: res,
            matmul,
            ..Op::kernel(name, 0.0, 10_000.0)
        };
        let gemm = |n| Some(MatmulRole::Call(Gemm::plain(GemmType::Bf16, 4096, n, 4096)));
        // A decode GEMM (one token) in 128 fat blocks: 0.97 by its blocks, 0.75 as the pair.
        let gemv = kernel("nvjet_gemv", 128, 384, Some(fat), gemm(1));
        assert!((held_share(&gemv, &l, &m, Some(&r)) - 0.75).abs() < 1e-12);
        // The same kernel as a 1024-token GEMM, held by its math, and as one the profile
        // cannot judge (no peaks, or no shapes): its blocks' share.
        let prefill = kernel("nvjet_prefill", 128, 384, Some(fat), gemm(1024));
        assert!((held_share(&prefill, &l, &m, Some(&r)) - 128.0 / 132.0).abs() < 1e-12);
        assert!((held_share(&gemv, &l, &m, None) - 128.0 / 132.0).abs() < 1e-12);
        let unjudged = kernel("nvjet_gemv", 128, 384, Some(fat), None);
        assert!((held_share(&unjudged, &l, &m, Some(&r)) - 128.0 / 132.0).abs() < 1e-12);
        // Attention (not cuBLAS) in fat blocks: 0.75; in two rounds of them: all of the GPU.
        let attention = kernel("flash_fwd", 128, 384, Some(fat), None);
        assert!((held_share(&attention, &l, &m, Some(&r)) - 0.75).abs() < 1e-12);
        let two_rounds = kernel("flash_fwd", 264, 384, Some(fat), None);
        assert_eq!(held_share(&two_rounds, &l, &m, Some(&r)), 1.0);
        // An element-wise kernel of 2048 small blocks (16 an SM) is not of that kind.
        let adds = kernel("add", 2048, 128, None, None);
        assert!((held_share(&adds, &l, &m, Some(&r)) - 2048.0 / 2112.0).abs() < 1e-12);
        // A profile without the pair: the blocks' share.
        assert!((held_share(&gemv, &l, &inputs(), Some(&r)) - 128.0 / 132.0).abs() < 1e-12);
    }
}
