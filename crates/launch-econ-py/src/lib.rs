//! The native half of the `launch_econ` Python package: the launch-econ library's pricing of a
//! recorded step, offline or replayed on the GPU, returned as the same JSON document the CLI
//! exports. The Python half (`python/launch_econ`) records the step with `torch.profiler`, wraps
//! the document in a result object, and validates against a real `torch.cuda.CUDAGraph`.

// pyo3 0.22's #[pyfunction] expansion converts each PyResult's error into itself.
#![allow(clippy::useless_conversion)]

use std::path::PathBuf;

use launch_econ::calibration::{resolve_ramp_ns, RampFrom, DEFAULT_SPIN_RAMP_NS};
use launch_econ::caveats::{no_profile_for_the_mean, ramp_of_another_gpu};
use launch_econ::commands::replay::DEFAULTS;
use launch_econ::commands::start_engine;
use launch_econ::document::{CommandResult, Device, Document};
use launch_econ::export::check_writable;
use launch_econ::node_gap::{profile_for, NodeGapChoice};
use launch_econ::operand_pool::GemmOperands;
use launch_econ::options::TimingArgs;
use launch_econ::pricing::{
    load_profile, price_offline, price_replayed, read_walk, with_offline_model, BadInput,
    GraphStepChoice,
};
use launch_econ::replay::{unreproduced, GemmReplay, ReplayConfig};
use launch_econ::runner::Context;
use launch_econ::stand_in::{ConcurrentStandIn, SubFloor, DEFAULT_STREAM_FROM_NS};
use launch_econ::timeline::{write, write_replayed};
use launch_econ::trace::{Filter, StepChoice, WaitRule};
use launch_econ::wide_grids::WideGrids;
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    _native,
    LaunchEconError,
    PyRuntimeError,
    "A failure while pricing: no GPU, a driver error, a failed measurement."
);

/// Bad input becomes `ValueError`, everything else `LaunchEconError`; the message is the CLI's.
fn to_py(e: anyhow::Error) -> PyErr {
    let text = format!("{e:#}");
    if e.downcast_ref::<BadInput>().is_some() {
        PyValueError::new_err(text)
    } else {
        LaunchEconError::new_err(text)
    }
}

/// The value of `T` the CLI's option spells `value` (`"stand-in"`, `"recycled"`, ...), or a
/// ValueError naming `arg` and what it takes.
fn choice<T: clap::ValueEnum>(arg: &str, value: &str) -> PyResult<T> {
    T::from_str(value, false).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .map(|p| format!("{:?}", p.get_name()))
            .collect();
        let (last, rest) = names.split_last().expect("an option has values");
        let list = if rest.is_empty() {
            last.clone()
        } else {
            format!("{} or {last}", rest.join(", "))
        };
        PyValueError::new_err(format!("{arg} must be {list}, not {value:?}"))
    })
}

fn check_eager(ms: Option<f64>) -> PyResult<()> {
    match ms {
        Some(v) if !v.is_finite() || v <= 0.0 => Err(PyValueError::new_err(format!(
            "eager_step_ms must be a finite number above 0 ms, not {v}"
        ))),
        _ => Ok(()),
    }
}

fn json(doc: &Document) -> PyResult<String> {
    serde_json::to_string(doc).map_err(|e| LaunchEconError::new_err(e.to_string()))
}

/// Prices the step recorded in `path` (a Kineto JSON or nsys CSV trace) and returns the
/// result document as JSON. With `gpu`, the walk is replayed on `device` (eager and as one
/// graph) under the trial runner; without, the offline model over `profile` (the shipped H200
/// profile by default) prices it. `eager_step_ms` is the step timed without a profiler.
/// `export_trace`: a path to write the recording and the replayed walks (with `gpu`) or the
/// offline model's graph step node by node, as a Chrome trace. `graph_step`: `auto` or `mean`
/// (a replay's graph step is the mean of it and the offline model's where the shipped profile
/// or `profile` describes the GPU) or `replay`. `trace_device` and `stream`
/// keep only the operations recorded on that device or stream (the CLI's `--trace-device`,
/// `--stream`). Ctrl-C during a replay raises `KeyboardInterrupt` whose second argument is the partial
/// document.
#[pyfunction]
#[pyo3(signature = (path, eager_step_ms=None, gpu=false, device=0, profile=None, max_time=None, trials=None, pdl=false, waits="join", gemms="auto", profiler_step="last", gemm_operands="fresh", export_trace=None, trace_device=None, stream=None, graph_step="auto"))]
#[allow(clippy::too_many_arguments)]
fn price_trace(
    py: Python<'_>,
    path: PathBuf,
    eager_step_ms: Option<f64>,
    gpu: bool,
    device: usize,
    profile: Option<PathBuf>,
    max_time: Option<f64>,
    trials: Option<u32>,
    pdl: bool,
    waits: &str,
    gemms: &str,
    profiler_step: &str,
    gemm_operands: &str,
    export_trace: Option<PathBuf>,
    trace_device: Option<u32>,
    stream: Option<u64>,
    graph_step: &str,
) -> PyResult<String> {
    check_eager(eager_step_ms)?;
    // Before the work: a trace with nowhere to go must not cost a replay's result.
    if let Some(path) = &export_trace {
        check_writable(path).map_err(|e| PyValueError::new_err(format!("export_trace: {e}")))?;
    }
    let step: StepChoice = profiler_step
        .parse()
        .map_err(|e: String| PyValueError::new_err(format!("profiler_step: {e}")))?;
    let gemms: GemmReplay = choice("gemms", gemms)?;
    let gemm_operands: GemmOperands = choice("gemm_operands", gemm_operands)?;
    let wait_rule: WaitRule = choice("waits", waits)?;
    let graph_step: GraphStepChoice = choice("graph_step", graph_step)?;
    let argv = vec![
        "launch_econ.price_trace".to_string(),
        path.display().to_string(),
    ];
    let filter = Filter {
        device: trace_device,
        stream,
        step,
        ..Filter::default()
    };
    let (mut walk, info) = read_walk(&path, &filter, 10).map_err(|e| PyValueError::new_err(e.0))?;
    walk.wait_rule = wait_rule;
    if !gpu {
        let profile = load_profile(profile.as_deref()).map_err(to_py)?;
        let dev = profile.0.device.clone();
        let grids = WideGrids::shipped_for(dev.as_ref().map_or("", |d| d.name.as_str()));
        let timeline = export_trace.is_some();
        let mut priced = price_offline(&mut walk, info, profile, eager_step_ms, grids, timeline);
        if let Some((path, trace)) = export_trace.as_ref().zip(priced.timeline.take()) {
            write_trace(path, &trace)?;
        }
        let mut doc = Document::new(&argv, dev, CommandResult::ReplaySummary(priced));
        doc.warnings = unreproduced(&walk, false);
        return json(&doc);
    }
    let timing = TimingArgs {
        trials,
        max_time,
        ..TimingArgs::default()
    };
    let rule = timing.rule(DEFAULTS).map_err(PyValueError::new_err)?;
    // The walk as read, for the offline model beside the replay.
    let recorded = walk.clone();
    walk.uncontend();
    let cfg = ReplayConfig {
        rule,
        reps: timing.reps(DEFAULTS),
        warmup: timing.warmup(DEFAULTS),
        host_overhead_us: 0.0,
        spin_ramp_ns: DEFAULT_SPIN_RAMP_NS,
        spin_ramp_from: None,
        stream_from_ns: Some(DEFAULT_STREAM_FROM_NS),
        pdl,
        timeline: export_trace.is_some(),
        gemms,
        gemm_operands,
        sub_floor: SubFloor::default(),
        concurrent: ConcurrentStandIn::default(),
        concurrent_spins: Default::default(),
        chase_floor: Default::default(),
        element_wise: Default::default(),
        l2_resident: Default::default(),
        past_l2: Default::default(),
        spin_fit: Default::default(),
        prior_streams: 0,
        grid_nodes: None,
        node_gap: None,
        profile: None,
    };
    let user_profile = match profile.as_deref() {
        Some(p) => Some(load_profile(Some(p)).map_err(to_py)?),
        None => None,
    };
    // The replay runs without the GIL; before each trial it takes the GIL briefly to run
    // Python's signal handlers, and stops (keeping what was measured) when one raises.
    let signal: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
    let outcome = py.allow_threads(|| -> anyhow::Result<Document> {
        let e = start_engine(device, pdl)?;
        // The grid table shipped for this device, where there is one (see launch_econ::wide_grids),
        // and the front-end gap of the profile of this kind of GPU (see launch_econ::node_gap).
        let device_name = &e.device_info().name;
        let cfg = ReplayConfig {
            grid_nodes: WideGrids::shipped_for(device_name),
            node_gap: NodeGapChoice::Profile.resolve(device_name, user_profile.as_ref()),
            profile: profile_for(device_name, user_profile.as_ref()).map(|(p, _)| p.model_inputs),
            ..cfg.clone()
        };
        // The spin's profiled ramp the profile of this kind of GPU measured, else the H200's
        // (see launch_econ::calibration::resolve_ramp_ns).
        let (spin_ramp_ns, ramp_from) = resolve_ramp_ns(None, device_name, cfg.profile.as_ref());
        let cfg = ReplayConfig {
            spin_ramp_ns,
            spin_ramp_from: Some(ramp_from),
            ..cfg
        };
        let interrupted = || match Python::with_gil(|py| py.check_signals()) {
            Ok(()) => false,
            Err(err) => {
                if let Ok(mut s) = signal.lock() {
                    s.get_or_insert(err);
                }
                true
            }
        };
        let progress = |_| {};
        let ctx = Context {
            interrupted: &interrupted,
            progress: &progress,
        };
        let mut priced = price_replayed(&e, &walk, info, &cfg, &ctx, eager_step_ms)?;
        if ramp_from == (RampFrom::H200 { elsewhere: true }) {
            priced
                .replay
                .warnings
                .push(ramp_of_another_gpu(device_name));
        }
        match (
            graph_step,
            graph_step.model_profile(device_name, user_profile.as_ref()),
        ) {
            (_, Some(p)) => {
                let grids = WideGrids::shipped_for(device_name);
                priced = with_offline_model(priced, &recorded, p, grids, eager_step_ms);
            }
            (GraphStepChoice::Replay, None) => {}
            (choice, None) => priced
                .replay
                .warnings
                .push(no_profile_for_the_mean(device_name, choice)),
        }
        let partial = priced.replay.interrupted;
        let warnings = priced.replay.warnings.clone();
        let mut doc = Document::new(
            &argv,
            Some(Device::of(&e)),
            CommandResult::Replay(Box::new(priced)),
        );
        doc.partial = partial;
        doc.warnings = warnings;
        doc.placement = Some("unpinned (Python process)".into());
        Ok(doc)
    });
    let raised = signal.into_inner().ok().flatten();
    let doc = outcome.map_err(to_py)?;
    let text = json(&doc)?;
    let traced = match (&export_trace, &doc.result) {
        (Some(path), CommandResult::Replay(p)) => {
            write_replayed(path, &walk, p.replay.timeline.as_deref())
        }
        _ => Ok(()),
    };
    match raised {
        Some(err) if err.is_instance_of::<PyKeyboardInterrupt>(py) => {
            let not_traced = traced.err().map_or(String::new(), |e| format!(" ({e:#})"));
            Err(PyKeyboardInterrupt::new_err((
                format!("interrupted; the partial result is the second argument{not_traced}"),
                text,
            )))
        }
        Some(err) => Err(err),
        None => traced
            .map(|()| text)
            .map_err(|e| PyValueError::new_err(format!("export_trace: {e:#}"))),
    }
}

/// Writes a Chrome trace to `path` (`export_trace`), whole or not at all.
fn write_trace(path: &std::path::Path, trace: &serde_json::Value) -> PyResult<()> {
    write(path, trace).map_err(|e| PyValueError::new_err(format!("export_trace: {e:#}")))
}

/// The device profile at `path` (a `launch-econ --export-json` document), or the H200 profile
/// shipped with launch-econ, as JSON: its origin, device and model inputs.
#[pyfunction]
#[pyo3(signature = (path=None))]
fn profile(path: Option<PathBuf>) -> PyResult<String> {
    let (p, origin) = load_profile(path.as_deref()).map_err(to_py)?;
    let v = serde_json::json!({
        "profile": origin,
        "device": p.device,
        "model_inputs": p.model_inputs,
    });
    Ok(v.to_string())
}

/// The version of the launch-econ library inside.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(price_trace, m)?)?;
    m.add_function(wrap_pyfunction!(profile, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add(
        "LaunchEconError",
        m.py().get_type_bound::<LaunchEconError>(),
    )?;
    Ok(())
}
