//! `launch-econ pipeline`: a round that spans devices, eager versus one multi-device graph
//! versus one graph per device.

use std::fmt::Write;

use anyhow::Context as _;
use memra_engine::Engine;

use crate::commands::{check_outputs, deliver, progress, show, UsageError};
use crate::document::{CommandResult, Device, Document};
use crate::options::{PipelineArgs, TimingDefaults};
use crate::output::num;
use crate::pipeline::{
    run as run_pipeline, stage_devices, PipelineConfig, PipelineFigure, PipelineResult,
};
use crate::runner::Context;

/// Timing of a pipeline run.
pub const DEFAULTS: TimingDefaults = TimingDefaults {
    reps: 20,
    warmup: 2,
    min_time_s: 0.5,
    max_time_s: 3.0,
};

pub fn run(args: &PipelineArgs, argv: &[String]) -> anyhow::Result<()> {
    check_outputs(&args.export, &[])?;
    let rule = args.timing.rule(DEFAULTS).map_err(UsageError)?;
    let stages =
        stage_devices(&args.devices, args.stages.map(|s| s as usize)).map_err(UsageError)?;
    let count = memra_engine::device_count().context("finding CUDA devices")?;
    if let Some(&bad) = args.devices.iter().find(|&&d| d >= count) {
        return Err(UsageError(format!(
            "device {bad} is out of range: {count} CUDA device(s) visible (valid: 0..{count})"
        ))
        .into());
    }
    let engines = stages
        .iter()
        .map(|&d| Engine::new(d).with_context(|| format!("starting the engine on GPU {d}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let cfg = PipelineConfig {
        stage_devices: stages,
        stage_launches: args.stage_launches as usize,
        activation_bytes: args.activation_bytes as usize,
        rule,
        reps: args.timing.reps(DEFAULTS),
        warmup: args.timing.warmup(DEFAULTS),
        microbatches: args.microbatches as usize,
    };
    let device = Some(Device::of(&engines[0]));
    let placement = args.timing.place(&engines[0]);
    let pb = progress("pipeline");
    let show_pb = |p| show(&pb, p);
    let ctx = Context {
        interrupted: &crate::interrupt::requested,
        progress: &show_pb,
    };
    let r = run_pipeline(engines, &cfg, &ctx)?;
    pb.finish_and_clear();
    let text = report(&r);
    let (partial, warnings) = (r.interrupted, r.warnings.clone());
    let mut doc = Document::new(argv, device, CommandResult::Pipeline(r));
    doc.partial = partial;
    doc.warnings = warnings;
    doc.placement = Some(placement.to_string());
    deliver(&doc, &text, &args.export)
}

/// The terminal report.
pub fn report(r: &PipelineResult) -> String {
    let mut out = String::new();
    let c = &r.config;
    let _ = writeln!(
        out,
        "pipeline: {} stages on devices {:?}, {} micro-batch(es) per round, {} launches per stage and micro-batch, {} B activation, {} trials x {} rounds (+{} warm-up)",
        c.stage_devices.len(),
        c.stage_devices,
        c.microbatches,
        c.stage_launches,
        c.activation_bytes,
        r.trials.len(),
        c.reps,
        c.warmup
    );
    for l in &r.links {
        let _ = writeln!(out, "  link {l}");
    }
    if let Some(g) = r.copy_gb_per_s {
        let _ = writeln!(
            out,
            "  stage 0 -> 1 copy bandwidth: {g:.1} GB/s (256 MiB, median of 5)"
        );
    }
    let _ = writeln!(
        out,
        "  one graph: {} nodes, built in {:.3} ms; per-device graphs built in {:.3} ms",
        r.graph_nodes, r.graph_build_ms, r.per_device_build_ms
    );
    let _ = writeln!(
        out,
        "  result checked against the CPU reference after {} batches of rounds: all equal\n",
        r.checked_rounds
    );
    let _ = writeln!(
        out,
        "  {:<30} {:>10} {:>10} {:>10} {:>9}   (ms per round)",
        "", "median", "min", "max", "MAD"
    );
    for (label, f) in [
        ("eager: host issue", PipelineFigure::EagerIssueMs),
        ("eager: wall", PipelineFigure::EagerWallMs),
        ("one multi-device graph: wall", PipelineFigure::GraphWallMs),
        (
            "per-device graphs: host issue",
            PipelineFigure::PerDeviceIssueMs,
        ),
        ("per-device graphs: wall", PipelineFigure::PerDeviceWallMs),
    ] {
        let st = crate::report::RowStyle {
            label_width: 30,
            decimals: 4,
        };
        crate::report::summary_row(&mut out, st, label, Some(r.summary.get(f)), "");
    }
    let m = |f| r.median(f);
    let launches = c.stage_devices.len() * (c.stage_launches + 1) * c.microbatches.max(1);
    let one = m(PipelineFigure::EagerWallMs) - m(PipelineFigure::GraphWallMs);
    let per = m(PipelineFigure::EagerWallMs) - m(PipelineFigure::PerDeviceWallMs);
    let saving = |v: f64| {
        if v > 0.0 {
            format!("{} ms", num(v, 4))
        } else {
            "no saving".into()
        }
    };
    let payback = if one > 0.0 {
        format!(
            "one graph pays back its build after {} rounds",
            num(r.graph_build_ms / one, 1)
        )
    } else {
        "one graph never pays back its build".into()
    };
    let _ = writeln!(
        out,
        "\n  saving per round: one graph {}, per-device graphs {}; {payback}",
        saving(one),
        saving(per)
    );
    let _ = writeln!(
        out,
        "  prediction inputs: launch-econ predict --round-launches {launches} --round-host-issue-ms {:.4}",
        m(PipelineFigure::EagerIssueMs)
    );
    out
}
