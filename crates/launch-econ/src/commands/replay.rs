//! `launch-econ replay TRACE`: what capturing a real, recorded walk would save on this GPU.

use std::fmt::Write;

use anyhow::Context as _;

use crate::commands::{check_outputs, deliver, progress, show, start_engine, UsageError};
use crate::document::{
    CommandResult, Device, Document, ModelProfile, ReplayReport, SummaryReport, TraceInfo,
    DEFAULT_PROFILE, DEFAULT_PROFILE_NAME,
};
use crate::options::{ReplayArgs, TimingDefaults};
use crate::price::{
    build_model, eager_from_trace, engine_floor_model, graph_step_model, EagerSource, GraphSource,
    StepPrice,
};
use crate::replay::{replay, ReplayConfig, ReplayFigure, ReplayResult, FIDELITY_MIN_NS};
use crate::runner::Context;
use crate::trace::{self, summarize, Filter, Summary, Walk};

/// Timing of a replay: walks are long, so fewer and longer trials than the default run.
pub const DEFAULTS: TimingDefaults = TimingDefaults {
    reps: 10,
    warmup: 2,
    min_time_s: 0.5,
    max_time_s: 3.0,
};

pub fn run(args: &ReplayArgs, argv: &[String]) -> anyhow::Result<()> {
    check_outputs(&args.export, &[])?;
    let rule = args.timing.rule(DEFAULTS).map_err(UsageError)?;
    let walk = trace::read(&args.trace).map_err(|e| UsageError(e.to_string()))?;
    let filter = Filter {
        device: args.trace_device,
        stream: args.stream,
        window_us: args.window,
    };
    let walk = walk.filtered(&filter);
    if walk.ops.is_empty() {
        return Err(UsageError(format!(
            "{}: no operations left after the filters ({})",
            args.trace.display(),
            describe_filter(&filter)
        ))
        .into());
    }
    let summary = summarize(&walk, args.top);
    let mut report = summary_text(&args.trace.display().to_string(), &summary);
    let info = TraceInfo {
        path: args.trace.display().to_string(),
        filter: describe_filter(&filter),
        summary,
    };
    let (profile, origin) = match &args.profile {
        Some(p) => (
            ModelProfile::load(p).map_err(|e| UsageError(format!("{e:#}")))?,
            p.display().to_string(),
        ),
        None => (
            ModelProfile::parse(DEFAULT_PROFILE, DEFAULT_PROFILE_NAME)?,
            DEFAULT_PROFILE_NAME.to_string(),
        ),
    };
    let m = profile.model_inputs;
    if args.summary {
        let eager = choose_eager(args, &walk, m.eager_issue_us, || {
            engine_floor_model(&walk, &m)
        });
        let prediction = StepPrice::new(
            (graph_step_model(&walk, &m), GraphSource::Model),
            eager,
            build_model(&walk, &m),
        );
        report.push_str(&prediction.text());
        let mut doc = Document::new(
            argv,
            profile.device.clone(),
            CommandResult::ReplaySummary(SummaryReport {
                trace: info,
                profile: origin,
                prediction,
            }),
        );
        doc.warnings = crate::replay::unreproduced(&walk);
        return deliver(&doc, &report, &args.export);
    }
    let e = start_engine(args.device, args.pdl)?;
    let placement = args.timing.place(&e);
    let cfg = ReplayConfig {
        rule,
        reps: args.timing.reps(DEFAULTS),
        warmup: args.timing.warmup(DEFAULTS),
        host_overhead_us: args.host_overhead_us,
        spin_ramp_ns: args.spin_ramp_ns,
        pdl: args.pdl,
    };
    let pb = progress("replaying");
    let show_pb = |p| show(&pb, p);
    let ctx = Context {
        interrupted: &crate::interrupt::requested,
        progress: &show_pb,
    };
    let r = replay(&e, &walk, &cfg, &ctx).context("replaying the walk")?;
    pb.finish_and_clear();
    report.push_str(&replay_text(&e.device_info().name, &r));
    // The engine's measured cost of one eager launch of this walk stands for an unprofiled
    // launch call when the trace's inflation is removed.
    let launch_floor_us = r.median(ReplayFigure::EagerIssueMs) * 1e3 / r.ops.max(1) as f64;
    let eager = choose_eager(args, &walk, launch_floor_us, || {
        r.median(ReplayFigure::EagerWallMs)
    });
    let prediction = StepPrice::new(
        (r.median(ReplayFigure::GraphWallMs), GraphSource::Replay),
        eager,
        r.median(ReplayFigure::BuildMs),
    );
    report.push_str(&prediction.text());
    let partial = r.interrupted;
    let warnings = r.warnings.clone();
    let mut doc = Document::new(
        argv,
        Some(Device::of(&e)),
        CommandResult::Replay(ReplayReport {
            trace: info,
            replay: r,
            prediction,
        }),
    );
    doc.partial = partial;
    doc.warnings = warnings;
    doc.placement = Some(placement.to_string());
    deliver(&doc, &report, &args.export)
}

/// The eager step and its source: the user's, else the trace's host side, else the engine's
/// own cost (`floor`).
fn choose_eager(
    args: &ReplayArgs,
    walk: &Walk,
    launch_floor_us: f64,
    floor: impl FnOnce() -> f64,
) -> (f64, EagerSource) {
    if let Some(ms) = args.eager_step_ms {
        return (ms, EagerSource::User);
    }
    match eager_from_trace(walk, launch_floor_us) {
        Some(ms) => (ms, EagerSource::Trace),
        None => (floor(), EagerSource::EngineFloor),
    }
}

fn describe_filter(f: &Filter) -> String {
    let mut parts = Vec::new();
    if let Some(d) = f.device {
        parts.push(format!("device {d}"));
    }
    if let Some(s) = f.stream {
        parts.push(format!("stream {s}"));
    }
    if let Some((a, b)) = f.window_us {
        parts.push(format!("window {a}..{b} us"));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// The `--summary` block.
pub fn summary_text(path: &str, s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "trace {path}: {} kernels, {} copies, {} memsets; devices {:?}, streams {:?}",
        s.kernels, s.copies, s.memsets, s.devices, s.streams
    );
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
    let cal = &r.calibration;
    let _ = writeln!(
        out,
        "spin kernel: span = request + {:.0} ns + {:.3} ns/block; profiled = span + {:.0} ns (ramp); timer tick {:.0} ns",
        cal.span_overhead_fixed_ns, cal.span_overhead_per_block_ns, cal.ramp_ns, cal.timer_tick_ns
    );
    let f = &r.fidelity;
    match (&f.rel_error_long, f.p90_rel_error_long, f.within_5pct_long) {
        (Some(s), Some(p90), Some(w)) => {
            let _ = writeln!(
                out,
                "fidelity, kernels >= {:.0} us ({}): replayed vs recorded |error| median {:.2}%, p90 {:.2}%, max {:.2}%; {:.1}% within 5%",
                FIDELITY_MIN_NS / 1e3,
                s.n,
                100.0 * s.median,
                100.0 * p90,
                100.0 * s.max,
                100.0 * w
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
    if f.empty_stand_ins > 0 {
        let _ = writeln!(
            out,
            "  {} kernels are shorter than any timed spin of their grid and replay as the empty kernel of that shape",
            f.empty_stand_ins
        );
    }
    if f.too_short_to_match > 0 {
        let _ = writeln!(
            out,
            "  {} kernels are shorter than the spin kernel's floor and replay longer than recorded",
            f.too_short_to_match
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
