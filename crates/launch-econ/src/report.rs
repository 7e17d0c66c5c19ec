//! What the terminal shows: the breakdown of a run, the sweep table, and predictions.

use std::fmt::Write;

use crate::measure::Point;
use crate::model::{ModelInputs, Prediction, Round};
use crate::profile::Profile;
use crate::stats::Summary;

/// Columns of the points table: header, unit, figure name.
const COLUMNS: &[(&str, &str)] = &[
    ("eager issue", "eager_issue_us"),
    ("eager wall", "eager_wall_us"),
    ("floor issue", "floor_issue_us"),
    ("engine/floor", "engine_floor_ratio"),
    ("graph wall/node", "graph_wall_us"),
    ("graph GPU/node", "graph_gpu_us"),
    ("graph launch", "graph_launch_host_us"),
    ("build ms", "build_ms"),
];

/// One row per point; `markdown` selects a Markdown table, else aligned text. Times in µs
/// unless the header says ms; each cell is the median over trials.
pub fn points_table(doc: &Profile, markdown: bool) -> String {
    let mut header: Vec<String> = vec!["elems".into(), "launches".into()];
    header.extend(COLUMNS.iter().map(|(h, _)| h.to_string()));
    header.push("break-even".into());
    let rows: Vec<Vec<String>> = doc
        .points
        .iter()
        .map(|p| {
            let mut r = vec![p.config.elems.to_string(), p.config.launches.to_string()];
            for (_, name) in COLUMNS {
                let v = p.median(name);
                r.push(if *name == "engine_floor_ratio" {
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
    if markdown {
        let _ = writeln!(out, "| {} |", header.join(" | "));
        let _ = writeln!(
            out,
            "|{}|",
            header.iter().map(|_| "---:").collect::<Vec<_>>().join("|")
        );
        for r in &rows {
            let _ = writeln!(out, "| {} |", r.join(" | "));
        }
        return out;
    }
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

fn row(out: &mut String, label: &str, s: Option<&Summary>, unit: &str) {
    let st = RowStyle {
        label_width: 34,
        decimals: 3,
    };
    summary_row(out, st, label, s, unit)
}

/// The breakdown printed after the seed's two lines.
pub fn run_breakdown(doc: &Profile, p: &Point) -> String {
    let mut out = String::new();
    if let Some(d) = &doc.device {
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
    let _ = writeln!(
        out,
        "add of {} elements, {} launches a round, {} trials x {} rounds (+{} warm-up trials), interleaved\n",
        c.elems, c.launches, c.trials, c.reps, c.warmup
    );
    let _ = writeln!(
        out,
        "  {:<34} {:>10} {:>10} {:>10} {:>9}",
        "", "median", "min", "max", "MAD"
    );
    let s = |n: &str| p.summary.get(n);
    row(
        &mut out,
        "eager: host issue",
        s("eager_issue_us"),
        "us/launch",
    );
    row(
        &mut out,
        "eager: wall (issue + GPU tail)",
        s("eager_wall_us"),
        "us/launch",
    );
    row(
        &mut out,
        "driver floor: raw cuLaunchKernel",
        s("floor_issue_us"),
        "us/launch",
    );
    row(
        &mut out,
        "driver floor: wall",
        s("floor_wall_us"),
        "us/launch",
    );
    row(
        &mut out,
        "engine / floor (host issue)",
        s("engine_floor_ratio"),
        "x",
    );
    row(
        &mut out,
        "graph: host cost of launch()",
        s("graph_launch_host_us"),
        "us/call",
    );
    row(
        &mut out,
        "graph: wall per node",
        s("graph_wall_us"),
        "us/node",
    );
    row(
        &mut out,
        "GPU: per graph node (events)",
        s("graph_gpu_us"),
        "us/node",
    );
    row(
        &mut out,
        "GPU: per eager kernel, back to back",
        s("eager_gpu_us"),
        "us/kernel",
    );
    row(&mut out, "GPU: one kernel alone", s("kernel_gpu_us"), "us");
    row(
        &mut out,
        "GPU: inter-node gap in replay",
        s("inter_node_gap_us"),
        "us",
    );
    row(&mut out, "build: capture", s("capture_ms"), "ms");
    row(&mut out, "build: instantiate", s("instantiate_ms"), "ms");
    row(&mut out, "build: upload", s("upload_ms"), "ms");
    if let Some(f) = &doc.launch_fit {
        let sizes: Vec<String> = f.points.iter().map(|(n, _)| n.to_string()).collect();
        let _ = writeln!(
            out,
            "\n  graph launch() host cost: {:.3} us + {:.5} us/node (fit over {} nodes)",
            f.fixed_us,
            f.per_node_us,
            sizes.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "  break-even: {} replays of this round pay back capture + instantiate + upload",
        p.break_even_replays()
            .map_or("never: replay is not faster".into(), |v| format!("{v:.1}"))
    );
    out
}

/// The prediction for the user's round, with its inputs.
pub fn prediction_text(m: &ModelInputs, r: &Round, p: &Prediction) -> String {
    let mut out = String::new();
    let gpu = r
        .gpu_ms
        .map_or("GPU time not given: taken as host-bound".into(), |g| {
            format!("{g:.3} ms GPU")
        });
    let _ = writeln!(
        out,
        "\nround: {} launches, {:.3} ms host issue, {gpu}",
        r.launches, r.host_issue_ms
    );
    let _ = writeln!(
        out,
        "  eager  {:>9.3} ms  (max of host issue and GPU time; {})",
        p.eager_ms,
        if p.gpu_bound {
            "GPU-bound"
        } else {
            "host-bound"
        }
    );
    let _ = writeln!(
        out,
        "  graph  {:>9.3} ms  (launch {:.3} ms + GPU {:.3} ms; replay floor {:.3} us/node)",
        p.graph_ms, p.graph_launch_ms, p.graph_gpu_ms, m.graph_node_gpu_us
    );
    let _ = writeln!(out, "  saving {:>9.3} ms per round", p.saving_ms);
    let _ = writeln!(
        out,
        "  build  {:>9.3} ms once; break-even after {}",
        p.build_ms,
        p.break_even_rounds
            .map_or("never (no saving)".into(), |v| format!("{v:.1} rounds"))
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
