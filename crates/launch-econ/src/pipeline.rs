//! A pipeline-parallel round: stage 1 on one engine, its activation copied to the next, and so
//! on, measured three ways — eager, as one multi-device graph, and as one graph per stage
//! launched in order with events — and checked against a CPU reference.
//!
//! A round carries `M` micro-batches through the stages. Stage `s` runs `K` `add` kernels on a
//! micro-batch, each adding the stage's vector `v_s` to its activation (ping-ponging between
//! two buffers of that micro-batch), then copies the activation to stage `s + 1`. Each stage
//! has its own stream and waits only for the previous stage's hand-off of the same
//! micro-batch, so with `M > 1` stage `s` works on micro-batch `m` while stage `s − 1` already
//! works on `m + 1` — the overlap real pipeline parallelism has. The round resets stage 0's
//! activation of micro-batch `m` to `x0 + m`, so it computes `x0 + m + K · Σ v_s` exactly
//! (small integers in `f32`), and every micro-batch's result is checked.

use std::time::Instant;

use anyhow::{bail, Context as _};
use memra_engine::{DeviceBuffer, Engine, Event, Graph, Keeper, PeerPath};
use serde::{Deserialize, Serialize};

use crate::figures::{headline_warnings, Summaries};
use crate::runner::{Context, Convergence, StopRule};
use crate::stats::median;

/// What a pipeline run does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineConfig {
    /// Device ordinal of each stage.
    pub stage_devices: Vec<usize>,
    pub stage_launches: usize,
    pub activation_bytes: usize,
    pub rule: StopRule,
    pub reps: usize,
    pub warmup: usize,
    /// Micro-batches per round, in flight across the stages at once.
    #[serde(default = "one")]
    pub microbatches: usize,
}

fn one() -> usize {
    1
}

/// One trial, ms per round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PipelineTrial {
    pub eager_issue_ms: f64,
    pub eager_wall_ms: f64,
    pub graph_wall_ms: f64,
    pub per_device_issue_ms: f64,
    pub per_device_wall_ms: f64,
}

/// Everything a pipeline run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineResult {
    pub config: PipelineConfig,
    /// How each stage reaches the next (`SameDevice`, `Direct`, `ThroughHost`).
    pub links: Vec<String>,
    /// Bandwidth of one large stage-0 → stage-1 copy, GB/s (median of 5), if there are 2 stages.
    pub copy_gb_per_s: Option<f64>,
    pub graph_nodes: usize,
    pub graph_build_ms: f64,
    pub per_device_build_ms: f64,
    pub trials: Vec<PipelineTrial>,
    pub summary: Summaries<PipelineFigure>,
    pub convergence: Vec<Convergence>,
    pub warnings: Vec<String>,
    /// Rounds checked against the CPU reference (after eager, one-graph and per-device rounds).
    pub checked_rounds: usize,
    /// True when an interrupt cut the trials short.
    pub interrupted: bool,
}

impl PipelineResult {
    pub fn median(&self, f: PipelineFigure) -> f64 {
        self.summary.median(f)
    }
}

crate::figures::figure_set! {
    /// The figures of a pipeline trial, ms per round.
    PipelineFigure for PipelineTrial, headline [EagerWallMs, GraphWallMs, PerDeviceWallMs] {
        EagerIssueMs => "eager_issue_ms", |t| t.eager_issue_ms;
        EagerWallMs => "eager_wall_ms", |t| t.eager_wall_ms;
        GraphWallMs => "graph_wall_ms", |t| t.graph_wall_ms;
        PerDeviceIssueMs => "per_device_issue_ms", |t| t.per_device_issue_ms;
        PerDeviceWallMs => "per_device_wall_ms", |t| t.per_device_wall_ms;
    }
}

/// One micro-batch's activation on one stage: the kernels ping-pong between the two.
struct Activation {
    ping: DeviceBuffer<f32>,
    pong: DeviceBuffer<f32>,
}

struct Stage {
    engine: Engine,
    v: DeviceBuffer<f32>,
    /// One per micro-batch, so a stage can take micro-batch `m + 1` while the next stage still
    /// reads `m`.
    acts: Vec<Activation>,
    /// Recorded on this stage's stream after each hand-off copy: the next stage may start on
    /// that micro-batch (a wait takes the record issued just before it).
    handoff: Option<Event>,
}

struct Pipeline {
    stages: Vec<Stage>,
    /// Stage 0's input of each micro-batch: `x0 + m`.
    x0: Vec<DeviceBuffer<f32>>,
    /// Recorded on the last stage's stream when the round ends; stage 0 joins on it.
    done: Event,
    k: usize,
    n: usize,
}

impl Pipeline {
    fn new(
        engines: Vec<Engine>,
        k: usize,
        n: usize,
        microbatches: usize,
    ) -> anyhow::Result<Pipeline> {
        let x0 = (0..microbatches)
            .map(|m| {
                let host: Vec<f32> = (0..n).map(|i| ((i % 7) + m) as f32).collect();
                engines[0].htod(&host)
            })
            .collect::<memra_engine::Result<Vec<_>>>()?;
        let last = engines.len() - 1;
        let mut stages = Vec::new();
        for (s, e) in engines.iter().enumerate() {
            let acts = (0..microbatches)
                .map(|_| {
                    Ok(Activation {
                        ping: e.zeros(n)?,
                        pong: e.zeros(n)?,
                    })
                })
                .collect::<memra_engine::Result<Vec<_>>>()?;
            stages.push(Stage {
                v: e.htod(&vec![(s + 1) as f32; n])?,
                acts,
                handoff: if s < last { Some(e.event()?) } else { None },
                engine: e.clone(),
            });
        }
        let done = engines[last].event()?;
        Ok(Pipeline {
            stages,
            x0,
            done,
            k,
            n,
        })
    }

    fn microbatches(&self) -> usize {
        self.x0.len()
    }

    /// The exact result of micro-batch `m`.
    fn reference(&self, m: usize) -> Vec<f32> {
        let sum: f32 = (1..=self.stages.len()).map(|s| s as f32).sum();
        (0..self.n)
            .map(|i| ((i % 7) + m) as f32 + self.k as f32 * sum)
            .collect()
    }

    /// Stage `s`'s kernels on micro-batch `m` and its hand-off, on the stage's own stream.
    fn stage_work(&mut self, s: usize, m: usize) -> memra_engine::Result<()> {
        let (n, k) = (self.n, self.k);
        if s == 0 {
            let st = &mut self.stages[0];
            st.engine.copy(&self.x0[m], &mut st.acts[m].ping, n)?;
        }
        let (head, tail) = self.stages.split_at_mut(s + 1);
        let st = &mut head[s];
        let a = &mut st.acts[m];
        for i in 0..k {
            if i % 2 == 0 {
                st.engine.add(&a.ping, &st.v, &mut a.pong, n)?;
            } else {
                st.engine.add(&a.pong, &st.v, &mut a.ping, n)?;
            }
        }
        if let Some(next) = tail.first_mut() {
            let out = if k % 2 == 0 { &a.ping } else { &a.pong };
            st.engine
                .copy_to_peer(out, &next.engine, &mut next.acts[m].ping, n)?;
        }
        Ok(())
    }

    /// One round: `stage(self, s, m)` issues stage `s` on micro-batch `m` on its stream,
    /// micro-batch by micro-batch; events hand each micro-batch from stage to stage, and stage
    /// 0 joins on the last (which also makes inside a capture the fork to the other engines and
    /// the join back).
    fn chain(
        &mut self,
        mut stage: impl FnMut(&mut Self, usize, usize) -> memra_engine::Result<()>,
    ) -> memra_engine::Result<()> {
        let last = self.stages.len() - 1;
        for m in 0..self.microbatches() {
            for s in 0..=last {
                if s > 0 {
                    if let Some(h) = &self.stages[s - 1].handoff {
                        self.stages[s].engine.wait_event(h)?;
                    }
                }
                stage(self, s, m)?;
                if let Some(h) = &self.stages[s].handoff {
                    h.record()?;
                }
            }
        }
        if last > 0 {
            self.done.record()?;
            self.stages[0].engine.wait_event(&self.done)?;
        }
        Ok(())
    }

    /// One round issued eagerly (also the body of the one-graph capture).
    fn round(&mut self) -> memra_engine::Result<()> {
        self.chain(|p, s, m| p.stage_work(s, m))
    }

    /// One graph per stage and micro-batch; stage 0's include the reset to `x0 + m`. Also
    /// returns the build time (capture, instantiate, upload; the eager warm-up of each capture
    /// not counted).
    fn capture_per_stage(&mut self) -> anyhow::Result<(Vec<Vec<Graph>>, f64)> {
        let mut graphs = Vec::new();
        let mut build_ms = 0.0;
        for s in 0..self.stages.len() {
            let e = self.stages[s].engine.clone();
            let mut per_mb = Vec::new();
            for m in 0..self.microbatches() {
                let g = e.capture_graph(|_| self.stage_work(s, m))?;
                build_ms += build_time_ms(&g);
                per_mb.push(g);
            }
            graphs.push(per_mb);
        }
        Ok((graphs, build_ms))
    }

    /// Overwrites the last stage's outputs with NaN, so a round that does not run (an empty or
    /// stale graph) cannot pass the check.
    fn poison(&mut self) -> memra_engine::Result<()> {
        let k = self.k;
        let st = self.stages.last_mut().expect("at least one stage");
        let nan = vec![f32::NAN; self.n];
        for a in &mut st.acts {
            let out = if k % 2 == 0 { &mut a.ping } else { &mut a.pong };
            st.engine.htod_into(&nan, out)?;
        }
        Ok(())
    }

    /// One round of the per-stage graphs, launched in order with events between stages.
    fn launch_per_stage(&mut self, graphs: &[Vec<Graph>]) -> memra_engine::Result<()> {
        self.chain(|_, s, m| graphs[s][m].launch())
    }

    fn sync(&self) -> memra_engine::Result<()> {
        for st in &self.stages {
            st.engine.stream().synchronize()?;
        }
        Ok(())
    }

    fn check(&self, what: &str) -> anyhow::Result<()> {
        let st = self.stages.last().expect("at least one stage");
        for (m, a) in st.acts.iter().enumerate() {
            let out = if self.k % 2 == 0 { &a.ping } else { &a.pong };
            let got = st.engine.dtoh(out)?;
            let want = self.reference(m);
            if let Some(i) = (0..self.n).find(|&i| got[i] != want[i]) {
                bail!(
                    "pipeline result after {what} differs from the CPU reference in micro-batch {m} at element {i}: {} != {}",
                    got[i],
                    want[i]
                );
            }
        }
        Ok(())
    }
}

/// Capture, instantiate and upload of `g`, ms.
fn build_time_ms(g: &Graph) -> f64 {
    let t = g.timings();
    (t.capture + t.instantiate + t.upload).as_secs_f64() * 1e3
}

/// Bandwidth of a large copy from `a` to `b`, GB/s, median of 5.
fn copy_bandwidth(a: &Engine, b: &Engine) -> anyhow::Result<f64> {
    let n = 64 << 20; // 256 MiB of f32
    let src = a.zeros::<f32>(n)?;
    let mut dst = b.zeros::<f32>(n)?;
    let mut gbs = Vec::new();
    for _ in 0..5 {
        let ms = a.gpu_time_ms(|| a.copy_to_peer(&src, b, &mut dst, n))?;
        gbs.push((n * 4) as f64 / (ms * 1e-3) / 1e9);
    }
    Ok(median(&gbs))
}

/// Runs the pipeline on `engines` (one per stage).
pub fn run(
    engines: Vec<Engine>,
    cfg: &PipelineConfig,
    ctx: &Context<'_>,
) -> anyhow::Result<PipelineResult> {
    let mut links = Vec::new();
    for w in engines.windows(2) {
        let path = w[0].enable_peer_access(&w[1])?;
        w[1].enable_peer_access(&w[0])?;
        links.push(format!(
            "{}->{}: {:?}",
            w[0].ordinal(),
            w[1].ordinal(),
            path
        ));
        if path == PeerPath::ThroughHost {
            eprintln!(
                "note: devices {} and {} cannot access each other; copies go through host memory",
                w[0].ordinal(),
                w[1].ordinal()
            );
        }
    }
    let copy_gb_per_s = match engines.len() {
        0 | 1 => None,
        _ => Some(copy_bandwidth(&engines[0], &engines[1]).context("measuring the stage copy")?),
    };
    let n = (cfg.activation_bytes / 4).max(1);
    let mut p = Pipeline::new(
        engines.clone(),
        cfg.stage_launches,
        n,
        cfg.microbatches.max(1),
    )?;
    let others: Vec<&Engine> = engines[1..].iter().collect();
    let (graph, _keeper): (Graph, Keeper) = engines[0]
        .capture_graph_across(&others, |_| p.round())
        .context("capturing the pipeline as one multi-device graph")?;
    let graph_build_ms = build_time_ms(&graph);
    let (stage_graphs, per_device_build_ms) = p
        .capture_per_stage()
        .context("capturing one graph per stage")?;
    let mut checked = 0;
    let per = 1e3 / cfg.reps as f64;
    let runner = ctx.runner(cfg.rule, cfg.warmup, 3);
    let out = runner.run::<PipelineFigure>(|order| {
        let mut tr = PipelineTrial::default();
        for &path in order {
            p.poison()?;
            let s = Instant::now();
            match path {
                0 => {
                    for _ in 0..cfg.reps {
                        p.round()?;
                    }
                    tr.eager_issue_ms = s.elapsed().as_secs_f64() * per;
                    p.sync()?;
                    tr.eager_wall_ms = s.elapsed().as_secs_f64() * per;
                    p.check("eager rounds")?;
                }
                1 => {
                    for _ in 0..cfg.reps {
                        graph.launch()?;
                    }
                    p.sync()?;
                    tr.graph_wall_ms = s.elapsed().as_secs_f64() * per;
                    p.check("one-graph replays")?;
                }
                _ => {
                    for _ in 0..cfg.reps {
                        p.launch_per_stage(&stage_graphs)?;
                    }
                    tr.per_device_issue_ms = s.elapsed().as_secs_f64() * per;
                    p.sync()?;
                    tr.per_device_wall_ms = s.elapsed().as_secs_f64() * per;
                    p.check("per-device graph rounds")?;
                }
            }
            checked += 1;
        }
        Ok(tr)
    })?;
    let mut warnings = headline_warnings::<PipelineFigure>(&out.trials);
    warnings.extend(out.convergence_warnings(cfg.rule.max_noise));
    Ok(PipelineResult {
        config: cfg.clone(),
        links,
        copy_gb_per_s,
        graph_nodes: graph.node_count(),
        graph_build_ms,
        per_device_build_ms,
        summary: Summaries::of(&out.trials),
        trials: out.trials,
        convergence: out.convergence,
        warnings,
        checked_rounds: checked,
        interrupted: out.interrupted,
    })
}

/// Device list for `--devices`: ordinals, no duplicates, at least one.
pub fn parse_devices(s: &str) -> Result<Vec<usize>, String> {
    let mut out: Vec<usize> = Vec::new();
    for item in s.split(',') {
        let d: usize = item
            .trim()
            .parse()
            .map_err(|_| format!("`{item}` is not a device ordinal"))?;
        if out.contains(&d) {
            return Err(format!(
                "device {d} is listed twice (use --stages to put several stages on one device)"
            ));
        }
        out.push(d);
    }
    if out.len() > 64 {
        return Err("more than 64 devices".into());
    }
    Ok(out)
}

/// Which device each stage runs on: one stage per listed device, or `stages` stages on a
/// single listed device (several streams of one GPU).
pub fn stage_devices(devices: &[usize], stages: Option<usize>) -> Result<Vec<usize>, String> {
    match (devices, stages) {
        (_, Some(0)) => Err("--stages must be at least 1".into()),
        ([d], Some(s)) => Ok(vec![*d; s]),
        (ds, Some(s)) if s != ds.len() => Err(format!(
            "--stages {s} does not match {} devices; give one device to run several stages on it",
            ds.len()
        )),
        (ds, _) => Ok(ds.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[ignore = "needs a CUDA device"]
    fn the_check_fails_when_a_graph_does_nothing() {
        let engines = vec![Engine::new(0).unwrap(), Engine::new(0).unwrap()];
        let mut p = Pipeline::new(engines.clone(), 4, 1024, 3).unwrap();
        p.round().unwrap();
        p.sync().unwrap();
        p.check("an eager round").unwrap();
        let empty = engines[0].capture_graph(|_| Ok(())).unwrap();
        p.poison().unwrap();
        empty.launch().unwrap();
        p.sync().unwrap();
        let e = p.check("an empty graph").unwrap_err().to_string();
        assert!(e.contains("differs from the CPU reference"), "{e}");
        // A real graph of the round passes again.
        let others: Vec<&Engine> = engines[1..].iter().collect();
        let (g, _k) = engines[0]
            .capture_graph_across(&others, |_| p.round())
            .unwrap();
        p.poison().unwrap();
        g.launch().unwrap();
        p.sync().unwrap();
        p.check("a real graph").unwrap();
    }

    #[test]
    fn device_lists() {
        assert_eq!(parse_devices("0,1"), Ok(vec![0, 1]));
        assert!(parse_devices("0,0").unwrap_err().contains("listed twice"));
        assert!(parse_devices("a")
            .unwrap_err()
            .contains("not a device ordinal"));
        assert!(parse_devices("").is_err());
        assert!(parse_devices("0,-1").is_err());
    }

    #[test]
    fn stages_map_to_devices() {
        assert_eq!(stage_devices(&[0], Some(2)), Ok(vec![0, 0]));
        assert_eq!(stage_devices(&[0, 1], None), Ok(vec![0, 1]));
        assert_eq!(stage_devices(&[0, 1], Some(2)), Ok(vec![0, 1]));
        assert!(stage_devices(&[0, 1], Some(3)).is_err());
        assert!(stage_devices(&[0], Some(0)).is_err());
    }
}
