//! Command-line options. Every value is validated here, so bad input is a usage error (exit 2)
//! before any GPU work starts.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

mod steps;
mod timing;
mod values;

pub use steps::*;
pub use timing::*;
pub use values::*;

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

    /// Micro-batches per round, in flight across the stages at once (each stage starts on
    /// the next while the following stage works on the last), as in pipeline parallelism.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub microbatches: u32,

    #[command(flatten)]
    pub timing: TimingArgs,

    #[command(flatten)]
    pub export: ExportArgs,
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

/// The user's round, for the prediction.
#[derive(Debug, Args, Clone, Copy)]
pub struct RoundArgs {
    /// Launches in the round to predict.
    #[arg(long, default_value_t = 1346, value_parser = parse_launches)]
    pub round_launches: u64,

    /// Measured host issue time of that round, ms.
    #[arg(long, default_value_t = 7.9, value_parser = parse_ms, allow_negative_numbers = true)]
    pub round_host_issue_ms: f64,

    /// The round's GPU time as a profiler records it: the sum of its kernels' durations, ms
    /// (without it the round is taken as host-bound and the saving is an upper bound).
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

    /// Which step to price of a trace that marks several (`prof.step()`: `ProfilerStep#N`):
    /// N, `last` (the last that issued GPU work), or `all` (the whole trace as one walk).
    #[arg(long, value_name = "N|last|all", default_value = "last")]
    pub profiler_step: crate::trace::StepChoice,

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

    /// The device profile the offline model (`--summary`) uses, and whose front-end gap a
    /// replay on a GPU of the kind it describes plans with (`--node-gap profile`); the shipped
    /// H200 profile without it.
    #[arg(long, value_name = "FILE.json")]
    pub profile: Option<PathBuf>,

    /// The graph step a replay on a GPU prices with: `auto` (or `mean`), the mean of the
    /// replayed graph and the offline model over this GPU's profile (the shipped one, or
    /// `--profile` of this kind of GPU; else the replay alone, with a warning that says why),
    /// whose errors on the held-out walks ran nearly independent, so the mean came within 5%
    /// more often than either; `replay`, the replayed graph alone.
    #[arg(long, value_enum, default_value_t = crate::pricing::GraphStepChoice::Auto)]
    pub graph_step: crate::pricing::GraphStepChoice,

    /// What every replayed graph node costs beyond its recorded duration, µs (the front-end
    /// gap): `profile`, the device profile's (`--profile`, else the shipped one) where it
    /// describes this kind of GPU, else measured here; `measure`, estimated here by the engine
    /// (on H200 instances the estimate moved by up to 0.14 µs while real graphs did not); or a
    /// number of µs (negative where a node costs less than its kernel's profiled duration, as
    /// on an H100).
    #[arg(long, value_name = "profile|measure|US", default_value = "profile",
          allow_hyphen_values = true, value_parser = crate::node_gap::NodeGapChoice::parse)]
    pub node_gap: crate::node_gap::NodeGapChoice,

    /// How much less than a few blocks' a wide grid's graph node costs beyond its profiled
    /// duration, by blocks and threads (element-wise kernels by PyTorch's add of their element
    /// size, others by a memory kernel): a table written by scripts/grid_node_probe.py, or
    /// `off`; without it, the one shipped for the device (the H200's), none on others.
    #[arg(long, value_name = "FILE.json|off", value_parser = crate::wide_grids::GridNodes::parse)]
    pub grid_nodes: Option<crate::wide_grids::GridNodes>,

    /// Host work, µs, busy-waited before each eager launch (a framework's own overhead).
    #[arg(long, default_value_t = 0.0, value_parser = parse_us)]
    pub host_overhead_us: f64,

    /// How much longer a profiler sees the spin kernel than its own span, ns [default: what
    /// the profile of this kind of GPU measured (--profile, or the shipped one), else the
    /// H200's 680]
    #[arg(long, value_parser = parse_ns)]
    pub spin_ramp_ns: Option<f64>,

    /// Kernels recorded at least this long, µs, stand in by streaming memory (as a decode
    /// step's kernels stream weights) instead of spinning; on walks whose streams run side
    /// by side, those whose operator's inputs the trace recorded read them paced over their
    /// recorded time instead; `off`: neither.
    #[arg(long, default_value_t = crate::stand_in::DEFAULT_STREAM_FROM_NS / 1e3, value_parser = parse_from_us)]
    pub stream_from_us: f64,

    /// Which stream a recorded cross-stream wait waits on (the trace does not say): `join`, a
    /// stream's first wait, where it starts the stream's work, waits on the stream that joins
    /// the others (forks from a main stream); any other wait on the work issued before its
    /// event's record call, where the trace's event ids number the record calls or the wait
    /// comes right after a record call, and on the stream that issued work right before that
    /// call where the order of calls tells it; `all`, every wait on all streams' work issued
    /// before it (an upper bound). Under both, waits on one event with no record
    /// call between them wait for the same work. `none`: no stream waits on another, every
    /// recorded stream side by side from the start (a lower bound; for a trace that records no
    /// waits, whose streams otherwise run one after another).
    #[arg(long, value_enum, default_value_t = crate::trace::WaitRule::Join)]
    pub waits: crate::trace::WaitRule,

    /// Which recorded GEMMs whose shapes the trace holds (PyTorch: `record_shapes=True`) run
    /// for real with cuBLAS: `auto`, all of them on walks whose streams run side by side (what
    /// they do to the other stream's kernels is what stand-ins miss), and on one stream those
    /// held by their math that cuBLAS runs as recorded (`mm`, `bmm`: a prefill's); `real`, all
    /// on every walk; `stand-in`, none. An f32 GEMM recorded faster than IEEE f32 math runs
    /// on this GPU ran on TF32 tensor cores, and runs so.
    #[arg(long, value_enum, default_value_t = crate::replay::GemmReplay::Auto)]
    pub gemms: crate::replay::GemmReplay,

    /// Where the GEMMs run for real read and write: `fresh`, every operand of every GEMM a
    /// buffer of its own (weights, activations and outputs alike); `recycled`, weights of their
    /// own, activations (PyTorch's first operand) and outputs one buffer per size on each stream,
    /// as PyTorch's caching allocator recycles them. Where activations are a large part of
    /// what the GEMMs touch, `fresh` spreads them past the L2 (two streams of batched matmuls
    /// replayed 18% long on the H200, 3% short recycled); over 52 walks `fresh` came out as
    /// near (39 within 5%, recycled 38).
    #[arg(long, value_enum, default_value_t = crate::operand_pool::GemmOperands::Fresh)]
    pub gemm_operands: crate::operand_pool::GemmOperands,

    /// How kernels shorter than their shape's floor (the spin asked for nothing) stand in:
    /// `balance`, by the empty kernel or the empty spin so that, along each stream, their graph
    /// nodes sum to the recorded durations + gap; `nearest`, each by whichever of the two is
    /// nearer on its own (biased where many kernels fall between them).
    #[arg(long, value_enum, default_value_t = crate::stand_in::SubFloor::Balance)]
    pub sub_floor: crate::stand_in::SubFloor,

    /// What stands in for kernels (other than real GEMMs) on walks whose streams run side by
    /// side: `chase-rounds`, a chase (dependent reads through the L2, then a spin) for
    /// kernels named element-wise, which stretch beside other streams' memory traffic as
    /// real ones do, for kernels named normalisations and reductions a barrier chase, whose
    /// every read ends in a block-wide reduction that does not stretch, or a chase where
    /// each thread reads more than one round of loads (64 bytes of its operator's largest
    /// recorded input) before its block reduces, and the clock spin for the others;
    /// `chase-barriers`, the same with every reduction barrier-chasing; `chase-element-wise`,
    /// the chase for element-wise kernels and the clock spin for the others; `chase`, a
    /// chase for every kernel; `spin`, the clock spin for every kernel, as on one stream.
    /// (Long kernels with recorded inputs read them paced whichever is chosen: see
    /// --stream-from-us.)
    #[arg(long, value_enum, default_value_t = crate::stand_in::ConcurrentStandIn::ChaseRounds)]
    pub concurrent_stand_ins: crate::stand_in::ConcurrentStandIn,

    /// How timed spin stand-ins keep their time on walks whose streams run side by side:
    /// `blocks`, those of kernels whose grid the GPU holds at once spin per block, so that a
    /// stand-in that finds SMs held by another stream's kernel runs longer, as its kernel's
    /// blocks would; `grid`, every spin ends its requested time after its grid started.
    #[arg(long, value_enum, default_value_t = crate::stand_in::ConcurrentSpins::Blocks)]
    pub concurrent_spins: crate::stand_in::ConcurrentSpins,

    /// What stands in for a kernel that chases (--concurrent-stand-ins) whose recorded time is
    /// shorter than a chase of one dependent read: `one-step`, the empty kernel or a one-read
    /// chase, balanced along each stream so that their nodes sum to the recorded durations +
    /// gap (some of them wait on a read, as the short element-wise kernels they stand for do
    /// beside other streams' traffic); `zero-steps`, a chase of no reads or, below that, the
    /// empty kernel or the empty spin (--sub-floor), none of which reads memory.
    #[arg(long, value_enum, default_value_t = crate::stand_in::ChaseFloor::OneStep)]
    pub chase_floor: crate::stand_in::ChaseFloor,

    /// How element-wise kernels (by name) recorded at --stream-from-us or longer stand in on a
    /// walk of one stream: `spin`, as kernels that read what the step has just written (in the
    /// L2), whose graph nodes cost what spins' do; `stream`, by streaming device memory as
    /// other long kernels do (weight reads, which cost a graph node more at the upper level).
    #[arg(long, value_enum, default_value_t = crate::stand_in::ElementWise::Spin)]
    pub element_wise: crate::stand_in::ElementWise,

    /// What kernels recorded at --stream-from-us or longer stand in by where the recorded
    /// shapes put the walk's data within 2/3 of the L2: `spin`, as kernels that reread data
    /// the L2 keeps from one step to the next (convolution weights, a recurrent cell's);
    /// `stream`, by reading fresh device memory as past the line (a decode step's weights);
    /// `paced`, as `spin` on one stream, and beside other streams those recorded at 1 µs or
    /// longer with recorded inputs read them paced from bytes the L2 keeps (lanes of
    /// element-wise kernels, which slow each other there; tried on an H100 only); `work`, as
    /// `paced`, but element-wise kernels sum their inputs into their results from the L2
    /// before waiting out their time, except on walks with recorded GEMMs (held out on an
    /// H100 only).
    #[arg(long, value_enum, default_value_t = crate::footprint::L2Resident::Spin)]
    pub l2_resident: crate::footprint::L2Resident,

    /// What paced stand-ins read beside other streams where the recorded shapes put the
    /// lanes' data past the whole L2: `capped`, at most what device memory gives in the
    /// kernel's recorded time; `whole`, its whole recorded bytes, as its real kernel reads
    /// them beside lanes that evict what it would reread (on an H100 it moved batches 97
    /// and 96's replays by under half a point but three: docs/replay-method.md).
    #[arg(long, value_enum, default_value_t = crate::stand_in::PastL2::Capped)]
    pub past_l2: crate::stand_in::PastL2,

    /// Whether timed spin stand-ins are fitted in the walk's own graph: `off`, each asks for
    /// its planned time less the spin's calibrated ramp; `streamed`, on a stream that keeps
    /// streaming stand-ins (a decode's), every spin is shifted by the median of what its spins'
    /// graph nodes cost over their planned recorded duration + gap, in the graph rounds that
    /// size the streaming stand-ins; `graph`, so on every stream, in rounds of their own where
    /// nothing streams.
    #[arg(long, value_enum, default_value_t = crate::stand_in::SpinFit::Graph)]
    pub spin_fit: crate::stand_in::SpinFit,

    /// Streams that each run a kernel before the replay creates its own, standing for the
    /// work a framework process has run before it makes its capture stream, which the trace
    /// does not record. Default: 8 on a walk whose streams run side by side (its graph replays
    /// shorter after such launches; on the H200 that came within 5% of more stored real graphs
    /// with branches than a fresh process, though real graphs do not move with their process's
    /// history), 0 on one that runs as one lane (there they keep the replay under the level
    /// real graphs ran at). 0 prices a fresh process.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=256))]
    pub prior_streams: Option<u32>,

    /// Write the recording and the replayed eager walk and graph, on the GPU's own clock, as a
    /// Chrome-trace JSON (open it in Perfetto beside the recording); with --summary, the
    /// recording and where the offline model puts each node of the graph step.
    #[arg(long, value_name = "FILE.json")]
    pub export_trace: Option<PathBuf>,

    /// A trace of one profiled replay of the graph you captured: says whether it runs the
    /// recorded walk (its kernels, copies and memsets), and warns where the framework
    /// captured another one, which this price does not describe.
    #[arg(long, value_name = "GRAPH_TRACE")]
    pub captured: Option<PathBuf>,

    #[command(flatten)]
    pub export: ExportArgs,
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
        assert_eq!(parse_from_us("2"), Ok(2.0));
        assert_eq!(parse_from_us(" OFF "), Ok(f64::INFINITY));
        assert_eq!(parse_from_us("inf"), Ok(f64::INFINITY));
        assert!(parse_from_us("-1").unwrap_err().contains("or `off`"));
        assert!(parse_from_us("2e6").is_err() && parse_from_us("NaN").is_err());
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
