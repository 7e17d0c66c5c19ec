//! Exports: JSON (the whole document), CSV and Markdown (the result's one table). Files are
//! written whole or not at all (temporary file, then rename); `-` writes to stdout; a target
//! that is not a regular file (a FIFO, `/dev/stdout`, `/dev/full`) is written in place. Every
//! target is attempted and every failure reported, so one bad target never loses the others.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::document::{Document, Table};
use crate::options::ExportArgs;

/// Renders a document in one format.
pub trait Exporter {
    /// Name used in messages.
    fn name(&self) -> &'static str;
    /// The bytes to write.
    fn render(&self, doc: &Document) -> anyhow::Result<Vec<u8>>;
}

/// The whole document, pretty-printed.
pub struct JsonExporter;
/// The result's table: one row per point, or one per figure.
pub struct CsvExporter;
/// The same table in Markdown.
pub struct MarkdownExporter;

impl Exporter for JsonExporter {
    fn name(&self) -> &'static str {
        "JSON"
    }
    fn render(&self, doc: &Document) -> anyhow::Result<Vec<u8>> {
        let mut v = serde_json::to_vec_pretty(doc)?;
        v.push(b'\n');
        Ok(v)
    }
}

impl Exporter for CsvExporter {
    fn name(&self) -> &'static str {
        "CSV"
    }
    fn render(&self, doc: &Document) -> anyhow::Result<Vec<u8>> {
        let Table { columns, rows, .. } = doc.result.table();
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&columns)?;
        for r in &rows {
            w.write_record(r)?;
        }
        Ok(w.into_inner()?)
    }
}

impl Exporter for MarkdownExporter {
    fn name(&self) -> &'static str {
        "Markdown"
    }
    fn render(&self, doc: &Document) -> anyhow::Result<Vec<u8>> {
        let t = doc.result.table();
        let mut out = format!("**{}**", t.title);
        if let Some(d) = &doc.device {
            out.push_str(&format!(" on {}", d.name));
        }
        if doc.partial {
            out.push_str(" (partial: interrupted)");
        }
        out.push_str("\n\n");
        out.push_str(&format!("| {} |\n", t.columns.join(" | ")));
        out.push_str(&format!(
            "|{}|\n",
            t.columns
                .iter()
                .map(|_| "---")
                .collect::<Vec<_>>()
                .join("|")
        ));
        for r in &t.rows {
            out.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        Ok(out.into_bytes())
    }
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

/// Whether `path` names something that exists and is not a regular file (a device, a FIFO):
/// such a target is written in place, never replaced by a rename.
fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
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
    if is_special(path) {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map(|_| ())
            .map_err(|e| format!("cannot write {}: {e}", path.display()));
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

/// Writes `bytes` to `path`: in place for a device or FIFO, else through a temporary file in
/// the same directory and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if is_special(path) {
        let result = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut f| f.write_all(bytes).and_then(|()| f.flush()));
        return result.with_context(|| format!("cannot write {}", path.display()));
    }
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

/// Renders and writes every requested export. Every target is attempted; the error, if any,
/// names each target that failed.
pub fn write_all(doc: &Document, targets: &[(Box<dyn Exporter>, Target)]) -> anyhow::Result<()> {
    let mut failed = Vec::new();
    for (exp, target) in targets {
        let written = exp.render(doc).and_then(|bytes| match target {
            Target::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(&bytes)
                    .and_then(|()| out.flush())
                    .with_context(|| format!("cannot write {} to stdout", exp.name()))
            }
            Target::File(p) => write_atomically(p, &bytes).map(|()| {
                eprintln!("wrote {} to {}", exp.name(), p.display());
            }),
        });
        if let Err(e) = written {
            failed.push(format!("{e:#}"));
        }
    }
    match failed.len() {
        0 => Ok(()),
        _ => Err(anyhow::anyhow!("{}", failed.join("; "))),
    }
}

/// Whether one of the targets is stdout (then the human report goes to stderr).
pub fn has_stdout(targets: &[(Box<dyn Exporter>, Target)]) -> bool {
    targets.iter().any(|(_, t)| *t == Target::Stdout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{CommandResult, Host, SweepResult};
    use crate::measure::{Config, Point, Trial};
    use crate::runner::{Outcome, StopRule};

    /// A document with fixed contents, so the rendered exports can be pinned.
    fn doc() -> Document {
        let trial = |k: f64| Trial {
            eager_issue_us: 3.0 + k,
            eager_wall_us: 3.1 + k,
            floor_issue_us: 3.0,
            floor_wall_us: 3.05,
            graph_launch_host_us: 2.0,
            graph_wall_us: 1.0,
            graph_gpu_us: 1.01,
            eager_gpu_us: 1.8,
            capture_ms: 0.5,
            instantiate_ms: 2.0,
            upload_ms: 1.0,
        };
        let points = [(16, 4096), (1024, 65536)]
            .into_iter()
            .map(|(launches, elems)| {
                let cfg = Config {
                    launches,
                    elems,
                    reps: 2,
                    warmup: 0,
                    rule: StopRule::fixed(3),
                    pdl: false,
                };
                Point::from_outcome(
                    cfg,
                    Outcome {
                        warmup: vec![],
                        trials: vec![trial(0.0), trial(0.1), trial(0.2)],
                        convergence: vec![],
                        interrupted: false,
                    },
                )
            })
            .collect();
        let mut p = Document::new(
            &["launch-econ".into(), "sweep".into()],
            None,
            CommandResult::Sweep(SweepResult {
                points,
                launch_fit: None,
            }),
        );
        p.created_unix = 0;
        p.host = Host {
            cpu_model: "test cpu".into(),
            logical_cpus: 2,
            os: "linux x86_64".into(),
        };
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
    fn every_row_of_a_table_has_every_column() {
        let t = doc().result.table();
        assert!(t.rows.iter().all(|r| r.len() == t.columns.len()));
        let csv = String::from_utf8(CsvExporter.render(&doc()).unwrap()).unwrap();
        assert_eq!(csv.lines().count(), 3, "header and two points");
    }

    #[test]
    fn json_export_round_trips() {
        let d = doc();
        let bytes = JsonExporter.render(&d).unwrap();
        let back = Document::parse(std::str::from_utf8(&bytes).unwrap(), "t").unwrap();
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

    #[test]
    fn a_device_target_is_written_in_place_and_its_errors_reported() {
        let full = Path::new("/dev/full");
        if !full.exists() {
            return; // not every OS has it
        }
        assert!(check_writable(full).is_ok(), "it can be opened for writing");
        let e = write_atomically(full, b"x").unwrap_err();
        assert!(format!("{e:#}").contains("/dev/full"), "{e:#}");
        assert!(
            std::fs::metadata(full).is_ok_and(|m| !m.is_file()),
            "still a device, not replaced by a file"
        );
        let targets: Vec<(Box<dyn Exporter>, Target)> = vec![
            (Box::new(JsonExporter), Target::File(full.to_path_buf())),
            (Box::new(CsvExporter), Target::File(full.to_path_buf())),
        ];
        let e = write_all(&doc(), &targets).unwrap_err().to_string();
        assert_eq!(e.matches("cannot write /dev/full").count(), 2, "{e}");
    }
}
