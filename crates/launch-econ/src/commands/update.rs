//! `launch-econ update`: what a step whose kernels change every step costs each way, and which
//! way wins.

use std::fmt::Write;

use crate::commands::{check_outputs, deliver, progress, show, start_engine, UsageError};
use crate::document::{CommandResult, Device, Document};
use crate::options::{TimingDefaults, UpdateArgs};
use crate::output::num;
use crate::replay::DEFAULT_SPIN_RAMP_NS;
use crate::runner::Context;
use crate::trace;
use crate::update_walk::{
    run as run_update, ChangingWalk, RecordedWalk, SyntheticWalk, UpdateConfig, UpdateFigure,
    UpdateResult, WAYS,
};

/// Timing of an update run: each trial runs every way for `--steps` steps.
pub const DEFAULTS: TimingDefaults = TimingDefaults {
    reps: 1,
    warmup: 1,
    min_time_s: 0.5,
    max_time_s: 4.0,
};

pub fn run(args: &UpdateArgs, argv: &[String]) -> anyhow::Result<()> {
    check_outputs(&args.export, &[])?;
    let rule = args.timing.rule(DEFAULTS).map_err(UsageError)?;
    if args.timing.reps.is_some() {
        return Err(UsageError(
            "--reps does not apply to `update`: use --steps (steps per way per trial)".into(),
        )
        .into());
    }
    let walk = match &args.trace {
        Some(path) => {
            let w = trace::read(path).map_err(|e| UsageError(e.to_string()))?;
            if w.kernels().count() == 0 {
                return Err(
                    UsageError(format!("{}: the trace has no kernels", path.display())).into(),
                );
            }
            Some(w)
        }
        None => None,
    };
    let kernels = walk
        .as_ref()
        .map_or(args.nodes, |w| w.kernels().count() as u64);
    // For a recorded walk the count is resolved against its changeable kernels, on the GPU.
    let changed = match walk {
        Some(_) => 0,
        None => args.changed.of(args.nodes).map_err(UsageError)?,
    };
    let e = start_engine(args.device, false)?;
    let placement = args.timing.place(&e);
    let mut cfg = UpdateConfig {
        walk: args
            .trace
            .as_ref()
            .map_or("synthetic".into(), |p| p.display().to_string()),
        nodes: kernels as usize,
        changed: changed as usize,
        elems: if walk.is_some() {
            0
        } else {
            args.elems as usize
        },
        steps: args.steps as usize,
        rule,
        warmup: args.timing.warmup(DEFAULTS),
    };
    let mut w: Box<dyn ChangingWalk> = match &walk {
        Some(tr) => {
            let spec = args.changed;
            let rw = RecordedWalk::new(
                &e,
                tr,
                |m| spec.of(m as u64).map(|k| k as usize),
                DEFAULT_SPIN_RAMP_NS,
            )
            .map_err(|e| UsageError(format!("{e:#}")))?;
            cfg.nodes = rw.kernels();
            cfg.changed = rw.changed();
            Box::new(rw)
        }
        None => Box::new(SyntheticWalk::new(&e, cfg.nodes, cfg.changed, cfg.elems)?),
    };
    let pb = progress("update");
    let show_pb = |p| show(&pb, p);
    let ctx = Context {
        interrupted: &crate::interrupt::requested,
        progress: &show_pb,
    };
    let r = run_update(&e, w.as_mut(), &cfg, &ctx)?;
    pb.finish_and_clear();
    let text = report(&Device::of(&e).name, &r);
    let (partial, warnings) = (r.interrupted, r.warnings.clone());
    let mut doc = Document::new(argv, Some(Device::of(&e)), CommandResult::Update(r));
    doc.partial = partial;
    doc.warnings = warnings;
    doc.placement = Some(placement.to_string());
    deliver(&doc, &text, &args.export)
}

/// The terminal report.
pub fn report(device: &str, r: &UpdateResult) -> String {
    let mut out = String::new();
    let c = &r.config;
    let _ = writeln!(
        out,
        "update on {device}: {}, {} of them take new arguments every step; {} steps a way per trial, each ending in a synchronize",
        if c.elems > 0 {
            format!("a step of {} add kernels ({} elements)", c.nodes, c.elems)
        } else {
            format!("the walk of {} ({} kernels, replayed by stand-ins)", c.walk, c.nodes)
        },
        c.changed,
        c.steps
    );
    let _ = writeln!(
        out,
        "  {} trials (+{} warm-up); every way's outputs checked after its last step ({} checks, all equal)\n",
        r.trials.len(),
        c.warmup,
        r.checked_paths
    );
    let _ = writeln!(
        out,
        "  {:<34} {:>10} {:>9} {:>10} {:>9} {:>14}",
        "(us per step)", "host", "MAD", "wall", "MAD", "break-even"
    );
    let eager_wall = r.median(UpdateFigure::EagerWallUs);
    let mut best = ("eager", eager_wall);
    for (i, (name, host, wall)) in WAYS.iter().enumerate() {
        let (h, w) = (r.summary.get(*host), r.summary.get(*wall));
        let saving = eager_wall - w.median;
        let even = if i == 0 {
            "-".to_string()
        } else if i == 1 || i == 2 {
            // these ways pay their build in every step: ahead from the first step, or never
            if saving > 0.0 {
                "from step 1".into()
            } else {
                "never".into()
            }
        } else if saving > 0.0 {
            format!("{} steps", num(r.initial_build_us / saving, 1))
        } else {
            "never".into()
        };
        let _ = writeln!(
            out,
            "  {:<34} {:>10} {:>9} {:>10} {:>9} {:>14}",
            name,
            num(h.median, 2),
            num(h.mad, 2),
            num(w.median, 2),
            num(w.mad, 2),
            even
        );
        if w.median < best.1 {
            best = (name, w.median);
        }
    }
    let m = |f| r.median(f);
    let second = WAYS
        .iter()
        .map(|(n, _, w)| (*n, m(*w)))
        .filter(|(n, _)| *n != best.0)
        .fold(("", f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
    let _ = writeln!(
        out,
        "\n  winner: {} at {} us a step, {}x faster than the next ({}, {} us)",
        best.0,
        num(best.1, 2),
        num(second.1 / best.1, 2),
        second.0,
        num(second.1, 2)
    );
    let _ = writeln!(
        out,
        "  exec update vs instantiate: cuGraphExecUpdate {} us, cuGraphInstantiate + upload {} us ({}x); capture {} us a step",
        num(m(UpdateFigure::UpdateApplyUs), 1),
        num(m(UpdateFigure::RecaptureInstantiateUs), 1),
        num(m(UpdateFigure::InstantiateOverUpdate), 1),
        num(m(UpdateFigure::UpdateCaptureUs), 1)
    );
    let _ = writeln!(
        out,
        "  first build of the graph: {} us (what set-params and device-side parameters pay once)",
        num(r.initial_build_us, 1)
    );
    if let Some(t) = &r.topology_change {
        let _ = writeln!(
            out,
            "  topology change (one kernel more or less): update refused ({}); fallback to a new instantiation {} us (median of {})",
            t.refusal,
            num(t.fallback_us.median, 1),
            t.fallback_us.n
        );
    }
    out
}
