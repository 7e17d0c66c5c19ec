//! Small adds beside a chain of decode GEMMs on another stream, in one graph: how much longer
//! an add runs while the GEMMs run. The device profile of `launch-econ` measures this (its
//! "small" points); `scripts/small_kernel_kind_probe.py` measures the same shapes in a
//! PyTorch process and finds the adds slowed about four times as much. This program takes
//! the engine's side apart: the adds' count, which lane is issued first, which stream runs
//! which lane, and how a sample is timed.
//!
//! ```sh
//! cargo run --release -p memra-engine --example small_beside -- [D] [ADDS] [REPS] [TRIALS]
//! ```
//!
//! `D`: the GEMMs' square size (1024); `ADDS`: adds in the chain (1920, the profile's count at
//! 1024); `REPS`: graph launches between the two events of a sample (1, as the profile
//! times); `TRIALS`: samples of each graph, interleaved (9). Prints one line per variant.

use memra_engine::{DeviceBuffer, Engine, Gemm, GemmType, LaunchShape};

/// Tokens of the GEMMs (cuBLAS column-major: n), as the profile's.
const TOKENS: u32 = 16;
/// Weight bytes of the GEMM chain: more than an H200's L2.
const CHAIN_BYTES: usize = 256 << 20;

struct Gemms {
    gemm: Gemm,
    weights: Vec<DeviceBuffer<u16>>,
    x: DeviceBuffer<u16>,
    y: DeviceBuffer<u16>,
}

impl Gemms {
    fn new(e: &Engine, d: u32) -> memra_engine::Result<Gemms> {
        let gemm = Gemm::plain(GemmType::F16, d, TOKENS, d);
        let (wa, xb, yb) = gemm.bytes();
        let layers = (CHAIN_BYTES / wa).max(1);
        Ok(Gemms {
            gemm,
            weights: (0..layers)
                .map(|_| e.zeros::<u16>(wa / 2))
                .collect::<memra_engine::Result<_>>()?,
            x: e.zeros::<u16>(xb / 2)?,
            y: e.zeros::<u16>(yb / 2)?,
        })
    }

    fn issue(&mut self, e: &Engine) -> memra_engine::Result<()> {
        for w in &self.weights {
            e.gemm(&self.gemm, w, &self.x, &mut self.y)?;
        }
        Ok(())
    }
}

/// Adds between two clock stamps in the stamped graph.
const STAMP_EVERY: usize = 64;

/// A one-block kernel that writes the GPU clock at its end into slot `slot` (word 3).
fn stamp(e: &Engine, slots: &mut DeviceBuffer<u64>, slot: usize) -> memra_engine::Result<()> {
    e.spin_grid(0, LaunchShape::linear(1, 32), slots, slot)
}

struct Adds {
    bufs: [DeviceBuffer<f32>; 3],
    count: usize,
}

impl Adds {
    fn new(e: &Engine, count: usize) -> memra_engine::Result<Adds> {
        let n = (TOKENS * 1024) as usize;
        Ok(Adds {
            bufs: [e.zeros(n)?, e.zeros(n)?, e.zeros(n)?],
            count,
        })
    }

    fn issue(&mut self, e: &Engine) -> memra_engine::Result<()> {
        let [a, b, y] = &mut self.bufs;
        let n = a.len();
        (0..self.count).try_for_each(|_| e.add(a, b, y, n))
    }
}

/// Positional argument `n` as a positive whole number, `default` where it is not given.
fn arg(n: usize, default: usize) -> Result<usize, String> {
    positive(std::env::args().nth(n), n, default)
}

/// `given` (positional argument `n`) as a positive whole number, `default` where it is `None`.
fn positive(given: Option<String>, n: usize, default: usize) -> Result<usize, String> {
    match given {
        None => Ok(default),
        Some(s) => match s.parse() {
            Ok(v) if v > 0 => Ok(v),
            _ => Err(format!(
                "argument {n} must be a positive whole number, got {s:?} (usage: small_beside [D] [ADDS] [REPS] [TRIALS])"
            )),
        },
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let d = u32::try_from(arg(1, 1024)?)?;
    let adds_count = arg(2, 1920)?;
    let reps = arg(3, 1)?;
    let trials = arg(4, 9)?;
    let main_engine = Engine::new(0)?;
    let side = Engine::new(0)?;
    main_engine.prepare_gemm()?;
    side.prepare_gemm()?;
    // As the profile measures: after another stream of the process ran kernels (the upper
    // level of per-node graph cost, where framework processes are).
    let third = Engine::new(0)?;
    (0..32).try_for_each(|_| third.noop())?;
    third.stream().synchronize()?;
    println!("d {d}, {adds_count} adds, {reps} launches a sample, {trials} trials");
    // (GEMMs on the main engine, adds on the side one) or swapped; GEMMs issued first or not.
    for (gemms_on_main, gemms_first) in [(true, true), (true, false), (false, true), (false, false)]
    {
        let (g_eng, a_eng) = if gemms_on_main {
            (&main_engine, &side)
        } else {
            (&side, &main_engine)
        };
        let mut gemms = Gemms::new(g_eng, d)?;
        let mut adds = Adds::new(a_eng, adds_count)?;
        let (fork, join) = (main_engine.event()?, side.event()?);
        let mut graph = |with_gemms: bool, with_adds: bool| {
            main_engine.capture_graph_across(&[&side], |eng| {
                fork.record()?;
                side.wait_event(&fork)?;
                let mut issue_gemms = || {
                    if with_gemms {
                        gemms.issue(g_eng)
                    } else {
                        Ok(())
                    }
                };
                if gemms_first {
                    issue_gemms()?;
                }
                if with_adds {
                    adds.issue(a_eng)?;
                }
                if !gemms_first {
                    issue_gemms()?;
                }
                join.record()?;
                eng.wait_event(&join)
            })
        };
        let (g_gemms, _k1) = graph(true, false)?;
        let (g_adds, _k2) = graph(false, true)?;
        let (g_both, _k3) = graph(true, true)?;
        let graphs = [&g_gemms, &g_adds, &g_both];
        for g in graphs {
            g.launch()?;
        }
        main_engine.stream().synchronize()?;
        let mut t = vec![Vec::new(); 3];
        for _ in 0..trials {
            for (g, t) in graphs.iter().zip(&mut t) {
                let ms = main_engine.gpu_time_ms(|| (0..reps).try_for_each(|_| g.launch()))?;
                t.push(ms * 1e3 / reps as f64);
            }
        }
        let [b, a, both] = [0, 1, 2].map(|k| median(t[k].clone()));
        let p = both - a;
        println!(
            "gemms on {:4}, {} first: gemms {b:8.1} us, adds {a:8.1} us, both {both:8.1} us, stretch {}",
            if gemms_on_main { "main" } else { "side" },
            if gemms_first { "gemms" } else { "adds " },
            if p < b { format!("{:.3}", p.max(0.0) / (b - p)) } else { "none (the adds lost more than the GEMMs' time)".into() }
        );
    }
    stamped(&main_engine, &side, d, adds_count, trials)?;
    Ok(())
}

/// The stretch read from clock stamps inside the graph of GEMMs (main engine, issued first)
/// beside the adds (side engine): per add node while the GEMMs ran against after they ended.
fn stamped(
    main_engine: &Engine,
    side: &Engine,
    d: u32,
    adds_count: usize,
    trials: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut gemms = Gemms::new(main_engine, d)?;
    let mut adds = Adds::new(side, STAMP_EVERY)?;
    let rounds = adds_count / STAMP_EVERY;
    let words = Engine::SPIN_SLOT_WORDS;
    let mut add_slots = side.zeros::<u64>((rounds + 1) * words)?;
    let mut gemm_slots = main_engine.zeros::<u64>(2 * words)?;
    let (fork, join) = (main_engine.event()?, side.event()?);
    let (g, _keep) = main_engine.capture_graph_across(&[side], |eng| {
        fork.record()?;
        side.wait_event(&fork)?;
        stamp(eng, &mut gemm_slots, 0)?;
        gemms.issue(eng)?;
        stamp(eng, &mut gemm_slots, 1)?;
        stamp(side, &mut add_slots, 0)?;
        for r in 0..rounds {
            adds.issue(side)?;
            stamp(side, &mut add_slots, r + 1)?;
        }
        join.record()?;
        eng.wait_event(&join)
    })?;
    g.launch()?;
    main_engine.stream().synchronize()?;
    let (mut during, mut after) = (Vec::new(), Vec::new());
    for _ in 0..trials {
        g.launch()?;
        main_engine.stream().synchronize()?;
        side.stream().synchronize()?;
        let a = side.dtoh(&add_slots)?;
        let gm = main_engine.dtoh(&gemm_slots)?;
        let (g0, g1) = (gm[3], gm[words + 3]);
        let t: Vec<u64> = (0..=rounds).map(|k| a[k * words + 3]).collect();
        let (mut dur, mut aft) = ((0u64, 0usize), (0u64, 0usize));
        for w in t.windows(2) {
            if w[0] >= g0 && w[1] <= g1 {
                dur = (dur.0 + (w[1] - w[0]), dur.1 + 1);
            } else if w[0] >= g1 {
                aft = (aft.0 + (w[1] - w[0]), aft.1 + 1);
            }
        }
        if dur.1 > 0 && aft.1 > 0 {
            during.push(dur.0 as f64 / 1e3 / (dur.1 * STAMP_EVERY) as f64);
            after.push(aft.0 as f64 / 1e3 / (aft.1 * STAMP_EVERY) as f64);
        }
    }
    if during.is_empty() {
        println!("stamped: no round of adds fell wholly inside and after the GEMMs");
        return Ok(());
    }
    let (dm, am) = (median(during), median(after));
    println!(
        "stamped (gemms on main, first): add node {dm:.3} us while the GEMMs ran, {am:.3} us after them: stretch {:.3}",
        dm / am - 1.0
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::positive;

    #[test]
    fn arguments_are_positive_whole_numbers_or_their_defaults() {
        assert_eq!(positive(None, 1, 1024), Ok(1024));
        assert_eq!(positive(Some("2048".into()), 1, 1024), Ok(2048));
        for bad in ["0", "-3", "1.5", "many", ""] {
            let e = positive(Some(bad.into()), 2, 1920).unwrap_err();
            assert!(
                e.contains("argument 2 must be a positive whole number"),
                "{e}"
            );
            assert!(e.contains("usage: small_beside"), "{e}");
        }
    }
}
