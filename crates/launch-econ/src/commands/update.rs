//! `launch-econ update`: what a step whose kernels change every step costs each way, and which
//! way wins.

use std::fmt::Write;

use crate::calibration::DEFAULT_SPIN_RAMP_NS;
use crate::commands::{check_outputs, deliver, progress, show, start_engine, UsageError};
use crate::document::{CommandResult, Device, Document};
use crate::node_gap::NodeGapChoice;
use crate::options::{TimingDefaults, UpdateArgs};
use crate::output::num;
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
            let w = trace::read(path)
                .map_err(|e| UsageError(e.to_string()))?
                .of_step(args.profiler_step)
                .map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
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
                NodeGapChoice::Profile
                    .resolve(&e.device_info().name, None)
                    .as_ref(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::{FigureSet, Summaries};
    use crate::runner::StopRule;
    use crate::stats::Summary;
    use crate::update_walk::{TopologyChange, UpdateTrial};

    fn result(set_params_wall: f64, device_wall: f64) -> UpdateResult {
        let t = UpdateTrial {
            eager_host_us: 900.0,
            eager_wall_us: 1000.0,
            recapture_host_us: 1500.0,
            recapture_wall_us: 1600.0,
            recapture_instantiate_us: 600.0,
            update_host_us: 500.0,
            update_wall_us: 900.0,
            update_capture_us: 300.0,
            update_apply_us: 30.0,
            set_params_host_us: 10.0,
            set_params_wall_us: set_params_wall,
            device_params_host_us: 15.0,
            device_params_wall_us: device_wall,
        };
        UpdateResult {
            config: UpdateConfig {
                walk: "synthetic".into(),
                nodes: 100,
                changed: 10,
                elems: 4096,
                steps: 10,
                rule: StopRule::fixed(3),
                warmup: 1,
            },
            initial_build_us: 2000.0,
            trials: vec![t; 3],
            summary: Summaries::of(&[t, t, t]),
            convergence: vec![],
            topology_change: Some(TopologyChange {
                refusal: "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED".into(),
                fallback_us: Summary::of(&[700.0, 710.0]),
            }),
            warnings: vec![],
            checked_paths: 15,
            interrupted: false,
        }
    }

    #[test]
    fn report_names_the_winner_and_the_break_even_of_each_way() {
        let text = report("GPU", &result(500.0, 600.0));
        assert!(
            text.contains("winner: set-params on the changed nodes at 500.00 us a step, 1.20x faster than the next (device-side parameters, 600.00 us)"),
            "{text}"
        );
        // recapture is slower than eager: never; exec update faster: from the first step;
        // set-params pays its 2 ms build back at 0.5 ms a step: 4 steps.
        let line = |name: &str| text.lines().find(|l| l.contains(name)).unwrap().to_string();
        assert!(line("capture + instantiate").ends_with("never"), "{text}");
        assert!(
            line("capture + exec update").ends_with("from step 1"),
            "{text}"
        );
        assert!(line("set-params").ends_with("4.0 steps"), "{text}");
        assert!(text.contains("(20.0x)"), "instantiate over update: {text}");
        assert!(text.contains("update refused (CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED)"));
    }

    #[test]
    fn device_side_parameters_can_win() {
        let text = report("GPU", &result(700.0, 600.0));
        assert!(text.contains("winner: device-side parameters"), "{text}");
    }

    #[test]
    fn the_table_has_every_figure() {
        let t = CommandResult::Update(result(500.0, 600.0)).table();
        assert_eq!(t.rows.len(), UpdateFigure::ALL.len());
        assert!(t
            .rows
            .iter()
            .any(|r| r[0] == "set_params_wall_us" && r[1] == "500.000000"));
    }
}
