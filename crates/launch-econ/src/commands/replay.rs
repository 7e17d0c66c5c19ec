//! `launch-econ replay TRACE`: what capturing a real, recorded walk would save on this GPU.

use std::fmt::Write;

use anyhow::Context;
use memra_engine::Engine;

use crate::commands::{check_outputs, progress, UsageError};
use crate::export::{targets, write_all};
use crate::options::ReplayArgs;
use crate::profile::{Device, Profile, TraceInfo};
use crate::replay::{replay, ReplayConfig, ReplayResult, FIDELITY_MIN_NS};
use crate::trace::{self, summarize, Filter, Summary};

pub fn run(args: &ReplayArgs) -> anyhow::Result<()> {
    check_outputs(&args.export, &[])?;
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
    print!(
        "{}",
        summary_text(&args.trace.display().to_string(), &summary)
    );
    let info = TraceInfo {
        path: args.trace.display().to_string(),
        filter: describe_filter(&filter),
        summary,
    };
    if args.summary {
        let mut doc = Profile::new("replay-summary", None);
        doc.trace = Some(info);
        return write_all(&doc, &targets(&args.export));
    }
    let e = Engine::new(args.device)
        .with_context(|| format!("starting the engine on GPU {}", args.device))?;
    let cfg = ReplayConfig {
        trials: args.trials as usize,
        reps: args.reps as usize,
        warmup: args.warmup as usize,
        host_overhead_us: args.host_overhead_us,
        spin_ramp_ns: args.spin_ramp_ns,
    };
    let pb = progress((cfg.trials + cfg.warmup) as u64, "replaying");
    let r = replay(&e, &walk, &cfg, &mut || pb.inc(1)).context("replaying the walk")?;
    pb.finish_and_clear();
    let mut doc = Profile::new("replay", Some(Device::of(&e)));
    doc.partial = r.trials.len() < cfg.trials;
    print!("{}", replay_text(&e.device_info().name, &r));
    doc.trace = Some(info);
    doc.replay = Some(r);
    write_all(&doc, &targets(&args.export))?;
    if doc.partial {
        return Err(crate::interrupt::Interrupted.into());
    }
    Ok(())
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

fn row(out: &mut String, label: &str, r: &ReplayResult, name: &str) {
    let st = crate::report::RowStyle {
        label_width: 32,
        decimals: 4,
    };
    crate::report::summary_row(out, st, label, r.summary.get(name), "")
}

/// The replay report.
pub fn replay_text(device: &str, r: &ReplayResult) -> String {
    let mut out = String::new();
    let c = &r.config;
    let _ = writeln!(
        out,
        "\nreplay on {device}: {} ops ({} kernels), {} trials x {} walks (+{} warm-up), host overhead {} us/launch",
        r.ops, r.kernels, c.trials, c.reps, c.warmup, c.host_overhead_us
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
    row(&mut out, "eager: host issue", r, "eager_issue_ms");
    row(&mut out, "eager: wall", r, "eager_wall_ms");
    row(&mut out, "graph: launch() host", r, "graph_launch_host_ms");
    row(&mut out, "graph: wall per replay", r, "graph_wall_ms");
    row(
        &mut out,
        "graph: GPU per replay (events)",
        r,
        "graph_gpu_ms",
    );
    row(&mut out, "build: capture", r, "capture_ms");
    row(&mut out, "build: instantiate", r, "instantiate_ms");
    row(&mut out, "build: upload", r, "upload_ms");
    let saving = r.median("eager_wall_ms") - r.median("graph_wall_ms");
    let _ = writeln!(
        out,
        "\nsaving per walk: {saving:.4} ms (eager wall - graph wall); build {:.3} ms; break-even after {}",
        r.median("build_ms"),
        if saving > 0.0 {
            format!("{:.1} walks", r.median("build_ms") / saving)
        } else {
            "never (no saving)".into()
        }
    );
    let _ = writeln!(
        out,
        "prediction inputs: launch-econ predict --round-launches {} --round-host-issue-ms {:.4} --round-gpu-ms {:.4}",
        r.ops,
        r.median("eager_issue_ms"),
        r.median("graph_gpu_ms")
    );
    out
}
