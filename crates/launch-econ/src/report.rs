//! What the terminal shows: the breakdown of a run, the sweep table, and predictions.

use std::fmt::Write;

use crate::document::Device;
use crate::measure::{LaunchFit, Point, RunFigure};
use crate::model::{ModelInputs, Prediction, Round};
use crate::output::num;
use crate::stats::Summary;

/// Columns of the points table: header and figure.
const COLUMNS: &[(&str, RunFigure)] = &[
    ("eager issue", RunFigure::EagerIssueUs),
    ("eager wall", RunFigure::EagerWallUs),
    ("floor issue", RunFigure::FloorIssueUs),
    ("engine/floor", RunFigure::EngineFloorRatio),
    ("graph wall/node", RunFigure::GraphWallUs),
    ("graph GPU/node", RunFigure::GraphGpuUs),
    ("graph launch", RunFigure::GraphLaunchHostUs),
    ("build ms", RunFigure::BuildMs),
];

/// One row per point, as aligned text for the terminal. Times in µs
/// unless the header says ms; each cell is the median over trials.
pub fn points_table(points: &[Point]) -> String {
    let mut header: Vec<String> = vec!["elems".into(), "launches".into()];
    header.extend(COLUMNS.iter().map(|(h, _)| h.to_string()));
    header.push("break-even".into());
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            let mut r = vec![p.config.elems.to_string(), p.config.launches.to_string()];
            for (_, f) in COLUMNS {
                let v = p.median(*f);
                r.push(if *f == RunFigure::EngineFloorRatio {
                    format!("{v:.3}x")
                } else {
                    format!("{v:.3}")
                });
            }
            r.push(
                p.break_even_replays()
                    .map_or("never".into(), |v| format!("{v:.1}")),
            );
            r
        })
        .collect();
    let mut out = String::new();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].len())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let _ = writeln!(out, "{}", line(&header));
    for r in &rows {
        let _ = writeln!(out, "{}", line(r));
    }
    out
}

/// Column layout of a median/min/max/MAD table.
#[derive(Debug, Clone, Copy)]
pub struct RowStyle {
    pub label_width: usize,
    pub decimals: usize,
}

/// One line of a median/min/max/MAD table (unit appended when not empty); nothing when the
/// figure is missing.
pub fn summary_row(out: &mut String, st: RowStyle, label: &str, s: Option<&Summary>, unit: &str) {
    if let Some(s) = s {
        let (w, d) = (st.label_width, st.decimals);
        let mut line = format!(
            "  {label:<w$} {:>10.d$} {:>10.d$} {:>10.d$} {:>9.d$}",
            s.median, s.min, s.max, s.mad
        );
        if !unit.is_empty() {
            line.push_str("  ");
            line.push_str(unit);
        }
        let _ = writeln!(out, "{line}");
    }
}

/// The breakdown printed after the seed's two lines.
pub fn run_breakdown(device: Option<&Device>, p: &Point, fit: Option<&LaunchFit>) -> String {
    let mut out = String::new();
    if let Some(d) = device {
        let _ = writeln!(
            out,
            "\ndevice {}: {} (sm_{}, {} SMs, CUDA driver {}), kernels {} in {:.1} ms ({} from cache)",
            d.ordinal,
            d.name,
            d.compute_capability.replace('.', ""),
            d.sm_count,
            d.driver_cuda_version,
            d.kernel_arch,
            d.kernel_init_ms,
            d.kernel_cache_hits
        );
    }
    let c = &p.config;
    let rule = match c.rule.fixed_trials {
        Some(_) => "fixed count".to_string(),
        None => format!(
            "until noise < {}% (min {} s, max {} s)",
            num(100.0 * c.rule.max_noise, 2),
            c.rule.min_time_s,
            c.rule.max_time_s
        ),
    };
    let _ = writeln!(
        out,
        "add of {} elements{}, {} launches a round, {} trials x {} rounds (+{} warm-up trials, {rule}), interleaved\n",
        c.elems,
        if c.pdl {
            " with programmatic dependent launch"
        } else {
            ""
        },
        c.launches,
        p.trials.len(),
        c.reps,
        p.warmup_trials.len()
    );
    let _ = writeln!(
        out,
        "  {:<34} {:>10} {:>10} {:>10} {:>9}",
        "", "median", "min", "max", "MAD"
    );
    for (label, f, unit) in [
        ("eager: host issue", RunFigure::EagerIssueUs, "us/launch"),
        (
            "eager: wall (issue + GPU tail)",
            RunFigure::EagerWallUs,
            "us/launch",
        ),
        (
            "driver floor: raw cuLaunchKernel",
            RunFigure::FloorIssueUs,
            "us/launch",
        ),
        ("driver floor: wall", RunFigure::FloorWallUs, "us/launch"),
        (
            "engine / floor (host issue)",
            RunFigure::EngineFloorRatio,
            "x",
        ),
        (
            "graph: host cost of launch()",
            RunFigure::GraphLaunchHostUs,
            "us/call",
        ),
        ("graph: wall per node", RunFigure::GraphWallUs, "us/node"),
        (
            "GPU: per graph node (events)",
            RunFigure::GraphGpuUs,
            "us/node",
        ),
        (
            "GPU: per eager kernel, back to back",
            RunFigure::EagerGpuUs,
            "us/kernel",
        ),
        ("build: capture", RunFigure::CaptureMs, "ms"),
        ("build: instantiate", RunFigure::InstantiateMs, "ms"),
        ("build: upload", RunFigure::UploadMs, "ms"),
    ] {
        let st = RowStyle {
            label_width: 34,
            decimals: 3,
        };
        summary_row(&mut out, st, label, Some(p.summary.get(f)), unit);
    }
    for c in p.convergence.iter().filter(|c| !c.converged) {
        let _ = writeln!(
            out,
            "  (not converged: {} noise {}%)",
            c.figure,
            num(100.0 * c.noise, 2)
        );
    }
    if let Some(f) = fit {
        let sizes: Vec<String> = f.points.iter().map(|(n, _)| n.to_string()).collect();
        let _ = writeln!(
            out,
            "\n  graph launch() host cost: {:.3} us + {:.5} us/node (fit over {} nodes)",
            f.fixed_us,
            f.per_node_us,
            sizes.join(", ")
        );
        if let Some((lat, per)) = f.gpu_line {
            let _ = writeln!(
                out,
                "  GPU time of one replay:   {lat:.3} us + {per:.5} us/node (events; the fixed part is launch latency, the slope the per-node cost)"
            );
        }
    }
    let _ = writeln!(
        out,
        "  break-even: {} replays of this round pay back capture + instantiate + upload",
        p.break_even_replays()
            .map_or("never: replay is not faster".into(), |v| format!("{v:.1}"))
    );
    out
}

/// The prediction for the user's round, with its inputs. Absurd but finite inputs print in
/// scientific form.
pub fn prediction_text(m: &ModelInputs, r: &Round, p: &Prediction) -> String {
    let mut out = String::new();
    let gpu = r
        .gpu_ms
        .map_or("GPU time not given: taken as host-bound".into(), |g| {
            format!("{} ms GPU", num(g, 3))
        });
    let _ = writeln!(
        out,
        "\nround: {} launches, {} ms host issue, {gpu}",
        r.launches,
        num(r.host_issue_ms, 3)
    );
    // Per-node gaps apply when the round's GPU time is given and the profile measured them.
    let gaps = r
        .gpu_ms
        .and(m.graph_node_gap_us)
        .map(|gap| (gap, gap + m.eager_extra_us.unwrap_or(0.0).max(0.0)));
    let _ = writeln!(
        out,
        "  eager  {:>9} ms  (max of host issue and GPU time{}; {})",
        num(p.eager_ms, 3),
        gaps.map_or(String::new(), |(_, e)| format!(
            " + {} us/kernel eager gap",
            num(e, 3)
        )),
        if p.gpu_bound {
            "GPU-bound"
        } else {
            "host-bound"
        }
    );
    let _ = writeln!(
        out,
        "  graph  {:>9} ms  (launch {} ms + GPU {} ms{}; replay floor {} us/node)",
        num(p.graph_ms, 3),
        num(p.graph_launch_ms, 3),
        num(p.graph_gpu_ms, 3),
        gaps.map_or(String::new(), |(g, _)| if g < 0.0 {
            format!(
                ": kernels, each node {} us shorter than profiled",
                num(-g, 3)
            )
        } else {
            format!(": kernels {}/node gap", crate::node_gap::added(g))
        }),
        num(m.graph_node_gpu_us, 3)
    );
    if let Some(x) = m.graph_node_other_stream_us.filter(|&x| x > 0.0) {
        let beyond = m
            .graph_node_other_stream_beyond_l2_us
            .map_or(String::new(), |b| {
                format!(
                    ", +{} us/node for a graph that touches more memory than the L2 holds",
                    num(b, 3)
                )
            });
        let _ = writeln!(
            out,
            "         (at the upper level of graph node cost, +{} us/node{beyond}, where framework processes ran; {} ms at the lower level)",
            num(x, 3),
            num(p.graph_quiet_ms, 3)
        );
    }
    if let (Some(gap), None) = (m.graph_node_gap_us, r.gpu_ms) {
        let _ = writeln!(
            out,
            "  (measured per-node GPU cost beyond a kernel's profiled time: graph node {}, eager kernel {} us; used when --round-gpu-ms gives the kernel sum)",
            if gap < 0.0 {
                // Not a gap below zero: the profiled time holds part of the profiler's ramp,
                // which a graph hides behind the node before.
                format!(
                    "none: {} us shorter than its kernel's profiled time (part of the profiler's ramp hidden behind the node before)",
                    num(-gap, 3)
                )
            } else {
                format!("{} us", num(gap, 3))
            },
            num(gap + m.eager_extra_us.unwrap_or(0.0).max(0.0), 3)
        );
    }
    if let Some(ramp) = m.spin_ramp_ns {
        let _ = writeln!(
            out,
            "  (a profiler (CUPTI) saw the engine's one-block spin {ramp:.0} ns longer than its own span: the node gap is taken beyond that, and `replay --profile` asks its stand-ins for recorded durations less it)"
        );
    }
    if let Some(c) = m.copy_nodes {
        let line = |l: crate::copy_nodes::CopyCost| {
            format!(
                "{} us + {} us/MiB",
                num(l.fixed_us, 2),
                num(l.us_per_mib, 2)
            )
        };
        let _ = writeln!(
            out,
            "  (a page-locked copy node adds to a graph: host to device {}, device to host {}; replay --summary prices a trace's copies with it)",
            line(c.host_to_device),
            line(c.device_to_host),
        );
        if let (Some(h), Some(d)) = (c.host_to_device_after_copy, c.device_to_host_after_copy) {
            let _ = writeln!(
                out,
                "  (right after a copy on its stream: host to device {}, device to host {})",
                line(h),
                line(d)
            );
        }
    }
    if let Some(c) = m.graph_node_beside {
        let at = |stretch: f64, load_gb_s: f64| {
            format!(
                "+{}% at {} GB/s",
                num(stretch * 100.0, 0),
                num(load_gb_s, 0)
            )
        };
        let points: Vec<String> = c
            .points
            .iter()
            .map(|p| at(p.stretch, p.load_gb_s))
            .collect();
        let _ = writeln!(
            out,
            "  (GEMMs of two streams side by side run longer with their memory load: {}; replay --summary prices concurrent streams with it)",
            points.join(", ")
        );
        if c.bandwidth_gb_s > 0.0 {
            let _ = writeln!(
                out,
                "  (device memory gives a copy {} GB/s; replay --summary shares it between kernels side by side that ask for more)",
                num(c.bandwidth_gb_s, 0)
            );
        }
        let small: Vec<String> = c
            .small
            .iter()
            .filter(|p| p.load_gb_s > 0.0)
            .map(|p| at(p.stretch, p.load_gb_s))
            .collect();
        if !small.is_empty() {
            let _ = writeln!(
                out,
                "  (small adds beside another stream's GEMMs run longer: {}; replay --summary slows small kernels by it)",
                small.join(", ")
            );
        }
        if c.small_pair.load_gb_s > 0.0 {
            let _ = writeln!(
                out,
                "  (small adds beside the same adds on another stream run longer: {}; replay --summary slows small kernels beside small kernels by it)",
                at(c.small_pair.stretch, c.small_pair.load_gb_s)
            );
        }
        if c.per_lane_us > 0.0 {
            let _ = writeln!(
                out,
                "  (a graph node takes {} us longer for each other lane running a node beside it: four lanes of empty kernels against one; replay --summary adds it to the nodes of walks on several streams)",
                num(c.per_lane_us, 3)
            );
        }
        if c.l2_gb_s > 0.0 {
            let _ = writeln!(
                out,
                "  (four lanes of adds within the L2 move {} GB/s together; replay --summary shares the third they write among element-wise kernels side by side in a walk the L2 holds)",
                num(c.l2_gb_s, 0)
            );
        }
    }
    if let Some(g) = m.gemm_peaks {
        let _ = writeln!(
            out,
            "  (cuBLAS GEMMs of 4096 cubed reach f16 {}, bf16 {}, TF32 {}, f32 {} TFLOP/s; replay --summary tells with them which recorded GEMMs hold the SMs by their math)",
            num(g.f16_tflop_s, 0),
            num(g.bf16_tflop_s, 0),
            num(g.tf32_tflop_s, 0),
            num(g.f32_tflop_s, 0)
        );
    }
    if p.saving_ms > 0.0 {
        let _ = writeln!(out, "  saving {:>9} ms per round", num(p.saving_ms, 3));
    } else {
        let _ = writeln!(out, "  saving  no saving: the graph round is not shorter");
    }
    let _ = writeln!(
        out,
        "  build  {:>9} ms once; break-even after {}",
        num(p.build_ms, 3),
        p.break_even_rounds
            .map_or("never (no saving)".into(), |v| format!(
                "{} rounds",
                num(v, 1)
            ))
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_negative_gap_prints_as_nodes_shorter_than_their_kernels() {
        use crate::model::predict;
        let m = ModelInputs {
            graph_node_gap_us: Some(-0.1),
            eager_extra_us: Some(0.9),
            ..ModelInputs::core(1.0, 2.0, 0.002, 6.0, 3.5)
        };
        let with_gpu = Round {
            launches: 1000,
            host_issue_ms: 8.0,
            gpu_ms: Some(2.0),
        };
        let text = prediction_text(&m, &with_gpu, &predict(&m, &with_gpu));
        assert!(
            text.contains("kernels, each node 0.100 us shorter than profiled"),
            "{text}"
        );
        assert!(!text.contains("-0.1") && !text.contains("- 0.1"), "{text}");
        assert!(text.contains("+ 0.800 us/kernel eager gap"), "{text}");
        let host_only = Round {
            gpu_ms: None,
            ..with_gpu
        };
        let text = prediction_text(&m, &host_only, &predict(&m, &host_only));
        assert!(
            text.contains(
                "graph node none: 0.100 us shorter than its kernel's profiled time (part of"
            ),
            "{text}"
        );
        assert!(!text.contains("-0.1") && !text.contains("- 0.1"), "{text}");
    }

    #[test]
    fn summary_rows_align_and_skip_missing_figures() {
        let s = Summary::of(&[1.0, 2.0, 4.0]);
        let mut out = String::new();
        summary_row(
            &mut out,
            RowStyle {
                label_width: 6,
                decimals: 2,
            },
            "x",
            Some(&s),
            "ms",
        );
        summary_row(
            &mut out,
            RowStyle {
                label_width: 6,
                decimals: 1,
            },
            "y",
            Some(&s),
            "",
        );
        summary_row(
            &mut out,
            RowStyle {
                label_width: 6,
                decimals: 1,
            },
            "z",
            None,
            "ms",
        );
        assert_eq!(
            out,
            "  x            2.00       1.00       4.00      1.00  ms\n  y             2.0        1.0        4.0       1.0\n"
        );
    }
}
