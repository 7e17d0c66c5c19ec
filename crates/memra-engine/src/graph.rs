//! CUDA-graph capture that is safe with allocations.
//!
//! A captured graph refers to device addresses, not to Rust owners. If the captured step
//! allocates a buffer and drops it when the closure returns, the graph would replay into freed
//! memory. The engine therefore *retains* every allocation made (or dropped) during the warm-up
//! and the capture, and hands them to a [`Keeper`]: while the keeper lives, every address in
//! the graph stays valid.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{result, sys};

use crate::engine::{Engine, Inner};
use crate::error::{Error, Result};
use crate::memory::Allocation;

/// What building a graph cost, phase by phase.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CaptureTimings {
    /// The eager warm-up call of the step, including its synchronize.
    pub warmup: Duration,
    /// Begin capture, the captured call of the step, end capture.
    pub capture: Duration,
    /// `cuGraphInstantiate`.
    pub instantiate: Duration,
    /// `cuGraphUpload` and the synchronize after it.
    pub upload: Duration,
}

/// An instantiated, uploaded CUDA graph on the engine stream.
///
/// Dropping it destroys the executable graph; a failure there is recorded and reported by the
/// next `synchronize` or [`Engine::check_deferred`], never panicked.
pub struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    nodes: usize,
    timings: CaptureTimings,
    inner: Arc<Inner>,
    /// For [`Engine::capture_graph`]: the graph keeps its own allocations.
    own_keeper: Option<Keeper>,
}

// SAFETY: the handles are only used through &self methods that bind the context first; CUDA
// allows graph launches from any thread as long as they are not concurrent on one exec, and
// `Graph` is not `Sync`.
unsafe impl Send for Graph {}

/// Keeps alive every device allocation a captured graph may use. Keep it as long as the graph
/// replays; dropping it (after or before the graph, either order is fine) waits for the engine
/// stream and releases the memory.
pub struct Keeper {
    allocations: Vec<Arc<Allocation>>,
    /// Every engine whose stream the graph may use (one, or several for a cross-device capture).
    inners: Vec<Arc<Inner>>,
}

impl Keeper {
    /// Number of allocations retained.
    pub fn len(&self) -> usize {
        self.allocations.len()
    }

    /// True when the capture allocated nothing.
    pub fn is_empty(&self) -> bool {
        self.allocations.is_empty()
    }

    /// Bytes retained.
    pub fn bytes(&self) -> usize {
        self.allocations.iter().map(|a| a.bytes()).sum()
    }
}

impl std::fmt::Debug for Keeper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keeper")
            .field("allocations", &self.len())
            .field("bytes", &self.bytes())
            .finish()
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        if self.allocations.is_empty() {
            return;
        }
        // A replay may still be running: wait before the memory goes back.
        for inner in &self.inners {
            if let Err(source) = inner.stream.cu.synchronize() {
                inner
                    .sink
                    .record(inner.driver("cuStreamSynchronize (keeper drop)", source));
            }
        }
        self.allocations.clear();
    }
}

impl Graph {
    /// Replays the graph on the engine stream.
    pub fn launch(&self) -> Result<()> {
        self.inner.bind()?;
        // SAFETY: exec is a live executable graph of this context; the stream belongs to it.
        unsafe { result::graph::launch(self.exec, self.inner.stream.cu_stream()) }
            .map_err(|source| self.inner.driver("cuGraphLaunch", source))
    }

    /// Uploads the graph's resources to the device again (the engine already does this once
    /// after instantiation, so the first launch pays no setup).
    pub fn upload(&self) -> Result<()> {
        self.inner.bind()?;
        // SAFETY: as in `launch`.
        unsafe { result::graph::upload(self.exec, self.inner.stream.cu_stream()) }
            .map_err(|source| self.inner.driver("cuGraphUpload", source))
    }

    /// Nodes in the captured graph (kernels, copies, memsets).
    pub fn node_count(&self) -> usize {
        self.nodes
    }

    /// What each build phase cost.
    pub fn timings(&self) -> CaptureTimings {
        self.timings
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        if let Err(e) = self.inner.bind() {
            self.inner.sink.record(e);
            return;
        }
        // SAFETY: both handles are owned by this Graph and destroyed exactly once, here.
        if let Err(source) = unsafe { result::graph::exec_destroy(self.exec) } {
            self.inner
                .sink
                .record(self.inner.driver("cuGraphExecDestroy (in drop)", source));
        }
        // SAFETY: as above.
        if let Err(source) = unsafe { result::graph::destroy(self.graph) } {
            self.inner
                .sink
                .record(self.inner.driver("cuGraphDestroy (in drop)", source));
        }
        // own_keeper, if any, drops after this body: the graph is gone before its memory.
    }
}

/// Retention on every engine of a capture; released (after a synchronize) if the capture is
/// abandoned by an error or a panic.
struct RetainGuard<'a> {
    inners: Vec<&'a Arc<Inner>>,
    done: bool,
}

impl<'a> RetainGuard<'a> {
    fn start(inners: Vec<&'a Arc<Inner>>) -> Result<RetainGuard<'a>> {
        let mut guard = RetainGuard {
            inners: Vec::with_capacity(inners.len()),
            done: false,
        };
        for inner in inners {
            if !inner.capture.start_retaining() {
                return Err(Error::CaptureForbidden {
                    op: "capture_graph",
                    why: "a capture is already in progress on this engine (graphs cannot nest, and each engine may take part once)",
                });
            }
            guard.inners.push(inner);
        }
        Ok(guard)
    }

    fn finish(mut self) -> Keeper {
        self.done = true;
        Keeper {
            allocations: self
                .inners
                .iter()
                .flat_map(|i| i.capture.stop_retaining())
                .collect(),
            inners: self.inners.iter().map(|i| Arc::clone(i)).collect(),
        }
    }
}

impl Drop for RetainGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            // Synchronize before freeing: the warm-up may still be using the memory.
            for inner in &self.inners {
                let _ = inner.stream.cu.synchronize();
                drop(inner.capture.stop_retaining());
            }
        }
    }
}

/// Ends an open stream capture on error or panic, so every engine stays usable.
struct CaptureGuard<'a> {
    primary: &'a Arc<Inner>,
    all: Vec<&'a Arc<Inner>>,
    open: bool,
}

impl<'a> CaptureGuard<'a> {
    fn begin(primary: &'a Arc<Inner>, all: Vec<&'a Arc<Inner>>) -> Result<CaptureGuard<'a>> {
        primary.bind()?;
        // Relaxed mode: allocations inside the step (cuMemAlloc) are legal; the engine itself
        // refuses the operations that would break the graph (see `CaptureState::refuse`).
        // SAFETY: the stream belongs to the current context and is not capturing.
        unsafe {
            result::stream::begin_capture(
                primary.stream.cu_stream(),
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED,
            )
        }
        .map_err(|source| Error::Capture {
            call: "cuStreamBeginCapture",
            device: primary.ordinal,
            source,
        })?;
        for inner in &all {
            inner.capture.capturing.store(true, Ordering::Release);
        }
        Ok(CaptureGuard {
            primary,
            all,
            open: true,
        })
    }

    fn end(&mut self) -> Result<sys::CUgraph> {
        self.open = false;
        for inner in &self.all {
            inner.capture.capturing.store(false, Ordering::Release);
        }
        let _ = self.primary.bind();
        // SAFETY: the primary stream is capturing (begun in `begin`).
        let g = unsafe { result::stream::end_capture(self.primary.stream.cu_stream()) };
        g.map_err(|source| Error::Capture {
            call: "cuStreamEndCapture",
            device: self.primary.ordinal,
            source,
        })
    }
}

impl Drop for CaptureGuard<'_> {
    fn drop(&mut self) {
        if self.open {
            if let Ok(g) = self.end() {
                destroy_graph(g);
            }
        }
    }
}

fn destroy_graph(g: sys::CUgraph) {
    if !g.is_null() {
        // SAFETY: g is a graph returned by end capture and owned by nobody else.
        let _ = unsafe { result::graph::destroy(g) };
    }
}

impl Engine {
    /// Builds a graph of one call of `step` and keeps its allocations alive with the graph.
    ///
    /// Like [`Engine::capture_graph_retained`], but the keeper lives inside the returned graph,
    /// so the graph is always safe to replay for as long as it exists.
    pub fn capture_graph<F>(&self, step: F) -> Result<Graph>
    where
        F: FnMut(&Engine) -> Result<()>,
    {
        let (mut graph, keeper) = self.capture_graph_retained(step)?;
        graph.own_keeper = Some(keeper);
        Ok(graph)
    }

    /// Builds a graph of one call of `step`, and returns it with a [`Keeper`] of every device
    /// allocation made during the warm-up and the capture.
    ///
    /// 1. `step` runs once eagerly (warm-up), so module loads and first-touch costs happen
    ///    outside the capture; the stream is synchronized.
    /// 2. `step` runs again while the engine stream is captured; operations that a graph cannot
    ///    hold (host copies, synchronize, event waits) return [`Error::CaptureForbidden`].
    /// 3. The graph is instantiated and uploaded.
    ///
    /// Contract: keep the keeper at least as long as the graph replays. Buffers the step
    /// allocated — even ones dropped when the closure returned — stay allocated until the
    /// keeper drops, so replays never touch freed memory. Graph and keeper may be dropped in
    /// either order; dropping both releases everything.
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
    /// is one graph with nodes on every device involved, launched on this engine's stream.
    /// Allocations made during warm-up and capture on *any* of the engines are retained by
    /// the keeper, and operations a graph cannot hold are refused on all of them.
    pub fn capture_graph_across<F>(
        &self,
        others: &[&Engine],
        mut step: F,
    ) -> Result<(Graph, Keeper)>
    where
        F: FnMut(&Engine) -> Result<()>,
    {
        let inner = &self.inner;
        let all: Vec<&Arc<Inner>> = std::iter::once(inner)
            .chain(others.iter().map(|e| &e.inner))
            .collect();
        let retain = RetainGuard::start(all.clone())?;
        let mut timings = CaptureTimings::default();

        let t = Instant::now();
        step(self)?;
        for i in &all {
            i.stream.synchronize()?;
        }
        timings.warmup = t.elapsed();

        let t = Instant::now();
        let mut capture = CaptureGuard::begin(inner, all)?;
        let stepped = step(self);
        let ended = capture.end();
        timings.capture = t.elapsed();
        let graph = match (stepped, ended) {
            (Ok(()), Ok(g)) if !g.is_null() => g,
            (Ok(()), Ok(_)) => {
                return Err(Error::InvalidArgument {
                    op: "capture_graph",
                    what: "the driver returned no graph for the capture".into(),
                })
            }
            (Ok(()), Err(e)) => return Err(e),
            (Err(e), ended) => {
                if let Ok(g) = ended {
                    destroy_graph(g);
                }
                return Err(e);
            }
        };

        let nodes = node_count(graph);
        let t = Instant::now();
        // SAFETY: graph is a valid captured graph; on failure it is destroyed below.
        let exec =
            match unsafe { result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)) } {
                Ok(exec) => exec,
                Err(source) => {
                    destroy_graph(graph);
                    return Err(inner.driver("cuGraphInstantiate", source));
                }
            };
        timings.instantiate = t.elapsed();
        let g = Graph {
            graph,
            exec,
            nodes,
            timings,
            inner: inner.clone(),
            own_keeper: None,
        };
        let t = Instant::now();
        g.upload()?;
        self.stream().synchronize()?;
        let mut g = g;
        g.timings.upload = t.elapsed();
        Ok((g, retain.finish()))
    }
}

fn node_count(graph: sys::CUgraph) -> usize {
    let mut n = 0usize;
    // SAFETY: a null node array asks only for the count.
    let _ = unsafe { sys::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut n) };
    n
}
