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

pub(crate) fn inputs() -> ModelInputs {
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
    assert!((ModelledWalk::new(&w, &dev).quiet_ms() - 0.012).abs() < 1e-12);
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
        small: Default::default(),
        small_pair: Default::default(),
        per_lane_us: 0.0,
        l2_gb_s: 0.0,
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
    let wait = StreamWait::new;
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
    assert!((ModelledWalk::new(&w, &OfflineDevice::of(&shared)).quiet_ms() - 0.0515).abs() < 1e-12);
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
            host_to_device_after_copy: Some(line(1.0, 9.0)),
            device_to_host_after_copy: None,
        }),
        ..m
    };
    // HtoD 1 MiB costs 15 µs (more than its 10); DtoH keeps its longer 30; DtoD its 2.
    assert!((graph_step_model(&w, &OfflineDevice::of(&with)) - 0.051).abs() < 1e-12);
    // A second HtoD right after the first (same stream) pays the chained line, 10 µs; one
    // after the DtoD pays the line between kernels again, 15.
    w.ops.insert(2, copy("HtoD", 10.0));
    assert!((graph_step_model(&w, &OfflineDevice::of(&with)) - 0.061).abs() < 1e-12);
    w.ops.push(copy("HtoD", 10.0));
    assert!((graph_step_model(&w, &OfflineDevice::of(&with)) - 0.076).abs() < 1e-12);
}

/// Two lanes forked off a kernel on stream 7 onto streams 13 and 17 and joined back by
/// another: `k(stream, correlation, lane)` makes each kernel, `lane` false for the fork and
/// the join.
fn forked_lanes(k: impl Fn(u64, u64, bool) -> Op) -> Walk {
    use crate::trace::StreamWait;
    Walk {
        ops: vec![
            k(7, 1, false),
            k(13, 4, true),
            k(17, 6, true),
            k(7, 9, false),
        ],
        waits: vec![
            StreamWait::new(13, 2),
            StreamWait::new(17, 3),
            StreamWait::new(7, 7),
            StreamWait::new(7, 8),
        ],
        ..Walk::default()
    }
}

/// A profile whose device memory gives 3000 GB/s and whose lanes within the L2 moved
/// `l2_gb_s` together (0: not measured), nothing measured beside other kernels.
fn l2_lanes_inputs(l2_gb_s: f64) -> ModelInputs {
    let costs = crate::beside::BesideCosts {
        points: [crate::beside::BesidePoint {
            load_gb_s: 0.0,
            stretch: 0.0,
            gemm_us: 0.0,
        }; 3],
        bandwidth_gb_s: 3000.0,
        small: Default::default(),
        small_pair: Default::default(),
        per_lane_us: 0.0,
        l2_gb_s,
    };
    ModelInputs {
        graph_node_beside: Some(costs),
        ..inputs()
    }
}

/// `walk`'s graph step priced on an sm_90 of 132 SMs with a 50 MiB L2, device memory giving
/// 3000 GB/s and lanes within the L2 moving `l2_gb_s` together (0: not measured): shared,
/// and with every kernel as if alone.
fn l2_lanes_step(l2_gb_s: f64, walk: &Walk) -> (f64, f64) {
    let sms = SmLimits::of("9.0", 132).unwrap();
    let m = ModelInputs {
        graph_launch_fixed_us: 0.0,
        ..l2_lanes_inputs(l2_gb_s)
    };
    let dev = OfflineDevice {
        sms: Some(&sms),
        l2_bytes: Some(50.0 * 1024.0 * 1024.0),
        ..OfflineDevice::of(&m)
    };
    (
        graph_step_model(walk, &dev),
        graph_step_model(walk, &dev.without_sharing()),
    )
}

#[test]
fn element_wise_lanes_of_a_walk_within_the_l2_share_its_bandwidth() {
    // Two streams forked off a short kernel, each an add of two 1 MB inputs (3 MB in 1 µs:
    // 3000 GB/s, a third of it written), joined back: together they ask 6000 GB/s.
    let walk_of = |inputs: f64, mb: f64| {
        forked_lanes(|stream, corr, lane| {
            let mb = if lane { mb } else { 0.001 };
            Op {
                stream: Some(stream),
                correlation: Some(corr),
                input_bytes: Some(inputs * mb * 1e6),
                largest_input_bytes: Some(mb * 1e6),
                ..Op::kernel("vectorized_elementwise_kernel<add>", corr as f64, 1000.0)
            }
        })
    };
    let w = |mb: f64| walk_of(2.0, mb);
    let step = l2_lanes_step;
    let within = w(1.0);
    // The L2 gives both what they ask: side by side as if alone.
    let (shared, alone) = step(6000.0, &within);
    assert!((shared - alone).abs() < 1e-12, "{shared} {alone}");
    // Read as device memory's load (no L2 measured), they share its 3000 GB/s: longer.
    let (as_device, _) = step(0.0, &within);
    assert!(as_device > alone + 1e-7, "{as_device} {alone}");
    // Lanes within the L2 measured at no more than a device copy kept no data there: read
    // as no L2 figure.
    assert_eq!(step(2500.0, &within).0, as_device);
    // A walk whose data is past the L2 (two 20 MB inputs an add) is device memory's either way.
    let past = w(20.0);
    assert_eq!(step(6000.0, &past).0, step(0.0, &past).0);
    // Adds that ask more than device memory gives (4.5 MB in 1 µs each) read from the L2 at
    // what they ask, not at device memory's bandwidth: together 9000 GB/s of its 6000, each
    // 1 µs kernel takes 1.5 µs side by side.
    let fast = w(1.5);
    let (shared, alone) = step(6000.0, &fast);
    assert!(
        ((shared - alone) * 1e3 - 0.5).abs() < 1e-9,
        "{shared} {alone}"
    );
    // They share the L2 by what they write (a third of what the measured adds moved): unary
    // kernels writing as much as those adds, reading half as much (3 MB in 1 µs, 3000 GB/s
    // together, within the figure by their bytes), take as long as the adds side by side.
    let unary = walk_of(1.0, 1.5);
    let (shared_unary, alone_unary) = step(6000.0, &unary);
    assert!(
        (shared_unary - alone_unary - (shared - alone)).abs() < 1e-12,
        "{shared_unary} {alone_unary}"
    );
}

#[test]
fn element_wise_lanes_within_the_l2_hold_the_sms_only_while_their_blocks_run() {
    // Two lanes forked off a short kernel, each one kernel whose 2048 blocks of 128 threads
    // fill an sm_90's 132 SMs in one round (2048 of the 2112 blocks they hold), adding two
    // inputs of 1 MB every 2 µs of `ns` (well within the L2's figure), joined back.
    let walk_of = |name: &'static str, ns: f64| {
        forked_lanes(|stream, corr, lane| Op {
            stream: Some(stream),
            correlation: Some(corr),
            input_bytes: Some(2e6 * ns / 2000.0),
            largest_input_bytes: Some(1e6 * ns / 2000.0),
            kind: OpKind::Kernel {
                grid: (if lane { 2048 } else { 1 }, 1, 1),
                block: (128, 1, 1),
            },
            ..Op::kernel(name, corr as f64, if lane { ns } else { 2000.0 })
        })
    };
    let step = |w: &Walk| l2_lanes_step(9000.0, w);
    let contiguous = "at::native::vectorized_elementwise_kernel<4, add>";
    // PyTorch's contiguous kernels of 2 µs: the L2 gives both what they write, but each
    // one's blocks hold 2048/2112 of the SMs for its time less the ramp (the H200's 680 ns
    // where the profile has none), so the two together ask 1.28 of the GPU and both advance
    // at 1/1.28 of their pace: 0.56 µs longer than side by side as if alone.
    let (shared, alone) = step(&walk_of(contiguous, 2000.0));
    let hold = 2048.0 / 2112.0 * (2000.0 - 680.0) / 2000.0;
    let longer_ms = (2.0 * hold - 1.0) * 2000.0 / 1e6;
    assert!(
        (shared - alone - longer_ms).abs() < 1e-9,
        "{shared} {alone} {longer_ms}"
    );
    // PyTorch's strided kernel over the same bytes holds them the same way.
    let (strided, strided_alone) = step(&walk_of(
        "at::native::elementwise_kernel<128, 4, add>",
        2000.0,
    ));
    assert_eq!(strided_alone, alone);
    assert!((strided - shared).abs() < 1e-12, "{strided} {shared}");
    // A kernel that is not element-wise (a reduction) keeps its blocks' share the whole time:
    // longer still.
    let (reduction, _) = step(&walk_of("at::native::reduce_kernel<512, 1>", 2000.0));
    assert!(reduction > shared + 1e-4, "{reduction} {shared}");
    // An element-wise kernel no longer than the ramp holds no SMs: side by side as if alone.
    let (short_shared, short_alone) = step(&walk_of(contiguous, 600.0));
    assert!(
        (short_shared - short_alone).abs() < 1e-12,
        "{short_shared} {short_alone}"
    );
}

#[test]
fn lanes_whose_data_pass_the_l2_take_no_less_than_their_bytes_from_device_memory() {
    // Two lanes forked off a short kernel, each an add whose operator read `read` MB, the
    // largest input `mb` MB, in 10 µs, joined back; device memory gives 3000 GB/s, lanes
    // within the L2 moved 8000 GB/s, the L2 is 50 MiB.
    let walk_of = |read: f64, mb: f64| {
        forked_lanes(|stream, corr, lane| {
            let (read, mb) = if lane { (read, mb) } else { (0.002, 0.001) };
            Op {
                stream: Some(stream),
                correlation: Some(corr),
                input_bytes: Some(read * 1e6),
                largest_input_bytes: Some(mb * 1e6),
                ..Op::kernel("vectorized_elementwise_kernel<add>", corr as f64, 10_000.0)
            }
        })
    };
    let sms = SmLimits::of("9.0", 132).unwrap();
    let device = |m: &ModelInputs, walk: &Walk| {
        let dev = OfflineDevice {
            sms: Some(&sms),
            l2_bytes: Some(50.0 * 1024.0 * 1024.0),
            ..OfflineDevice::of(m)
        };
        (
            ModelledWalk::new(walk, &dev).streamed_floor_ms(),
            graph_step_model(walk, &dev),
        )
    };
    let m = ModelInputs {
        graph_launch_fixed_us: 2.0,
        ..l2_lanes_inputs(8000.0)
    };
    // Two 20 MB inputs: 60 MB a lane (6000 GB/s alone, faster than device memory), 120
    // together, past the L2. Every kernel's bytes (the two adds' 120 MB and the fork and
    // join's 3 kB each) at 3000 GB/s, plus the launch; the model's step of the lanes side by
    // side (each add at most device memory's pace) is shorter: the price holds at the floor.
    let past = walk_of(40.0, 20.0);
    let (floor, step) = device(&m, &past);
    let floor = floor.unwrap();
    let bytes = 120e6 + 2.0 * 3e3;
    assert!(
        (floor - (bytes / 3000.0 + 2000.0) / 1e6).abs() < 1e-12,
        "{floor}"
    );
    assert!(step < floor, "{step} {floor}");
    // An operator given more than the L2 could move in the kernel's time (a gather from a
    // whole 1 GB table) counts what the L2 figure moves in it: 80 MB a kernel.
    let gathers = walk_of(1000.0, 1000.0);
    let gathered = device(&m, &gathers).0.unwrap();
    let bytes = 160e6 + 2.0 * 3e3;
    assert!(
        (gathered - (bytes / 3000.0 + 2000.0) / 1e6).abs() < 1e-12,
        "{gathered}"
    );
    // Within the L2 (1 MB inputs), one lane, or no L2 figure above device memory's
    // bandwidth: no floor.
    assert_eq!(device(&m, &walk_of(2.0, 1.0)).0, None);
    let mut one_lane = past.clone();
    one_lane.waits.clear();
    for o in &mut one_lane.ops {
        o.stream = Some(7);
    }
    assert_eq!(device(&m, &one_lane).0, None);
    let without_l2 = ModelInputs {
        graph_launch_fixed_us: 2.0,
        ..l2_lanes_inputs(0.0)
    };
    assert_eq!(device(&without_l2, &past).0, None);
}
