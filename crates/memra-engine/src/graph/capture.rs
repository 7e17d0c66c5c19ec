//! Building a graph: retention on every engine of a capture, the stream capture itself (ended
//! on error or panic so engines stay usable), and the `Engine::capture_*` entry points.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{result, sys};

use super::{destroy_graph, node_count, CaptureTimings, Graph, Keeper};
use crate::context::EngineCore;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::memory::{release, Allocation};

/// Retention on every engine of a capture; released if the capture is abandoned by an error or
/// a panic (each free waits for its streams, so warm-up work still running is safe).
pub(crate) struct RetainGuard<'a> {
    cores: Vec<&'a Arc<EngineCore>>,
    done: bool,
}

impl<'a> RetainGuard<'a> {
    pub(crate) fn start(cores: Vec<&'a Arc<EngineCore>>) -> Result<RetainGuard<'a>> {
        let mut guard = RetainGuard {
            cores: Vec::with_capacity(cores.len()),
            done: false,
        };
        for core in cores {
            if !core.capture.start_retaining() {
                return Err(Error::CaptureForbidden {
                    op: "capture_graph",
                    why: "a capture is already in progress on this engine (graphs cannot nest, and each engine may take part once)",
                });
            }
            guard.cores.push(core);
        }
        Ok(guard)
    }

    /// Everything retained, with the launching engine recorded as a user of each allocation
    /// (replays run on its stream, so every free must wait for it).
    pub(crate) fn finish(mut self, launcher: &Arc<EngineCore>) -> Vec<Arc<Allocation>> {
        self.done = true;
        let all: Vec<Arc<Allocation>> = self
            .cores
            .iter()
            .flat_map(|c| c.capture.stop_retaining())
            .collect();
        for a in &all {
            a.used_by(launcher);
        }
        all
    }
}

impl Drop for RetainGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            for core in &self.cores {
                let retained = core.capture.stop_retaining();
                retained.into_iter().for_each(release);
            }
        }
    }
}

/// Ends an open stream capture on error or panic, so every engine stays usable.
pub(crate) struct CaptureGuard<'a> {
    primary: &'a Arc<EngineCore>,
    all: Vec<&'a Arc<EngineCore>>,
    open: bool,
    /// Capturing into an existing graph (a conditional node's body), which the guard must not
    /// destroy when the capture is abandoned.
    into_existing: bool,
}

impl<'a> CaptureGuard<'a> {
    /// Begins capturing the primary stream into a new graph, or with `into` into that existing
    /// (empty) graph.
    pub(crate) fn begin(
        primary: &'a Arc<EngineCore>,
        all: Vec<&'a Arc<EngineCore>>,
        into: Option<sys::CUgraph>,
    ) -> Result<CaptureGuard<'a>> {
        primary.bind()?;
        // Relaxed mode: allocations inside the step (cuMemAlloc) are legal; the engine itself
        // refuses the operations that would break the graph (see `CaptureState::refuse`).
        let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
        let (call, begun) = match into {
            // SAFETY: the stream belongs to the current context and is not capturing (this
            // engine takes part in no other capture: `RetainGuard::start` succeeded for it).
            None => ("cuStreamBeginCapture", unsafe {
                result::stream::begin_capture(primary.cu_stream(), mode)
            }),
            // SAFETY: as above; `g` is a live graph of this context and no dependencies are
            // passed (null arrays of length 0).
            Some(g) => ("cuStreamBeginCaptureToGraph", unsafe {
                sys::cuStreamBeginCaptureToGraph(
                    primary.cu_stream(),
                    g,
                    std::ptr::null(),
                    std::ptr::null(),
                    0,
                    mode,
                )
                .result()
            }),
        };
        begun.map_err(|source| Error::Capture {
            call,
            device: primary.ordinal,
            source,
        })?;
        for core in &all {
            core.capture.set_capturing(true);
        }
        Ok(CaptureGuard {
            primary,
            all,
            open: true,
            into_existing: into.is_some(),
        })
    }

    pub(crate) fn end(&mut self) -> Result<sys::CUgraph> {
        self.open = false;
        for core in &self.all {
            core.capture.set_capturing(false);
        }
        let _ = self.primary.bind();
        // SAFETY: the primary stream is capturing (begun in `begin`, ended only here).
        let g = unsafe { result::stream::end_capture(self.primary.cu_stream()) };
        g.map_err(|source| Error::Capture {
            call: "cuStreamEndCapture",
            device: self.primary.ordinal,
            source,
        })
    }

    /// Ends a capture into a new graph after the step returned `stepped`: the captured graph,
    /// or the first error (the step's before the capture's), with any graph the capture
    /// produced destroyed. `op` names the entry point in the error for an empty capture.
    pub(crate) fn finish(&mut self, op: &'static str, stepped: Result<()>) -> Result<sys::CUgraph> {
        let ended = self.end();
        match (stepped, ended) {
            (Ok(()), Ok(g)) if !g.is_null() => Ok(g),
            (Ok(()), Ok(_)) => Err(Error::InvalidArgument {
                op,
                what: "the driver returned no graph for the capture".into(),
            }),
            (Ok(()), Err(e)) => Err(e),
            (Err(e), ended) => {
                if let Ok(g) = ended {
                    destroy_graph(g);
                }
                Err(e)
            }
        }
    }
}

impl Drop for CaptureGuard<'_> {
    fn drop(&mut self) {
        if self.open {
            if let Ok(g) = self.end() {
                if !self.into_existing {
                    destroy_graph(g);
                }
            }
        }
    }
}

impl Engine {
    /// Builds a graph of one call of `step`. The graph keeps alive every buffer the step
    /// touched or allocated, so it is safe to replay for as long as it exists.
    pub fn capture_graph<F>(&self, step: F) -> Result<Graph>
    where
        F: FnMut(&Engine) -> Result<()>,
    {
        self.capture_graph_across(&[], step).map(|(g, _)| g)
    }

    /// Builds a graph of one call of `step`, and returns it with a [`Keeper`] that shows (and
    /// shares) what the graph keeps alive.
    ///
    /// 1. `step` runs once eagerly (warm-up), so module loads and first-touch costs happen
    ///    outside the capture; the stream is synchronized.
    /// 2. `step` runs again while the engine stream is captured; operations that a graph cannot
    ///    hold (host copies, synchronize, event waits) return [`Error::CaptureForbidden`].
    /// 3. The graph is instantiated and uploaded.
    ///
    /// Every buffer an operation touched during the warm-up or the capture, every buffer
    /// allocated then (even ones the closure dropped when it returned) is held by the graph:
    /// dropping a buffer the graph uses drops only the caller's reference, and replays keep
    /// writing into memory that stays the graph's. Graph and keeper may be dropped in either
    /// order; the memory goes back when both are gone.
    ///
    /// If `step` fails (in warm-up or mid-capture), the capture is ended, what was retained is
    /// released, the engine stays usable, and the step's error is returned.
    pub fn capture_graph_retained<F>(&self, step: F) -> Result<(Graph, Keeper)>
    where
        F: FnMut(&Engine) -> Result<()>,
    {
        self.capture_graph_across(&[], step)
    }

    /// Like [`Engine::capture_graph_retained`], for a walk that spans several engines (devices
    /// or streams): the capture starts on this engine's stream; inside `step`, record an
    /// [`crate::Event`] here and make another engine [`Engine::wait_event`] on it to fork the
    /// capture onto that engine, and join back the same way before `step` returns. The result
    /// is one graph with nodes on every device involved, launched on this engine's stream and
    /// ordered with the others' streams (see [`Graph::launch`]). Buffers touched or allocated
    /// on *any* of the engines are held by the graph, and operations a graph cannot hold are
    /// refused on all of them.
    pub fn capture_graph_across<F>(&self, others: &[&Engine], step: F) -> Result<(Graph, Keeper)>
    where
        F: FnMut(&Engine) -> Result<()>,
    {
        self.capture_inner(others, true, step)
    }

    /// Like [`Engine::capture_graph`] without the eager warm-up: `step` runs only as captured.
    /// What a framework that captures a changing step anew every time pays (capture,
    /// instantiate, upload); the step's buffers are held by the graph all the same.
    pub fn capture_graph_cold<F>(&self, step: F) -> Result<Graph>
    where
        F: FnMut(&Engine) -> Result<()>,
    {
        self.capture_inner(&[], false, step).map(|(g, _)| g)
    }

    fn capture_inner<F>(
        &self,
        others: &[&Engine],
        warmup: bool,
        mut step: F,
    ) -> Result<(Graph, Keeper)>
    where
        F: FnMut(&Engine) -> Result<()>,
    {
        let core = &self.inner.core;
        let all: Vec<&Arc<EngineCore>> = std::iter::once(core)
            .chain(others.iter().map(|e| &e.inner.core))
            .collect();
        let retain = RetainGuard::start(all.clone())?;
        let mut timings = CaptureTimings::default();

        if warmup {
            let t = Instant::now();
            step(self)?;
            for c in &all {
                c.sync_stream()?;
            }
            timings.warmup = t.elapsed();
        }

        let t = Instant::now();
        let mut capture = CaptureGuard::begin(core, all, None)?;
        let graph = capture.finish("capture_graph", step(self));
        timings.capture = t.elapsed();
        let graph = graph?;

        let nodes = node_count(graph);
        Graph::assemble(self, others, graph, nodes, timings, retain)
    }
}
