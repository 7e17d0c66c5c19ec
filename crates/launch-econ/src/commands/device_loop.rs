//! `launch-econ loop`: K steps in one conditional-graph launch against K graph launches, and a
//! loop the device ends early against a host loop that reads a flag back every step.

use std::fmt::Write;

use crate::commands::{check_outputs, deliver, progress, show, start_engine, UsageError};
use crate::device_loop::{run as run_loops, LoopConfig, LoopFigure, LoopResult};
use crate::document::{CommandResult, Device, Document};
use crate::options::{LoopArgs, TimingDefaults};
use crate::output::num;
use crate::runner::Context;

/// Timing of a loop run: a trial runs each loop once (K steps).
pub const DEFAULTS: TimingDefaults = TimingDefaults {
    reps: 1,
    warmup: 1,
    min_time_s: 0.5,
    max_time_s: 3.0,
};

pub fn run(args: &LoopArgs, argv: &[String]) -> anyhow::Result<()> {
    check_outputs(&args.export, &[])?;
    let rule = args.timing.rule(DEFAULTS).map_err(UsageError)?;
    if args.timing.reps.is_some() {
        return Err(UsageError(
            "--reps does not apply to `loop`: each trial runs every loop once (use --steps)".into(),
        )
        .into());
    }
    let stop_at = args.stop_at.unwrap_or((args.steps / 2).max(1));
    if stop_at == 0 || stop_at > args.steps {
        return Err(UsageError(format!(
            "--stop-at {stop_at} must be between 1 and --steps {}",
            args.steps
        ))
        .into());
    }
    let e = start_engine(args.device, false)?;
    let placement = args.timing.place(&e);
    let cfg = LoopConfig {
        steps: args.steps,
        step_kernels: args.step_kernels as usize,
        elems: args.elems as usize,
        stop_at,
        rule,
        warmup: args.timing.warmup(DEFAULTS),
    };
    let pb = progress("loop");
    let show_pb = |p| show(&pb, p);
    let ctx = Context {
        interrupted: &crate::interrupt::requested,
        progress: &show_pb,
    };
    let r = run_loops(&e, &cfg, &ctx)?;
    pb.finish_and_clear();
    let text = report(&Device::of(&e).name, &r);
    let (partial, warnings) = (r.interrupted, r.warnings.clone());
    let mut doc = Document::new(argv, Some(Device::of(&e)), CommandResult::Loop(r));
    doc.partial = partial;
    doc.warnings = warnings;
    doc.placement = Some(placement.to_string());
    deliver(&doc, &text, &args.export)
}

/// `speedup` as words: "2.00x faster than", "3.50x slower than".
fn ratio_words(speedup: f64) -> String {
    if speedup >= 1.0 {
        format!("is {}x faster than", num(speedup, 2))
    } else {
        format!("is {}x slower than", num(1.0 / speedup, 2))
    }
}

/// The terminal report.
pub fn report(device: &str, r: &LoopResult) -> String {
    let mut out = String::new();
    let c = &r.config;
    let _ = writeln!(
        out,
        "loop on {device}: a step is {} add kernels of {} elements + 1 counting kernel; K = {} steps; the device stops the early-exit loops after step {}",
        c.step_kernels, c.elems, c.steps, c.stop_at
    );
    let _ = writeln!(
        out,
        "  step graph: {} nodes, built in {} ms; WHILE graph: body of {} nodes, built in {} ms",
        r.step_nodes,
        num(r.step_graph_build_ms, 3),
        r.body_nodes,
        num(r.while_graph_build_ms, 3)
    );
    let _ = writeln!(
        out,
        "  {} trials (+{} warm-up); every loop's step count checked on the device counter ({} loops)\n",
        r.trials.len(),
        c.warmup,
        r.checked_loops
    );
    let _ = writeln!(
        out,
        "  {:<40} {:>10} {:>10} {:>10} {:>9}   (us per step)",
        "", "median", "min", "max", "MAD"
    );
    let st = crate::report::RowStyle {
        label_width: 40,
        decimals: 3,
    };
    for (label, f) in [
        ("K graph launches: host issue", LoopFigure::HostLoopIssueUs),
        ("K graph launches: wall", LoopFigure::HostLoopWallUs),
        ("K graph launches: GPU (events)", LoopFigure::HostLoopGpuUs),
        ("one WHILE launch: host issue", LoopFigure::WhileIssueUs),
        ("one WHILE launch: wall", LoopFigure::WhileWallUs),
        ("one WHILE launch: GPU (events)", LoopFigure::WhileGpuUs),
        (
            "host loop reading the stop flag: wall",
            LoopFigure::ReadbackWallUs,
        ),
        ("WHILE with device stop: wall", LoopFigure::WhileExitWallUs),
    ] {
        crate::report::summary_row(&mut out, st, label, Some(r.summary.get(f)), "");
    }
    let m = |f| r.median(f);
    let _ = writeln!(
        out,
        "\n  host cost per step: {} us as graph launches, {} us in one WHILE launch",
        num(m(LoopFigure::HostLoopIssueUs), 3),
        num(m(LoopFigure::WhileIssueUs), 4)
    );
    let _ = writeln!(
        out,
        "  wall per step: one WHILE launch {} K graph launches ({} vs {} us)",
        ratio_words(m(LoopFigure::WallSpeedup)),
        num(m(LoopFigure::WhileWallUs), 3),
        num(m(LoopFigure::HostLoopWallUs), 3)
    );
    let _ = writeln!(
        out,
        "  with a device-decided stop: the WHILE graph {} a host loop reading the flag back ({} vs {} us)",
        ratio_words(m(LoopFigure::ExitWallSpeedup)),
        num(m(LoopFigure::WhileExitWallUs), 3),
        num(m(LoopFigure::ReadbackWallUs), 3)
    );
    let _ = writeln!(
        out,
        "  GPU time a WHILE iteration adds to the step over a graph launch: {} us",
        num(m(LoopFigure::WhileExtraGpuUs), 3)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_read_as_faster_or_slower() {
        assert_eq!(ratio_words(2.0), "is 2.00x faster than");
        assert_eq!(ratio_words(1.0), "is 1.00x faster than");
        assert_eq!(ratio_words(0.25), "is 4.00x slower than");
    }
}
