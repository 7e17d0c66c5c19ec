//! The self-describing result document: what ran, where, and what it measured. It is what
//! `--export-json` writes and what `predict --profile` reads back.
//!
//! The header (tool, argv, device, host, warnings) is common; the result is a tagged enum with
//! one variant per command (`"kind": "run"`, …), so every exporter handles every command by an
//! exhaustive `match` (see [`CommandResult::table`]).

use std::path::Path;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use crate::measure::{LaunchFit, Point};
use crate::model::{ModelInputs, Prediction, Round};

/// Bumped whenever a field changes meaning or a required field is added. Version 2 moved each
/// command's results under `result` (tagged by `kind`) and typed the figure summaries.
pub const SCHEMA_VERSION: u32 = 2;

/// The H200 measurement shipped with the tool: `predict`'s default when no `--profile` is given.
pub const DEFAULT_PROFILE: &str = include_str!("../../../profiles/h200.json");
/// Where the shipped profile lives in the repository.
pub const DEFAULT_PROFILE_NAME: &str = "profiles/h200.json";

/// One result document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    pub schema_version: u32,
    pub tool: Tool,
    pub argv: Vec<String>,
    /// Seconds since the Unix epoch when the document was written.
    pub created_unix: u64,
    /// True when the run was interrupted and holds only what was measured until then.
    pub partial: bool,
    pub device: Option<Device>,
    pub host: Host,
    /// Where the measuring thread ran (see `affinity`); absent for commands that measure
    /// nothing.
    #[serde(default)]
    pub placement: Option<String>,
    pub warnings: Vec<String>,
    /// `replay --captured`: the recorded walk against a profiled replay of its graph.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub captured: Option<crate::captured::CapturedWalk>,
    pub result: CommandResult,
}

/// What one command produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CommandResult {
    /// The default measurement of one round.
    Run(Box<RunResult>),
    /// Launch counts × kernel sizes.
    Sweep(SweepResult),
    /// The round model applied to a saved measurement.
    Predict(PredictResult),
    /// A trace read, summarised and priced without a GPU.
    ReplaySummary(SummaryReport),
    /// A trace replayed on the GPU.
    Replay(Box<ReplayReport>),
    /// A pipeline round across devices.
    Pipeline(crate::pipeline::PipelineResult),
    /// K steps in one WHILE-graph launch against K graph launches.
    Loop(crate::device_loop::LoopResult),
    /// A changing step priced five ways.
    Update(crate::update_walk::UpdateResult),
    /// A bucket set against one switched executable.
    Buckets(crate::buckets::BucketsResult),
}

/// The default run: one point, the launch-cost fit, and the prediction for the user's round.
/// A partial (interrupted) run has the point and nothing derived from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub point: Point,
    pub launch_fit: Option<LaunchFit>,
    pub model_inputs: Option<ModelInputs>,
    pub round: Option<Round>,
    pub prediction: Option<Prediction>,
}

/// A sweep: one point per (kernel size, launch count).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    pub points: Vec<Point>,
    pub launch_fit: Option<LaunchFit>,
}

/// A prediction from a saved profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictResult {
    /// Where the model inputs came from.
    pub profile: String,
    pub model_inputs: ModelInputs,
    pub round: Round,
    pub prediction: Prediction,
}

/// A replayed trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayReport {
    pub trace: TraceInfo,
    pub replay: crate::replay::ReplayResult,
    pub prediction: crate::price::StepPrice,
}

/// A trace priced offline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryReport {
    pub trace: TraceInfo,
    /// The profile the model used.
    pub profile: String,
    /// The device whose grid table priced wide kernels (see [`crate::wide_grids`]); `None`:
    /// none did.
    #[serde(default)]
    pub grid_nodes: Option<String>,
    /// How far the walk's nodes were priced to step to the upper level, and why; `None` in
    /// documents written before it was reported.
    #[serde(default)]
    pub level_step: Option<crate::footprint::LevelStep>,
    pub prediction: crate::price::StepPrice,
    /// Where the model put each op, as a Chrome trace, when asked for (`--export-trace`); not
    /// part of the JSON document (it has its own file).
    #[serde(skip)]
    pub timeline: Option<serde_json::Value>,
}

/// The one table form every exporter reads: a header and rows of cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// The trace a replay read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceInfo {
    pub path: String,
    pub filter: String,
    /// Which of the steps the profiler marked was priced, where the trace marks any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<String>,
    pub summary: crate::trace::Summary,
}

/// The tool that wrote the document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

/// The device the measurement ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Device {
    pub ordinal: usize,
    pub name: String,
    pub compute_capability: String,
    pub sm_count: i32,
    pub total_memory_bytes: u64,
    pub sm_clock_mhz: f64,
    pub memory_clock_mhz: f64,
    /// Device-memory bus width in bits (0: not reported).
    #[serde(default)]
    pub memory_bus_bits: i32,
    pub l2_bytes: i32,
    pub pci_bus_id: String,
    pub driver_cuda_version: String,
    pub nvrtc_version: String,
    /// NVRTC target and how the kernels were obtained at start.
    pub kernel_arch: String,
    pub kernel_init_ms: f64,
    pub kernel_cache_hits: usize,
}

/// The host the measurement ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub cpu_model: String,
    pub logical_cpus: usize,
    pub os: String,
}

impl Host {
    /// This machine.
    pub fn current() -> Host {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        Host {
            cpu_model,
            logical_cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        }
    }
}

impl Device {
    /// Describes the engine's device.
    pub fn of(e: &memra_engine::Engine) -> Device {
        let i = e.device_info();
        let k = e.kernel_init_report();
        Device {
            ordinal: i.ordinal,
            name: i.name.clone(),
            compute_capability: format!("{}.{}", i.compute_capability.0, i.compute_capability.1),
            sm_count: i.sm_count,
            total_memory_bytes: i.total_memory as u64,
            sm_clock_mhz: i.sm_clock_khz as f64 / 1e3,
            memory_clock_mhz: i.memory_clock_khz as f64 / 1e3,
            memory_bus_bits: i.memory_bus_bits,
            l2_bytes: i.l2_bytes,
            pci_bus_id: i.pci_bus_id.clone(),
            driver_cuda_version: i.driver_version_string(),
            nvrtc_version: format!("{}.{}", i.nvrtc_version.0, i.nvrtc_version.1),
            kernel_arch: k.arch.clone(),
            kernel_init_ms: k.total.as_secs_f64() * 1e3,
            kernel_cache_hits: k.cache_hits,
        }
    }
}

impl Document {
    /// A document for this process. `argv` is passed in (read lossily as UTF-8 at start-up,
    /// so a non-UTF-8 argument never panics).
    pub fn new(argv: &[String], device: Option<Device>, result: CommandResult) -> Document {
        Document {
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: env!("CARGO_PKG_NAME").into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            argv: argv.to_vec(),
            created_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            partial: false,
            device,
            host: Host::current(),
            placement: None,
            warnings: Vec::new(),
            captured: None,
            result,
        }
    }

    /// Parses and checks a document; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Document> {
        let v: serde_json::Value =
            serde_json::from_str(text).with_context(|| format!("{origin} is not valid JSON"))?;
        match schema_version(&v, origin)? {
            SCHEMA_VERSION => {}
            n => bail!(
                "{origin} has schema_version {n}; this launch-econ reads version {SCHEMA_VERSION} documents (and the model inputs of version 1 profiles)"
            ),
        }
        serde_json::from_value(v)
            .with_context(|| format!("{origin} is not a complete launch-econ document"))
    }
}

fn schema_version(v: &serde_json::Value, origin: &str) -> anyhow::Result<u32> {
    match v.get("schema_version") {
        Some(s) => s
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| anyhow::anyhow!("{origin}: schema_version is not a whole number")),
        None => bail!("{origin} has no schema_version: it is not a launch-econ profile"),
    }
}

/// What `predict` needs from a saved measurement: the model inputs and the device.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelProfile {
    pub model_inputs: ModelInputs,
    pub device: Option<Device>,
}

/// Whether a GPU named `device` is the kind named `measured_on` (names compared without case,
/// the one containing the other's): what decides whether a shipped measurement applies.
pub fn same_gpu(device: &str, measured_on: &str) -> bool {
    device.to_lowercase().contains(&measured_on.to_lowercase())
}

impl ModelProfile {
    /// The profile shipped with launch-econ where `device` is the GPU it was measured on, else
    /// `None`.
    pub fn shipped_for(device: &str) -> Option<ModelProfile> {
        let p = ModelProfile::parse(DEFAULT_PROFILE, DEFAULT_PROFILE_NAME).ok()?;
        let name = p.device.as_ref()?.name.clone();
        same_gpu(device, &name).then_some(p)
    }

    /// Reads the model inputs of a run document: version 2 (`result.kind = "run"`) or
    /// version 1 (`model_inputs` at the top level).
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<ModelProfile> {
        let v: serde_json::Value =
            serde_json::from_str(text).with_context(|| format!("{origin} is not valid JSON"))?;
        // Version 1 names its command at the top (where it names one), version 2 in `result`.
        let not_a_run = |kind: Option<&str>| -> anyhow::Result<()> {
            match kind {
                Some("run") => Ok(()),
                other => bail!(
                    "{origin} is a `{}` document; a device profile is one the default run writes (`launch-econ --export-json FILE`)",
                    other.unwrap_or("unknown")
                ),
            }
        };
        let (inputs, device) = match schema_version(&v, origin)? {
            1 => {
                if let Some(kind) = v.get("kind").and_then(|k| k.as_str()) {
                    not_a_run(Some(kind))?;
                }
                (v.get("model_inputs"), v.get("device"))
            }
            SCHEMA_VERSION => {
                not_a_run(v.pointer("/result/kind").and_then(|k| k.as_str()))?;
                (v.pointer("/result/model_inputs"), v.get("device"))
            }
            n => bail!(
                "{origin} has schema_version {n}; this launch-econ reads versions 1 and {SCHEMA_VERSION}"
            ),
        };
        let inputs: Option<ModelInputs> = match inputs {
            None | Some(serde_json::Value::Null) => None,
            Some(m) => Some(
                serde_json::from_value(m.clone())
                    .with_context(|| format!("{origin}: model_inputs are incomplete"))?,
            ),
        };
        let Some(m) = inputs else {
            bail!("{origin} has no model_inputs (a run interrupted before it measured them); use a profile from `launch-econ --export-json`")
        };
        let finite = [
            m.graph_node_gpu_us,
            m.graph_launch_fixed_us,
            m.graph_launch_per_node_us,
            m.build_per_node_us,
            m.eager_issue_us,
        ]
        .iter()
        .all(|v| v.is_finite());
        if !finite {
            bail!("{origin}: model_inputs hold a non-finite number");
        }
        // Medians of measured times: a negative one was not measured (a fitted intercept,
        // `graph_launch_fixed_us`, may come out a little below zero).
        for (name, v) in [
            ("graph_node_gpu_us", m.graph_node_gpu_us),
            ("build_per_node_us", m.build_per_node_us),
            ("eager_issue_us", m.eager_issue_us),
        ] {
            if v < 0.0 {
                bail!("{origin}: model_inputs.{name} is {v}, below zero: not a measured time");
            }
        }
        let device = match device {
            None | Some(serde_json::Value::Null) => None,
            Some(d) => Some(
                serde_json::from_value(d.clone())
                    .with_context(|| format!("{origin}: the device description is incomplete"))?,
            ),
        };
        Ok(ModelProfile {
            model_inputs: m,
            device,
        })
    }

    /// Reads a profile file.
    pub fn load(path: &Path) -> anyhow::Result<ModelProfile> {
        let bytes = std::fs::read(path)
            .with_context(|| format!("cannot read profile {}", path.display()))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("{} is not valid JSON: not UTF-8 text", path.display()))?;
        ModelProfile::parse(&text, &path.display().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_profile_gives_model_inputs() {
        let p = ModelProfile::parse(DEFAULT_PROFILE, DEFAULT_PROFILE_NAME).unwrap();
        assert!(p.model_inputs.graph_node_gpu_us > 0.0);
        assert!(p.device.is_some());
    }

    #[test]
    fn wrong_schema_and_missing_fields_are_clear_errors() {
        let e = ModelProfile::parse("{\"schema_version\": 99}", "p.json").unwrap_err();
        assert!(e.to_string().contains("schema_version 99"), "{e}");
        let e = ModelProfile::parse("{}", "p.json").unwrap_err();
        assert!(e.to_string().contains("no schema_version"), "{e}");
        let e = ModelProfile::parse("{\"schema_version\": 1}", "p.json").unwrap_err();
        assert!(e.to_string().contains("no model_inputs"), "{e:#}");
        let e = ModelProfile::parse(
            "{\"schema_version\": 2, \"result\": {\"kind\": \"sweep\"}}",
            "p.json",
        )
        .unwrap_err();
        assert!(e.to_string().contains("is a `sweep` document"), "{e:#}");
        // A version-1 document of another command says which it is.
        let e = ModelProfile::parse(
            "{\"schema_version\": 1, \"kind\": \"pipeline\", \"model_inputs\": null}",
            "p.json",
        )
        .unwrap_err();
        assert!(e.to_string().contains("is a `pipeline` document"), "{e:#}");
        let e = ModelProfile::parse("not json", "p.json").unwrap_err();
        assert!(e.to_string().contains("not valid JSON"), "{e}");
        let e = Document::parse("{\"schema_version\": 1}", "p.json").unwrap_err();
        assert!(e.to_string().contains("schema_version 1"), "{e}");
    }

    #[test]
    fn a_negative_measured_time_in_the_model_inputs_is_a_clear_error() {
        let mut v: serde_json::Value = serde_json::from_str(DEFAULT_PROFILE).unwrap();
        v["result"]["model_inputs"]["graph_node_gpu_us"] = serde_json::json!(-1.0);
        let e = ModelProfile::parse(&v.to_string(), "p.json").unwrap_err();
        assert!(
            e.to_string()
                .contains("model_inputs.graph_node_gpu_us is -1, below zero"),
            "{e}"
        );
        // A fitted intercept a little below zero is read.
        let mut v: serde_json::Value = serde_json::from_str(DEFAULT_PROFILE).unwrap();
        v["result"]["model_inputs"]["graph_launch_fixed_us"] = serde_json::json!(-0.2);
        assert!(ModelProfile::parse(&v.to_string(), "p.json").is_ok());
    }

    #[test]
    fn round_trips_through_json() {
        let p = Document::new(
            &["launch-econ".into()],
            None,
            CommandResult::ReplaySummary(SummaryReport {
                trace: TraceInfo {
                    path: "t.json".into(),
                    filter: "none".into(),
                    steps: Some("ProfilerStep#4, one of 3 marked steps".into()),
                    summary: crate::trace::Summary::default(),
                },
                profile: "p".into(),
                grid_nodes: Some("NVIDIA H200".into()),
                level_step: Some(crate::footprint::LevelStep {
                    footprint: crate::footprint::Footprint {
                        bytes: 1e9,
                        source: crate::footprint::FootprintSource::Recorded,
                    },
                    l2_bytes: Some(62914560.0),
                    step_us: 0.33,
                    halfway: false,
                }),
                prediction: crate::price::StepPrice::new(
                    (1.0, crate::price::GraphSource::Model),
                    (2.0, crate::price::EagerSource::User),
                    3.0,
                ),
                timeline: None,
            }),
        );
        let text = serde_json::to_string(&p).unwrap();
        assert!(text.contains("\"kind\":\"replay-summary\""), "{text}");
        assert_eq!(Document::parse(&text, "t").unwrap(), p);
    }
}
