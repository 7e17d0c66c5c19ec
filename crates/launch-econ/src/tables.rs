//! The one table form of every command's result, read by the CSV and Markdown exporters.
//! [`CommandResult::table`] matches every variant, so a new command cannot compile without
//! saying what its table is.

use crate::document::{CommandResult, Table};
use crate::figures::{FigureSet, Summaries};
use crate::measure::{Point, RunFigure};
use crate::price::StepPrice;
use crate::stats::Summary;

impl CommandResult {
    /// This result as one table: a row per measured point (run, sweep), or a row per figure.
    pub fn table(&self) -> Table {
        match self {
            CommandResult::Run(r) => points("run", std::slice::from_ref(&r.point)),
            CommandResult::Sweep(s) => points("sweep", &s.points),
            CommandResult::Predict(p) => {
                let m = &p.model_inputs;
                let q = &p.prediction;
                let unknown = crate::copy_nodes::CopyCost {
                    fixed_us: f64::NAN,
                    us_per_mib: f64::NAN,
                };
                let beside = |i: usize| {
                    m.graph_node_beside.map_or((f64::NAN, f64::NAN), |c| {
                        (c.points[i].load_gb_s, c.points[i].stretch)
                    })
                };
                let (h2d, d2h) = m
                    .copy_nodes
                    .map_or((unknown, unknown), |c| (c.host_to_device, c.device_to_host));
                let (h2d_chained, d2h_chained) = m.copy_nodes.map_or((unknown, unknown), |c| {
                    (
                        c.host_to_device_after_copy.unwrap_or(unknown),
                        c.device_to_host_after_copy.unwrap_or(unknown),
                    )
                });
                values(
                    "predict",
                    &[
                        ("round_launches", p.round.launches as f64, ""),
                        ("round_host_issue_ms", p.round.host_issue_ms, "ms"),
                        ("round_gpu_ms", p.round.gpu_ms.unwrap_or(f64::NAN), "ms"),
                        ("eager_ms", q.eager_ms, "ms"),
                        ("graph_ms", q.graph_ms, "ms"),
                        ("graph_quiet_ms", q.graph_quiet_ms, "ms"),
                        ("graph_launch_ms", q.graph_launch_ms, "ms"),
                        ("graph_gpu_ms", q.graph_gpu_ms, "ms"),
                        ("saving_ms", q.saving_ms, "ms"),
                        ("build_ms", q.build_ms, "ms"),
                        (
                            "break_even_rounds",
                            q.break_even_rounds.unwrap_or(f64::NAN),
                            "",
                        ),
                        ("graph_node_gpu_us", m.graph_node_gpu_us, "us"),
                        ("graph_launch_fixed_us", m.graph_launch_fixed_us, "us"),
                        ("graph_launch_per_node_us", m.graph_launch_per_node_us, "us"),
                        ("build_per_node_us", m.build_per_node_us, "us"),
                        ("eager_issue_us", m.eager_issue_us, "us"),
                        (
                            "graph_node_gap_us",
                            m.graph_node_gap_us.unwrap_or(f64::NAN),
                            "us",
                        ),
                        ("eager_extra_us", m.eager_extra_us.unwrap_or(f64::NAN), "us"),
                        (
                            "graph_node_other_stream_us",
                            m.graph_node_other_stream_us.unwrap_or(f64::NAN),
                            "us",
                        ),
                        (
                            "graph_node_other_stream_beyond_l2_us",
                            m.graph_node_other_stream_beyond_l2_us.unwrap_or(f64::NAN),
                            "us",
                        ),
                        ("beside_1_load_gb_s", beside(0).0, "GB/s"),
                        ("beside_1_stretch", beside(0).1, ""),
                        ("beside_2_load_gb_s", beside(1).0, "GB/s"),
                        ("beside_2_stretch", beside(1).1, ""),
                        ("beside_3_load_gb_s", beside(2).0, "GB/s"),
                        ("beside_3_stretch", beside(2).1, ""),
                        ("copy_h2d_fixed_us", h2d.fixed_us, "us"),
                        ("copy_h2d_us_per_mib", h2d.us_per_mib, "us/MiB"),
                        ("copy_d2h_fixed_us", d2h.fixed_us, "us"),
                        ("copy_d2h_us_per_mib", d2h.us_per_mib, "us/MiB"),
                        ("copy_h2d_after_copy_fixed_us", h2d_chained.fixed_us, "us"),
                        (
                            "copy_h2d_after_copy_us_per_mib",
                            h2d_chained.us_per_mib,
                            "us/MiB",
                        ),
                        ("copy_d2h_after_copy_fixed_us", d2h_chained.fixed_us, "us"),
                        (
                            "copy_d2h_after_copy_us_per_mib",
                            d2h_chained.us_per_mib,
                            "us/MiB",
                        ),
                    ],
                )
            }
            CommandResult::ReplaySummary(r) => {
                let s = &r.trace.summary;
                let mut rows = vec![
                    ("kernels", s.kernels as f64, ""),
                    ("copies", s.copies as f64, ""),
                    ("memsets", s.memsets as f64, ""),
                    ("distinct_kernels", s.distinct_kernels as f64, ""),
                    ("kernel_gpu_ms", s.kernel_gpu_ns / 1e6, "ms"),
                    ("copy_gpu_ms", s.copy_gpu_ns / 1e6, "ms"),
                    ("span_ms", s.span_ns / 1e6, "ms"),
                ];
                rows.extend(prediction_rows(&r.prediction));
                values("replay-summary", &rows)
            }
            CommandResult::Replay(r) => {
                // The measured figures, then the price made of them, each price in the
                // median column.
                let mut t = summaries("replay", &r.replay.summary);
                t.rows
                    .extend(prediction_rows(&r.prediction).into_iter().map(|(n, v, _)| {
                        let mut row = vec![String::new(); t.columns.len()];
                        row[0] = n.to_string();
                        row[1] = cell(v);
                        row
                    }));
                t
            }
            CommandResult::Pipeline(p) => summaries("pipeline", &p.summary),
            CommandResult::Loop(l) => summaries("loop", &l.summary),
            CommandResult::Update(u) => summaries("update", &u.summary),
            CommandResult::Buckets(b) => buckets(b),
        }
    }
}

/// The prediction block as named values, NaN (an empty cell) where a figure was not made.
fn prediction_rows(p: &StepPrice) -> Vec<(&'static str, f64, &'static str)> {
    let or_nan = |v: Option<f64>| v.unwrap_or(f64::NAN);
    vec![
        ("graph_step_ms", p.graph_step_ms, "ms"),
        ("graph_step_error_ms", p.graph_step_error_ms, "ms"),
        ("graph_step_quiet_ms", or_nan(p.graph_step_quiet_ms), "ms"),
        ("graph_step_serial_ms", or_nan(p.graph_step_serial_ms), "ms"),
        (
            "graph_step_streamed_floor_ms",
            or_nan(p.graph_step_streamed_floor_ms),
            "ms",
        ),
        (
            "graph_step_unshared_ms",
            or_nan(p.graph_step_unshared_ms),
            "ms",
        ),
        (
            "kernels_waiting_for_room",
            p.kernels_waiting_for_room.map_or(f64::NAN, |n| n as f64),
            "",
        ),
        (
            "graph_step_unknown_memory_ms",
            or_nan(p.graph_step_unknown_memory_ms),
            "ms",
        ),
        ("branches", f64::from(u8::from(p.branches)), ""),
        ("eager_step_ms", p.eager_step_ms, "ms"),
        ("saving_ms", p.saving_ms, "ms"),
        ("saving_quiet_ms", or_nan(p.saving_quiet_ms), "ms"),
        ("build_ms", p.build_ms, "ms"),
        ("break_even_steps", or_nan(p.break_even_steps), ""),
    ]
}

fn cell(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.6}")
    } else {
        String::new()
    }
}

/// One row per point: configuration, then median and MAD of every figure.
fn points(title: &str, pts: &[Point]) -> Table {
    let mut columns: Vec<String> = ["launches", "elems", "trials", "reps"]
        .map(String::from)
        .to_vec();
    for f in RunFigure::ALL {
        columns.push(format!("{}_median", f.key()));
        columns.push(format!("{}_mad", f.key()));
    }
    columns.push("break_even_replays".into());
    let rows = pts
        .iter()
        .map(|p| {
            let c = &p.config;
            let mut row = vec![
                c.launches.to_string(),
                c.elems.to_string(),
                p.trials.len().to_string(),
                c.reps.to_string(),
            ];
            for (_, s) in p.summary.iter() {
                row.push(cell(s.median));
                row.push(cell(s.mad));
            }
            row.push(p.break_even_replays().map_or(String::new(), cell));
            row
        })
        .collect();
    Table {
        title: title.into(),
        columns,
        rows,
    }
}

/// One row per figure: median, min, max, MAD and trials.
fn summaries<F: FigureSet>(title: &str, s: &Summaries<F>) -> Table {
    let row = |name: &str, s: &Summary| {
        vec![
            name.to_string(),
            cell(s.median),
            cell(s.min),
            cell(s.max),
            cell(s.mad),
            s.n.to_string(),
        ]
    };
    Table {
        title: title.into(),
        columns: ["figure", "median", "min", "max", "mad", "n"]
            .map(String::from)
            .to_vec(),
        rows: s.iter().map(|(f, s)| row(f.key(), s)).collect(),
    }
}

/// One row per bucket.
fn buckets(r: &crate::buckets::BucketsResult) -> Table {
    let columns = [
        "batch",
        "elems",
        "build_ms",
        "capture_ms",
        "instantiate_ms",
        "upload_ms",
        "replay_gpu_us_median",
        "replay_gpu_us_mad",
        "switch_us_median",
        "switch_us_mad",
        "switch_update_us_median",
    ]
    .map(String::from)
    .to_vec();
    let rows = r
        .buckets
        .iter()
        .map(|b| {
            vec![
                b.size.to_string(),
                b.elems.to_string(),
                cell(b.build_ms),
                cell(b.capture_ms),
                cell(b.instantiate_ms),
                cell(b.upload_ms),
                cell(b.replay_gpu_us.median),
                cell(b.replay_gpu_us.mad),
                cell(b.switch_us.median),
                cell(b.switch_us.mad),
                cell(b.switch_update_us.median),
            ]
        })
        .collect();
    Table {
        title: "buckets".into(),
        columns,
        rows,
    }
}

/// One row per named value.
fn values(title: &str, v: &[(&str, f64, &str)]) -> Table {
    Table {
        title: title.into(),
        columns: ["figure", "value", "unit"].map(String::from).to_vec(),
        rows: v
            .iter()
            .map(|(n, x, u)| vec![n.to_string(), cell(*x), u.to_string()])
            .collect(),
    }
}
