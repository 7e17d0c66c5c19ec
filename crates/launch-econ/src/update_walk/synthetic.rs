//! The synthetic walk: n `add` kernels, `y_i = x_i + b`, where `x_i` is X1 on odd steps for a
//! changed kernel and X0 otherwise; every kernel writes its own output.

use anyhow::bail;
use memra_engine::{DeviceBuffer, Engine, Graph};

use super::ChangingWalk;

/// Input values: X0 everywhere, X1 for a changed kernel on odd steps; `b` is added.
const X0: f32 = 1.0;
const X1: f32 = 2.0;
const B: f32 = 0.5;

pub struct SyntheticWalk {
    x: [DeviceBuffer<f32>; 2],
    /// X0 then X1, back to back, for the window kernel.
    arena: DeviceBuffer<f32>,
    b: DeviceBuffer<f32>,
    ys: Vec<DeviceBuffer<f32>>,
    win: DeviceBuffer<u32>,
    changed: Vec<bool>,
    changed_nodes: Vec<usize>,
    elems: usize,
}

impl SyntheticWalk {
    /// `nodes` kernels of `elems` elements; `changed` of them, spread evenly, change.
    pub fn new(
        e: &Engine,
        nodes: usize,
        changed: usize,
        elems: usize,
    ) -> anyhow::Result<SyntheticWalk> {
        if changed == 0 || changed > nodes {
            bail!("need 1..={nodes} changed kernels, not {changed}");
        }
        let mut arena = vec![X0; elems];
        arena.extend(vec![X1; elems]);
        let changed_nodes: Vec<usize> = (0..changed).map(|j| j * nodes / changed).collect();
        let mut flags = vec![false; nodes];
        for &i in &changed_nodes {
            flags[i] = true;
        }
        Ok(SyntheticWalk {
            x: [e.htod(&vec![X0; elems])?, e.htod(&vec![X1; elems])?],
            arena: e.htod(&arena)?,
            b: e.htod(&vec![B; elems])?,
            ys: (0..nodes)
                .map(|_| e.zeros(elems))
                .collect::<memra_engine::Result<_>>()?,
            win: e.htod(&vec![0u32; 2 * nodes])?,
            changed: flags,
            changed_nodes,
            elems,
        })
    }

    /// The input of kernel `i` at step `s`: 0 for X0, 1 for X1.
    fn input(&self, i: usize, s: usize) -> usize {
        usize::from(self.changed[i] && s % 2 == 1)
    }
}

impl ChangingWalk for SyntheticWalk {
    fn kernels(&self) -> usize {
        self.ys.len()
    }

    fn changed(&self) -> usize {
        self.changed_nodes.len()
    }

    fn issue(&mut self, e: &Engine, s: usize, extra: bool) -> memra_engine::Result<()> {
        for i in 0..self.ys.len() {
            let which = self.input(i, s);
            e.add(&self.x[which], &self.b, &mut self.ys[i], self.elems)?;
        }
        if extra {
            e.add(&self.x[0], &self.b, &mut self.ys[0], self.elems)?;
        }
        Ok(())
    }

    fn set_params(&mut self, e: &Engine, g: &mut Graph, s: usize) -> memra_engine::Result<()> {
        for j in 0..self.changed_nodes.len() {
            let i = self.changed_nodes[j];
            let which = self.input(i, s);
            let call = e.add_call(&self.x[which], &self.b, &mut self.ys[i], self.elems)?;
            g.set_kernel_node(i, call)?;
        }
        Ok(())
    }

    fn issue_windowed(&mut self, e: &Engine) -> memra_engine::Result<()> {
        for (i, y) in self.ys.iter_mut().enumerate() {
            e.add_window(&self.arena, &self.b, y, &self.win, i)?;
        }
        Ok(())
    }

    fn write_windows(&mut self, e: &Engine, s: usize) -> memra_engine::Result<()> {
        let win: Vec<u32> = (0..self.ys.len())
            .flat_map(|i| [(self.input(i, s) * self.elems) as u32, self.elems as u32])
            .collect();
        e.htod_into(&win, &mut self.win)
    }

    fn clear(&mut self, e: &Engine) -> anyhow::Result<()> {
        for y in &mut self.ys {
            e.memset_zero(y, self.elems * 4)?;
        }
        Ok(())
    }

    fn check(&mut self, e: &Engine, way: &str, s: usize, _windowed: bool) -> anyhow::Result<()> {
        for (i, y) in self.ys.iter().enumerate() {
            let want = [X0, X1][self.input(i, s)] + B;
            let got = e.dtoh(y)?;
            if let Some(bad) = got.iter().position(|&v| v != want) {
                bail!(
                    "{way}: kernel {i} element {bad} is {} after step {s}, expected {want}",
                    got[bad]
                );
            }
        }
        Ok(())
    }
}
