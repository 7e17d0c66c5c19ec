//! PyTorch profiler / Kineto Chrome-trace JSON (`prof.export_chrome_trace(...)`).
//!
//! The top level is an object with `traceEvents` or a bare array of events. GPU events carry
//! `"cat": "kernel"`, `"gpu_memcpy"` or `"gpu_memset"`, `ts`/`dur` in (fractional) µs, and
//! `args.device`, `args.stream`, `args.grid`, `args.block`, `args.bytes`. The file is
//! streamed event by event: memory holds the walk, not the document, so a large trace of
//! mostly CPU events costs little.
//!
//! CPU events are summed into the walk's host side (see [`super::host`]): the first CPU
//! operator or runtime call, and the runtime/driver calls that issue GPU work
//! (`cuda_runtime`/`cuda_driver` events whose name contains `LaunchKernel`, `Memcpy` or
//! `Memset`, or `cudaGraphLaunch`), and the profiler's own `overhead` events (buffer
//! requests), whose time is not the step's. `ProfilerStep#N` annotations split the trace into
//! the steps the profiler marked (see [`super::steps`]). `cuda_sync`
//! events of kind "Stream Wait Event" (recorded with `enable_cuda_sync_events`) become the
//! walk's cross-stream waits.

use std::fmt;
use std::io::Read;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use memra_engine::Gemm;

use crate::occupancy::BlockResources;

use super::host::{host_side, HostEvent, HostKind};
use super::inputs::{repeats::OperatorReads, InputSizes};
use super::steps::{self, StepEvidence, StepMark};
use super::{check_duration, check_shape, Op, OpKind, StreamWait, TraceError, Walk, MAX_OPS};
use nesting::{count_repeats_once, OperatorSpan};
use operators::{assign_inputs, mark_matmuls, matmul_op, operator_inputs};

/// The most CPU events one trace may hold (several per GPU operation in a framework's trace).
const MAX_HOST_EVENTS: usize = 4 * MAX_OPS;

/// The fields read from each event; anything else is skipped unparsed.
#[derive(Deserialize)]
struct Event {
    #[serde(default)]
    cat: Option<Value>,
    #[serde(default)]
    name: Option<Value>,
    #[serde(default)]
    ts: Option<Value>,
    #[serde(default)]
    dur: Option<Value>,
    /// The host thread of a CPU event.
    #[serde(default)]
    tid: Option<Value>,
    #[serde(default)]
    args: Option<Args>,
}

#[derive(Deserialize, Default)]
struct Args {
    #[serde(default)]
    device: Option<Value>,
    #[serde(default)]
    stream: Option<Value>,
    #[serde(default)]
    grid: Option<Value>,
    #[serde(default)]
    block: Option<Value>,
    #[serde(default)]
    bytes: Option<Value>,
    #[serde(default)]
    correlation: Option<Value>,
    /// Links a kernel to the CPU operator that launched it.
    #[serde(default, rename = "External id")]
    external_id: Option<Value>,
    /// A CPU operator's inputs (with `record_shapes`).
    #[serde(default, rename = "Input Dims")]
    input_dims: Option<Value>,
    #[serde(default, rename = "Input type")]
    input_type: Option<Value>,
    #[serde(default, rename = "Input Strides")]
    input_strides: Option<Value>,
    /// The values of a CPU operator's scalar arguments, as strings ("" for tensors).
    #[serde(default, rename = "Concrete Inputs")]
    concrete_inputs: Option<Value>,
    /// A kernel's registers per thread and shared memory per block (static and dynamic).
    #[serde(default, rename = "registers per thread")]
    registers: Option<Value>,
    #[serde(default, rename = "shared memory")]
    shared_memory: Option<Value>,
    /// The event a "Stream Wait Event" waits on (CUPTI's id of the CUDA event).
    #[serde(default)]
    wait_on_cuda_event_id: Option<Value>,
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn as_uint(v: &Option<Value>, what: &str) -> Result<Option<u64>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match as_f64(v) {
            Some(x) if x >= 0.0 && x.fract() == 0.0 && x < 1.8e19 => Ok(Some(x as u64)),
            _ => Err(format!(
                "args.{what} `{v}` is not a non-negative whole number"
            )),
        },
    }
}

fn as_dim(v: &Option<Value>, what: &str) -> Result<(u32, u32, u32), String> {
    let arr = match v {
        Some(Value::Array(a)) if a.len() == 3 => a,
        Some(other) => {
            return Err(format!(
                "args.{what} `{other}` is not an array of 3 numbers"
            ))
        }
        None => return Err(format!("a kernel event has no args.{what}")),
    };
    let mut d = [0u32; 3];
    for (i, x) in arr.iter().enumerate() {
        d[i] = match as_f64(x) {
            Some(f) if f >= 0.0 && f.fract() == 0.0 && f <= u32::MAX as f64 => f as u32,
            _ => {
                return Err(format!(
                    "args.{what} `{v:?}` holds `{x}`, not a whole number",
                    v = arr
                ))
            }
        };
    }
    Ok((d[0], d[1], d[2]))
}

/// A CPU event's start and duration, ns; `None` without a usable start (a missing or bad
/// duration counts as 0).
fn host_times(ev: &Event) -> Option<(f64, f32)> {
    let ts = ev.ts.as_ref().and_then(as_f64).filter(|t| t.is_finite())?;
    let dur = ev
        .dur
        .as_ref()
        .and_then(as_f64)
        .filter(|d| d.is_finite() && *d >= 0.0);
    Some((ts * 1e3, (dur.unwrap_or(0.0) * 1e3) as f32))
}

/// A CPU event: a framework operator, a runtime call or a `ProfilerStep#N` annotation.
fn convert_host(cat: &str, ev: &Event) -> Converted {
    let name = ev.name.as_ref().and_then(|n| n.as_str()).unwrap_or("");
    if cat == "user_annotation" || cat == "gpu_user_annotation" {
        let (Some(ts), Some(dur)) = (
            ev.ts.as_ref().and_then(as_f64),
            ev.dur.as_ref().and_then(as_f64),
        ) else {
            return Converted::Nothing;
        };
        return StepMark::of(name, ts, dur).map_or(Converted::Nothing, |mark| Converted::Mark {
            gpu: cat == "gpu_user_annotation",
            mark,
        });
    }
    let (Some(kind), Some((ts_ns, dur_ns))) = (HostKind::of(cat, name), host_times(ev)) else {
        return Converted::Nothing;
    };
    let correlation = ev
        .args
        .as_ref()
        .and_then(|a| as_uint(&a.correlation, "correlation").ok().flatten())
        .filter(|_| !kind.is_operator());
    // Kineto writes thread ids as numbers (some exporters as strings); all one thread else.
    let thread = match &ev.tid {
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
        Some(Value::String(t)) => t.parse().unwrap_or(0),
        _ => 0,
    };
    let shapes = ev.args.as_ref().and_then(|a| a.input_dims.as_ref());
    Converted::Host {
        event: HostEvent {
            ts_ns,
            dur_ns,
            kind,
            waits: !kind.is_operator() && HostKind::waits_for_gpu(name),
            blocks: !kind.is_operator() && HostKind::blocks_on_gpu(name),
            thread,
            call: signature(name, shapes),
        },
        correlation,
        graph_launch: kind == HostKind::Issue && name.contains("GraphLaunch"),
        event_record: kind == HostKind::OtherCall && name.contains("EventRecord"),
        wait_call: kind == HostKind::OtherCall && name.contains("StreamWaitEvent"),
        matmul: kind.is_operator().then(|| matmul_op(ev)).flatten(),
        inputs: kind.is_operator().then(|| operator_inputs(ev)).flatten(),
    }
}

/// A call's signature: its name and recorded input shapes, hashed.
fn signature(name: &str, shapes: Option<&Value>) -> u64 {
    let mut h = DefaultHasher::new();
    name.hash(&mut h);
    if let Some(s) = shapes {
        s.to_string().hash(&mut h);
    }
    h.finish()
}

/// What one event adds to the walk.
enum Converted {
    /// A GPU operation, with the `External id` of the CPU operator that launched it.
    Op(Op, Option<u64>),
    /// A CPU event; a runtime call's correlation id and whether it launched a graph (whose
    /// kernels carry that id); an operator's `External id` and GEMM (a matmul with recorded
    /// shapes) and input bytes (any operator with recorded shapes).
    Host {
        event: HostEvent,
        correlation: Option<u64>,
        graph_launch: bool,
        /// A `cudaEventRecord` / `cuEventRecord` call (any flavour).
        event_record: bool,
        /// A `cudaStreamWaitEvent` / `cuStreamWaitEvent` call.
        wait_call: bool,
        matmul: Option<(u64, Gemm)>,
        inputs: Option<(u64, InputSizes, OperatorReads)>,
    },
    /// A `ProfilerStep#N` annotation, on the host or (`gpu`) the GPU.
    Mark {
        gpu: bool,
        mark: StepMark,
    },
    /// A cross-stream wait and the id of the event it waits on, where the trace names it.
    Wait(StreamWait, Option<u64>),
    /// The profiler's own work, (start, end) ns.
    Overhead(f64, f64),
    Nothing,
}

/// The profiler's `overhead` event as an interval, ns; `None` without a usable time.
fn overhead(ev: &Event) -> Option<Converted> {
    let ts = ev.ts.as_ref().and_then(as_f64).filter(|t| t.is_finite())?;
    let dur = ev
        .dur
        .as_ref()
        .and_then(as_f64)
        .filter(|d| d.is_finite() && *d >= 0.0)?;
    Some(Converted::Overhead(ts * 1e3, (ts + dur) * 1e3))
}

/// A `cuda_sync` "Stream Wait Event" with its waiting stream and correlation id, and the id of
/// the event it waits on where the trace names it; `None` for other sync events and for waits
/// without both.
fn stream_wait(ev: &Event) -> Result<Option<(StreamWait, Option<u64>)>, String> {
    let name = ev.name.as_ref().and_then(|n| n.as_str()).unwrap_or("");
    if name != "Stream Wait Event" {
        return Ok(None);
    }
    let args = match &ev.args {
        Some(a) => a,
        None => return Ok(None),
    };
    Ok(
        match (
            as_uint(&args.stream, "stream")?,
            as_uint(&args.correlation, "correlation")?,
        ) {
            (Some(stream), Some(correlation)) => Some((
                StreamWait::new(stream, correlation),
                as_uint(&args.wait_on_cuda_event_id, "wait_on_cuda_event_id")?,
            )),
            _ => None,
        },
    )
}

/// Turns one event into what it adds to the walk.
fn convert(ev: Event) -> Result<Converted, String> {
    let cat = match ev.cat.as_ref().and_then(|c| c.as_str()) {
        Some(c) => c.to_ascii_lowercase(),
        None => return Ok(Converted::Nothing),
    };
    if cat == "cuda_sync" {
        return Ok(
            stream_wait(&ev)?.map_or(Converted::Nothing, |(w, event)| Converted::Wait(w, event))
        );
    }
    if cat == "overhead" {
        return Ok(overhead(&ev).unwrap_or(Converted::Nothing));
    }
    if !matches!(cat.as_str(), "kernel" | "gpu_memcpy" | "gpu_memset") {
        return Ok(convert_host(&cat, &ev));
    }
    let name = match &ev.name {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let ts = ev
        .ts
        .as_ref()
        .and_then(as_f64)
        .ok_or_else(|| format!("{cat} event `{name}` has no numeric ts"))?;
    let dur = ev
        .dur
        .as_ref()
        .and_then(as_f64)
        .ok_or_else(|| format!("{cat} event `{name}` has no numeric dur"))?;
    if !ts.is_finite() {
        return Err(format!("{cat} event `{name}`: ts {ts} is not finite"));
    }
    check_duration(dur * 1e3).map_err(|e| format!("{cat} event `{name}`: {e}"))?;
    let args = ev.args.unwrap_or_default();
    let kind = match cat.as_str() {
        "kernel" => {
            let grid = as_dim(&args.grid, "grid")?;
            let block = as_dim(&args.block, "block")?;
            check_shape("grid", grid, false).map_err(|e| format!("kernel `{name}`: {e}"))?;
            check_shape("block", block, true).map_err(|e| format!("kernel `{name}`: {e}"))?;
            OpKind::Kernel { grid, block }
        }
        "gpu_memcpy" => OpKind::Memcpy {
            bytes: as_uint(&args.bytes, "bytes")?.unwrap_or(0),
            // Kineto names the memory kinds: "Memcpy HtoD (Pageable -> Device)".
            pageable: name.contains("Pageable"),
            direction: name
                .strip_prefix("Memcpy ")
                .and_then(|r| r.split_whitespace().next())
                .unwrap_or("")
                .to_string(),
        },
        _ => OpKind::Memset {
            bytes: as_uint(&args.bytes, "bytes")?.unwrap_or(0),
        },
    };
    let device = as_uint(&args.device, "device")?
        .map(|d| u32::try_from(d).map_err(|_| format!("args.device {d} is out of range")))
        .transpose()?;
    let external = as_uint(&args.external_id, "External id").ok().flatten();
    let resources = block_resources(&args);
    Ok(Converted::Op(
        Op {
            device,
            stream: as_uint(&args.stream, "stream")?,
            correlation: as_uint(&args.correlation, "correlation")?,
            resources: (cat == "kernel").then_some(resources).flatten(),
            ..Op::recorded(name, ts * 1e3, dur * 1e3, kind)
        },
        external,
    ))
}

/// A kernel's recorded registers and shared memory; `None` unless both are whole numbers
/// in range (they only refine how much of the GPU the kernel holds).
fn block_resources(args: &Args) -> Option<BlockResources> {
    let get = |v: &Option<Value>| {
        as_uint(v, "")
            .ok()
            .flatten()
            .and_then(|n| u32::try_from(n).ok())
    };
    Some(BlockResources {
        registers_per_thread: get(&args.registers)?,
        shared_bytes: get(&args.shared_memory)?,
    })
}

struct Sink {
    walk: Walk,
    /// Each GPU op's index in `walk.ops` and its operator's `External id`.
    launched_by: Vec<(usize, u64)>,
    /// Matmul operators by `External id`.
    matmuls: HashMap<u64, Gemm>,
    /// Operators' input sizes by `External id`.
    inputs: HashMap<u64, InputSizes>,
    /// Operators that read recorded tensors, for which runs in which.
    operators: Vec<OperatorSpan>,
    /// The profiler's own work, (start, end) ns, clipped to the step at the end.
    overhead: Vec<(f64, f64)>,
    /// CPU events, summed into host sides at the end.
    host: Vec<HostEvent>,
    /// Step annotations and launch times, to split the trace into its marked steps.
    steps: StepEvidence,
    /// Correlation ids of graph launch calls.
    graph_launches: HashSet<u64>,
    /// Correlation ids of event record calls, and the event each wait waits on by the wait's
    /// correlation id: which waits wait on one recording.
    event_records: Vec<u64>,
    waited_events: HashMap<u64, u64>,
    /// Correlation ids of stream wait calls, recorded on the GPU side or not.
    wait_calls: Vec<u64>,
    index: usize,
    found_events: bool,
}

struct EventsVisitor<'a>(&'a mut Sink);

impl<'de> Visitor<'de> for EventsVisitor<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.found_events = true;
        while let Some(ev) = seq.next_element::<Event>()? {
            let i = self.0.index;
            self.0.index += 1;
            let converted =
                convert(ev).map_err(|e| de::Error::custom(format!("traceEvents[{i}]: {e}")))?;
            let walk = &mut self.0.walk;
            if !matches!(converted, Converted::Nothing)
                && walk.ops.len() + walk.waits.len() + self.0.overhead.len() >= MAX_OPS
            {
                return Err(de::Error::custom(format!(
                    "more than {MAX_OPS} GPU operations; profile a shorter region"
                )));
            }
            match converted {
                Converted::Op(op, external) => {
                    if let Some(id) = external {
                        self.0.launched_by.push((walk.ops.len(), id));
                    }
                    walk.ops.push(op);
                }
                Converted::Host {
                    event,
                    correlation,
                    graph_launch,
                    event_record,
                    wait_call,
                    matmul,
                    inputs,
                } => {
                    if self.0.host.len() >= MAX_HOST_EVENTS {
                        return Err(de::Error::custom(format!(
                            "more than {MAX_HOST_EVENTS} CPU events; profile a shorter region"
                        )));
                    }
                    self.0.host.push(event);
                    if let Some(c) = correlation {
                        self.0.steps.issued_at.insert(c, event.ts_ns);
                        if graph_launch {
                            self.0.graph_launches.insert(c);
                        }
                        if event_record {
                            self.0.event_records.push(c);
                        }
                        if wait_call {
                            self.0.wait_calls.push(c);
                        }
                    }
                    if let Some((id, m)) = matmul {
                        self.0.matmuls.insert(id, m);
                    }
                    if let Some((id, bytes, reads)) = inputs {
                        self.0.inputs.insert(id, bytes);
                        if !reads.tensors.is_empty() {
                            self.0.operators.push(OperatorSpan {
                                id,
                                thread: event.thread,
                                start_ns: event.ts_ns,
                                end_ns: event.end_ns(),
                                reads,
                            });
                        }
                    }
                }
                Converted::Mark { gpu, mark } => {
                    if gpu {
                        self.0.steps.gpu.push(mark);
                    } else {
                        self.0.steps.host.push(mark);
                    }
                }
                Converted::Wait(w, event) => {
                    if let Some(e) = event {
                        self.0.waited_events.insert(w.correlation, e);
                    }
                    walk.waits.push(w);
                }
                Converted::Overhead(a, b) => self.0.overhead.push((a, b)),
                Converted::Nothing => {}
            }
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for EventsVisitor<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

struct TopVisitor<'a>(&'a mut Sink);

impl<'de> Visitor<'de> for TopVisitor<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Chrome trace: an object with traceEvents, or an array of events")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "traceEvents" {
                map.next_value_seed(EventsVisitor(self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        EventsVisitor(self.0).visit_seq(seq)
    }
}

/// Reads a Chrome-trace JSON. `path` names the file in errors.
pub fn read<R: Read>(input: R, path: &str) -> Result<Walk, TraceError> {
    let mut sink = Sink {
        walk: Walk::default(),
        launched_by: Vec::new(),
        matmuls: HashMap::new(),
        inputs: HashMap::new(),
        operators: Vec::new(),
        overhead: Vec::new(),
        host: Vec::new(),
        steps: StepEvidence::default(),
        graph_launches: HashSet::new(),
        event_records: Vec::new(),
        waited_events: HashMap::new(),
        wait_calls: Vec::new(),
        index: 0,
        found_events: false,
    };
    let mut de = serde_json::Deserializer::from_reader(input);
    let err = |what: String| TraceError::Format {
        path: path.to_string(),
        what,
    };
    de.deserialize_any(TopVisitor(&mut sink))
        .and_then(|()| de.end())
        .map_err(|e| err(format!("{e}")))?;
    if !sink.found_events {
        return Err(err("no traceEvents array: not a Chrome/Kineto trace".into()));
    }
    mark_matmuls(&mut sink);
    let operators = std::mem::take(&mut sink.operators);
    count_repeats_once(&mut sink.inputs, operators, &sink.host);
    assign_inputs(&mut sink);
    for op in &mut sink.walk.ops {
        op.from_graph = op
            .correlation
            .is_some_and(|c| sink.graph_launches.contains(&c));
    }
    sink.walk.sort();
    sink.walk.waits.sort_by_key(|w| w.correlation);
    sink.event_records.sort_unstable();
    let recorded: HashSet<u64> = sink.walk.waits.iter().map(|w| w.correlation).collect();
    sink.walk.unrecorded_waits = sink
        .wait_calls
        .iter()
        .filter(|c| !recorded.contains(c))
        .count();
    crate::trace::recordings::mark(
        &mut sink.walk.waits,
        &sink.waited_events,
        &sink.event_records,
    );
    sink.walk.record_calls = std::mem::take(&mut sink.event_records);
    let end = sink.walk.end_ns();
    let all = (f64::NEG_INFINITY, f64::INFINITY);
    sink.walk.host = host_side(&sink.host, &sink.overhead, all, end);
    steps::assign(&mut sink.walk, &sink.steps, &sink.host, &sink.overhead);
    Ok(sink.walk)
}

mod nesting;
mod operators;
#[cfg(test)]
mod tests;
