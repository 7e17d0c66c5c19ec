//! A prepared walk on one engine stream per lane (see [`crate::lanes`]): issued eagerly, or
//! captured into one graph that forks from lane 0 and joins back to it.
//!
//! Every lane has its own engine (the same device) and its own stand-in buffers. Each walk
//! starts with the other lanes waiting on lane 0 and ends with lane 0 waiting on them, so one
//! walk never overlaps the next and lane 0's stream alone says when a walk has finished —
//! the same fork and join a captured multi-stream step has.

use std::time::Duration;

use memra_engine::{ChaseRound, Engine, EngineOptions, Event, Graph};

use crate::lanes::{Item, Schedule};
use crate::prepared::{host_busy, Prepared};
use crate::stand_in::StandInPlan;
use crate::timeline::Stamps;
use crate::trace::Walk;

/// One thing to issue: a step of a lane's prepared walk, or an event record or wait. Each
/// event is made on the engine of the lane it records, so recording it records that lane.
enum Issue {
    /// Step `step` of `lane`'s prepared walk.
    Step { lane: usize, step: usize },
    /// Record each event on its lane, then wait for it on `lane`.
    Wait { lane: usize, events: Vec<Event> },
    /// Record each event on its lane (an event record call later waits wait on).
    Record(Vec<Event>),
    /// Wait on `lane` for the events the `Wait` or `Record` at `items[at]` recorded.
    WaitOn { lane: usize, at: usize },
}

struct Lane {
    engine: Engine,
    prep: Prepared,
}

/// The walk laid out on lanes, ready to issue or capture.
pub(crate) struct LanedWalk {
    lanes: Vec<Lane>,
    items: Vec<Issue>,
    /// Recorded on lane 0 at the start of a walk (several lanes only).
    fork: Option<Event>,
    /// Recorded on lanes 1.. at the end of a walk.
    joins: Vec<Event>,
    /// Each kernel of the walk, in walk order: (lane, step index on that lane).
    kernel_at: Vec<(usize, usize)>,
    /// Each op of the walk, in walk order: (lane, step index on that lane).
    op_at: Vec<(usize, usize)>,
}

impl LanedWalk {
    /// Lays `walk` out on `schedule`'s lanes: lane 0 on `e`, further lanes on new engines of
    /// the same device with the same PDL setting.
    pub(crate) fn new(
        e: &Engine,
        walk: &Walk,
        schedule: &Schedule,
        plan: &StandInPlan,
    ) -> anyhow::Result<LanedWalk> {
        let n = schedule.lanes();
        let mut engines = vec![e.clone()];
        for _ in 1..n {
            engines.push(Engine::with_options(
                e.ordinal(),
                &EngineOptions {
                    pdl: e.pdl(),
                    ..EngineOptions::default()
                },
            )?);
        }
        // Each lane's ops in issue order, and where each op landed.
        let mut lane_ops: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut at = vec![(0usize, 0usize); walk.ops.len()];
        for item in &schedule.items {
            if let Item::Op { lane, op } = *item {
                at[op] = (lane, lane_ops[lane].len());
                lane_ops[lane].push(op);
            }
        }
        let mut lanes = Vec::with_capacity(n);
        for (engine, ops) in engines.into_iter().zip(&lane_ops) {
            let prep = Prepared::new(&engine, ops.iter().map(|&i| &walk.ops[i]), plan)?;
            lanes.push(Lane { engine, prep });
        }
        let events_on = |on: &[usize]| {
            on.iter()
                .map(|&l| lanes[l].engine.event())
                .collect::<memra_engine::Result<Vec<_>>>()
        };
        let mut items = Vec::with_capacity(schedule.items.len());
        for item in &schedule.items {
            items.push(match item {
                Item::Op { op, .. } => Issue::Step {
                    lane: at[*op].0,
                    step: at[*op].1,
                },
                Item::Wait { lane, on } => Issue::Wait {
                    lane: *lane,
                    events: events_on(on)?,
                },
                Item::Record { on } => Issue::Record(events_on(on)?),
                Item::WaitOn { lane, at } => Issue::WaitOn {
                    lane: *lane,
                    at: *at,
                },
            });
        }
        let (fork, joins) = if n > 1 {
            let fork = lanes[0].engine.event()?;
            let joins = lanes[1..]
                .iter()
                .map(|l| l.engine.event())
                .collect::<memra_engine::Result<Vec<_>>>()?;
            (Some(fork), joins)
        } else {
            (None, Vec::new())
        };
        let kernel_at = walk
            .ops
            .iter()
            .zip(&at)
            .filter(|(o, _)| o.is_kernel())
            .map(|(_, &a)| a)
            .collect();
        Ok(LanedWalk {
            lanes,
            items,
            fork,
            joins,
            kernel_at,
            op_at: at,
        })
    }

    /// Issues the walk once; `host_overhead` is busy-waited before each op.
    pub(crate) fn issue(&mut self, host_overhead: Duration) -> memra_engine::Result<()> {
        let LanedWalk {
            lanes,
            items,
            fork,
            joins,
            ..
        } = self;
        if let Some(f) = fork {
            f.record()?;
            for l in &lanes[1..] {
                l.engine.wait_event(f)?;
            }
        }
        for issue in items.iter() {
            match issue {
                Issue::Step { lane, step } => {
                    host_busy(host_overhead);
                    let Lane { engine, prep } = &mut lanes[*lane];
                    prep.issue_step(engine, *step)?;
                }
                Issue::Wait { lane, events } => {
                    for ev in events {
                        ev.record()?;
                        lanes[*lane].engine.wait_event(ev)?;
                    }
                }
                Issue::Record(events) => {
                    for ev in events {
                        ev.record()?;
                    }
                }
                Issue::WaitOn { lane, at } => {
                    if let Issue::Wait { events, .. } | Issue::Record(events) = &items[*at] {
                        for ev in events {
                            lanes[*lane].engine.wait_event(ev)?;
                        }
                    }
                }
            }
        }
        // Each join event belongs to its lane (1..), so it records that lane's work.
        for j in joins.iter() {
            j.record()?;
            lanes[0].engine.wait_event(j)?;
        }
        Ok(())
    }

    /// Captures one walk into a graph launched on lane 0's stream.
    pub(crate) fn capture(&mut self) -> memra_engine::Result<Graph> {
        let lead = self.lanes[0].engine.clone();
        let others: Vec<Engine> = self.lanes[1..].iter().map(|l| l.engine.clone()).collect();
        if others.is_empty() {
            return lead.capture_graph(|_| self.issue(Duration::ZERO));
        }
        let refs: Vec<&Engine> = others.iter().collect();
        let (graph, _keeper) = lead.capture_graph_across(&refs, |_| self.issue(Duration::ZERO))?;
        Ok(graph)
    }

    /// Each op's lane and last (start, end) on the GPU's global timer, ns, in walk order;
    /// `None` for ops whose stand-in stamps nothing.
    pub(crate) fn stamps(&self) -> memra_engine::Result<Stamps> {
        let per_lane = self
            .lanes
            .iter()
            .map(|l| l.prep.stamps(&l.engine))
            .collect::<memra_engine::Result<Vec<_>>>()?;
        Ok(self
            .op_at
            .iter()
            .map(|&(lane, i)| (lane, per_lane[lane][i]))
            .collect())
    }

    /// Kernels that stand in by streaming memory, over all lanes.
    pub(crate) fn streaming_stand_ins(&self) -> usize {
        self.count_steps(|s| matches!(s, crate::prepared::Step::Stream { .. }))
    }

    /// Kernels that stand in by a paced read, over all lanes.
    pub(crate) fn paced_stand_ins(&self) -> usize {
        self.count_steps(|s| matches!(s, crate::prepared::Step::Paced { .. }))
    }

    /// Kernels that stand in by a chase of reads alone, over all lanes.
    pub(crate) fn chase_stand_ins(&self) -> usize {
        self.chases_of(ChaseRound::Read)
    }

    /// Kernels that stand in by a barrier chase, over all lanes.
    pub(crate) fn barrier_chase_stand_ins(&self) -> usize {
        self.chases_of(ChaseRound::BlockReduction)
    }

    /// Kernels that stand in by a chase whose steps are `round`, over all lanes.
    fn chases_of(&self, round: ChaseRound) -> usize {
        self.count_steps(
            |s| matches!(s, crate::prepared::Step::Chase { chase, .. } if chase.round == round),
        )
    }

    /// Kernels that stand in by a spin timed per block, over all lanes.
    pub(crate) fn block_spin_stand_ins(&self) -> usize {
        self.count_steps(|s| matches!(s, crate::prepared::Step::BlockSpin { .. }))
    }

    fn count_steps(&self, f: impl Fn(&crate::prepared::Step) -> bool) -> usize {
        self.lanes
            .iter()
            .flat_map(|l| &l.prep.steps)
            .filter(|s| f(s))
            .count()
    }

    /// Kernels below their shape's floor and how far their stand-ins' planned nodes sum over
    /// their targets, over all lanes.
    pub(crate) fn sub_floor(&self) -> crate::stand_in::SubFloorCarry {
        self.lanes
            .iter()
            .fold(Default::default(), |a, l| crate::stand_in::SubFloorCarry {
                kernels: a.kernels + l.prep.sub_floor.kernels,
                over_us: a.over_us + l.prep.sub_floor.over_us,
                reads: a.reads + l.prep.sub_floor.reads,
            })
    }

    /// Device memory one replay touches afresh, bytes, over all lanes
    /// ([`crate::prepared::Prepared::touched_bytes`]).
    pub(crate) fn touched_bytes(&self) -> f64 {
        self.lanes.iter().map(|l| l.prep.touched_bytes()).sum()
    }

    /// Kernels run as real GEMMs (the call and its further cuBLAS kernels), over all lanes.
    pub(crate) fn real_gemm_kernels(&self) -> usize {
        self.lanes
            .iter()
            .flat_map(|l| &l.prep.steps)
            .filter(|s| {
                matches!(
                    s,
                    crate::prepared::Step::Gemm { .. } | crate::prepared::Step::Folded
                )
            })
            .count()
    }

    /// Each kernel's last replayed duration as a profiler would see it (own span + ramp), ns,
    /// in walk order; NaN for kernels replayed by the empty kernel.
    pub(crate) fn durations(&self, ramp_ns: f64) -> memra_engine::Result<Vec<f64>> {
        let per_lane = self
            .lanes
            .iter()
            .map(|l| l.prep.durations(&l.engine, ramp_ns))
            .collect::<memra_engine::Result<Vec<_>>>()?;
        Ok(self
            .kernel_at
            .iter()
            .map(|&(lane, i)| per_lane[lane][i].unwrap_or(f64::NAN))
            .collect())
    }
}
