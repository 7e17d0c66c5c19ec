//! Nsight Systems `nsys stats --report cuda_gpu_trace --format csv` exports.
//!
//! Columns are matched by name, never position: headers differ between versions (a
//! `GreenCtx` column or not, `Throughput (MBps)` or `(MB/s)`), and the unit in parentheses
//! (`Start (ns)`, `Start (us)`, `Bytes (MB)`) scales the value. Lines before the header
//! (notices, report banners) are skipped; rows may come in any order. A kernel's `Reg/Trd`,
//! `StcSMem` and `DymSMem`, where present, say how much of the GPU it holds (see
//! [`crate::occupancy`]).

use std::collections::HashMap;
use std::io::Read;

use crate::occupancy::BlockResources;

use super::{check_duration, check_shape, Op, OpKind, TraceError, Walk, MAX_OPS};

/// Records searched for the header before giving up.
const HEADER_SEARCH: usize = 1000;

/// `Start (ns)` → (`start`, `ns`).
fn split_header(h: &str) -> (String, String) {
    let h = h.trim().trim_start_matches('\u{feff}');
    match (h.rfind('('), h.ends_with(')')) {
        (Some(i), true) => (
            h[..i].trim().to_ascii_lowercase(),
            h[i + 1..h.len() - 1].trim().to_ascii_lowercase(),
        ),
        _ => (h.to_ascii_lowercase(), String::new()),
    }
}

fn time_scale(unit: &str) -> Option<f64> {
    match unit {
        "" | "ns" => Some(1.0),
        "us" | "µs" | "usec" => Some(1e3),
        "ms" | "msec" => Some(1e6),
        "s" | "sec" => Some(1e9),
        _ => None,
    }
}

fn byte_scale(unit: &str) -> Option<f64> {
    match unit {
        "" | "b" => Some(1.0),
        "kb" => Some(1e3),
        "mb" => Some(1e6),
        "gb" => Some(1e9),
        "kib" => Some(1024.0),
        "mib" => Some(1024.0 * 1024.0),
        "gib" => Some(1024.0 * 1024.0 * 1024.0),
        _ => None,
    }
}

struct Columns {
    idx: HashMap<String, usize>,
    start_scale: f64,
    dur_scale: f64,
    bytes_scale: f64,
    /// Scales of the static and dynamic shared memory columns (`StcSMem (MB)`), where both are.
    shared_scales: Option<(f64, f64)>,
}

impl Columns {
    fn from_header(rec: &csv::StringRecord) -> Option<Result<Columns, String>> {
        let mut idx = HashMap::new();
        let mut units = HashMap::new();
        for (i, h) in rec.iter().enumerate() {
            let (name, unit) = split_header(h);
            units.insert(name.clone(), unit);
            idx.entry(name).or_insert(i);
        }
        if !(idx.contains_key("start") && idx.contains_key("duration") && idx.contains_key("name"))
        {
            return None;
        }
        let unit = |n: &str| units.get(n).cloned().unwrap_or_default();
        let scale = |n: &str, f: fn(&str) -> Option<f64>| {
            f(&unit(n)).ok_or_else(|| format!("column `{n}` has an unknown unit `{}`", unit(n)))
        };
        Some((|| {
            Ok(Columns {
                start_scale: scale("start", time_scale)?,
                dur_scale: scale("duration", time_scale)?,
                bytes_scale: if idx.contains_key("bytes") {
                    scale("bytes", byte_scale)?
                } else {
                    1.0
                },
                shared_scales: match (idx.contains_key("stcsmem"), idx.contains_key("dymsmem")) {
                    (true, true) => {
                        Some((scale("stcsmem", byte_scale)?, scale("dymsmem", byte_scale)?))
                    }
                    _ => None,
                },
                idx,
            })
        })())
    }

    fn get<'r>(&self, rec: &'r csv::StringRecord, name: &str) -> Option<&'r str> {
        self.idx
            .get(name)
            .and_then(|&i| rec.get(i))
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }

    fn num(&self, rec: &csv::StringRecord, name: &str) -> Result<Option<f64>, String> {
        match self.get(rec, name) {
            None => Ok(None),
            Some(s) => {
                let clean: String = s.chars().filter(|c| *c != ',').collect();
                clean
                    .parse::<f64>()
                    .map(Some)
                    .map_err(|_| format!("column `{name}`: `{s}` is not a number"))
            }
        }
    }

    /// A kernel row's registers per thread and shared memory per block; `None` where the
    /// export lacks them or they are not whole, in-range amounts (they only refine how much of
    /// the GPU the kernel holds, see [`crate::occupancy`]).
    fn resources(&self, rec: &csv::StringRecord) -> Option<BlockResources> {
        let (stc, dym) = self.shared_scales?;
        let regs = self.num(rec, "reg/trd").ok()??;
        let shared = self.num(rec, "stcsmem").ok()?? * stc + self.num(rec, "dymsmem").ok()?? * dym;
        let whole = |x: f64| {
            (0.0..=u32::MAX as f64)
                .contains(&x.round())
                .then(|| x.round() as u32)
        };
        Some(BlockResources {
            registers_per_thread: whole(regs)?,
            shared_bytes: whole(shared)?,
        })
    }

    fn dim(
        &self,
        rec: &csv::StringRecord,
        names: [&str; 3],
    ) -> Result<Option<(u32, u32, u32)>, String> {
        let mut v = [0u32; 3];
        for (k, n) in names.iter().enumerate() {
            match self.num(rec, n)? {
                None => return Ok(None),
                Some(x) if x.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&x) => {
                    v[k] = x as u32
                }
                Some(x) => return Err(format!("column `{n}`: {x} is not a whole number in range")),
            }
        }
        Ok(Some((v[0], v[1], v[2])))
    }
}

/// `NVIDIA H200 (0)` or `0` → 0.
fn parse_device(s: &str) -> Option<u32> {
    let s = s.trim();
    if let (Some(i), true) = (s.rfind('('), s.ends_with(')')) {
        return s[i + 1..s.len() - 1].trim().parse().ok();
    }
    s.parse().ok()
}

/// `[CUDA memcpy HtoD]` → `HtoD`; `[CUDA memcpy Host-to-Device]` → `Host-to-Device`.
fn copy_direction(name: &str) -> String {
    name.trim_start_matches("[CUDA memcpy")
        .trim_end_matches(']')
        .trim()
        .to_string()
}

fn parse_row(c: &Columns, rec: &csv::StringRecord) -> Result<Op, String> {
    let name = c
        .get(rec, "name")
        .ok_or("the Name cell is empty")?
        .to_string();
    let start = c.num(rec, "start")?.ok_or("the Start cell is empty")? * c.start_scale;
    let dur = c
        .num(rec, "duration")?
        .ok_or("the Duration cell is empty")?
        * c.dur_scale;
    if !start.is_finite() {
        return Err(format!("start {start} is not a finite number"));
    }
    check_duration(dur)?;
    let bytes = || -> Result<u64, String> {
        let b = c.num(rec, "bytes")?.unwrap_or(0.0) * c.bytes_scale;
        if !b.is_finite() || !(0.0..=1e15).contains(&b) {
            return Err(format!("byte count {b} is out of range"));
        }
        Ok(b.round() as u64)
    };
    let kind = if name.starts_with("[CUDA memcpy") {
        OpKind::Memcpy {
            bytes: bytes()?,
            direction: copy_direction(&name),
            pageable: ["srcmemkd", "dstmemkd"].iter().any(|k| {
                c.get(rec, k)
                    .is_some_and(|v| v.eq_ignore_ascii_case("pageable"))
            }),
        }
    } else if name.starts_with("[CUDA memset") {
        OpKind::Memset { bytes: bytes()? }
    } else {
        let grid = c
            .dim(rec, ["grdx", "grdy", "grdz"])?
            .ok_or("a kernel row has empty grid cells (GrdX/GrdY/GrdZ)")?;
        let block = c
            .dim(rec, ["blkx", "blky", "blkz"])?
            .ok_or("a kernel row has empty block cells (BlkX/BlkY/BlkZ)")?;
        check_shape("grid", grid, false)?;
        check_shape("block", block, true)?;
        OpKind::Kernel { grid, block }
    };
    let resources = match kind {
        OpKind::Kernel { .. } => c.resources(rec),
        _ => None,
    };
    let stream = match c.num(rec, "strm")? {
        Some(s) if s >= 0.0 && s.fract() == 0.0 => Some(s as u64),
        Some(s) => return Err(format!("stream {s} is not a whole number")),
        None => None,
    };
    let correlation = match c.num(rec, "corrid")? {
        Some(s) if s >= 0.0 && s.fract() == 0.0 => Some(s as u64),
        Some(s) => return Err(format!("CorrId {s} is not a whole number")),
        None => None,
    };
    Ok(Op {
        device: c.get(rec, "device").and_then(parse_device),
        stream,
        correlation,
        resources,
        ..Op::recorded(name, start, dur, kind)
    })
}

/// Reads a `cuda_gpu_trace` CSV export. `path` names the file in errors.
pub fn read<R: Read>(input: R, path: &str) -> Result<Walk, TraceError> {
    let err = |what: String| TraceError::Format {
        path: path.to_string(),
        what,
    };
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(input);
    let mut cols: Option<Columns> = None;
    let mut walk = Walk::default();
    let mut rec = csv::StringRecord::new();
    let mut seen = 0usize;
    loop {
        match rdr.read_record(&mut rec) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line());
                return Err(err(format!("line {line}: not readable as CSV: {e}")));
            }
        }
        seen += 1;
        let line = rec.position().map_or(0, |p| p.line());
        match &cols {
            None => {
                if let Some(c) = Columns::from_header(&rec) {
                    cols = Some(c.map_err(|w| err(format!("line {line}: {w}")))?);
                } else if seen >= HEADER_SEARCH {
                    break;
                }
            }
            Some(c) => {
                if rec.iter().all(|f| f.trim().is_empty()) {
                    continue;
                }
                let op = parse_row(c, &rec).map_err(|w| err(format!("line {line}: {w}")))?;
                if walk.ops.len() >= MAX_OPS {
                    return Err(err(format!(
                        "more than {MAX_OPS} operations; filter the export first"
                    )));
                }
                walk.ops.push(op);
            }
        }
    }
    if cols.is_none() {
        return Err(err(
            "no cuda_gpu_trace header found (a row with Start, Duration and Name columns); is this `nsys stats --report cuda_gpu_trace --format csv` output?".into(),
        ));
    }
    walk.sort();
    Ok(walk)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(s: &str) -> Result<Walk, TraceError> {
        read(s.as_bytes(), "t.csv")
    }

    #[test]
    fn header_units_are_split() {
        assert_eq!(split_header("Start (ns)"), ("start".into(), "ns".into()));
        assert_eq!(
            split_header("Throughput (MB/s)"),
            ("throughput".into(), "mb/s".into())
        );
        assert_eq!(split_header("Name"), ("name".into(), String::new()));
        assert_eq!(parse_device("NVIDIA H200 (3)"), Some(3));
        assert_eq!(parse_device("1"), Some(1));
    }

    #[test]
    fn microsecond_columns_are_scaled() {
        let w = read_str("Start (us),Duration (us),GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Strm,Name\n1.5,2.25,1,1,1,32,1,1,7,k\n").unwrap();
        assert_eq!(w.ops[0].start_ns, 1500.0);
        assert_eq!(w.ops[0].duration_ns, 2250.0);
    }

    #[test]
    fn kernel_rows_keep_registers_and_shared_memory() {
        let w = read_str("Start (us),Duration (us),GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Name\n1,2,88,1,1,384,1,1,168,0.000,0.164,gemm\n3,1,4,1,1,128,1,1,,,,k\n").unwrap();
        assert_eq!(
            w.ops[0].resources,
            Some(BlockResources {
                registers_per_thread: 168,
                shared_bytes: 164_000,
            })
        );
        // Empty cells: none recorded.
        assert_eq!(w.ops[1].resources, None);
        // An export without the columns: none either.
        let w = read_str(
            "Start (us),Duration (us),GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Name\n1,2,1,1,1,32,1,1,k\n",
        )
        .unwrap();
        assert_eq!(w.ops[0].resources, None);
    }

    #[test]
    fn row_errors_name_the_line() {
        let e = read_str("Start (ns),Duration (ns),GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Name\n1,2,1,1,1,32,1,1,ok\n5,-3,1,1,1,32,1,1,bad\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 3") && e.contains("negative"), "{e}");
        let e = read_str(
            "Start (ns),Duration (ns),GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Name\n1,NaN,1,1,1,32,1,1,k\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("finite"), "{e}");
        let e = read_str(
            "Start (ns),Duration (ns),GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Name\n1,2,0,1,1,32,1,1,k\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("zero dimension"), "{e}");
        let e = read_str(
            "Start (ns),Duration (ns),GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Name\n1,2,1,1,1,4096,1,1,k\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("1024 threads"), "{e}");
        let e = read_str("Start (furlongs),Duration (ns),Name\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown unit"), "{e}");
    }

    #[test]
    fn wrong_columns_are_reported() {
        let e = read_str("a,b,c\n1,2,3\n").unwrap_err().to_string();
        assert!(e.contains("no cuda_gpu_trace header"), "{e}");
    }
}
