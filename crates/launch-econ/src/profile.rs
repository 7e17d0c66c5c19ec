//! The self-describing result document: what ran, where, and every sample. It is what
//! `--export-json` writes and what `predict --profile` reads back.

use std::path::Path;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use crate::measure::{LaunchFit, Point};
use crate::model::{ModelInputs, Prediction, Round};

/// Bumped whenever a field changes meaning or a required field is added.
pub const SCHEMA_VERSION: u32 = 1;

/// The H200 measurement shipped with the tool: `predict`'s default when no `--profile` is given.
pub const DEFAULT_PROFILE: &str = include_str!("../../../profiles/h200.json");
/// Where the shipped profile lives in the repository.
pub const DEFAULT_PROFILE_NAME: &str = "profiles/h200.json";

/// One result document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub schema_version: u32,
    pub tool: Tool,
    pub argv: Vec<String>,
    /// Seconds since the Unix epoch when the document was written.
    pub created_unix: u64,
    /// `run`, `sweep` or `predict`.
    pub kind: String,
    /// True when the run was interrupted and holds only what was measured until then.
    #[serde(default)]
    pub partial: bool,
    pub device: Option<Device>,
    pub host: Host,
    pub points: Vec<Point>,
    pub launch_fit: Option<LaunchFit>,
    pub model_inputs: Option<ModelInputs>,
    pub round: Option<Round>,
    pub prediction: Option<Prediction>,
    #[serde(default)]
    pub warnings: Vec<String>,
    /// For `replay`: the trace read and what replaying it measured.
    #[serde(default)]
    pub trace: Option<TraceInfo>,
    #[serde(default)]
    pub replay: Option<crate::replay::ReplayResult>,
    /// For `pipeline`: what the multi-device round measured.
    #[serde(default)]
    pub pipeline: Option<crate::pipeline::PipelineResult>,
}

/// The trace a replay read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceInfo {
    pub path: String,
    pub filter: String,
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

impl Profile {
    /// An empty document of `kind` for this process.
    pub fn new(kind: &str, device: Option<Device>) -> Profile {
        Profile {
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: env!("CARGO_PKG_NAME").into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            argv: std::env::args().collect(),
            created_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            kind: kind.into(),
            partial: false,
            device,
            host: Host::current(),
            points: Vec::new(),
            launch_fit: None,
            model_inputs: None,
            round: None,
            prediction: None,
            warnings: Vec::new(),
            trace: None,
            replay: None,
            pipeline: None,
        }
    }

    /// Parses and checks a document; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Profile> {
        let v: serde_json::Value =
            serde_json::from_str(text).with_context(|| format!("{origin} is not valid JSON"))?;
        match v.get("schema_version").and_then(|s| s.as_u64()) {
            Some(n) if n == SCHEMA_VERSION as u64 => {}
            Some(n) => bail!(
                "{origin} has schema_version {n}; this launch-econ reads version {SCHEMA_VERSION} (re-measure with this version)"
            ),
            None => bail!("{origin} has no schema_version: it is not a launch-econ profile"),
        }
        let p: Profile = serde_json::from_value(v)
            .with_context(|| format!("{origin} is not a complete launch-econ profile"))?;
        Ok(p)
    }

    /// Reads and checks a document from a file.
    pub fn load(path: &Path) -> anyhow::Result<Profile> {
        let bytes = std::fs::read(path)
            .with_context(|| format!("cannot read profile {}", path.display()))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("{} is not valid JSON: not UTF-8 text", path.display()))?;
        Profile::parse(&text, &path.display().to_string())
    }

    /// The model inputs, or an error naming what is missing.
    pub fn require_model_inputs(&self, origin: &str) -> anyhow::Result<ModelInputs> {
        match self.model_inputs {
            Some(m) if [
                m.graph_node_gpu_us,
                m.graph_launch_fixed_us,
                m.graph_launch_per_node_us,
                m.build_per_node_us,
                m.eager_issue_us,
            ]
            .iter()
            .all(|v| v.is_finite()) => Ok(m),
            Some(_) => bail!("{origin}: model_inputs hold a non-finite number"),
            None => bail!("{origin} has no model_inputs (it was written by a sweep or an interrupted run); use a profile from `launch-econ --export-json`"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_profile_parses_and_has_model_inputs() {
        let p = Profile::parse(DEFAULT_PROFILE, DEFAULT_PROFILE_NAME).unwrap();
        assert_eq!(p.schema_version, SCHEMA_VERSION);
        assert!(p.require_model_inputs("x").is_ok());
        assert!(p.device.is_some());
        assert!(!p.points.is_empty());
    }

    #[test]
    fn wrong_schema_and_missing_fields_are_clear_errors() {
        let e = Profile::parse("{\"schema_version\": 99}", "p.json").unwrap_err();
        assert!(e.to_string().contains("schema_version 99"), "{e}");
        let e = Profile::parse("{}", "p.json").unwrap_err();
        assert!(e.to_string().contains("no schema_version"), "{e}");
        let e = Profile::parse("{\"schema_version\": 1}", "p.json").unwrap_err();
        assert!(e.to_string().contains("not a complete"), "{e:#}");
        let e = Profile::parse("not json", "p.json").unwrap_err();
        assert!(e.to_string().contains("not valid JSON"), "{e}");
    }

    #[test]
    fn round_trips_through_json() {
        let mut p = Profile::new("predict", None);
        p.warnings.push("w".into());
        let text = serde_json::to_string(&p).unwrap();
        assert_eq!(Profile::parse(&text, "t").unwrap(), p);
        let e = p.require_model_inputs("t").unwrap_err();
        assert!(e.to_string().contains("no model_inputs"));
    }
}
