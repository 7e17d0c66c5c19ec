//! What a price does not reproduce, as warnings for the user: several streams (how their
//! waits were read, what running them side by side does that the price leaves out), copies
//! the replay makes differently, host waits a graph cannot hold, NCCL waits.

use crate::lanes::{Basis, Schedule};
use crate::stand_in::ConcurrentStandIn;
use crate::trace::{CopyDirection, OpKind, WaitRule, Walk};

/// Why a walk on several streams replays without streaming stand-ins, and what stands in
/// instead (`concurrent`, see [`ConcurrentStandIn`]).
pub(crate) fn streaming_off_on_lanes(concurrent: ConcurrentStandIn) -> String {
    let instead = match concurrent {
        ConcurrentStandIn::ChaseElementWise => "kernels named element-wise stand in by chases (dependent reads through the L2, which stretch beside other streams' memory traffic as those kernels do; one shorter than a one-read chase by the empty kernel or a one-read chase in turn, --chase-floor), the others by spins",
        ConcurrentStandIn::Chase => "every kernel stands in by a chase (dependent reads through the L2, which stretch beside other streams' memory traffic; one shorter than a one-read chase by the empty kernel or a one-read chase in turn, --chase-floor)",
        ConcurrentStandIn::ChaseBarriers => "kernels named element-wise stand in by chases (dependent reads through the L2, which stretch beside other streams' memory traffic as those kernels do; one shorter than a one-read chase by the empty kernel or a one-read chase in turn, --chase-floor), normalisations and reductions by barrier chases (each read ends in a block-wide reduction, whose barriers do not stretch), the others by spins",
        ConcurrentStandIn::ChaseRounds => "kernels named element-wise stand in by chases (dependent reads through the L2, which stretch beside other streams' memory traffic as those kernels do; one shorter than a one-read chase by the empty kernel or a one-read chase in turn, --chase-floor), normalisations and reductions by barrier chases (each read ends in a block-wide reduction, whose barriers do not stretch) or, where their threads each read more than one round of loads (64 bytes) before reducing, by chases, the others by spins",
        ConcurrentStandIn::Spin => "every kernel stands in by a spin",
    };
    format!("the walk runs on several streams at once, so no kernel stands in by streaming memory as fast as its grid can (bandwidth that concurrent streams may contend for where the recorded kernels did not): a long kernel whose operator's inputs the trace recorded (record_shapes=True) reads them paced over its recorded time, as much as the device could have read in it; otherwise {instead} (--concurrent-stand-ins); a spin of a kernel whose grid the GPU holds at once spins per block, so it stretches when another stream holds the SMs, as its kernel's blocks would (--concurrent-spins)")
}

/// Why a walk whose streams overlap is priced low: the eager recording ran its streams' kernels
/// apart (host-bound), a graph runs them side by side; `share` of the step (laid out at the
/// recorded durations) has two or more streams running. `real_gemms`: (GEMM kernels run for
/// real, kernels) in a GPU replay.
pub(crate) fn concurrent_kernels(share: f64, real_gemms: Option<(usize, usize)>) -> String {
    let head = format!(
        "streams run side by side for {:.0}% of the step (recorded durations); there their kernels slow each other down (shared SMs and memory; the eager recording ran them apart)",
        100.0 * share
    );
    match real_gemms {
        Some((real, kernels)) if real > 0 => format!(
            "{head}: {real} of {kernels} kernels are the recorded GEMMs run for real (cuBLAS, recorded shapes), so what they do to each other is in the replay; of the other kernels, standing in, long ones whose inputs were recorded read them paced over their time, the chases stretch beside memory traffic as element-wise kernels do, spins only where they wait for SMs; each holds no more blocks an SM than its kernel could, and what it does to kernels beside it is only that and its reads"
        ),
        Some(_) => format!(
            "{head}, which stand-ins holding their recorded durations do not reproduce: on the H200 the 26 multi-stream validation walks replayed without their shapes came out -22% to +16% of their real graphs, 8 of them within 5% (25 with shapes); a trace recorded with shapes (PyTorch: record_shapes=True) has its GEMMs replayed for real (unless --gemms stand-in), which reproduces what they do to each other"
        ),
        None => format!(
            "{head}; the offline model shares the SMs, device memory and the GEMMs' arithmetic between kernels side by side and slows each by what the device profile measured beside others (README, \"The offline model\"); a kernel beside kernels that leave only a few SMs free, or beside kernels whose traffic the trace does not give (only GEMMs with recorded shapes and element-wise, normalisation and fused attention kernels with recorded inputs have a load), may run slower in the real graph than priced. With streams side by side it came within 10% of the real graph on 296 of 396 H200 walks held out from the method, each on its first run (-34.5% to +51.5%), and on 244 of the 279 stored multi-stream walk runs priced with this version (scripts/reprice_summary.py): where that matters, prefer the replay (`replay` without --summary)"
        ),
    }
}

/// The offline model's warning for IEEE f32 GEMM kernels (FMA units, not tensor cores: see
/// [`crate::roofline::named_math_is_tf32`], and cuBLAS's `…_f32f32_f32f32_f32_…` kernels) on
/// several streams: how far such walks came from real graphs. Two or more streams running
/// them for [`FMA_GEMM_SHARE`] of their recorded kernel time or more: the model's hold of the
/// SMs for such GEMMs (see `crate::offline`) against real graphs; exactly one beside other
/// streams' kernels: the spread of that kind. `None` otherwise.
fn simt_gemms_warning(walk: &Walk) -> Option<String> {
    match fma_gemm_streams(walk) {
        (streams, _) if streams >= 2 => Some(format!(
            "{} streams run f32 GEMM kernels on the FMA units (not tensor cores); the offline model lets each such GEMM hold the SMs its blocks spread over, no more than the profile's widest GEMM pair held, where real blocks of such GEMMs sharing an SM each ran 1.4-2.1 times as long as alone: on the H200 the 17 held-out walks of such GEMMs on two or more streams came out -16.7% to +17.9% with it (12 within 10%; the first 12 -12.5% to -34.5% before it; two f32 GEMVs side by side +17.9%, f32 GEMVs beside f32 or bf16 GEMMs -15.1% and -14.9%), the replay -8.4% to +10.3% on 14 of them (11 within 5%); prefer the replay (`replay` without --summary) for this walk",
            streams
        )),
        (1, busy) if busy >= 2 => Some("one stream runs f32 GEMM kernels on the FMA units (not tensor cores) beside other streams' kernels: on the H200 the one stored validation walk of the kind came -32.1% with this version: an f32 MLP beside embedding-bag lookups, whose lanes ran longer side by side than one after the other (82 us against 25 + 44 us alone; the replay -22%); that MLP (cuBLAS FMA kernels of 64-thread blocks) ran 1.12-1.34 times its lanes' serial time beside any lane of kernels spread over the SMs, clock spins that read nothing included, where the model gives at most the serial time".to_string()),
        _ => None,
    }
}

/// The offline model's warning for a walk of several streams whose trace records no shapes:
/// without them no kernel's memory load is known, so kernels side by side share only the SMs;
/// what that did to the stored walks (checked against this version by `stored_claims`).
fn no_shapes_beside_streams(walk: &Walk) -> Option<String> {
    (!crate::footprint::has_shapes(walk)).then(|| {
        "the trace records no operator's shapes (PyTorch: record_shapes=True), so the offline model knows no kernel's memory load beside the other streams' kernels and shares only the SMs between them: the 279 stored H200 multi-stream walks priced with their shapes taken out came within 10% of their real graphs on 162 (-43.2% to +63.4%), against 244 with them; record the step with shapes".to_string()
    })
}

/// How many streams run f32 FMA GEMMs for [`FMA_GEMM_SHARE`] of their recorded kernel time or
/// more, and how many run kernels at all.
fn fma_gemm_streams(walk: &Walk) -> (usize, usize) {
    let on_fma = |name: &str| {
        crate::roofline::named_math_is_tf32(name) == Some(false)
            || name.contains("f32f32_f32f32_f32")
    };
    // Each stream's (FMA GEMM time, kernel time), ns.
    let mut time: std::collections::BTreeMap<u64, (f64, f64)> = Default::default();
    for o in walk.ops.iter().filter(|o| o.is_kernel()) {
        let Some(stream) = o.stream else { continue };
        let t = time.entry(stream).or_default();
        t.1 += o.duration_ns.max(0.0);
        if on_fma(&o.name) {
            t.0 += o.duration_ns.max(0.0);
        }
    }
    let fma = time
        .values()
        .filter(|(fma, all)| *fma > 0.0 && *fma >= FMA_GEMM_SHARE * all)
        .count();
    let busy = time.values().filter(|(_, all)| *all > 0.0).count();
    (fma, busy)
}

/// The share of a stream's recorded kernel time its f32 FMA GEMMs take for the warning to
/// count it: below it, even the 2.1 times slower such GEMMs ran side by side moves the
/// stream by less than `--summary`'s 10% target (a transformers decoder's rotary embedding
/// runs a one-block f32 GEMM of a few µs per step, which is no cause to distrust the price).
const FMA_GEMM_SHARE: f64 = 0.1;

/// The process state a replayed graph with branches depends on and a trace does not record
/// (see [`crate::prior_streams`]): how many launches the process had run first.
pub(crate) fn process_history(prior_streams: u32) -> String {
    let state = match prior_streams {
        // The package replays in its caller's process, whose own streams may have run.
        0 => "with no streams run first by the replay (in a fresh process when run from the CLI with --prior-streams 0; from Python, after what the process had run)".to_string(),
        n => format!("after {n} other streams each ran a kernel (--prior-streams; 8 unless set)"),
    };
    format!(
        "the replay of a graph with branches depends on the process it runs in (real PyTorch graphs with branches did not move with theirs): this replay ran {state}; on the H200 eight such launches moved multi-stream walks a median 2 points (up to 11) shorter than a fresh process and nearer their real graphs (68 of 92 stored multi-stream runs within 5%, against 60 fresh); held out from the method, 197 of the 395 multi-stream walks that ran came within 5% on their first run (-73.5% to +38.2%), the mean of the replay and the offline model on 239: the 41% error the replayed graph carries for a walk with branches, 35% the mean (--prior-streams N prices a process that ran N launches first, 0 a fresh one)"
    )
}

/// Why `--prior-streams` misprices a walk whose streams do not run side by side: launches
/// before the replay's streams keep its graphs off the upper level of per-node cost
/// ([`crate::other_stream`]), where real graphs of one stream ran.
pub(crate) fn prior_streams_on_one_stream(prior_streams: u32) -> Option<String> {
    (prior_streams > 0).then(|| format!(
        "--prior-streams {prior_streams} on a walk whose streams do not run side by side: launches before the replay's streams keep its graphs below the upper level of per-node cost, where real graphs of one stream ran (on the H200 the 34 one-stream validation walks replayed a median 7% and up to 19% under their real graphs after 8 launches first, against 33 of 34 within 5% without); leave it at 0 here"
    ))
}

/// What pricing `walk` does not reproduce, as warnings for the user; `on_lanes`: a GPU replay
/// (which runs recorded streams concurrently where the trace says how), not the offline model.
pub fn unreproduced(walk: &Walk, on_lanes: bool) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(several_devices(walk, on_lanes));
    let u = walk.uncontended;
    if u.kernels > 0 {
        out.push(format!(
            "{} kernel(s) ran beside other streams' kernels in the recording, which slowed them: each is priced at the median duration of its twins (same kernel, grid, block and inputs) that ran apart from other streams, {:.3} ms less in all, as the price adds what running side by side does; a kernel without such twins keeps its recorded duration, and may be priced long",
            u.kernels,
            u.ns / 1e6
        ));
    }
    let schedule = Schedule::of(walk);
    match schedule.basis {
        Basis::OneStream => {}
        Basis::RecordedWaits(n) => {
            let how = if on_lanes {
                "each is replayed on its own stream"
            } else {
                "the offline model prices the longest chain"
            };
            let rule = match walk.wait_rule {
                WaitRule::Join => "a stream's first wait, where it starts the stream's work, taken to wait on the stream that joins the others, every other wait on all streams' work issued before it or, where the event ids number the record calls, before its event's record call (on the stream that issued work right before that call, where the order of calls tells it)",
                WaitRule::All => "each taken to wait for all other streams' work issued before it (an upper bound where streams fork one after another)",
                // Under `None` the schedule leaves the waits out (Basis::Unordered).
                WaitRule::None => "each left out",
            };
            out.push(format!(
                "the trace holds {} streams; {how}, ordered by {n} recorded cross-stream waits ({rule}; the trace does not say which stream recorded each event)",
                schedule.lanes()
            ));
            // How many waits each reading took, and what it means.
            let readings = [
                (
                    schedule.forks_on_join,
                    "of the waits that start a stream's work come after work on other side streams was issued and are taken not to wait for it, as forks from a main stream do; if they did (a pipeline between side streams), --waits all prices that (an upper bound)",
                ),
                (
                    schedule.waits_at_record,
                    "of the waits are taken to wait for the work issued before their event's record call: the trace's event ids number the record calls in order (a fresh event each), so a wait on an event recorded earlier does not wait for work issued after it",
                ),
                (
                    schedule.waits_right_after_record,
                    "of the waits are taken to wait for what the record call issued right before each covered (nothing issued between them: `record` then `wait_event`), their event ids not tying them to their calls (a program that records the same events again, one per stage, every micro-batch); where a wait's event was recorded earlier, on a stream other than the one read for that call (below), the wait reads short",
                ),
                (
                    schedule.waits_on_producer,
                    "of the waits read at a record call are taken to wait for one stream's work, that of the stream that issued work right before the record call (some was issued since the record call before it and before the one after it): a program records an event right after the work it marks, so a pipeline stage waits on the stage before and not on stages further on; where a program records an event on a stream other than the one it last issued to, that reads the wait short (`--waits all` prices every wait on all streams' work, an upper bound)",
                ),
                (
                    schedule.waits_on_all_before,
                    "of the waits are neither forks nor tied to a record call of their event (the trace names no event for them, or its event ids do not number the record calls: a program or library that records events it made earlier, as cuDNN's multi-stream RNNs do) and are taken to wait for all other streams' work issued before them: an upper bound where the event was recorded earlier, so the graph step may come out long (on the H200 a two-layer cuDNN LSTM on five streams replayed +21% so)",
                ),
            ];
            for (n, what) in readings.into_iter().filter(|r| r.0 > 0) {
                out.push(format!("{n} {what}"));
            }
            if walk.unrecorded_waits > 0 && walk.wait_rule == WaitRule::Join {
                out.push(format!(
                    "{} stream wait calls have no record on the GPU side: joins by a stream that ran nothing after them, so the stream that joins the others is taken to be the first that ran work before any wait on it or, with none, one that ran none of the walk's work (its forks then wait on nothing)",
                    walk.unrecorded_waits
                ));
            }
            if schedule.waits_again > 0 {
                out.push(format!(
                    "{} of the waits wait on an event another wait already waited on, with no event recorded between the two: each is taken to wait for the work the first one did (one stream's output waited on by several)",
                    schedule.waits_again
                ));
            }
            if !on_lanes {
                out.push(concurrent_kernels(schedule.side_by_side_share(walk), None));
                out.extend(simt_gemms_warning(walk));
                out.extend(no_shapes_beside_streams(walk));
            }
        }
        Basis::Unordered => {
            let how = if on_lanes {
                "each is replayed on its own stream"
            } else {
                "the offline model runs them side by side"
            };
            out.push(format!(
                "the trace holds {} streams; {how}, never waiting on each other, whatever waits it records (--waits none): a lower bound wherever the program ordered them",
                schedule.lanes()
            ));
            if !on_lanes {
                out.push(concurrent_kernels(schedule.side_by_side_share(walk), None));
                out.extend(simt_gemms_warning(walk));
                out.extend(no_shapes_beside_streams(walk));
            }
        }
        Basis::Serialised => {
            let lanes = walk
                .ops
                .iter()
                .filter_map(|o| o.stream)
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            let (why, lower) = if on_lanes {
                (
                    "the trace records no cross-stream waits (PyTorch: profile with experimental_config=_ExperimentalConfig(enable_cuda_sync_events=True)), so they are replayed one after another on one stream",
                    "`--waits none` replays them side by side, never waiting on each other (a lower bound, which `replay --summary` prints beside its upper one)",
                )
            } else {
                (
                    "the offline model adds them up as if they ran one after another",
                    "the prediction gives them side by side, never waiting on each other, beside it (a lower bound)",
                )
            };
            out.push(format!(
                "the trace holds {lanes} streams; {why}: where they overlapped in the recording the graph step is too long (an upper bound); {lower}; filter with --stream to price one"
            ));
        }
    }
    let copies = |pick: &dyn Fn(CopyDirection, bool) -> bool| {
        walk.ops
            .iter()
            .filter(|o| matches!(&o.kind, OpKind::Memcpy { direction, pageable, .. } if pick(CopyDirection::of(direction), *pageable)))
            .count()
    };
    let other = copies(&|d, _| d == CopyDirection::Other);
    if other > 0 && on_lanes {
        out.push(format!(
            "{other} copies that are neither host<->device nor device-to-device (host to host, peer) are replayed as device-to-device copies of the same size"
        ));
    }
    let pageable = copies(&|d, pageable| d != CopyDirection::Other && pageable);
    if pageable > 0 && on_lanes {
        out.push(format!(
            "{pageable} host<->device copies were recorded from or into pageable host memory; they are replayed through page-locked memory, which copies faster"
        ));
    }
    let to_host = copies(&|d, _| d == CopyDirection::DeviceToHost);
    let capture_path = "so frameworks take another path under capture (transformers materialises the attention mask and leaves flash attention: 12-18% more kernels on the H200 validation walks) and the captured graph may run a different, longer walk than this trace";
    if to_host > 0 {
        match walk.host.as_ref().map(|h| h.blocking_waits_mid_step) {
            // The host never waited between launches: the copies are copy nodes of a graph.
            Some(0) => {}
            Some(waits) => out.push(format!(
                "the step copies device to host {to_host} time(s) and the host waits for the GPU {waits} time(s) before its last launch: a graph cannot hold that wait, {capture_path}"
            )),
            None => out.push(format!(
                "the step copies device to host {to_host} time(s) and the trace does not say whether the host waited on them between launches: if it did, a graph cannot hold that wait, {capture_path}"
            )),
        }
    }
    let graphed = walk.ops.iter().filter(|o| o.from_graph).count();
    if graphed > 0 {
        out.push(format!(
            "{graphed} of the {} operations were launched by a CUDA graph already (cudaGraphLaunch in the trace): the recording is of a step that is at least partly captured, so its host side is not an eager step's and capturing it again saves nothing there; price a recording of the step run eagerly",
            walk.ops.len()
        ));
    }
    let nccl = walk.kernels().filter(|o| o.name.contains("nccl")).count();
    if nccl > 0 {
        out.push(format!(
            "{nccl} NCCL kernels are replayed for their recorded duration, which includes their waits on other ranks"
        ));
    }
    out
}

/// A warning where `walk` holds operations of more than one device: a CUDA graph is captured
/// and launched on one device, and both prices lay every recorded operation out as one
/// device's walk (the replay runs them all on `--device`; the offline model shares one
/// device's SMs and memory between them, and streams of the same id on two devices are one
/// lane): near one graph per device where the devices took turns, not where they overlapped.
fn several_devices(walk: &Walk, on_lanes: bool) -> Option<String> {
    let devices: std::collections::BTreeSet<u32> =
        walk.ops.iter().filter_map(|o| o.device).collect();
    if devices.len() < 2 {
        return None;
    }
    let how = if on_lanes {
        "the replay runs all of them on the one GPU it replays on"
    } else {
        "the offline model lays all of them out on one device, sharing its SMs and memory"
    };
    let list = devices
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let first = devices.first().copied().unwrap_or(0);
    Some(format!(
        "the trace holds operations of {} devices ({list}); a CUDA graph runs on one device, and {how}: where the devices took turns (a model split across them) that is near one graph per device run one after another, but where they ran at once it is what none of them does; price each device's step on its own with --trace-device (e.g. --trace-device {first}; in Python trace_device={first})",
        devices.len()
    ))
}

/// Why a replay on `device` prices the replayed graph alone where `choice` asked for the mean
/// of it and the offline model: no device profile describes this GPU (none is shipped for it
/// and `--profile` gave none of it).
pub fn no_profile_for_the_mean(device: &str, choice: crate::pricing::GraphStepChoice) -> String {
    let why = match choice {
        crate::pricing::GraphStepChoice::Mean => {
            "--graph-step mean found no device profile of this GPU (pass --profile FILE, written by `launch-econ --export-json FILE` on it)"
        }
        _ => {
            "no device profile describes it, so the offline model cannot price the mean of the two: pass --profile FILE, written by `launch-econ --export-json FILE` on this kind of GPU (on H100s, each with a profile of an H100, the mean came within 10% of the real graph on 206 of 273 held-out walks against 177 for the replay alone, within 5% on 132 against 111: scripts/h100_graph_step_choice.py)"
        }
    };
    format!("the graph step on this GPU ({device}) is the replayed graph alone: {why}")
}

/// How far the front-end gap a replay measured may sit above the device profile's before the
/// replay says so, µs: the H200 instances whose replays were within 5% measured 0.065–0.098
/// against the shipped profile's 0.068.
pub const FRONT_END_GAP_SLACK_US: f64 = 0.03;

/// How far `measured_us` sits above `profile_us`, where that is more than
/// [`FRONT_END_GAP_SLACK_US`].
fn gap_excess_us(measured_us: f64, profile_us: f64) -> Option<f64> {
    Some(measured_us - profile_us).filter(|&over| over > FRONT_END_GAP_SLACK_US)
}

/// A warning where the front-end gap measured on this run (`measured_us`, added to every
/// replayed node) sits more than [`FRONT_END_GAP_SLACK_US`] above the one `profile_us` of the
/// same device measured: on H200 instances where it did (0.10–0.21 µs against 0.068) the real
/// graphs did not follow, and the replayed graph came out high by about the difference a node,
/// while the same quantity measured with a profiler stayed put (`docs/host-gap-h200.json`).
pub fn front_end_gap_above_profile(
    measured_us: f64,
    profile_us: f64,
    device: &str,
    nodes: usize,
) -> Option<String> {
    gap_excess_us(measured_us, profile_us).map(|over| {
        format!(
            "the front-end gap measured on this run ({measured_us:.3} us a node) is {over:.3} us above the {profile_us:.3} the {device} profile measured; on H200 instances where it was, real graphs did not cost that much more and the replayed graph step came out high by about the difference a node (here up to {:.4} ms over {nodes} nodes): read it as an upper bound: the replay takes the profile's gap unless asked to measure it (`--node-gap profile`, the default)",
            over * nodes as f64 / 1e3
        )
    })
}

/// The default run's counterpart of [`front_end_gap_above_profile`]: its estimate of the gap
/// (stored in the profile it writes) sits more than [`FRONT_END_GAP_SLACK_US`] above the one
/// the profile shipped for this kind of GPU (`shipped_us`) holds.
pub fn estimated_gap_above_shipped(
    estimated_us: f64,
    shipped_us: f64,
    device: &str,
) -> Option<String> {
    gap_excess_us(estimated_us, shipped_us).map(|over| {
        format!(
            "the front-end gap estimated on this run ({estimated_us:.3} us a node) is {over:.3} us above the {shipped_us:.3} of the shipped {device} profile; on H200 instances where it was, real graphs did not cost that much more: `replay` plans with the shipped profile's gap, and would take this estimate only from this run's JSON passed as --profile"
        )
    })
}

/// The default run could not measure the spin kernel's profiled ramp (`detail`: why), so its
/// gap assumes the H200's.
pub fn ramp_not_measured(detail: &str) -> String {
    format!(
        "the spin kernel's profiled ramp could not be measured ({detail}): the graph node gap in this profile assumes the H200's {:.0} ns; on an H100 it measured 930-990 ns, and a gap computed with the H200's came 0.28 us a node high",
        crate::calibration::DEFAULT_SPIN_RAMP_NS
    )
}

/// `replay` on a GPU with no profile that measured the spin's ramp (and no `--spin-ramp-ns`):
/// its stand-ins are asked for the H200's.
pub fn ramp_of_another_gpu(device: &str) -> String {
    format!(
        "no profile of this GPU ({device}) holds the spin kernel's profiled ramp, so the stand-ins are asked for recorded durations less the H200's {:.0} ns; on an H100 it measured 930-990 ns, and one-stream replays there that used the H200's came 7-27% high: pass --profile with a profile the default run wrote on this kind of GPU (it measures the ramp with CUPTI), or --spin-ramp-ns",
        crate::calibration::DEFAULT_SPIN_RAMP_NS
    )
}

#[cfg(test)]
mod readme_totals;

#[cfg(test)]
mod tests;
