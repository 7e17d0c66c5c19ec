//! `launch-econ replay TRACE`: what capturing a real, recorded walk would save on this GPU.

use std::fmt::Write;

use crate::commands::{check_outputs, deliver, progress, show, start_engine, UsageError};
use crate::document::{CommandResult, Device, Document, TraceInfo};
use crate::options::{ReplayArgs, TimingDefaults};
use crate::pricing::{
    load_profile, price_offline, price_replayed, read_walk, with_offline_model, BadInput,
    GraphStepChoice,
};
use crate::replay::{ReplayConfig, ReplayFigure, ReplayResult, FIDELITY_MIN_NS};
use crate::runner::Context;
use crate::stand_in::{ElementWise, SubFloor};
use crate::trace::Filter;
use crate::wide_grids::WideGrids;

/// Bad input found by the pricing library is a usage error here (exit 2).
fn usage(e: anyhow::Error) -> anyhow::Error {
    match e.downcast::<BadInput>() {
        Ok(b) => UsageError(b.0).into(),
        Err(e) => e,
    }
}

/// Timing of a replay: walks are long, so fewer and longer trials than the default run.
pub const DEFAULTS: TimingDefaults = TimingDefaults {
    reps: 10,
    warmup: 2,
    min_time_s: 0.5,
    max_time_s: 3.0,
};

/// The grid table `--grid-nodes` asks for on a device named `device`.
fn grid_table(args: &ReplayArgs, device: &str) -> anyhow::Result<Option<WideGrids>> {
    args.grid_nodes
        .clone()
        .unwrap_or_default()
        .table_for(device)
        .map_err(|e| UsageError(format!("--grid-nodes: {e:#}")).into())
}

/// Which grid table priced wide kernels, for the report.
fn grid_line(table: Option<&str>) -> String {
    match table {
        Some(d) => format!(
            "wide grids: nodes priced by the {d} grid table (scripts/grid_node_probe.py; --grid-nodes off: without)\n"
        ),
        None => "wide grids: every node at its recorded duration + the one-block gap (no grid table for this device; --grid-nodes FILE)\n".into(),
    }
}

pub fn run(args: &ReplayArgs, argv: &[String]) -> anyhow::Result<()> {
    check_outputs(&args.export, &[&args.export_trace])?;
    let rule = args.timing.rule(DEFAULTS).map_err(UsageError)?;
    let filter = Filter {
        device: args.trace_device,
        stream: args.stream,
        window_us: args.window,
        step: args.profiler_step,
    };
    let (mut walk, info) =
        read_walk(&args.trace, &filter, args.top).map_err(|e| UsageError(e.to_string()))?;
    walk.wait_rule = args.waits;
    let captured = match &args.captured {
        Some(path) => Some(captured_walk(&walk, path, args.trace_device)?),
        None => None,
    };
    let mut report = summary_text(&info);
    if let Some(c) = &captured {
        report.push_str(&c.line());
    }
    if args.summary {
        let profile = load_profile(args.profile.as_deref()).map_err(usage)?;
        let device = profile.0.device.clone();
        let device_name = device.as_ref().map_or("", |d| d.name.as_str());
        let grids = grid_table(args, device_name)?;
        let timeline = args.export_trace.is_some();
        let mut priced = price_offline(
            &mut walk,
            info,
            profile,
            args.eager_step_ms,
            grids,
            timeline,
        );
        let trace = args.export_trace.as_ref().zip(priced.timeline.take());
        report.push_str(&grid_line(priced.grid_nodes.as_deref()));
        if let Some(level) = &priced.level_step {
            report.push_str(&level.line());
        }
        report.push_str(&priced.prediction.text());
        let mut doc = Document::new(argv, device, CommandResult::ReplaySummary(priced));
        doc.warnings = crate::replay::unreproduced(&walk, false);
        with_captured(&mut doc, captured);
        let delivered = deliver(&doc, &report, &args.export);
        let traced = trace.map_or(Ok(()), |(path, v)| {
            crate::timeline::write(path, &v)
                .map(|()| eprintln!("wrote the model's trace to {}", path.display()))
        });
        return crate::commands::with_extra_output(delivered, traced);
    }
    let user_profile = match &args.profile {
        Some(p) => Some(load_profile(Some(p)).map_err(usage)?),
        None => None,
    };
    // The walk as read, for the offline model beside the replay (which takes its own kernels
    // apart from other streams' below).
    let recorded = walk.clone();
    walk.uncontend();
    let several_lanes = crate::lanes::Schedule::of(&walk).lanes() > 1;
    let prior_streams = crate::prior_streams::resolve(args.prior_streams, several_lanes);
    // Before the engine: the replay's streams must come after them to see their effect.
    let _prior = crate::prior_streams::run(args.device, prior_streams)?;
    let e = start_engine(args.device, args.pdl)?;
    let node_gap = args
        .node_gap
        .resolve(&e.device_info().name, user_profile.as_ref());
    let profile = crate::node_gap::profile_for(&e.device_info().name, user_profile.as_ref())
        .map(|(p, _)| p.model_inputs);
    let (spin_ramp_ns, ramp_from) = crate::calibration::resolve_ramp_ns(
        args.spin_ramp_ns,
        &e.device_info().name,
        profile.as_ref(),
    );
    let placement = args.timing.place(&e);
    let cfg = ReplayConfig {
        rule,
        reps: args.timing.reps(DEFAULTS),
        warmup: args.timing.warmup(DEFAULTS),
        host_overhead_us: args.host_overhead_us,
        spin_ramp_ns,
        spin_ramp_from: Some(ramp_from),
        stream_from_ns: args
            .stream_from_us
            .is_finite()
            .then_some(args.stream_from_us * 1e3),
        pdl: args.pdl,
        timeline: args.export_trace.is_some(),
        gemms: args.gemms,
        gemm_operands: args.gemm_operands,
        sub_floor: args.sub_floor,
        concurrent: args.concurrent_stand_ins,
        concurrent_spins: args.concurrent_spins,
        chase_floor: args.chase_floor,
        element_wise: args.element_wise,
        l2_resident: args.l2_resident,
        past_l2: args.past_l2,
        spin_fit: args.spin_fit,
        prior_streams,
        grid_nodes: grid_table(args, &e.device_info().name)?,
        node_gap,
        profile,
    };
    let pb = progress("replaying");
    let show_pb = |p| show(&pb, p);
    let ctx = Context {
        interrupted: &crate::interrupt::requested,
        progress: &show_pb,
    };
    let mut priced = price_replayed(&e, &walk, info, &cfg, &ctx, args.eager_step_ms)?;
    pb.finish_and_clear();
    let device_name = e.device_info().name.clone();
    if ramp_from == (crate::calibration::RampFrom::H200 { elsewhere: true }) {
        priced
            .replay
            .warnings
            .push(crate::caveats::ramp_of_another_gpu(&device_name));
    }
    let model_profile = args
        .graph_step
        .model_profile(&device_name, user_profile.as_ref());
    match (args.graph_step, model_profile) {
        (_, Some(profile)) => {
            let grids = grid_table(args, &device_name)?;
            priced = with_offline_model(priced, &recorded, profile, grids, args.eager_step_ms);
        }
        (GraphStepChoice::Replay, None) => {}
        (choice, None) => priced
            .replay
            .warnings
            .push(crate::caveats::no_profile_for_the_mean(
                &device_name,
                choice,
            )),
    }
    report.push_str(&replay_text(&e.device_info().name, &priced.replay));
    report.push_str(&priced.prediction.text());
    let r = &priced.replay;
    let partial = r.interrupted;
    let warnings = r.warnings.clone();
    let mut doc = Document::new(
        argv,
        Some(Device::of(&e)),
        CommandResult::Replay(Box::new(priced)),
    );
    doc.partial = partial;
    doc.warnings = warnings;
    with_captured(&mut doc, captured);
    doc.placement = Some(placement.to_string());
    let delivered = deliver(&doc, &report, &args.export);
    let traced = match (&args.export_trace, &doc.result) {
        (Some(path), CommandResult::Replay(p)) => {
            crate::timeline::write_replayed(path, &walk, p.replay.timeline.as_deref())
                .map(|()| eprintln!("wrote the replay trace to {}", path.display()))
        }
        _ => Ok(()),
    };
    crate::commands::with_extra_output(delivered, traced)
}

/// `--captured`: the recorded walk against the graph replay's trace at `path` (on the device
/// `--trace-device` keeps; every stream and the whole trace, whatever else the filters keep
/// of the recording: a graph's branches run on streams of its own).
fn captured_walk(
    walk: &crate::trace::Walk,
    path: &std::path::Path,
    device: Option<u32>,
) -> anyhow::Result<crate::captured::CapturedWalk> {
    let filter = Filter {
        device,
        step: crate::trace::StepChoice::All,
        ..Filter::default()
    };
    let (graph, _) =
        read_walk(path, &filter, 0).map_err(|e| UsageError(format!("--captured: {}", e.0)))?;
    Ok(crate::captured::compare(
        walk,
        &graph,
        &path.display().to_string(),
    ))
}

/// Puts `captured` in `doc`, with its warning where the graph runs another walk.
fn with_captured(doc: &mut Document, captured: Option<crate::captured::CapturedWalk>) {
    if let Some(w) = captured.as_ref().and_then(|c| c.warning()) {
        doc.warnings.push(w);
    }
    doc.captured = captured;
}

/// The `--summary` block.
pub fn summary_text(info: &TraceInfo) -> String {
    let (path, s) = (&info.path, &info.summary);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "trace {path}: {} kernels, {} copies, {} memsets; devices {:?}, streams {:?}",
        s.kernels, s.copies, s.memsets, s.devices, s.streams
    );
    if let Some(steps) = &info.steps {
        let _ = writeln!(out, "step: {steps}");
    }
    let _ = writeln!(
        out,
        "recorded GPU time: kernels {:.3} ms, copies/memsets {:.3} ms; span {:.3} ms; {} distinct kernels",
        s.kernel_gpu_ns / 1e6,
        s.copy_gpu_ns / 1e6,
        s.span_ns / 1e6,
        s.distinct_kernels
    );
    if !s.top.is_empty() {
        let _ = writeln!(out, "top kernels by recorded time:");
        let _ = writeln!(out, "  {:>10}  {:>8}  name", "total ms", "launches");
        for (name, n, ns) in &s.top {
            let short: String = name.chars().take(100).collect();
            let _ = writeln!(out, "  {:>10.3}  {:>8}  {short}", ns / 1e6, n);
        }
    }
    out
}

fn row(out: &mut String, label: &str, r: &ReplayResult, f: ReplayFigure) {
    let st = crate::report::RowStyle {
        label_width: 32,
        decimals: 4,
    };
    crate::report::summary_row(out, st, label, Some(r.summary.get(f)), "")
}

/// The replay report.
pub fn replay_text(device: &str, r: &ReplayResult) -> String {
    let mut out = String::new();
    let c = &r.config;
    let _ = writeln!(
        out,
        "\nreplay on {device}: {} ops ({} kernels), {} trials x {} walks (+{} warm-up), host overhead {} us/launch{}",
        r.ops, r.kernels, r.trials.len(), c.reps, c.warmup, c.host_overhead_us,
        if c.pdl { ", programmatic dependent launch" } else { "" }
    );
    let _ = writeln!(out, "streams: {}", r.streams);
    if c.prior_streams > 0 {
        let _ = writeln!(
            out,
            "prior streams: {} ran a kernel each before the replay's own were created (--prior-streams; 8 unless set on a walk with branches)",
            c.prior_streams
        );
    }
    let cal = &r.calibration;
    let _ = writeln!(
        out,
        "spin kernel: span = request + {:.0} ns + {:.3} ns/block; profiled = span + {:.0} ns (ramp{}); timer tick {:.0} ns",
        cal.span_overhead_fixed_ns,
        cal.span_overhead_per_block_ns,
        cal.ramp_ns,
        r.config
            .spin_ramp_from
            .map_or(String::new(), |f| format!(", {f}")),
        cal.timer_tick_ns
    );
    let grids = match &r.config.grid_nodes {
        Some(t) => format!("wide grids less by the {} grid table", t.device),
        None => "no grid table".into(),
    };
    let fitted = match r.config.spin_fit {
        crate::stand_in::SpinFit::Graph => {
            "; timed spins shifted in the walk's graph to cost that (--spin-fit graph)"
        }
        crate::stand_in::SpinFit::Streamed if r.fidelity.streaming_stand_ins > 0 => {
            "; timed spins of streams that stream shifted in the walk's graph to cost that (--spin-fit streamed)"
        }
        crate::stand_in::SpinFit::Streamed | crate::stand_in::SpinFit::Off => "",
    };
    let _ = writeln!(
        out,
        "stand-ins: each graph node planned at its recorded duration {} (front-end gap, {}{}), {grids}: {:.4} ms of kernel nodes{fitted}",
        crate::node_gap::added(r.node_gap_us),
        r.node_gap_source,
        if r.node_gap_us < 0.0 {
            format!("; {}", crate::node_gap::SHORTER)
        } else {
            String::new()
        },
        r.planned_nodes_ms
    );
    let f = &r.fidelity;
    match (&f.rel_error_long, f.p90_rel_error_long, f.within_5pct_long) {
        (Some(s), Some(p90), Some(w)) => {
            // Stand-ins meant to stretch beside other streams' kernels do so in the graph
            // replay the spans come from.
            let stretching = f.chase_stand_ins
                + f.barrier_chase_stand_ins
                + f.block_spin_stand_ins
                + f.paced_stand_ins
                > 0;
            let _ = writeln!(
                out,
                "spans, kernels >= {:.0} us ({}): stand-in span + ramp in the last graph replay vs recorded |difference| median {:.2}%, p90 {:.2}%, max {:.2}%; {:.1}% within 5% (wide grids match the node, not the span{})",
                FIDELITY_MIN_NS / 1e3,
                s.n,
                100.0 * s.median,
                100.0 * p90,
                100.0 * s.max,
                100.0 * w,
                if stretching {
                    "; stand-ins beside other streams' kernels stretch there by design"
                } else {
                    ""
                }
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "fidelity: no kernel of {} us or more in this walk",
                FIDELITY_MIN_NS / 1e3
            );
        }
    }
    if f.streaming_stand_ins > 0 {
        let _ = writeln!(
            out,
            "  {} kernels stand in by streaming memory (recorded >= {} us{}), the others spin",
            f.streaming_stand_ins,
            c.stream_from_ns.unwrap_or(f64::NAN) / 1e3,
            match c.element_wise {
                ElementWise::Spin => ", not element-wise: those read the L2, --element-wise",
                ElementWise::Stream => "",
            }
        );
    }
    if f.paced_stand_ins > 0 {
        let _ = writeln!(
            out,
            "  {} kernels (recorded >= {} us, their operator's inputs recorded) stand in by reading those inputs (an element-wise kernel's result as well) paced over their time: they ask as much of device memory as the recorded kernels did",
            f.paced_stand_ins,
            c.stream_from_ns.unwrap_or(f64::NAN) / 1e3
        );
    }
    for (count, what) in [
        (f.chase_stand_ins, "stand in by a chase (dependent reads through the L2, then a spin): beside the other streams' memory traffic they stretch as short real kernels do"),
        (f.barrier_chase_stand_ins, "stand in by a barrier chase (each dependent read ends in a block-wide reduction, --concurrent-stand-ins): beside the other streams' traffic their reads stretch, their barriers not"),
        (f.block_spin_stand_ins, "stand in by a spin timed per block (--concurrent-spins blocks): a stand-in that finds SMs held by another stream's kernel runs longer, as its kernel's blocks would"),
        (f.real_gemm_kernels, "are recorded GEMMs run for real by cuBLAS with their recorded shapes (not in the spans above)"),
    ] {
        if count > 0 {
            let _ = writeln!(out, "  {count} kernels {what}");
        }
    }
    if f.sub_floor_kernels > 0 {
        let how = match r.config.sub_floor {
            SubFloor::Balance => {
                "mixed along each stream so that their nodes sum near their targets"
            }
            SubFloor::Nearest => "each the nearer of the two",
        };
        let reads = if f.sub_floor_reads > 0 {
            format!(
                ", {} as a chase of one read (--chase-floor; counted among the chases above)",
                f.sub_floor_reads
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  {} kernels are shorter than their shape's floor (the spin asked for nothing, or for a chase one read): {} replay as the empty kernel of that shape{reads}, the rest as the empty spin, {how}; planned {:+.2} us over recorded + gap in all",
            f.sub_floor_kernels, f.empty_stand_ins, f.sub_floor_over_us
        );
    } else if f.empty_stand_ins > 0 {
        let _ = writeln!(
            out,
            "  {} kernels are shorter than any timed spin of their grid and replay as the empty kernel of that shape",
            f.empty_stand_ins
        );
    }
    let _ = writeln!(
        out,
        "\n  {:<32} {:>10} {:>10} {:>10} {:>9}   (ms per walk)",
        "", "median", "min", "max", "MAD"
    );
    let _ = writeln!(
        out,
        "  {:<32} {:>10.4}",
        "recorded GPU sum", r.recorded_gpu_ms
    );
    row(&mut out, "eager: host issue", r, ReplayFigure::EagerIssueMs);
    row(&mut out, "eager: wall", r, ReplayFigure::EagerWallMs);
    row(
        &mut out,
        "graph: launch() host",
        r,
        ReplayFigure::GraphLaunchHostMs,
    );
    row(
        &mut out,
        "graph: wall per replay",
        r,
        ReplayFigure::GraphWallMs,
    );
    row(
        &mut out,
        "graph: GPU per replay (events)",
        r,
        ReplayFigure::GraphGpuMs,
    );
    let st = crate::report::RowStyle {
        label_width: 32,
        decimals: 4,
    };
    for (label, s) in [
        (
            "graph: wall, upper node level",
            &r.graph_wall_other_stream_ms,
        ),
        ("graph: GPU, upper node level", &r.graph_gpu_other_stream_ms),
    ] {
        crate::report::summary_row(&mut out, st, label, s.as_ref(), "");
    }
    row(&mut out, "build: capture", r, ReplayFigure::CaptureMs);
    row(
        &mut out,
        "build: instantiate",
        r,
        ReplayFigure::InstantiateMs,
    );
    row(&mut out, "build: upload", r, ReplayFigure::UploadMs);
    out
}
