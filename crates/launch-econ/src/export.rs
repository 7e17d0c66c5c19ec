//! Exports: JSON (the whole document), CSV and Markdown (one row per point). Files are written
//! whole or not at all (temporary file, then rename); `-` writes to stdout.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::measure::FIGURES;
use crate::options::ExportArgs;
use crate::profile::Profile;

/// Renders a document in one format.
pub trait Exporter {
    /// Name used in messages.
    fn name(&self) -> &'static str;
    /// The bytes to write.
    fn render(&self, doc: &Profile) -> anyhow::Result<Vec<u8>>;
}

/// The whole document, pretty-printed.
pub struct JsonExporter;
/// One row per point: configuration, then median and MAD of every figure.
pub struct CsvExporter;
/// A table of the figures a reader compares first.
pub struct MarkdownExporter;

impl Exporter for JsonExporter {
    fn name(&self) -> &'static str {
        "JSON"
    }
    fn render(&self, doc: &Profile) -> anyhow::Result<Vec<u8>> {
        let mut v = serde_json::to_vec_pretty(doc)?;
        v.push(b'\n');
        Ok(v)
    }
}

impl Exporter for CsvExporter {
    fn name(&self) -> &'static str {
        "CSV"
    }
    fn render(&self, doc: &Profile) -> anyhow::Result<Vec<u8>> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header = vec![
            "launches".to_string(),
            "elems".into(),
            "trials".into(),
            "reps".into(),
        ];
        for (name, _) in FIGURES {
            header.push(format!("{name}_median"));
            header.push(format!("{name}_mad"));
        }
        header.push("break_even_replays".into());
        w.write_record(&header)?;
        let tables = figure_tables(doc);
        if !tables.is_empty() {
            // Replay and pipeline documents have no points: one row per figure instead.
            let mut fig = csv::Writer::from_writer(Vec::new());
            fig.write_record(["document", "figure", "median", "min", "max", "mad", "n"])?;
            for (title, summary) in tables {
                for (name, s) in summary {
                    fig.write_record([
                        title.to_string(),
                        name.clone(),
                        format!("{:.6}", s.median),
                        format!("{:.6}", s.min),
                        format!("{:.6}", s.max),
                        format!("{:.6}", s.mad),
                        s.n.to_string(),
                    ])?;
                }
            }
            return Ok(fig.into_inner()?);
        }
        for p in &doc.points {
            let c = &p.config;
            let mut row = vec![
                c.launches.to_string(),
                c.elems.to_string(),
                c.trials.to_string(),
                c.reps.to_string(),
            ];
            for (name, _) in FIGURES {
                let s = p.summary.get(*name);
                row.push(s.map_or(String::new(), |s| format!("{:.6}", s.median)));
                row.push(s.map_or(String::new(), |s| format!("{:.6}", s.mad)));
            }
            row.push(
                p.break_even_replays()
                    .map_or(String::new(), |v| format!("{v:.3}")),
            );
            w.write_record(&row)?;
        }
        Ok(w.into_inner()?)
    }
}

impl Exporter for MarkdownExporter {
    fn name(&self) -> &'static str {
        "Markdown"
    }
    fn render(&self, doc: &Profile) -> anyhow::Result<Vec<u8>> {
        let mut out = String::new();
        if !doc.points.is_empty() {
            out.push_str(&crate::report::points_table(doc, true));
        }
        for (title, summary) in figure_tables(doc) {
            out.push_str(&format!("\n**{title}** (ms per walk or round)\n\n"));
            out.push_str("| figure | median | min | max | MAD |\n|---|---:|---:|---:|---:|\n");
            for (name, s) in summary {
                out.push_str(&format!(
                    "| {name} | {:.4} | {:.4} | {:.4} | {:.4} |\n",
                    s.median, s.min, s.max, s.mad
                ));
            }
        }
        Ok(out.into_bytes())
    }
}

/// The summarised figures of a replay or pipeline document, with a title each.
fn figure_tables(
    doc: &Profile,
) -> Vec<(
    &'static str,
    &std::collections::BTreeMap<String, crate::stats::Summary>,
)> {
    let mut v = Vec::new();
    if let Some(r) = &doc.replay {
        v.push(("replay", &r.summary));
    }
    if let Some(p) = &doc.pipeline {
        v.push(("pipeline", &p.summary));
    }
    v
}

/// Where one export goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Stdout,
    File(PathBuf),
}

impl Target {
    fn from_path(p: &Path) -> Target {
        if p.as_os_str() == "-" {
            Target::Stdout
        } else {
            Target::File(p.to_path_buf())
        }
    }
}

/// The exports a command was asked for.
pub fn targets(args: &ExportArgs) -> Vec<(Box<dyn Exporter>, Target)> {
    let mut out: Vec<(Box<dyn Exporter>, Target)> = Vec::new();
    if let Some(p) = &args.export_json {
        out.push((Box::new(JsonExporter), Target::from_path(p)));
    }
    if let Some(p) = &args.export_csv {
        out.push((Box::new(CsvExporter), Target::from_path(p)));
    }
    if let Some(p) = &args.export_markdown {
        out.push((Box::new(MarkdownExporter), Target::from_path(p)));
    }
    out
}

/// Checks, before any measuring, that a file can be written at `path`: its directory exists
/// and it is not itself a directory. Returns a sentence for the user otherwise.
pub fn check_writable(path: &Path) -> Result<(), String> {
    if path.as_os_str() == "-" {
        return Ok(());
    }
    if path.is_dir() {
        return Err(format!("{} is a directory, not a file", path.display()));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!(
            "cannot write {}: directory {} does not exist",
            path.display(),
            dir.display()
        ));
    }
    let probe = dir.join(format!(".launch-econ-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!("cannot write {}: {e}", path.display())),
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "export".into());
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write {}", path.display()))
}

/// Renders and writes every requested export.
pub fn write_all(doc: &Profile, targets: &[(Box<dyn Exporter>, Target)]) -> anyhow::Result<()> {
    for (exp, target) in targets {
        let bytes = exp.render(doc)?;
        match target {
            Target::Stdout => std::io::stdout()
                .write_all(&bytes)
                .with_context(|| format!("writing {} to stdout", exp.name()))?,
            Target::File(p) => {
                write_atomically(p, &bytes)?;
                eprintln!("wrote {} to {}", exp.name(), p.display());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{Config, Point, Trial};
    use crate::profile::Host;

    /// A document with fixed contents, so the rendered exports can be pinned.
    fn doc() -> Profile {
        let mut p = Profile::new("sweep", None);
        p.argv = vec!["launch-econ".into(), "sweep".into()];
        p.created_unix = 0;
        p.host = Host {
            cpu_model: "test cpu".into(),
            logical_cpus: 2,
            os: "linux x86_64".into(),
        };
        let trial = |k: f64| Trial {
            eager_issue_us: 3.0 + k,
            eager_wall_us: 3.1 + k,
            floor_issue_us: 3.0,
            floor_wall_us: 3.05,
            graph_launch_host_us: 2.0,
            graph_wall_us: 1.0,
            graph_gpu_us: 1.01,
            eager_gpu_us: 1.8,
            kernel_gpu_us: 2.0,
            capture_ms: 0.5,
            instantiate_ms: 2.0,
            upload_ms: 1.0,
        };
        for (launches, elems) in [(16, 4096), (1024, 65536)] {
            let cfg = Config {
                launches,
                elems,
                trials: 3,
                reps: 2,
                warmup: 0,
            };
            p.points.push(Point::from_trials(
                cfg,
                vec![],
                vec![trial(0.0), trial(0.1), trial(0.2)],
            ));
        }
        p
    }

    #[test]
    fn markdown_export() {
        let md = String::from_utf8(MarkdownExporter.render(&doc()).unwrap()).unwrap();
        insta::assert_snapshot!(md);
    }

    #[test]
    fn csv_export() {
        let csv = String::from_utf8(CsvExporter.render(&doc()).unwrap()).unwrap();
        insta::assert_snapshot!(csv);
    }

    #[test]
    fn replay_documents_export_their_figures() {
        let mut d = Profile::new("replay", None);
        let mut summary = std::collections::BTreeMap::new();
        summary.insert(
            "graph_wall_ms".to_string(),
            crate::stats::Summary::of(&[0.74, 0.75, 0.76]),
        );
        d.pipeline = None;
        d.replay = Some(crate::replay::ReplayResult {
            config: crate::replay::ReplayConfig {
                trials: 3,
                reps: 1,
                warmup: 0,
                host_overhead_us: 0.0,
                spin_ramp_ns: 680.0,
            },
            ops: 1,
            kernels: 1,
            recorded_gpu_ms: 0.7,
            recorded_span_ms: 1.0,
            calibration: crate::replay::Calibration {
                span_overhead_fixed_ns: 330.0,
                span_overhead_per_block_ns: 0.7,
                ramp_ns: 680.0,
                timer_tick_ns: 32.0,
            },
            fidelity: crate::replay::Fidelity {
                kernels: vec![],
                rel_error_long: None,
                p90_rel_error_long: None,
                within_5pct_long: None,
                too_short_to_match: 0,
            },
            trials: vec![],
            summary,
        });
        let md = String::from_utf8(MarkdownExporter.render(&d).unwrap()).unwrap();
        assert!(
            md.contains("| graph_wall_ms | 0.7500 | 0.7400 | 0.7600 | 0.0100 |"),
            "{md}"
        );
        let csv = String::from_utf8(CsvExporter.render(&d).unwrap()).unwrap();
        assert_eq!(
            csv.lines().nth(1).unwrap(),
            "replay,graph_wall_ms,0.750000,0.740000,0.760000,0.010000,3"
        );
    }

    #[test]
    fn json_export_round_trips() {
        let d = doc();
        let bytes = JsonExporter.render(&d).unwrap();
        let back = Profile::parse(std::str::from_utf8(&bytes).unwrap(), "t").unwrap();
        assert_eq!(back, d);
    }

    #[test]
    fn unwritable_targets_are_refused_before_measuring() {
        assert!(check_writable(Path::new("-")).is_ok());
        let e = check_writable(Path::new("/nonexistent-dir/x.json")).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        let e = check_writable(&std::env::temp_dir()).unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
    }

    #[test]
    fn atomic_write_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("le-export-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("out.json");
        write_atomically(&f, b"one").unwrap();
        write_atomically(&f, b"two").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
