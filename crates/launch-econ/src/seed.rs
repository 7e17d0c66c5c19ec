//! The seed's method: N eager launches of a 4096-element `add`, 20 repetitions with one
//! synchronize at the end, then the same N captured once and replayed 20 times.
//!
//! This reproduces the question as it was first asked, and prints its two lines exactly, so
//! results stay comparable with earlier runs. The `measure` module separates what these two
//! numbers mix together.

use std::time::Instant;

use anyhow::Context;
use memra_engine::Engine;

use crate::options::RunArgs;

/// Elements of the trivial kernel: small enough that GPU time is not the story.
pub const ADD_ELEMS: usize = 4096;
/// Repetitions of the round, as in the seed.
pub const REPS: usize = 20;
/// The step37 verify round the seed prices.
pub const ROUND_LAUNCHES: f64 = 1346.0;

/// Microseconds per launch, eager and as graph replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeedResult {
    pub launches: u64,
    pub eager_us: f64,
    pub graph_us: f64,
}

impl SeedResult {
    /// The seed's estimate: per-launch difference times the round's 1346 launches, in ms.
    pub fn seed_saving_ms(&self) -> f64 {
        (self.eager_us - self.graph_us) * ROUND_LAUNCHES / 1000.0
    }

    /// The seed's first line.
    pub fn line(&self) -> String {
        format!(
            "launches={} eager={:.3} us/launch graph-replay={:.3} us/launch ratio={:.2}x",
            self.launches,
            self.eager_us,
            self.graph_us,
            self.eager_us / self.graph_us.max(1e-9)
        )
    }
}

/// The seed's second line, for a saving in ms.
pub fn saving_line(saving_ms: f64) -> String {
    format!(
        "predicted saving on a step37 verify round (1346 launches, 7.9 ms measured host issue): {saving_ms:.2} ms"
    )
}

/// Runs the seed's measurement on `e`.
pub fn measure(e: &Engine, n: usize) -> memra_engine::Result<SeedResult> {
    let a = e.htod(&vec![1.0f32; ADD_ELEMS])?;
    let b = e.htod(&vec![2.0f32; ADD_ELEMS])?;
    let mut y = e.zeros::<f32>(ADD_ELEMS)?;
    for _ in 0..64 {
        e.add(&a, &b, &mut y, ADD_ELEMS)?;
    }
    e.stream().synchronize()?;
    let t = Instant::now();
    for _ in 0..REPS {
        for _ in 0..n {
            e.add(&a, &b, &mut y, ADD_ELEMS)?;
        }
    }
    e.stream().synchronize()?;
    let eager_us = t.elapsed().as_secs_f64() * 1e6 / (REPS * n) as f64;

    let (graph, _keeper) = e.capture_graph_retained(|eng| {
        let mut scratch = y.clone();
        for _ in 0..n {
            eng.add(&a, &b, &mut scratch, ADD_ELEMS)?;
        }
        Ok(())
    })?;
    for _ in 0..4 {
        graph.launch()?;
    }
    e.stream().synchronize()?;
    let t = Instant::now();
    for _ in 0..REPS {
        graph.launch()?;
    }
    e.stream().synchronize()?;
    let graph_us = t.elapsed().as_secs_f64() * 1e6 / (REPS * n) as f64;
    Ok(SeedResult {
        launches: n as u64,
        eager_us,
        graph_us,
    })
}

/// `launch-econ [N]`: prints the seed's two lines.
pub fn run(args: &RunArgs) -> anyhow::Result<()> {
    let e = Engine::new(args.device)
        .with_context(|| format!("starting the engine on GPU {}", args.device))?;
    let r = measure(&e, args.n_launches as usize).context("measuring launches")?;
    println!("{}", r.line());
    println!("{}", saving_line(r.seed_saving_ms()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_have_the_seed_format() {
        let r = SeedResult {
            launches: 1346,
            eager_us: 4.1234,
            graph_us: 0.98765,
        };
        assert_eq!(
            r.line(),
            "launches=1346 eager=4.123 us/launch graph-replay=0.988 us/launch ratio=4.17x"
        );
        assert!((r.seed_saving_ms() - (4.1234 - 0.98765) * 1.346).abs() < 1e-12);
        assert_eq!(
            saving_line(4.2204),
            "predicted saving on a step37 verify round (1346 launches, 7.9 ms measured host issue): 4.22 ms"
        );
    }
}
