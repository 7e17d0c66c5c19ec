//! Lanes forked side by side off one stream and joined back to it, timed as a graph of one lane
//! against a graph of all of them: the shape of the default run's lane measurements
//! ([`crate::front_end`], [`crate::l2_lanes`]).
//!
//! Each lane is a stream of its own in the main engine's context. A captured graph records the
//! fork event on the main stream, makes each lane wait on it, runs the lane's work, records the
//! lane's join event and makes the main stream wait on every join, so the graph ends only when
//! every lane has. The two graphs are replayed in turn (`beside::replay_times`), so a
//! drift of the device's clocks falls on both alike.

use memra_engine::Engine;

/// The main engine and its lanes, each a stream of its own of the main engine's context; the
/// fork and join events are made for each measurement.
pub struct ForkedLanes<'e> {
    main: &'e Engine,
    lanes: Vec<Engine>,
}

impl<'e> ForkedLanes<'e> {
    /// `count` lanes, each a new stream of `main`'s context.
    pub fn new(main: &'e Engine, count: usize) -> anyhow::Result<Self> {
        Self::check_count(count)?;
        let lanes = (0..count)
            .map(|_| crate::other_stream::second_engine(main))
            .collect::<Result<_, _>>()?;
        Ok(Self { main, lanes })
    }

    fn check_count(count: usize) -> anyhow::Result<()> {
        anyhow::ensure!(count > 0, "lanes side by side: at least one");
        Ok(())
    }

    /// The lanes' engines, to make each lane's buffers on.
    pub fn lanes(&self) -> &[Engine] {
        &self.lanes
    }

    /// Median replay times of the graph of the first lane and of the graph of every lane, µs,
    /// `work(i, lane)` issuing lane `i`'s nodes in both. Each capture runs its step once
    /// eagerly first ([`Engine::capture_graph_across`]'s warm-up), so `work` is also called
    /// outside the captures. Both times must be above zero.
    pub fn one_and_all_us<F>(&self, mut work: F) -> anyhow::Result<(f64, f64)>
    where
        F: FnMut(usize, &Engine) -> memra_engine::Result<()>,
    {
        let fork = self.main.event()?;
        let joins = self
            .lanes
            .iter()
            .map(Engine::event)
            .collect::<Result<Vec<_>, _>>()?;
        let others: Vec<&Engine> = self.lanes.iter().collect();
        let mut forked = |count: usize| {
            self.main.capture_graph_across(&others, |main| {
                fork.record()?;
                for (i, (lane, join)) in self.lanes.iter().zip(&joins).take(count).enumerate() {
                    lane.wait_event(&fork)?;
                    work(i, lane)?;
                    join.record()?;
                }
                joins
                    .iter()
                    .take(count)
                    .try_for_each(|j| main.wait_event(j))
            })
        };
        let (one, _keep_one) = forked(1)?;
        let (all, _keep_all) = forked(self.lanes.len())?;
        let t = crate::beside::replay_times(self.main, &[&one, &all])?;
        anyhow::ensure!(
            t[0] > 0.0 && t[1] > 0.0,
            "lanes side by side: no time measured"
        );
        Ok((t[0], t[1]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[ignore = "needs a CUDA device"]
    fn every_lane_runs_its_work_in_the_graph_of_all() {
        let e = Engine::new(0).unwrap();
        let forked = ForkedLanes::new(&e, 3).unwrap();
        let n = 1024;
        let mut bufs: Vec<_> = forked
            .lanes()
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let a = l.htod(&vec![1.0f32 + i as f32; n]).unwrap();
                let b = l.htod(&vec![10.0f32; n]).unwrap();
                (a, b, l.zeros::<f32>(n).unwrap())
            })
            .collect();
        let mut captured = [0usize; 3];
        let (one, all) = forked
            .one_and_all_us(|i, lane| {
                captured[i] += 1;
                let (a, b, y) = &mut bufs[i];
                lane.add(a, b, y, n)
            })
            .unwrap();
        assert!(one > 0.0 && all > 0.0);
        // Each capture runs the work twice (the eager warm-up, then the capture itself); lane 0
        // is in both graphs, the others only in the graph of all.
        assert_eq!(captured, [4, 2, 2]);
        e.stream().synchronize().unwrap();
        for (i, (lane, (_, _, y))) in forked.lanes().iter().zip(&bufs).enumerate() {
            let got = lane.dtoh(y).unwrap();
            assert!(got.iter().all(|&v| v == 11.0 + i as f32), "lane {i}");
        }
    }

    #[test]
    fn no_lanes_are_refused() {
        // Refused before any stream is made, so no device is needed; `Engine` cannot be built
        // here, hence the check is on the count the constructor tests first.
        let err = ForkedLanes::check_count(0).unwrap_err();
        assert!(err.to_string().contains("at least one"), "{err}");
        assert!(ForkedLanes::check_count(4).is_ok());
    }
}
