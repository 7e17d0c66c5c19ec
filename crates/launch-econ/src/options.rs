//! Command-line options. Every value is validated here, so bad input is a usage error (exit 2)
//! before any GPU work starts.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::runner::StopRule;

/// The most launches one round may ask for: past this a run takes minutes and the graph
/// gigabytes of host memory, which no question about launch overhead needs.
pub const MAX_LAUNCHES: u64 = 1_000_000;
/// The most elements of the `add` kernel (4 GiB of floats per buffer).
pub const MAX_ELEMS: u64 = 1 << 30;
/// The most points one sweep list or range may expand to.
pub const MAX_LIST: usize = 256;

/// What one kernel launch costs on this GPU: eager issue versus CUDA-graph replay.
#[derive(Debug, Parser)]
#[command(
    name = "launch-econ",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// A subcommand; without one, measures a round of N_LAUNCHES.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The default measurement.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure over launch counts and kernel sizes; table, exports and an SVG chart.
    Sweep(SweepArgs),
    /// Predict a round's saving from a saved measurement; needs no GPU.
    Predict(PredictArgs),
    /// Price graph capture for a real kernel walk from a profiler trace (nsys CSV or Kineto JSON).
    Replay(ReplayArgs),
    /// A pipeline-parallel round across devices: eager, one multi-device graph, per-device graphs.
    Pipeline(PipelineArgs),
    /// K steps in one graph launch (a conditional WHILE graph) against K graph launches, and a
    /// loop the device ends early.
    #[command(name = "loop")]
    Loop(LoopArgs),
    /// A step whose kernels change every step: eager, recapture, exec update, set-params and
    /// device-side parameters, each checked against the step's result.
    Update(UpdateArgs),
    /// One graph per batch-size bucket against one executable switched by exec update:
    /// start-up, memory, switch cost and padding.
    Buckets(BucketsArgs),
}

/// `launch-econ buckets`.
#[derive(Debug, Args)]
pub struct BucketsArgs {
    /// Batch sizes of the buckets: a list `1,2,4`, a doubling range `1..512`, or a stepped
    /// range `8..256:+8`.
    #[arg(long, default_value = "1..512", value_parser = parse_launch_list)]
    pub sizes: LaunchList,

    /// Kernels in each bucket's step.
    #[arg(long, default_value_t = 64, value_parser = parse_launches)]
    pub nodes: u64,

    /// Elements each batch entry adds to every kernel.
    #[arg(long, default_value_t = 1024, value_parser = parse_elems)]
    pub elems_per_batch: u64,

    /// Replays timed per bucket, and switches timed per size.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub repeats: u32,

    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,

    #[command(flatten)]
    pub export: ExportArgs,
}

/// `launch-econ update`.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// A recorded walk to use instead of the synthetic one (nsys CSV or Kineto JSON, as for
    /// `replay`); its kernels are replayed by stand-ins and the changed ones record into a new
    /// place every other step.
    #[arg(long, value_name = "TRACE")]
    pub trace: Option<PathBuf>,

    /// Kernels in the synthetic step.
    #[arg(long, default_value_t = 1346, value_parser = parse_launches, conflicts_with = "trace")]
    pub nodes: u64,

    /// Kernels whose input changes every step: a count (`10`) or a share of the step (`5%`);
    /// for a recorded walk, of its kernels long enough to change and check (>= 1 us).
    #[arg(long, default_value = "10%", value_parser = parse_changed)]
    pub changed: Changed,

    /// Elements of each `add` kernel of the synthetic step.
    #[arg(long, default_value_t = 4096, value_parser = parse_elems, conflicts_with = "trace")]
    pub elems: u64,

    /// Steps each way runs per trial (each ends with a synchronize).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(2..=100_000))]
    pub steps: u32,

    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,

    #[command(flatten)]
    pub timing: TimingArgs,

    #[command(flatten)]
    pub export: ExportArgs,
}

/// How many of a step's kernels change: a count, or a share in percent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Changed {
    Count(u64),
    Percent(f64),
}

impl Changed {
    /// The count for a step of `nodes` kernels: at least 1, at most `nodes`; an error when a
    /// count exceeds the step.
    pub fn of(self, nodes: u64) -> Result<u64, String> {
        match self {
            Changed::Count(k) if k > nodes => Err(format!(
                "--changed {k} is more than the step's {nodes} kernels"
            )),
            Changed::Count(k) => Ok(k),
            Changed::Percent(p) => Ok(((nodes as f64 * p / 100.0).round() as u64).clamp(1, nodes)),
        }
    }
}

/// `10` (kernels) or `5%` (of the step; above 0, at most 100).
pub fn parse_changed(s: &str) -> Result<Changed, String> {
    match s.trim().strip_suffix('%') {
        Some(p) => parse_percent(p).map(Changed::Percent),
        None => parse_count(s, "changed kernels", MAX_LAUNCHES).map(Changed::Count),
    }
}

/// `launch-econ loop`.
#[derive(Debug, Args)]
pub struct LoopArgs {
    /// K: steps per loop.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub steps: u32,

    /// `add` kernels per step (each step also runs one counting kernel).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub step_kernels: u32,

    /// Elements of each `add` kernel.
    #[arg(long, default_value_t = 4096, value_parser = parse_elems)]
    pub elems: u64,

    /// J: the step after which the device ends the early-exit loops (1..=K); K/2 by default.
    #[arg(long)]
    pub stop_at: Option<u32>,

    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,

    #[command(flatten)]
    pub timing: TimingArgs,

    #[command(flatten)]
    pub export: ExportArgs,
}

/// `launch-econ pipeline`.
#[derive(Debug, Args)]
pub struct PipelineArgs {
    /// Device ordinals, one stage each, e.g. `0,1` (no duplicates).
    #[arg(long, default_value = "0", value_parser = crate::pipeline::parse_devices)]
    pub devices: DeviceList,

    /// Stages; with a single device, this many stages run on its streams (a stand-in for a
    /// multi-device pipeline).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub stages: Option<u32>,

    /// Kernel launches per stage.
    #[arg(long, default_value_t = 64, value_parser = parse_launches)]
    pub stage_launches: u64,

    /// Bytes of the activation each stage hands to the next (a multiple of 4).
    #[arg(long, default_value_t = 1 << 20, value_parser = parse_activation)]
    pub activation_bytes: u64,

    #[command(flatten)]
    pub timing: TimingArgs,

    #[command(flatten)]
    pub export: ExportArgs,
}

/// Activation size in bytes: 4..=1 GiB, a multiple of 4 (it is an f32 vector).
pub fn parse_activation(s: &str) -> Result<u64, String> {
    let b = parse_count(s, "bytes", 1 << 30)?;
    if b % 4 != 0 {
        return Err(format!(
            "{b} bytes is not a multiple of 4 (the activation is f32)"
        ));
    }
    Ok(b)
}

/// The default measurement: N launches eager, raw, and captured and replayed.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Kernel launches per round (1..=1000000).
    #[arg(value_name = "N_LAUNCHES", default_value_t = 1346, value_parser = parse_launches)]
    pub n_launches: u64,

    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,

    /// Elements of the `add` kernel each launch runs.
    #[arg(long, default_value_t = 4096, value_parser = parse_elems)]
    pub elems: u64,

    /// Launch every kernel with programmatic dependent launch (sm_90+): each may start while
    /// the one before still runs and waits on the device for its data; the raw-driver floor
    /// uses `cuLaunchKernelEx` with the same attribute, so engine/floor stays a fair ratio.
    #[arg(long)]
    pub pdl: bool,

    #[command(flatten)]
    pub timing: TimingArgs,

    #[command(flatten)]
    pub round: RoundArgs,

    #[command(flatten)]
    pub export: ExportArgs,
}

/// How long to measure: a stopping rule on the headline figures' noise (in the manner of
/// nvbench), or a fixed number of trials. Each command has its own defaults (see `--help`).
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct TimingArgs {
    /// A fixed number of measured trials (turns the noise rule off); each trial interleaves
    /// every measured path.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100000))]
    pub trials: Option<u32>,

    /// Rounds per trial (each round is N launches, or one replay).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100000))]
    pub reps: Option<u32>,

    /// Trials run first and reported apart (not in the summaries).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub warmup: Option<u32>,

    /// Stop once every headline figure's relative noise is below this, in percent.
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    pub max_noise: Option<f64>,

    /// Take trials for at least this long, seconds (warm-up included).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub min_time: Option<f64>,

    /// Stop after this long whatever the noise, seconds (warm-up included).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub max_time: Option<f64>,

    /// Leave the host thread where the scheduler puts it, instead of on the CPUs local to the
    /// GPU (where host launch cost is lowest and steadiest).
    #[arg(long)]
    pub no_pin: bool,
}

impl TimingArgs {
    /// Pins the calling thread near the engine's GPU unless `--no-pin`; says where it runs.
    pub fn place(&self, e: &memra_engine::Engine) -> crate::affinity::Placement {
        if self.no_pin {
            crate::affinity::Placement::Unpinned("--no-pin".into())
        } else {
            crate::affinity::pin_near(&e.device_info().pci_bus_id)
        }
    }
}

/// A command's own defaults for [`TimingArgs`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimingDefaults {
    pub reps: usize,
    pub warmup: usize,
    pub min_time_s: f64,
    pub max_time_s: f64,
}

/// The noise goal when `--max-noise` is not given: 0.5%, as nvbench.
pub const DEFAULT_MAX_NOISE_PERCENT: f64 = 0.5;
/// Fewest measured trials the noise rule trusts.
pub const MIN_TRIALS: usize = 5;

impl TimingArgs {
    /// The stopping rule these options ask for.
    pub fn rule(&self, d: TimingDefaults) -> Result<StopRule, String> {
        let min_time_s = self.min_time.unwrap_or(d.min_time_s);
        let max_time_s = self.max_time.unwrap_or(d.max_time_s.max(min_time_s));
        if min_time_s > max_time_s {
            return Err(format!(
                "--min-time {min_time_s} s is longer than --max-time {max_time_s} s"
            ));
        }
        if let Some(n) = self.trials {
            if self.min_time.is_some() || self.max_time.is_some() || self.max_noise.is_some() {
                return Err(
                    "--trials asks for a fixed count; it cannot be combined with --min-time, --max-time or --max-noise".into(),
                );
            }
            return Ok(StopRule::fixed(n as usize));
        }
        Ok(StopRule {
            fixed_trials: None,
            min_time_s,
            max_time_s,
            max_noise: self.max_noise.unwrap_or(DEFAULT_MAX_NOISE_PERCENT) / 100.0,
            min_trials: MIN_TRIALS,
        })
    }

    pub fn reps(&self, d: TimingDefaults) -> usize {
        self.reps.map_or(d.reps, |r| r as usize)
    }

    pub fn warmup(&self, d: TimingDefaults) -> usize {
        self.warmup.map_or(d.warmup, |w| w as usize)
    }
}

/// A relative noise in percent: finite, above 0, at most 100.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a percentage"))?;
    if !v.is_finite() || v <= 0.0 || v > 100.0 {
        return Err(format!("`{s}` must be above 0 and at most 100 (percent)"));
    }
    Ok(v)
}

/// A time in seconds: finite, 0..=86400.
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !v.is_finite() || !(0.0..=86400.0).contains(&v) {
        return Err(format!("`{s}` must be between 0 and 86400 seconds"));
    }
    Ok(v)
}

/// The user's round, for the prediction.
#[derive(Debug, Args, Clone, Copy)]
pub struct RoundArgs {
    /// Launches in the round to predict.
    #[arg(long, default_value_t = 1346, value_parser = parse_launches)]
    pub round_launches: u64,

    /// Measured host issue time of that round, ms.
    #[arg(long, default_value_t = 7.9, value_parser = parse_ms, allow_negative_numbers = true)]
    pub round_host_issue_ms: f64,

    /// Measured GPU time of that round, ms (without it the round is taken as host-bound).
    #[arg(long, value_parser = parse_ms, allow_negative_numbers = true)]
    pub round_gpu_ms: Option<f64>,
}

/// Where to write results (hyperfine-style flags; `-` writes to stdout).
#[derive(Debug, Args, Clone, Default)]
pub struct ExportArgs {
    /// Write the full, self-describing JSON (device, host, every sample).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,

    /// Write one CSV row per point (medians and MADs).
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,

    /// Write a Markdown table.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
}

/// `launch-econ sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Launch counts: a list `1,16,256`, a doubling range `1..8192`, or a stepped range
    /// `100..1000:+100` / `1..4096:x4`.
    #[arg(long, default_value = "1..8192", value_parser = parse_launch_list)]
    pub launches: LaunchList,

    /// Kernel sizes in elements, same syntax.
    #[arg(long, default_value = "4096,65536,1048576", value_parser = parse_elem_list)]
    pub sizes: LaunchList,

    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,

    /// Launch every kernel with programmatic dependent launch (sm_90+): each may start while
    /// the one before still runs and waits on the device for its data; the raw-driver floor
    /// uses `cuLaunchKernelEx` with the same attribute, so engine/floor stays a fair ratio.
    #[arg(long)]
    pub pdl: bool,

    /// Timing per point; `--reps` defaults to about 16384 launches per trial.
    #[command(flatten)]
    pub timing: TimingArgs,

    /// Draw µs per launch against launch count (eager, graph, floor) as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,

    #[command(flatten)]
    pub export: ExportArgs,
}

/// `launch-econ predict`.
#[derive(Debug, Args)]
pub struct PredictArgs {
    /// A JSON file written by `--export-json`; without it, the H200 profile shipped with
    /// launch-econ.
    #[arg(long, value_name = "FILE.json")]
    pub profile: Option<PathBuf>,

    #[command(flatten)]
    pub round: RoundArgs,

    /// Write the prediction as JSON.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
}

/// `launch-econ replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// `nsys stats --report cuda_gpu_trace --format csv` output, or a PyTorch/Kineto
    /// Chrome-trace JSON.
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,

    /// Only read and summarise the trace; touches no GPU.
    #[arg(long)]
    pub summary: bool,

    /// Keep only operations recorded on this device.
    #[arg(long)]
    pub trace_device: Option<u32>,

    /// Keep only operations recorded on this stream.
    #[arg(long)]
    pub stream: Option<u64>,

    /// Keep only operations starting FROM..TO µs after the first kept operation.
    #[arg(long, value_name = "FROM..TO", value_parser = parse_window)]
    pub window: Option<(f64, f64)>,

    /// Kernels listed by total time in the summary.
    #[arg(long, default_value_t = 10)]
    pub top: usize,

    /// CUDA device ordinal to replay on.
    #[arg(long, default_value_t = 0)]
    pub device: usize,

    /// Replay every kernel with programmatic dependent launch (sm_90+): what the walk would
    /// cost if each kernel waited on the device for its predecessor instead of the launch
    /// order (eager and graph alike).
    #[arg(long)]
    pub pdl: bool,

    /// Timing; `--reps` counts walks per trial (eager rounds, graph replays).
    #[command(flatten)]
    pub timing: TimingArgs,

    /// Your eager step, ms, timed without a profiler: the saving is priced against it (without
    /// it, the trace's host side is used, or the engine's own cost as a labelled lower bound).
    #[arg(long, value_parser = parse_positive_ms)]
    pub eager_step_ms: Option<f64>,

    /// The device profile the offline model (`--summary`) uses; the shipped H200 profile
    /// without it.
    #[arg(long, value_name = "FILE.json")]
    pub profile: Option<PathBuf>,

    /// Host work, µs, busy-waited before each eager launch (a framework's own overhead).
    #[arg(long, default_value_t = 0.0, value_parser = parse_us)]
    pub host_overhead_us: f64,

    /// How much longer a profiler sees the spin kernel than its own span, ns (measure it on
    /// another GPU with scripts/spin_cupti.py).
    #[arg(long, default_value_t = crate::replay::DEFAULT_SPIN_RAMP_NS, value_parser = parse_ns)]
    pub spin_ramp_ns: f64,

    #[command(flatten)]
    pub export: ExportArgs,
}

/// `FROM..TO` in µs, FROM < TO, both finite and not negative.
pub fn parse_window(s: &str) -> Result<(f64, f64), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("`{s}` is not a window FROM..TO (µs)"))?;
    let p = |v: &str| -> Result<f64, String> {
        let x: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("`{v}` is not a number of µs"))?;
        if !x.is_finite() || x < 0.0 {
            return Err(format!("`{v}` must be a finite, non-negative number of µs"));
        }
        Ok(x)
    };
    let (a, b) = (p(a)?, p(b)?);
    if a >= b {
        return Err(format!("window `{s}` is empty: FROM must be below TO"));
    }
    Ok((a, b))
}

/// A duration in ns: finite, 0..=1e6.
pub fn parse_ns(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of ns"))?;
    if !v.is_finite() || !(0.0..=1e6).contains(&v) {
        return Err(format!("`{s}` must be between 0 and 1000000 ns"));
    }
    Ok(v)
}

/// A host overhead in µs: finite, 0..=1e6.
pub fn parse_us(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of µs"))?;
    if !v.is_finite() || !(0.0..=1e6).contains(&v) {
        return Err(format!("`{s}` must be between 0 and 1000000 µs"));
    }
    Ok(v)
}

/// A parsed `--devices` list.
pub type DeviceList = Vec<usize>;

/// A parsed list of counts.
pub type LaunchList = Vec<u64>;

/// A launch count: a whole number in 1..=MAX_LAUNCHES.
pub fn parse_launches(s: &str) -> Result<u64, String> {
    parse_count(s, "launches", MAX_LAUNCHES)
}

/// A kernel size: a whole number of elements in 1..=MAX_ELEMS.
pub fn parse_elems(s: &str) -> Result<u64, String> {
    parse_count(s, "elements", MAX_ELEMS)
}

fn parse_count(s: &str, what: &str, max: u64) -> Result<u64, String> {
    let n: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number of {what}"))?;
    if n == 0 {
        return Err(format!("the number of {what} must be at least 1"));
    }
    if n > max {
        return Err(format!("{n} {what} is more than the maximum of {max}"));
    }
    Ok(n)
}

/// A time in ms: finite and above zero.
pub fn parse_positive_ms(s: &str) -> Result<f64, String> {
    let v = parse_ms(s)?;
    if v <= 0.0 {
        return Err(format!("`{s}` must be above 0 ms"));
    }
    Ok(v)
}

/// A time in ms: finite and not negative.
pub fn parse_ms(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of milliseconds"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!(
            "`{s}` must be a finite, non-negative number of milliseconds"
        ));
    }
    Ok(v)
}

fn parse_launch_list(s: &str) -> Result<LaunchList, String> {
    parse_list(s, "launches", MAX_LAUNCHES)
}

fn parse_elem_list(s: &str) -> Result<LaunchList, String> {
    parse_list(s, "elements", MAX_ELEMS)
}

/// `a,b,c` | `A..B` (doubling) | `A..B:xK` | `A..B:+K`; each item may itself be a range.
pub fn parse_list(s: &str, what: &str, max: u64) -> Result<LaunchList, String> {
    let mut out = Vec::new();
    for item in s.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(format!("`{s}`: empty item in the list"));
        }
        match item.split_once("..") {
            None => out.push(parse_count(item, what, max)?),
            Some((lo, rest)) => {
                let (hi, step) = match rest.split_once(':') {
                    Some((hi, step)) => (hi, Some(step)),
                    None => (rest, None),
                };
                let lo = parse_count(lo, what, max)?;
                let hi = parse_count(hi, what, max)?;
                if lo > hi {
                    return Err(format!("range `{item}` runs backwards ({lo} > {hi})"));
                }
                let next: Box<dyn Fn(u64) -> u64> = match step {
                    None => Box::new(|v: u64| v.saturating_mul(2)),
                    Some(st) => {
                        let mut chars = st.chars();
                        let kind = chars.next().map(String::from).unwrap_or_default();
                        let k: u64 = chars.as_str().parse().map_err(|_| {
                            format!(
                                "range step `{st}` must be x<factor> or +<step>, e.g. x4 or +100"
                            )
                        })?;
                        match kind.as_str() {
                            "x" if k >= 2 => Box::new(move |v: u64| v.saturating_mul(k)),
                            "+" if k >= 1 => Box::new(move |v: u64| v.saturating_add(k)),
                            _ => {
                                return Err(format!(
                                    "range step `{st}` must be x<factor ≥ 2> or +<step ≥ 1>"
                                ))
                            }
                        }
                    }
                };
                let mut v = lo;
                while v <= hi {
                    out.push(v);
                    if out.len() > MAX_LIST || v == u64::MAX {
                        break;
                    }
                    v = next(v);
                }
            }
        }
        if out.len() > MAX_LIST {
            return Err(format!("`{s}` expands to more than {MAX_LIST} values"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn launches_accepts_whole_numbers_in_range() {
        assert_eq!(parse_launches("1346"), Ok(1346));
        assert_eq!(parse_launches("1"), Ok(1));
        assert_eq!(parse_launches("1000000"), Ok(MAX_LAUNCHES));
    }

    #[test]
    fn launches_rejects_what_a_round_cannot_be() {
        for bad in [
            "0",
            "-5",
            "abc",
            "1.5",
            "",
            "1000001",
            "99999999999999999999999",
        ] {
            assert!(parse_launches(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn lists_and_ranges() {
        assert_eq!(parse_list("1,16,256", "x", 1000), Ok(vec![1, 16, 256]));
        assert_eq!(parse_list("1..8", "x", 1000), Ok(vec![1, 2, 4, 8]));
        assert_eq!(parse_list("3..10", "x", 1000), Ok(vec![3, 6]));
        assert_eq!(parse_list("1..64:x4", "x", 1000), Ok(vec![1, 4, 16, 64]));
        assert_eq!(
            parse_list("100..300:+100", "x", 1000),
            Ok(vec![100, 200, 300])
        );
        assert_eq!(parse_list("5, 1..2", "x", 1000), Ok(vec![5, 1, 2]));
        assert_eq!(parse_list("1..8192", "x", MAX_LAUNCHES).unwrap().len(), 14);
    }

    #[test]
    fn bad_lists_say_what_is_wrong() {
        let e = |s: &str| parse_list(s, "launches", 1000).unwrap_err();
        assert!(e("10..1").contains("runs backwards"));
        assert!(e("1..10:x1").contains("x<factor ≥ 2>"));
        assert!(e("1..10:y2").contains("must be x<factor"));
        assert!(e("1..10:+").contains("must be x<factor"));
        assert!(e("1,,2").contains("empty item"));
        assert!(e("0..5").contains("at least 1"));
        assert!(e("1..5000").contains("more than the maximum"));
        assert!(e("1..1000:+1").contains("more than 256 values"));
    }

    #[test]
    fn windows_and_overheads() {
        assert_eq!(parse_window("0..1500.5"), Ok((0.0, 1500.5)));
        assert!(parse_window("5..5").unwrap_err().contains("empty"));
        assert!(parse_window("5").unwrap_err().contains("FROM..TO"));
        assert!(parse_window("-1..5").unwrap_err().contains("non-negative"));
        assert_eq!(parse_us("2.5"), Ok(2.5));
        assert!(parse_us("-1").is_err() && parse_us("inf").is_err() && parse_us("2e6").is_err());
    }

    #[test]
    fn ms_must_be_finite_and_not_negative() {
        assert_eq!(parse_ms("7.9"), Ok(7.9));
        for bad in ["-1", "NaN", "inf", "x"] {
            assert!(parse_ms(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn default_is_the_step37_round() {
        let cli = Cli::try_parse_from(["launch-econ"]).unwrap();
        assert_eq!(cli.run.n_launches, 1346);
        assert_eq!(cli.run.device, 0);
        assert_eq!(cli.run.round.round_host_issue_ms, 7.9);
        let cli = Cli::try_parse_from(["launch-econ", "64", "--device", "1"]).unwrap();
        assert_eq!((cli.run.n_launches, cli.run.device), (64, 1));
        let cli = Cli::try_parse_from(["launch-econ", "sweep", "--launches", "1..4"]).unwrap();
        match cli.command {
            Some(Command::Sweep(s)) => assert_eq!(s.launches, vec![1, 2, 4]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn timing_options_make_a_stopping_rule() {
        let d = TimingDefaults {
            reps: 5,
            warmup: 1,
            min_time_s: 0.3,
            max_time_s: 1.0,
        };
        let r = TimingArgs::default().rule(d).unwrap();
        assert_eq!((r.min_time_s, r.max_time_s, r.max_noise), (0.3, 1.0, 0.005));
        assert!(r.fixed_trials.is_none());
        let t = TimingArgs {
            trials: Some(7),
            ..TimingArgs::default()
        };
        assert_eq!(t.rule(d).unwrap().fixed_trials, Some(7));
        let bad = TimingArgs {
            trials: Some(7),
            max_noise: Some(1.0),
            ..TimingArgs::default()
        };
        assert!(bad.rule(d).unwrap_err().contains("cannot be combined"));
        let long_min = TimingArgs {
            min_time: Some(5.0),
            ..TimingArgs::default()
        };
        assert_eq!(
            long_min.rule(d).unwrap().max_time_s,
            5.0,
            "max follows a longer min"
        );
        let crossed = TimingArgs {
            min_time: Some(5.0),
            max_time: Some(1.0),
            ..TimingArgs::default()
        };
        assert!(crossed
            .rule(d)
            .unwrap_err()
            .contains("longer than --max-time"));
        assert!(parse_percent("0").is_err() && parse_percent("0.5").is_ok());
        assert!(parse_seconds("-1").is_err() && parse_seconds("nan").is_err());
    }

    proptest! {
        #[test]
        fn list_parser_never_panics(s in ".{0,40}") {
            let _ = parse_list(&s, "x", MAX_LAUNCHES);
        }

        #[test]
        fn parsed_lists_stay_in_bounds(lo in 1u64..500, span in 0u64..500, step in 1u64..50) {
            let s = format!("{lo}..{}:+{step}", lo + span);
            if let Ok(v) = parse_list(&s, "x", 1000) {
                prop_assert!(v.iter().all(|&x| (1..=1000).contains(&x)));
                prop_assert!(v.len() <= MAX_LIST);
            }
        }
    }
}
