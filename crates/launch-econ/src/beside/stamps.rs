//! Clock stamps along a lane of a graph, to read how long its nodes took while something ran
//! beside them against after it ended, within one replay.
//!
//! A stretch taken as the difference of two graphs' times (a chain beside another lane,
//! against the same chain alone) also holds whatever else differs between the two graphs, and
//! the per-node cost of a graph moves between two levels with the memory it reads and the
//! process's state (see [`crate::footprint`], [`crate::other_stream`]): 1920 small adds beside
//! a chain of 256 MiB of GEMMs took 0.16 µs a node more in that graph than alone even after
//! the GEMMs had ended (H200, `memra-engine`'s `small_beside` example and
//! `scripts/small_kernel_kind_probe.py`), which over a chain of adds is as large as the loss it
//! was meant to measure. Stamps put both sides of the ratio in the same replay.

use memra_engine::{DeviceBuffer, Engine, Graph, LaunchShape};

/// The clock at the end of marked points of one lane: a one-block kernel
/// ([`Engine::spin_grid`] asked for no time) per mark, writing the GPU clock into a slot of
/// its own.
pub(crate) struct Stamps {
    slots: DeviceBuffer<u64>,
    marks: usize,
}

/// Word of a spin-grid slot that holds the clock at the kernel's end.
const END_WORD: usize = 3;

impl Stamps {
    /// Slots for `marks` marks on `e`'s device.
    pub(crate) fn new(e: &Engine, marks: usize) -> memra_engine::Result<Stamps> {
        Ok(Stamps {
            slots: e.zeros(marks * Engine::SPIN_SLOT_WORDS)?,
            marks,
        })
    }

    /// Issues mark `k` on `e`'s stream.
    pub(crate) fn mark(&mut self, e: &Engine, k: usize) -> memra_engine::Result<()> {
        e.spin_grid(0, LaunchShape::linear(1, 32), &mut self.slots, k)
    }

    /// The clock at each mark of the last run, ns. Call after the marks' stream has finished.
    pub(crate) fn read(&self, e: &Engine) -> memra_engine::Result<Vec<u64>> {
        let words = e.dtoh(&self.slots)?;
        Ok((0..self.marks)
            .map(|k| words[k * Engine::SPIN_SLOT_WORDS + END_WORD])
            .collect())
    }
}

/// (time per op while the other lane ran, after it ended), ns, from `replays` launches of
/// `graph` after one that warms it up: `lane`'s marks (each `per` ops apart, on that engine)
/// split by the first two marks of `window` (the other lane's start and end, on its engine).
/// A launch with no interval on either side gives nothing.
pub(crate) fn replayed_splits(
    graph: &Graph,
    lane: (&Stamps, &Engine),
    window: (&Stamps, &Engine),
    per: usize,
    replays: usize,
) -> memra_engine::Result<Vec<(f64, f64)>> {
    let mut splits = Vec::with_capacity(replays);
    for replay in 0..=replays {
        graph.launch()?;
        lane.1.stream().synchronize()?;
        window.1.stream().synchronize()?;
        let w = window.0.read(window.1)?;
        let split = during_and_after(&lane.0.read(lane.1)?, (w[0], w[1]), per);
        if let (true, Some(s)) = (replay > 0, split) {
            splits.push(s);
        }
    }
    Ok(splits)
}

/// Time per op, ns, over the intervals between consecutive `marks` (each `per` ops apart)
/// that lie wholly inside `window` (start, end), and over those wholly after it: `None` where
/// either side has no interval.
pub(crate) fn during_and_after(
    marks: &[u64],
    window: (u64, u64),
    per: usize,
) -> Option<(f64, f64)> {
    let (start, end) = window;
    let (mut during, mut after) = ((0u64, 0usize), (0u64, 0usize));
    for w in marks.windows(2) {
        let span = w[1].saturating_sub(w[0]);
        if w[0] >= start && w[1] <= end {
            during = (during.0 + span, during.1 + 1);
        } else if w[0] >= end {
            after = (after.0 + span, after.1 + 1);
        }
    }
    let per_op = |(ns, n): (u64, usize)| ns as f64 / (n * per.max(1)) as f64;
    (during.1 > 0 && after.1 > 0).then(|| (per_op(during), per_op(after)))
}

#[cfg(test)]
mod tests {
    use super::during_and_after;

    #[test]
    fn intervals_are_split_by_the_window_and_straddling_ones_left_out() {
        // Marks every 2 ops: 10 ns apart before 30, 20 apart inside (30..70), 10 after 70.
        let marks = [0, 10, 20, 30, 50, 70, 80, 90];
        let (during, after) = during_and_after(&marks, (30, 70), 2).unwrap();
        assert_eq!(during, 10.0); // (20 + 20) ns over 2 intervals of 2 ops
        assert_eq!(after, 5.0); // (10 + 10) ns over 2 intervals of 2 ops
                                // An interval that starts before the window and ends inside it counts on neither side.
        let (during, _) = during_and_after(&marks, (25, 70), 2).unwrap();
        assert_eq!(during, 10.0);
    }

    #[test]
    fn no_interval_on_one_side_gives_none() {
        let marks = [0, 10, 20];
        assert_eq!(during_and_after(&marks, (0, 20), 1), None); // nothing after
        assert_eq!(during_and_after(&marks, (5, 9), 1), None); // nothing wholly inside
        assert_eq!(during_and_after(&[], (0, 1), 1), None);
    }
}
