//! What a one-block spin asked for nothing (and an empty kernel) costs as a graph node in the
//! engine's process: graphs of 64, 128 and 300 nodes timed alone and back to back, the
//! replay's node measurement and front-end gap estimate, on a fresh process, after the spin
//! calibration, and at the upper level of graph node cost. Compare with the same kernel in a
//! CuPy process (`scripts/graph_kernel_probe.py`) to see how far the engine's estimate of the
//! gap sits from a profiler's on this machine (`src/node_gap.rs`).
//!
//!     cargo run --release --example node_gap_probe
use launch_econ::calibration::{calibrate, DEFAULT_SPIN_RAMP_NS};
use launch_econ::node_gap::front_end_gap_us;
use launch_econ::stand_in::node_us;
use launch_econ::stats::median;
use memra_engine::{Engine, LaunchShape};
use std::time::Instant;

/// Issues one node of a probed kind.
type Issue = Box<dyn FnMut(&Engine) -> memra_engine::Result<()>>;

/// One replay of an `n`-node graph of `issue`, µs: alone (median of 9) and back to back in
/// batches of `reps` (median of 5 batches).
fn graph_us(
    e: &Engine,
    n: usize,
    reps: usize,
    issue: &mut dyn FnMut(&Engine) -> memra_engine::Result<()>,
) -> anyhow::Result<(f64, f64)> {
    let g = e.capture_graph(|eng| (0..n).try_for_each(|_| issue(eng)))?;
    g.launch()?;
    e.stream().synchronize()?;
    let mut single = Vec::new();
    for _ in 0..9 {
        single.push(e.gpu_time_ms(|| g.launch())? * 1e3);
    }
    let mut b2b = Vec::new();
    for _ in 0..5 {
        let t = e.gpu_time_ms(|| (0..reps).try_for_each(|_| g.launch()))? * 1e3;
        b2b.push(t / reps as f64);
    }
    Ok((median(&single), median(&b2b)))
}

/// Prints the node figures of the probed kinds in the process's present state.
fn row(e: &Engine, label: &str) -> anyhow::Result<()> {
    let mut slots = e.zeros::<u64>(Engine::SPIN_SLOT_WORDS)?;
    let one = LaunchShape::linear(1, 128);
    let mut kinds: Vec<(&str, Issue)> = vec![
        (
            "spin0",
            Box::new(move |eng: &Engine| eng.spin_grid(0, one, &mut slots, 0)),
        ),
        (
            "noop1x128",
            Box::new(move |eng: &Engine| eng.noop_shaped(one)),
        ),
    ];
    for (name, issue) in kinds.iter_mut() {
        let mut s = Vec::new();
        for n in [64usize, 128, 300] {
            let (single, b2b) = graph_us(e, n, 10, issue.as_mut())?;
            s.push((n, single, b2b));
        }
        let slope = |i: usize, j: usize, f: &dyn Fn(&(usize, f64, f64)) -> f64| {
            (f(&s[j]) - f(&s[i])) / (s[j].0 - s[i].0) as f64
        };
        println!(
            "{label} {name}: single {:?} | b2b {:?} | slope single 64-128 {:.4} 64-300 {:.4} | b2b 64-128 {:.4} 64-300 {:.4}",
            s.iter().map(|x| (x.0, (x.1 * 1000.0).round() / 1000.0)).collect::<Vec<_>>(),
            s.iter().map(|x| (x.0, (x.2 * 1000.0).round() / 1000.0)).collect::<Vec<_>>(),
            slope(0, 1, &|x| x.1),
            slope(0, 2, &|x| x.1),
            slope(0, 1, &|x| x.2),
            slope(0, 2, &|x| x.2),
        );
    }
    let mut slots = e.zeros::<u64>(Engine::SPIN_SLOT_WORDS)?;
    let nodes = (0..7)
        .map(|_| node_us(e, |eng| eng.spin_grid(0, one, &mut slots, 0)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    println!(
        "{label} node_us spin0 x7: {:?}",
        nodes
            .iter()
            .map(|x| (x * 1000.0).round() / 1000.0)
            .collect::<Vec<_>>()
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let t = Instant::now();
    let e = Engine::new(0)?;
    row(&e, "fresh")?;
    let cal = calibrate(&e, DEFAULT_SPIN_RAMP_NS)?;
    println!("cal {cal:?}");
    for i in 0..3 {
        println!("front_end_gap_us #{i}: {:.4}", front_end_gap_us(&e, &cal)?);
    }
    row(&e, "after-cal")?;
    launch_econ::other_stream::activate(&e)?;
    row(&e, "upper")?;
    for i in 0..3 {
        println!(
            "upper front_end_gap_us #{i}: {:.4}",
            front_end_gap_us(&e, &cal)?
        );
    }
    println!("took {:.1} s", t.elapsed().as_secs_f64());
    Ok(())
}
