//! `launch-econ pipeline`: a round that spans devices, eager versus one multi-device graph
//! versus one graph per device.

use std::fmt::Write;

use anyhow::Context;
use memra_engine::Engine;

use crate::commands::{check_outputs, progress, UsageError};
use crate::export::{targets, write_all};
use crate::options::PipelineArgs;
use crate::pipeline::{run as run_pipeline, stage_devices, PipelineConfig, PipelineResult};
use crate::profile::{Device, Profile};

pub fn run(args: &PipelineArgs) -> anyhow::Result<()> {
    check_outputs(&args.export, &[])?;
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
        trials: args.trials as usize,
        reps: args.reps as usize,
        warmup: args.warmup as usize,
    };
    let mut doc = Profile::new("pipeline", Some(Device::of(&engines[0])));
    let pb = progress((cfg.trials + cfg.warmup) as u64, "pipeline");
    let r = run_pipeline(engines, &cfg, &mut || pb.inc(1))?;
    pb.finish_and_clear();
    print!("{}", report(&r));
    doc.partial = r.trials.len() < cfg.trials;
    doc.pipeline = Some(r);
    write_all(&doc, &targets(&args.export))?;
    if doc.partial {
        return Err(crate::interrupt::Interrupted.into());
    }
    Ok(())
}

/// The terminal report.
pub fn report(r: &PipelineResult) -> String {
    let mut out = String::new();
    let c = &r.config;
    let _ = writeln!(
        out,
        "pipeline: {} stages on devices {:?}, {} launches per stage, {} B activation, {} trials x {} rounds (+{} warm-up)",
        c.stage_devices.len(),
        c.stage_devices,
        c.stage_launches,
        c.activation_bytes,
        c.trials,
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
    for (label, name) in [
        ("eager: host issue", "eager_issue_ms"),
        ("eager: wall", "eager_wall_ms"),
        ("one multi-device graph: wall", "graph_wall_ms"),
        ("per-device graphs: host issue", "per_device_issue_ms"),
        ("per-device graphs: wall", "per_device_wall_ms"),
    ] {
        let st = crate::report::RowStyle {
            label_width: 30,
            decimals: 4,
        };
        crate::report::summary_row(&mut out, st, label, r.summary.get(name), "");
    }
    let m = |n: &str| r.summary.get(n).map_or(f64::NAN, |s| s.median);
    let launches = c.stage_devices.len() * (c.stage_launches + 1);
    let _ = writeln!(
        out,
        "\n  saving per round: one graph {:.4} ms, per-device graphs {:.4} ms; one graph pays back its build after {:.1} rounds",
        m("eager_wall_ms") - m("graph_wall_ms"),
        m("eager_wall_ms") - m("per_device_wall_ms"),
        r.graph_build_ms / (m("eager_wall_ms") - m("graph_wall_ms")).max(f64::MIN_POSITIVE)
    );
    let _ = writeln!(
        out,
        "  prediction inputs: launch-econ predict --round-launches {launches} --round-host-issue-ms {:.4}",
        m("eager_issue_ms")
    );
    out
}
