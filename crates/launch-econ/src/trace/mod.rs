//! Profiler traces of a real kernel walk, read into one in-memory [`Walk`].
//!
//! Two readers, one per format: Nsight Systems `cuda_gpu_trace` CSV exports ([`nsys`]) and
//! PyTorch profiler / Kineto Chrome-trace JSON ([`kineto`]). Both stream their input, check
//! every value they keep, and report the line (CSV) or event (JSON) of the first bad one.

pub mod across_rows;
pub(crate) mod callbacks;
pub mod contention;
pub(crate) mod first_calls;
pub mod host;
pub mod inputs;
pub mod kineto;
pub mod matmul;
pub mod names;
pub mod nsys;
pub(crate) mod recordings;
pub mod steps;
mod summary;

use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::Serialize;

pub use host::HostSide;
pub use names::{is_attention, is_element_wise, is_normalisation, is_reduction};
pub use steps::{MarkedStep, StepChoice};
pub use summary::{summarize, Summary};

/// The most operations one walk may hold: far above any decode step, low enough that a
/// runaway file cannot exhaust memory.
pub const MAX_OPS: usize = 2_000_000;

/// What an operation is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum OpKind {
    /// A kernel launch with its grid and block shape.
    Kernel {
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
    },
    /// A copy of `bytes` (direction as the profiler named it, e.g. `HtoD`); `pageable` when
    /// its host end was pageable memory, as the profiler recorded it.
    Memcpy {
        bytes: u64,
        direction: String,
        pageable: bool,
    },
    /// A memset of `bytes`.
    Memset { bytes: u64 },
}

/// Which way a copy went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyDirection {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    /// Host to host, peer to peer, or a name not known.
    Other,
}

impl CopyDirection {
    /// From the profiler's name for it: Kineto's `HtoD`, `DtoH`, `DtoD`; Nsight Systems'
    /// `Host-to-Device`, `Device-to-Host`, `Device-to-Device` (older versions: `HtoD`, ...).
    pub fn of(direction: &str) -> CopyDirection {
        let d = direction.to_ascii_lowercase();
        let is = |short: &str, long: &str| d.starts_with(short) || d.starts_with(long);
        if is("htod", "host-to-device") {
            CopyDirection::HostToDevice
        } else if is("dtoh", "device-to-host") {
            CopyDirection::DeviceToHost
        } else if is("dtod", "device-to-device") {
            CopyDirection::DeviceToDevice
        } else {
            CopyDirection::Other
        }
    }
}

/// One GPU operation of the walk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Op {
    pub name: String,
    /// Start, ns, on the profiler's clock.
    pub start_ns: f64,
    /// Recorded GPU duration, ns.
    pub duration_ns: f64,
    pub device: Option<u32>,
    pub stream: Option<u64>,
    pub kind: OpKind,
    /// The profiler's correlation id linking the op to the host call that issued it; ids
    /// grow in host issue order.
    pub correlation: Option<u64>,
    /// The matrix multiply this kernel belongs to, where the trace recorded its operator's
    /// shapes (see [`matmul`]).
    #[serde(skip)]
    pub matmul: Option<matmul::MatmulRole>,
    /// The step the profiler marked (`ProfilerStep#N`) during which the host issued it.
    #[serde(skip)]
    pub step: Option<u64>,
    /// Launched by a CUDA graph the trace recorded being launched (`cudaGraphLaunch`): the
    /// walk is already captured there.
    #[serde(skip)]
    pub from_graph: bool,
    /// What one of the kernel's blocks holds on its SM, where the trace recorded it (see
    /// [`crate::occupancy`]).
    #[serde(skip)]
    pub resources: Option<crate::occupancy::BlockResources>,
    /// Bytes of the tensors the kernel's operator took as inputs, where the trace recorded
    /// them (see [`inputs::input_bytes`]), on the operator's longest kernel only.
    #[serde(skip)]
    pub input_bytes: Option<f64>,
    /// Bytes of the largest of those inputs, on the same kernel (see
    /// [`inputs::InputSizes::largest`]).
    #[serde(skip)]
    pub largest_input_bytes: Option<f64>,
    /// Of those, the rows the operator gathered from a table by an index (an embedding
    /// lookup), or wrote into it (a KV-cache `index_copy_`; see [`inputs::operator_sizes`]),
    /// on the same kernel; `None` for other operators.
    #[serde(skip)]
    pub gathered_bytes: Option<f64>,
    /// The bytes a concatenation kernel copies, where its operator's list of tensors was
    /// recorded (their elements, [`inputs::list_sizes`], times the element size its name says);
    /// kept apart from [`Op::input_bytes`], which the stand-ins read.
    #[serde(skip)]
    pub copied_bytes: Option<f64>,
    /// The kernel's operator wrote its result into one of its inputs
    /// ([`inputs::InputSizes::in_place`]), on the same kernel as [`Op::input_bytes`].
    #[serde(skip)]
    pub in_place: bool,
    /// What the operator's reads across the rows of its inputs moved beyond their bytes
    /// ([`across_rows::across_row_excess`]), on the same kernel as [`Op::input_bytes`];
    /// `None` where it read all along them or the trace did not record strides.
    #[serde(skip)]
    pub across_row_excess_bytes: Option<f64>,
}

impl Op {
    /// A kernel of one 32-thread block named `name`, on no recorded device or stream and
    /// linked to nothing: a starting point for walks built in code.
    pub fn kernel(name: &str, start_ns: f64, duration_ns: f64) -> Op {
        let kind = OpKind::Kernel {
            grid: (1, 1, 1),
            block: (32, 1, 1),
        };
        Op::recorded(name.into(), start_ns, duration_ns, kind)
    }

    /// A kernel (as [`Op::kernel`], from 0) whose operator read `read` bytes of inputs, the
    /// largest `largest`: the element-wise kernel tests price.
    #[cfg(test)]
    pub(crate) fn kernel_reading(name: &str, duration_ns: f64, read: f64, largest: f64) -> Op {
        Op {
            input_bytes: Some(read),
            largest_input_bytes: Some(largest),
            ..Op::kernel(name, 0.0, duration_ns)
        }
    }

    /// An op as one profiler record gives it, with nothing else known: no device, stream,
    /// correlation or block resources (the readers set those they find), and none of what
    /// the walk's host side adds later (its GEMM, step, graph launch, operator inputs).
    pub fn recorded(name: String, start_ns: f64, duration_ns: f64, kind: OpKind) -> Op {
        Op {
            name,
            start_ns,
            duration_ns,
            device: None,
            stream: None,
            kind,
            correlation: None,
            matmul: None,
            step: None,
            from_graph: false,
            input_bytes: None,
            largest_input_bytes: None,
            gathered_bytes: None,
            copied_bytes: None,
            resources: None,
            in_place: false,
            across_row_excess_bytes: None,
        }
    }

    pub fn is_kernel(&self) -> bool {
        matches!(self.kind, OpKind::Kernel { .. })
    }

    /// What the operator's reads move, bytes: its inputs ([`Op::input_bytes`]) and what
    /// reading some across their rows moves beyond them ([`Op::across_row_excess_bytes`]);
    /// `None` where its inputs were not recorded.
    pub fn read_bytes_moved(&self) -> Option<f64> {
        Some(self.input_bytes? + self.across_row_excess_bytes.unwrap_or(0.0))
    }
}

/// Which stream a recorded cross-stream wait is taken to wait on (the trace does not say which
/// stream recorded the event; see `crate::lanes`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
pub enum WaitRule {
    /// A stream's first wait, where it starts the stream's work in the walk (a fork), waits on
    /// the stream that joins the others at the end — a framework's `wait_stream` from its main
    /// stream, which forks a stream once — unless its event is one the program orders streams
    /// with (waited on by several streams at once, or by some stream after its work began);
    /// every other wait on the streams' work issued before its event's record call (the call
    /// the trace's event ids name, else the one right before the wait), and only on the
    /// stream that issued work right before that call where the order of calls tells it;
    /// without a record call, on all streams' work issued before the wait.
    #[default]
    Join,
    /// Every wait waits on all other streams' work issued before it: never shorter than the
    /// recording, longer where streams fork one after another.
    All,
    /// No stream waits on another: every recorded stream runs side by side from the start,
    /// whatever waits the trace holds (a lower bound; for a trace without recorded waits the
    /// other end from running its streams one after another).
    None,
}

/// A walk: the operations in start order, and what the host did to issue them when the trace
/// recorded it (Kineto traces with CPU activity do; `cuda_gpu_trace` CSVs do not).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Walk {
    pub ops: Vec<Op>,
    pub host: Option<HostSide>,
    /// Cross-stream waits (`cudaStreamWaitEvent`) the trace recorded, in host issue order;
    /// empty when it recorded none (Kineto records them with `enable_cuda_sync_events`).
    pub waits: Vec<StreamWait>,
    /// Stream wait calls the trace holds no GPU-side record of (Kineto's `cuda_sync`). In
    /// every stored PyTorch trace that had them they were the joins of a stream that ran no
    /// recorded work after them: a main stream that only forks and joins side streams (see
    /// [`crate::lanes`]).
    #[serde(skip)]
    pub unrecorded_waits: usize,
    /// How the waits are read into lanes.
    #[serde(skip)]
    pub wait_rule: WaitRule,
    /// The correlation ids of the trace's event record calls (`cudaEventRecord`), in host
    /// order: what was issued between them tells which stream made one (see
    /// [`crate::lanes`]).
    #[serde(skip)]
    pub record_calls: Vec<u64>,
    /// The steps the profiler marked in the trace (empty when it marked none), whichever
    /// of them the walk holds.
    pub steps: Vec<MarkedStep>,
    /// The marked step the walk was cut to (see [`Walk::of_step`]); `None`: the whole trace.
    pub step: Option<u64>,
    /// What [`Walk::uncontend`] changed: kernels given the duration of their twins that ran
    /// apart from other streams.
    #[serde(skip)]
    pub uncontended: contention::Uncontended,
}

/// One recorded `cudaStreamWaitEvent`: `stream` waited for an event recorded just before
/// (the trace does not say on which stream; see [`crate::lanes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StreamWait {
    pub stream: u64,
    /// Correlation id of the wait call: its place in host issue order.
    pub correlation: u64,
    /// The marked step it was issued in (see [`Op::step`]).
    #[serde(skip)]
    pub step: Option<u64>,
    /// Which recording of an event it waits on, where the trace names the event: waits that
    /// share it wait for the same work (one event, not recorded again between them; see
    /// [`crate::lanes`]). The correlation id of the first wait on that recording.
    #[serde(skip)]
    pub recording: Option<u64>,
    /// The correlation id of the event record call that recorded the event, where the trace
    /// bears that out (see `trace::recordings`).
    #[serde(skip)]
    pub recorded_at: Option<u64>,
    /// The id of the event it waits on, where the trace names it (Kineto's
    /// `wait_on_cuda_event_id`): where the waits on one event fall tells a program's own
    /// event from a fork's (see [`crate::lanes`]).
    #[serde(skip)]
    pub event: Option<u64>,
}

impl StreamWait {
    /// A wait as its record gives it: the stream that waits and the call's correlation id;
    /// its step and which recording it waits on are set once the whole trace is read.
    pub fn new(stream: u64, correlation: u64) -> StreamWait {
        StreamWait {
            stream,
            correlation,
            step: None,
            recording: None,
            recorded_at: None,
            event: None,
        }
    }
}

/// Which operations to keep.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Filter {
    pub device: Option<u32>,
    pub stream: Option<u64>,
    /// Keep ops starting in [from, to) µs after the first op of the (device/stream-filtered) walk.
    pub window_us: Option<(f64, f64)>,
    /// Which marked step to keep, before the filters above (see [`Walk::of_step`]).
    pub step: StepChoice,
}

/// Why a trace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {what}")]
    Format { path: String, what: String },
}

/// A walk of just these ops, in the order given: no host side, waits or marked steps.
impl From<Vec<Op>> for Walk {
    fn from(ops: Vec<Op>) -> Walk {
        Walk {
            ops,
            ..Walk::default()
        }
    }
}

impl Walk {
    /// Sorts by start time (profilers do not always write rows in order).
    pub fn sort(&mut self) {
        self.ops.sort_by(|a, b| a.start_ns.total_cmp(&b.start_ns));
    }

    /// The walk restricted to `f`, in start order. The host side is kept only when nothing is
    /// filtered out: it cannot be split by device, stream or window.
    pub fn filtered(&self, f: &Filter) -> Walk {
        let mut ops: Vec<Op> = self
            .ops
            .iter()
            .filter(|o| f.device.is_none_or(|d| o.device == Some(d)))
            .filter(|o| f.stream.is_none_or(|s| o.stream == Some(s)))
            .cloned()
            .collect();
        if let (Some((from, to)), Some(t0)) = (f.window_us, ops.first().map(|o| o.start_ns)) {
            ops.retain(|o| {
                let t = (o.start_ns - t0) / 1e3;
                t >= from && t < to
            });
        }
        let whole = ops.len() == self.ops.len();
        // The host side and the cross-stream waits describe the whole walk only.
        let host = if whole { self.host } else { None };
        let waits = if whole {
            self.waits.clone()
        } else {
            Vec::new()
        };
        Walk {
            ops,
            host,
            waits,
            unrecorded_waits: if whole { self.unrecorded_waits } else { 0 },
            wait_rule: self.wait_rule,
            record_calls: if whole {
                self.record_calls.clone()
            } else {
                Vec::new()
            },
            steps: self.steps.clone(),
            step: self.step,
            uncontended: self.uncontended,
        }
    }

    /// The walk cut to the marked step `choice` selects, with that step's own host side and
    /// waits; the walk as it is when the trace marks no step or `choice` is
    /// [`StepChoice::All`]. Errors for a step the trace does not hold.
    pub fn of_step(self, choice: StepChoice) -> Result<Walk, String> {
        let Some(n) = steps::select(&self.steps, choice)? else {
            return Ok(self);
        };
        let host = self
            .steps
            .iter()
            .find(|s| s.number == n)
            .and_then(|s| s.host);
        Ok(Walk {
            ops: self.ops.into_iter().filter(|o| o.step == Some(n)).collect(),
            host,
            waits: self
                .waits
                .into_iter()
                .filter(|w| w.step == Some(n))
                .collect(),
            unrecorded_waits: self.unrecorded_waits,
            wait_rule: self.wait_rule,
            record_calls: self.record_calls,
            steps: self.steps,
            step: Some(n),
            uncontended: self.uncontended,
        })
    }

    /// Takes the contention out of the recorded durations of kernels that ran beside other
    /// streams' kernels, where the walk ran their twins apart ([`contention::uncontend_where`]),
    /// and keeps what changed in [`Walk::uncontended`]: the price adds what running side by
    /// side does, and their recorded durations already held it.
    pub fn uncontend(&mut self) {
        self.uncontend_where(|_| true);
    }

    /// [`Walk::uncontend`] for the kernels `adds_back` accepts (see
    /// [`contention::uncontend_where`]).
    pub fn uncontend_where(&mut self, adds_back: impl Fn(&Op) -> bool) {
        let done = contention::uncontend_where(self, adds_back);
        self.uncontended.kernels += done.kernels;
        self.uncontended.ns += done.ns;
    }

    /// The end of the last operation, ns.
    pub fn end_ns(&self) -> f64 {
        self.ops
            .iter()
            .map(|o| o.start_ns + o.duration_ns)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    pub fn kernels(&self) -> impl Iterator<Item = &Op> {
        self.ops.iter().filter(|o| o.is_kernel())
    }

    /// From the first start to the last end, ns.
    pub fn span_ns(&self) -> f64 {
        let start = self
            .ops
            .iter()
            .map(|o| o.start_ns)
            .fold(f64::INFINITY, f64::min);
        let end = self
            .ops
            .iter()
            .map(|o| o.start_ns + o.duration_ns)
            .fold(f64::NEG_INFINITY, f64::max);
        if self.ops.is_empty() {
            0.0
        } else {
            end - start
        }
    }
}

/// Reads a trace, choosing the reader by content: JSON (`{` or `[` first) or CSV, either
/// plain or gzip-compressed (`torch.profiler.tensorboard_trace_handler(use_gzip=True)`,
/// `export_chrome_trace("….json.gz")`).
pub fn read(path: &Path) -> Result<Walk, TraceError> {
    let p = path.display().to_string();
    let io = |source| TraceError::Io {
        path: p.clone(),
        source,
    };
    let format = |what: String| TraceError::Format {
        path: p.clone(),
        what,
    };
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext.eq_ignore_ascii_case("nsys-rep") || ext.eq_ignore_ascii_case("qdrep") {
        return Err(format(format!(
            "an Nsight Systems report; launch-econ reads its GPU trace as CSV: {NSYS_EXPORT}"
        )));
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader.fill_buf().map_err(io)?;
    if head.starts_with(&[0x1f, 0x8b]) {
        let unzipped = BufReader::with_capacity(64 * 1024, flate2::bufread::GzDecoder::new(reader));
        return read_plain(unzipped, &p);
    }
    if head.starts_with(b"SQLite format 3\0") {
        return Err(format(format!(
            "an SQLite database (an Nsight Systems export?); launch-econ reads the GPU trace as CSV: {NSYS_EXPORT}"
        )));
    }
    read_plain(reader, &p)
}

/// How to get the CSV the nsys reader takes from an Nsight Systems report.
const NSYS_EXPORT: &str =
    "`nsys stats --report cuda_gpu_trace --format csv --output NAME REPORT.nsys-rep` writes NAME_cuda_gpu_trace.csv";

/// Reads an uncompressed trace from `reader`; `p` names it in errors.
fn read_plain<R: BufRead>(mut reader: R, p: &str) -> Result<Walk, TraceError> {
    let io = |source| TraceError::Io {
        path: p.to_string(),
        source,
    };
    // Peek at the first non-blank byte: `{` or `[` is JSON, else CSV. Only whole buffers of
    // blanks are consumed.
    let first = loop {
        let buf = reader.fill_buf().map_err(io)?;
        if buf.is_empty() {
            break None;
        }
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            // Not consumed: the CSV reader counts lines from the start of the file.
            Some(i) => break Some(buf[i]),
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    };
    let walk = match first {
        None => {
            return Err(TraceError::Format {
                path: p.to_string(),
                what: "the file is empty".into(),
            })
        }
        Some(b'{' | b'[') => kineto::read(reader, p)?,
        Some(_) => nsys::read(reader, p)?,
    };
    if walk.ops.is_empty() {
        return Err(TraceError::Format {
            path: p.to_string(),
            what: "no kernel, memcpy or memset operations found".into(),
        });
    }
    Ok(walk)
}

/// Checks a grid or block shape against CUDA's limits.
pub(crate) fn check_shape(what: &str, v: (u32, u32, u32), block: bool) -> Result<(), String> {
    let (x, y, z) = v;
    if x == 0 || y == 0 || z == 0 {
        return Err(format!("{what} {v:?} has a zero dimension"));
    }
    if block {
        if x as u64 * y as u64 * z as u64 > 1024 || z > 64 {
            return Err(format!("{what} {v:?} exceeds 1024 threads per block"));
        }
    } else if x > i32::MAX as u32 || y > 65535 || z > 65535 {
        return Err(format!(
            "{what} {v:?} exceeds CUDA's grid limits (2^31-1, 65535, 65535)"
        ));
    }
    Ok(())
}

/// Checks a duration in ns.
pub(crate) fn check_duration(ns: f64) -> Result<(), String> {
    if !ns.is_finite() {
        Err(format!("duration {ns} is not a finite number"))
    } else if ns < 0.0 {
        Err(format!("duration {ns} ns is negative"))
    } else if ns > 3.6e12 {
        Err(format!("duration {ns} ns is longer than an hour"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
