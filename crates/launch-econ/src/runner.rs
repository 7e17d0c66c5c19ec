//! The one trial loop every measuring command uses: warm-up trials reported apart, the
//! measured paths interleaved in a rotating order inside each trial (so drift in clocks or
//! other tenants hits every path alike), a stopping rule, Ctrl-C handling that keeps what was
//! measured, and progress on stderr.
//!
//! The stopping rule follows nvbench's relative-noise criterion: keep sampling until every
//! headline figure's relative noise is below `max_noise`, but not before `min_time` nor past
//! `max_time`; `--trials N` asks for a fixed count instead. The noise of a figure is the
//! relative standard error of its mean, `s / (|mean| · √n)` with `s` the sample standard
//! deviation. (A MAD-based estimate is zero whenever over half the samples are equal, as
//! quantised timers make them, and would stop too early.) No sample is ever dropped; figures
//! that did not converge are reported with their noise.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::figures::{values, FigureSet};

/// When to stop sampling.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StopRule {
    /// Exactly this many measured trials (the noise rule is not used).
    pub fixed_trials: Option<usize>,
    /// Never stop on noise before this much time (warm-up included), s.
    pub min_time_s: f64,
    /// Stop here whatever the noise (warm-up included), s. Neither time is used with
    /// `fixed_trials`.
    pub max_time_s: f64,
    /// Relative noise every headline figure must reach, e.g. 0.005.
    pub max_noise: f64,
    /// Never stop on noise with fewer measured trials than this.
    pub min_trials: usize,
}

impl StopRule {
    /// A fixed number of trials.
    pub fn fixed(trials: usize) -> StopRule {
        StopRule {
            fixed_trials: Some(trials),
            min_time_s: 0.0,
            max_time_s: 0.0,
            max_noise: 0.0,
            min_trials: trials,
        }
    }
}

/// Whether one headline figure reached the noise goal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Convergence {
    pub figure: String,
    /// Relative standard error of the mean (see the module documentation).
    pub noise: f64,
    pub converged: bool,
}

/// What the loop measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome<T> {
    pub warmup: Vec<T>,
    pub trials: Vec<T>,
    /// One entry per headline figure; empty for a fixed trial count.
    pub convergence: Vec<Convergence>,
    /// True when Ctrl-C (or SIGTERM) stopped the loop early.
    pub interrupted: bool,
}

impl<T> Outcome<T> {
    /// Warnings for the figures that did not reach the noise goal.
    pub fn convergence_warnings(&self, max_noise: f64) -> Vec<String> {
        self.convergence
            .iter()
            .filter(|c| !c.converged)
            .map(|c| {
                format!(
                    "{}: noise {:.2}% did not reach --max-noise {:.2}% before --max-time; consider a longer --max-time",
                    c.figure,
                    100.0 * c.noise,
                    100.0 * max_noise
                )
            })
            .collect()
    }
}

/// Relative standard error of the mean of `v`; infinite with fewer than two samples, a zero
/// mean or a non-finite sample.
pub fn relative_noise(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    if v.len() < 2 || v.iter().any(|x| !x.is_finite()) {
        return f64::INFINITY;
    }
    let mean = v.iter().sum::<f64>() / n;
    if mean.abs() < f64::EPSILON {
        return f64::INFINITY;
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    var.sqrt() / (mean.abs() * n.sqrt())
}

/// Time since the loop started; a mock in tests.
pub trait Clock {
    fn elapsed(&self) -> Duration;
}

/// The wall clock.
pub struct WallClock(Instant);

impl WallClock {
    pub fn start() -> WallClock {
        WallClock(Instant::now())
    }
}

impl Clock for WallClock {
    fn elapsed(&self) -> Duration {
        self.0.elapsed()
    }
}

/// Where the loop stands, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub warmup_done: usize,
    pub trials_done: usize,
    pub elapsed: Duration,
}

/// The loop. `interrupted` is asked before every trial.
pub struct Runner<'a> {
    pub rule: StopRule,
    pub warmup: usize,
    /// Number of measured paths; trial `i` runs them in the order `i, i+1, …` (mod paths).
    pub paths: usize,
    pub clock: Box<dyn Clock + 'a>,
    pub interrupted: &'a dyn Fn() -> bool,
    pub progress: &'a dyn Fn(Progress),
}

/// What every runner of one command shares: how to learn of an interrupt, and where progress
/// goes.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub interrupted: &'a dyn Fn() -> bool,
    pub progress: &'a dyn Fn(Progress),
}

impl<'a> Context<'a> {
    /// A runner whose clock starts now.
    pub fn runner(&self, rule: StopRule, warmup: usize, paths: usize) -> Runner<'a> {
        Runner {
            rule,
            warmup,
            paths,
            clock: Box::new(WallClock::start()),
            interrupted: self.interrupted,
            progress: self.progress,
        }
    }
}

impl Runner<'_> {
    /// The order trial `i` runs the paths in.
    pub fn order(&self, i: usize) -> Vec<usize> {
        (0..self.paths)
            .map(|k| (i + k) % self.paths.max(1))
            .collect()
    }

    /// Runs warm-up and measured trials; `trial` runs the paths in the order it is given and
    /// returns the trial's figures. The headline figures of `F` decide when to stop.
    pub fn run<F: FigureSet>(
        &self,
        trial: impl FnMut(&[usize]) -> anyhow::Result<F::Trial>,
    ) -> anyhow::Result<Outcome<F::Trial>> {
        self.run_with(trial, |trials: &[F::Trial]| {
            F::HEADLINE
                .iter()
                .map(|f| (f.key().to_string(), values(*f, trials)))
                .collect()
        })
    }

    /// Like [`Runner::run`] for trials whose headline figures are known only at run time:
    /// `headline` gives each one's name and values over the trials so far.
    pub fn run_with<T>(
        &self,
        mut trial: impl FnMut(&[usize]) -> anyhow::Result<T>,
        headline: impl Fn(&[T]) -> Vec<(String, Vec<f64>)>,
    ) -> anyhow::Result<Outcome<T>> {
        let mut out = Outcome {
            warmup: Vec::with_capacity(self.warmup),
            trials: Vec::new(),
            convergence: Vec::new(),
            interrupted: false,
        };
        let mut i = 0;
        loop {
            if (self.interrupted)() {
                out.interrupted = true;
                break;
            }
            let t = trial(&self.order(i))?;
            i += 1;
            let warming = out.warmup.len() < self.warmup;
            if warming {
                out.warmup.push(t);
            } else {
                out.trials.push(t);
            }
            (self.progress)(Progress {
                warmup_done: out.warmup.len(),
                trials_done: out.trials.len(),
                elapsed: self.clock.elapsed(),
            });
            if warming {
                continue;
            }
            if let Some(want) = self.rule.fixed_trials {
                if out.trials.len() >= want {
                    break;
                }
                continue;
            }
            let t = self.clock.elapsed().as_secs_f64();
            if t >= self.rule.max_time_s {
                break;
            }
            if t >= self.rule.min_time_s
                && self
                    .convergence(&headline(&out.trials), out.trials.len())
                    .iter()
                    .all(|c| c.converged)
            {
                break;
            }
        }
        if self.rule.fixed_trials.is_none() {
            out.convergence = self.convergence(&headline(&out.trials), out.trials.len());
        }
        Ok(out)
    }

    fn convergence(&self, figures: &[(String, Vec<f64>)], n: usize) -> Vec<Convergence> {
        figures
            .iter()
            .map(|(name, v)| {
                let noise = relative_noise(v);
                Convergence {
                    figure: name.clone(),
                    noise,
                    converged: noise <= self.rule.max_noise && n >= self.rule.min_trials,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};

    /// A clock the mock path advances.
    struct MockClock(Cell<Duration>);
    struct ClockRef<'c>(&'c MockClock);
    impl Clock for ClockRef<'_> {
        fn elapsed(&self) -> Duration {
            self.0 .0.get()
        }
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Fig {
        A,
    }
    impl FigureSet for Fig {
        type Trial = f64;
        const ALL: &'static [Fig] = &[Fig::A];
        const HEADLINE: &'static [Fig] = &[Fig::A];
        fn key(self) -> &'static str {
            "a"
        }
        fn value(self, t: &f64) -> f64 {
            *t
        }
    }

    fn rule() -> StopRule {
        StopRule {
            fixed_trials: None,
            min_time_s: 1.0,
            max_time_s: 5.0,
            max_noise: 0.005,
            min_trials: 3,
        }
    }

    fn runner<'a>(
        rule: StopRule,
        clock: &'a MockClock,
        stop: &'a dyn Fn() -> bool,
        progress: &'a dyn Fn(Progress),
    ) -> Runner<'a> {
        Runner {
            rule,
            warmup: 2,
            paths: 3,
            clock: Box::new(ClockRef(clock)),
            interrupted: stop,
            progress,
        }
    }

    #[test]
    fn paths_rotate_and_warmup_is_kept_apart() {
        let clock = MockClock(Cell::new(Duration::ZERO));
        let orders = RefCell::new(Vec::new());
        let r = runner(StopRule::fixed(3), &clock, &|| false, &|_| {});
        let out = r
            .run::<Fig>(|order| {
                orders.borrow_mut().push(order.to_vec());
                Ok(orders.borrow().len() as f64)
            })
            .unwrap();
        assert_eq!(out.warmup, vec![1.0, 2.0]);
        assert_eq!(out.trials, vec![3.0, 4.0, 5.0]);
        assert_eq!(
            orders.into_inner(),
            vec![
                vec![0, 1, 2],
                vec![1, 2, 0],
                vec![2, 0, 1],
                vec![0, 1, 2],
                vec![1, 2, 0]
            ]
        );
        assert!(out.convergence.is_empty() && !out.interrupted);
    }

    #[test]
    fn steady_figures_stop_at_min_time() {
        let clock = MockClock(Cell::new(Duration::ZERO));
        let r = runner(rule(), &clock, &|| false, &|_| {});
        let out = r
            .run::<Fig>(|_| {
                clock.0.set(clock.0.get() + Duration::from_millis(100));
                Ok(10.0)
            })
            .unwrap();
        // 2 warm-up + 8 measured trials reach 1.0 s; the figure is exactly steady.
        assert_eq!(out.trials.len(), 8);
        assert!(out.convergence[0].converged);
        assert_eq!(out.convergence[0].noise, 0.0);
    }

    #[test]
    fn noisy_figures_run_to_max_time_and_say_so() {
        let clock = MockClock(Cell::new(Duration::ZERO));
        let r = runner(rule(), &clock, &|| false, &|_| {});
        let k = Cell::new(0);
        let out = r
            .run::<Fig>(|_| {
                clock.0.set(clock.0.get() + Duration::from_millis(100));
                k.set(k.get() + 1);
                Ok(if k.get() % 2 == 0 { 10.0 } else { 20.0 })
            })
            .unwrap();
        assert_eq!(
            out.warmup.len() + out.trials.len(),
            50,
            "5 s of 0.1 s trials"
        );
        assert!(!out.convergence[0].converged);
        let w = out.convergence_warnings(0.005);
        assert!(w[0].contains("did not reach --max-noise 0.50%"), "{w:?}");
    }

    #[test]
    fn noise_converges_as_samples_accumulate() {
        let clock = MockClock(Cell::new(Duration::ZERO));
        let r = runner(rule(), &clock, &|| false, &|_| {});
        let k = Cell::new(0u32);
        let out = r
            .run::<Fig>(|_| {
                clock.0.set(clock.0.get() + Duration::from_millis(10));
                k.set(k.get() + 1);
                // ±1% around 100: converges once √n is large enough.
                Ok(100.0 + if k.get() % 2 == 0 { 1.0 } else { -1.0 })
            })
            .unwrap();
        let n = out.trials.len();
        assert!(out.convergence[0].converged, "{:?}", out.convergence);
        // s ≈ 1 on a mean of 100: 1/(100·√n) ≤ 0.005 needs n ≥ 4; min-time 1 s needs 98.
        assert_eq!(n, 98);
    }

    #[test]
    fn an_interrupt_keeps_what_was_measured() {
        let clock = MockClock(Cell::new(Duration::ZERO));
        let calls = Cell::new(0);
        let stop = || calls.get() >= 4;
        let r = runner(rule(), &clock, &stop, &|_| {});
        let out = r
            .run::<Fig>(|_| {
                calls.set(calls.get() + 1);
                Ok(1.0)
            })
            .unwrap();
        assert!(out.interrupted);
        assert_eq!((out.warmup.len(), out.trials.len()), (2, 2));
    }

    #[test]
    fn a_failing_trial_is_an_error_and_progress_is_reported() {
        let clock = MockClock(Cell::new(Duration::ZERO));
        let seen = RefCell::new(Vec::new());
        let progress = |p: Progress| seen.borrow_mut().push((p.warmup_done, p.trials_done));
        let r = runner(StopRule::fixed(5), &clock, &|| false, &progress);
        let n = Cell::new(0);
        let e = r
            .run::<Fig>(|_| {
                n.set(n.get() + 1);
                if n.get() == 4 {
                    anyhow::bail!("device lost")
                }
                Ok(1.0)
            })
            .unwrap_err();
        assert_eq!(e.to_string(), "device lost");
        drop(r);
        assert_eq!(seen.take(), vec![(1, 0), (2, 0), (2, 1)]);
    }

    #[test]
    fn relative_noise_of_known_samples() {
        assert!(relative_noise(&[1.0]).is_infinite());
        assert!(relative_noise(&[0.0, 0.0, 0.0]).is_infinite());
        assert_eq!(relative_noise(&[5.0, 5.0, 5.0]), 0.0);
        // mean 100, s = √(4/3), n 4 → √(4/3) / 200
        let v = relative_noise(&[99.0, 101.0, 99.0, 101.0]);
        assert!((v - (4.0f64 / 3.0).sqrt() / 200.0).abs() < 1e-12, "{v}");
        assert!(relative_noise(&[1.0, f64::NAN]).is_infinite());
    }
}
