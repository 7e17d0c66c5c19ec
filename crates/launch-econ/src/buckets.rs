//! A set of graphs, one per batch-size bucket (vLLM's way), against one executable switched
//! between sizes by exec update (SGLang's way): start-up time, device memory, the cost of a
//! switch, and what rounding a batch up to its bucket costs on the GPU.
//!
//! A bucket of batch size `b` is a chain of `nodes` `add` kernels over `b × elems_per_batch`
//! elements: input and output are persistent buffers sized for the largest bucket, and each
//! kernel writes an intermediate (an activation). A bucket graph allocates its intermediates
//! inside its capture and keeps them, as a framework's graph-private memory pool does; the one
//! switched executable uses one set of largest-size intermediates for every size. Each graph is
//! checked: it writes its own prefix of the output and nothing beyond.

use std::time::Instant;

use anyhow::{bail, Context as _};
use memra_engine::{DeviceBuffer, Engine, Graph};
use serde::{Deserialize, Serialize};

use crate::stats::Summary;

/// What a buckets run does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BucketsConfig {
    /// Batch sizes, ascending.
    pub sizes: Vec<u64>,
    pub nodes: usize,
    pub elems_per_batch: usize,
    /// Replays timed per bucket, and switches timed per size.
    pub repeats: usize,
}

/// One bucket's graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    pub size: u64,
    pub elems: usize,
    /// Capture + instantiate + upload, ms (what start-up pays for this bucket).
    pub build_ms: f64,
    pub capture_ms: f64,
    pub instantiate_ms: f64,
    pub upload_ms: f64,
    /// GPU time of one replay, µs (events).
    pub replay_gpu_us: Summary,
    /// Switching the one executable to this size: capture + cuGraphExecUpdate, µs.
    pub switch_us: Summary,
    /// Of the switch: cuGraphExecUpdate alone, µs.
    pub switch_update_us: Summary,
}

/// Everything a buckets run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BucketsResult {
    pub config: BucketsConfig,
    pub buckets: Vec<Bucket>,
    /// Building every bucket's graph, s.
    pub set_build_s: f64,
    /// Device memory the bucket set holds (free memory before − after building it), bytes.
    pub set_memory_bytes: i64,
    /// Free memory after the set is dropped minus before it was built, bytes (0: back to the
    /// level before; the driver reports free memory in 2 MiB steps).
    pub returned_diff_bytes: i64,
    /// The one executable: its largest-size intermediates allocated and the graph built, ms.
    pub one_exec_build_ms: f64,
    /// Device memory of the one executable and its intermediates, bytes.
    pub one_exec_memory_bytes: i64,
    /// Graph-memory attribute (cuDeviceGetGraphMemAttribute) used at the end, bytes.
    pub graph_mem_used_high: u64,
    /// Bucket graphs whose outputs were checked.
    pub checked: usize,
}

struct Bufs {
    a: DeviceBuffer<f32>,
    b: DeviceBuffer<f32>,
    y: DeviceBuffer<f32>,
}

/// `y = a + nodes × b` over the first `n` elements, through `nodes - 1` intermediates: those
/// of `shared` (sized for the largest bucket), or allocated here (inside a capture, the graph's
/// own).
fn step(
    e: &Engine,
    w: &mut Bufs,
    shared: Option<&mut [DeviceBuffer<f32>]>,
    nodes: usize,
    n: usize,
) -> memra_engine::Result<()> {
    let mut private: Vec<DeviceBuffer<f32>>;
    let acts: &mut [DeviceBuffer<f32>] = match shared {
        Some(s) => s,
        None => {
            private = (1..nodes)
                .map(|_| e.zeros(n))
                .collect::<memra_engine::Result<_>>()?;
            &mut private
        }
    };
    for i in 0..nodes {
        let last = i + 1 == nodes;
        match (i, last) {
            (0, true) => e.add(&w.a, &w.b, &mut w.y, n)?,
            (0, false) => e.add(&w.a, &w.b, &mut acts[0], n)?,
            (_, true) => e.add(&acts[i - 1], &w.b, &mut w.y, n)?,
            (_, false) => {
                let (done, rest) = acts.split_at_mut(i);
                e.add(&done[i - 1], &w.b, &mut rest[0], n)?
            }
        }
    }
    Ok(())
}

fn free(e: &Engine) -> anyhow::Result<i64> {
    e.stream().synchronize()?;
    Ok(e.mem_get_info()?.0 as i64)
}

fn gpu_us(e: &Engine, g: &Graph) -> anyhow::Result<f64> {
    Ok(e.gpu_time_ms(|| g.launch())? * 1e3)
}

/// Fails unless `y` holds `a + nodes × b` in its first `n` elements and 0 after.
fn check(
    e: &Engine,
    y: &DeviceBuffer<f32>,
    nodes: usize,
    n: usize,
    what: &str,
) -> anyhow::Result<()> {
    let want = A + nodes as f32 * B;
    let v = e.dtoh(y)?;
    if let Some(i) = v[..n].iter().position(|&x| x != want) {
        bail!("{what}: element {i} is {}, expected {want}", v[i]);
    }
    if let Some(i) = v[n..].iter().position(|&x| x != 0.0) {
        bail!("{what}: element {} beyond its size was written", n + i);
    }
    Ok(())
}

const A: f32 = 1.0;
const B: f32 = 2.0;

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub fn run(
    e: &Engine,
    c: &BucketsConfig,
    interrupted: &dyn Fn() -> bool,
) -> anyhow::Result<BucketsResult> {
    let max = *c.sizes.last().context("no bucket sizes")? as usize * c.elems_per_batch;
    let mut w = Bufs {
        a: e.htod(&vec![A; max])?,
        b: e.htod(&vec![B; max])?,
        y: e.zeros(max)?,
    };
    // The driver's one-time graph set-up in this context, outside every figure.
    drop(e.capture_graph(|eng| step(eng, &mut w, None, 1, 1))?);

    let before = free(e)?;
    let t = Instant::now();
    let mut set = Vec::new();
    for &size in &c.sizes {
        if interrupted() {
            bail!(crate::interrupt::Interrupted);
        }
        let n = size as usize * c.elems_per_batch;
        // No eager warm-up: its intermediates would be held by the graph too.
        let g = e
            .capture_graph_cold(|eng| step(eng, &mut w, None, c.nodes, n))
            .with_context(|| format!("capturing the bucket of batch {size}"))?;
        set.push((size, n, g));
    }
    let set_build_s = t.elapsed().as_secs_f64();
    let set_memory_bytes = before - free(e)?;

    let mut checked = 0;
    for (size, n, g) in &set {
        e.memset_zero(&mut w.y, max * 4)?;
        g.launch()?;
        check(e, &w.y, c.nodes, *n, &format!("the bucket of batch {size}"))?;
        checked += 1;
    }
    // Replays timed round-robin over the buckets, so clock and cache drift hits them alike.
    let mut replays = vec![Vec::new(); set.len()];
    for round in 0..c.repeats + 1 {
        for (i, (_, _, g)) in set.iter().enumerate() {
            let us = gpu_us(e, g)?;
            if round > 0 {
                replays[i].push(us);
            }
        }
    }
    let mut buckets = Vec::new();
    for ((size, n, g), r) in set.iter().zip(&replays) {
        let ct = g.timings();
        buckets.push(Bucket {
            size: *size,
            elems: *n,
            build_ms: ms(ct.capture + ct.instantiate + ct.upload),
            capture_ms: ms(ct.capture),
            instantiate_ms: ms(ct.instantiate),
            upload_ms: ms(ct.upload),
            replay_gpu_us: Summary::of(r),
            switch_us: Summary::of(&[]),
            switch_update_us: Summary::of(&[]),
        });
    }
    drop(set);
    let returned_diff_bytes = free(e)? - before;

    // One executable, switched between sizes by exec update.
    let before_one = free(e)?;
    let t = Instant::now();
    let mut acts = (1..c.nodes)
        .map(|_| e.zeros::<f32>(max))
        .collect::<memra_engine::Result<Vec<_>>>()?;
    let mut one = e.capture_graph_cold(|eng| step(eng, &mut w, Some(&mut acts), c.nodes, max))?;
    let one_exec_build_ms = ms(t.elapsed());
    let one_exec_memory_bytes = before_one - free(e)?;
    let mut switch = vec![Vec::new(); c.sizes.len()];
    let mut update = vec![Vec::new(); c.sizes.len()];
    for _ in 0..c.repeats {
        for (i, &size) in c.sizes.iter().enumerate() {
            if interrupted() {
                bail!(crate::interrupt::Interrupted);
            }
            let n = size as usize * c.elems_per_batch;
            let t = Instant::now();
            let r = one.update(|eng| step(eng, &mut w, Some(&mut acts), c.nodes, n))?;
            switch[i].push(t.elapsed().as_secs_f64() * 1e6);
            update[i].push(r.update.as_secs_f64() * 1e6);
        }
    }
    // The switched executable computes the last size's step.
    let last = *c.sizes.last().unwrap_or(&1) as usize * c.elems_per_batch;
    e.memset_zero(&mut w.y, max * 4)?;
    one.launch()?;
    check(e, &w.y, c.nodes, last, "the switched executable")?;
    checked += 1;
    for (b, (s, u)) in buckets.iter_mut().zip(switch.iter().zip(&update)) {
        b.switch_us = Summary::of(s);
        b.switch_update_us = Summary::of(u);
    }
    let graph_mem_used_high = e.graph_memory()?.used_high;
    Ok(BucketsResult {
        config: c.clone(),
        buckets,
        set_build_s,
        set_memory_bytes,
        returned_diff_bytes,
        one_exec_build_ms,
        one_exec_memory_bytes,
        graph_mem_used_high,
        checked,
    })
}
