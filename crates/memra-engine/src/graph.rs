//! CUDA-graph capture that is memory-safe.
//!
//! A captured graph refers to device addresses, not to Rust owners. The engine therefore
//! *retains*, during the warm-up and the capture, every allocation an operation touches, every
//! allocation made and every one dropped, and the graph holds them (an `Arc` on each): while
//! the graph exists, no address it replays into can be freed and handed out again. The graph
//! also holds the engines it spans, so their contexts, streams and kernels outlive it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{result, sys, CudaEvent};

use crate::context::EngineCore;
use crate::engine::{Engine, Inner};
use crate::error::Result;
use crate::memory::{release, Allocation};

mod capture;
mod update;
pub(crate) use capture::{CaptureGuard, RetainGuard};
pub use update::{KernelCall, UpdateReport};

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

/// A graph's dependencies (edges) by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EdgeCounts {
    /// Ordinary edges: the dependent starts after the whole predecessor has finished.
    pub full: usize,
    /// Programmatic edges: the dependent may launch once the predecessor's blocks have all
    /// triggered (or finished), and waits on the device for its memory.
    pub programmatic: usize,
    /// Programmatic launch-order edges (the dependent launches after the predecessor starts).
    pub launch_order: usize,
}

fn null_node() -> sys::CUgraphNode {
    std::ptr::null_mut()
}

/// The allocations a graph may replay into. Shared by the graph and its [`Keeper`]; the memory
/// goes back when both are gone (each free first waits for every stream that used it).
struct Retained(Vec<Arc<Allocation>>);

impl Drop for Retained {
    fn drop(&mut self) {
        for a in self.0.drain(..) {
            release(a);
        }
    }
}

/// A view of the allocations a captured graph keeps alive, returned by
/// [`Engine::capture_graph_retained`].
///
/// The graph itself holds the same allocations, so dropping the keeper early is harmless: the
/// memory goes back when the graph *and* the keeper are gone. Keep it to look at what was
/// retained, or to keep that memory reserved after the graph is dropped.
pub struct Keeper {
    retained: Arc<Retained>,
}

impl Keeper {
    /// Number of allocations retained.
    pub fn len(&self) -> usize {
        self.retained.0.len()
    }

    /// True when the capture touched and allocated nothing.
    pub fn is_empty(&self) -> bool {
        self.retained.0.is_empty()
    }

    /// Bytes retained.
    pub fn bytes(&self) -> usize {
        self.retained.0.iter().map(|a| a.bytes()).sum()
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

/// Another engine's stream that a launch is ordered with: the launch waits for its earlier
/// work, and its later work waits for the launch.
struct Peer {
    core: Arc<EngineCore>,
    /// Created in the peer's context, recorded on its stream.
    before: CudaEvent,
}

/// An instantiated, uploaded CUDA graph on the engine stream.
///
/// It owns every allocation it may replay into and the engines it spans, so every launch is
/// safe for as long as the graph exists, whatever was dropped since. Dropping it destroys the
/// executable graph (the driver finishes a replay still in flight) and releases its memory once
/// the streams that use it have finished; a failure there is recorded and reported by the next
/// `synchronize` or [`Engine::check_deferred`], never panicked.
pub struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    nodes: usize,
    timings: CaptureTimings,
    /// The engine the graph launches on, first, then the others it spans.
    engines: Vec<Arc<Inner>>,
    peers: Vec<Peer>,
    /// Created in the launching context; the peers' streams wait on it after each launch.
    after: Option<CudaEvent>,
    retained: Arc<Retained>,
    /// Buffers given to kernel nodes by [`Graph::set_kernel_node`], by address.
    node_buffers: std::collections::HashMap<sys::CUdeviceptr, Arc<Allocation>>,
    /// The kernel nodes in dependency order, found on first use.
    kernel_nodes: Option<Vec<sys::CUgraphNode>>,
}

// SAFETY: the handles are used only through &self methods that bind the context first, and
// the CUDA driver API may be called from any thread. `Graph` is not `Sync`, so one executable
// graph is never launched from two threads at once.
unsafe impl Send for Graph {}

impl Graph {
    fn core(&self) -> &Arc<EngineCore> {
        &self.engines[0].core
    }

    /// Replays the graph on the engine stream.
    ///
    /// A graph that spans other engines (nodes on their devices, or memory they own) is
    /// ordered with their streams: it starts after the work already queued there, and their
    /// later work starts after it, so eager work on another engine never races a replay.
    pub fn launch(&self) -> Result<()> {
        let core = self.core();
        for p in &self.peers {
            p.before
                .record(&p.core.stream)
                .map_err(|source| p.core.driver("cuEventRecord (graph launch)", source))?;
            core.stream
                .wait(&p.before)
                .map_err(|source| core.driver("cuStreamWaitEvent (graph launch)", source))?;
        }
        core.bind()?;
        // SAFETY: exec is a live executable graph of this context (current, bound above) and
        // the stream belongs to it. Every address the graph uses belongs to an allocation the
        // graph holds, and every kernel to a module of an engine the graph holds.
        unsafe { result::graph::launch(self.exec, core.cu_stream()) }
            .map_err(|source| core.driver("cuGraphLaunch", source))?;
        if let Some(after) = &self.after {
            after
                .record(&core.stream)
                .map_err(|source| core.driver("cuEventRecord (graph launch)", source))?;
            for p in &self.peers {
                p.core
                    .stream
                    .wait(after)
                    .map_err(|source| p.core.driver("cuStreamWaitEvent (graph launch)", source))?;
            }
        }
        Ok(())
    }

    /// Uploads the graph's resources to the device again (the engine already does this once
    /// after instantiation, so the first launch pays no setup).
    pub fn upload(&self) -> Result<()> {
        let core = self.core();
        core.bind()?;
        // SAFETY: as in `launch`: a live executable graph and a stream of the current context.
        unsafe { result::graph::upload(self.exec, core.cu_stream()) }
            .map_err(|source| core.driver("cuGraphUpload", source))
    }

    /// Nodes in the captured graph (kernels, copies, memsets).
    pub fn node_count(&self) -> usize {
        self.nodes
    }

    /// The graph's dependencies by kind: programmatic edges are what a capture with
    /// programmatic dependent launch (see [`Engine::set_pdl`]) makes between kernels.
    pub fn edge_counts(&self) -> Result<EdgeCounts> {
        let core = self.core();
        core.bind()?;
        let call = |from: *mut sys::CUgraphNode,
                    to: *mut sys::CUgraphNode,
                    data: *mut sys::CUgraphEdgeData,
                    n: &mut usize| {
            // SAFETY: `graph` is this Graph's live graph; the arrays are null (count only) or
            // hold `*n` elements each.
            unsafe { sys::cuGraphGetEdges_v2(self.graph, from, to, data, n) }
                .result()
                .map_err(|source| core.driver("cuGraphGetEdges", source))
        };
        let null = std::ptr::null_mut();
        let mut n = 0usize;
        call(null, null, std::ptr::null_mut(), &mut n)?;
        let mut from = vec![null_node(); n];
        let mut to = vec![null_node(); n];
        // SAFETY: edge data is plain bytes; zero is a valid value.
        let mut data = vec![unsafe { std::mem::zeroed::<sys::CUgraphEdgeData>() }; n];
        call(
            from.as_mut_ptr(),
            to.as_mut_ptr(),
            data.as_mut_ptr(),
            &mut n,
        )?;
        let mut counts = EdgeCounts::default();
        for d in &data[..n.min(data.len())] {
            let programmatic =
                d.type_ == sys::CUgraphDependencyType::CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC as u8;
            match (programmatic, u32::from(d.from_port)) {
                (false, _) => counts.full += 1,
                (true, sys::CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC) => counts.programmatic += 1,
                (true, _) => counts.launch_order += 1,
            }
        }
        Ok(counts)
    }

    /// What each build phase cost.
    pub fn timings(&self) -> CaptureTimings {
        self.timings
    }

    /// Number of allocations the graph keeps alive.
    pub fn retained_allocations(&self) -> usize {
        self.retained.0.len()
    }

    /// Bytes of device memory the graph keeps alive.
    pub fn retained_bytes(&self) -> usize {
        self.retained.0.iter().map(|a| a.bytes()).sum()
    }

    /// The engine the graph launches on. The graph holds it, so this works after every other
    /// handle to the engine is gone.
    pub fn engine(&self) -> Engine {
        Engine {
            inner: self.engines[0].clone(),
        }
    }

    /// A [`Keeper`] sharing this graph's retained allocations.
    pub fn keeper(&self) -> Keeper {
        Keeper {
            retained: self.retained.clone(),
        }
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        let core = self.engines[0].core.clone();
        if let Err(e) = core.bind() {
            core.sink.record(e);
            return;
        }
        // SAFETY: both handles are owned by this Graph and destroyed exactly once, here. The
        // driver documents that an executable graph still in flight is freed asynchronously on
        // completion, not terminated.
        if let Err(source) = unsafe { result::graph::exec_destroy(self.exec) } {
            core.sink
                .record(core.driver("cuGraphExecDestroy (in drop)", source));
        }
        // SAFETY: as above; the executable graph made from it is already destroyed.
        if let Err(source) = unsafe { result::graph::destroy(self.graph) } {
            core.sink
                .record(core.driver("cuGraphDestroy (in drop)", source));
        }
        // The retained memory (and the node buffers) drop after this body; each free waits for
        // its streams, among them this graph's launch stream.
    }
}

pub(crate) fn destroy_graph(g: sys::CUgraph) {
    if !g.is_null() {
        // SAFETY: callers pass a graph they own (made by end capture or cuGraphCreate) and
        // never use again.
        let _ = unsafe { result::graph::destroy(g) };
    }
}

impl Graph {
    /// Instantiates a built graph (taking ownership of it), hands it what the capture retained,
    /// orders it with the other engines' streams, and uploads it.
    pub(crate) fn assemble(
        engine: &Engine,
        others: &[&Engine],
        graph: sys::CUgraph,
        nodes: usize,
        mut timings: CaptureTimings,
        retain: RetainGuard<'_>,
    ) -> Result<(Graph, Keeper)> {
        let core = &engine.inner.core;
        let t = Instant::now();
        // SAFETY: graph is a valid graph of the current context; on failure it is destroyed
        // below and never used again.
        let exec =
            match unsafe { result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)) } {
                Ok(exec) => exec,
                Err(source) => {
                    destroy_graph(graph);
                    return Err(core.driver("cuGraphInstantiate", source));
                }
            };
        timings.instantiate = t.elapsed();
        let allocations = retain.finish(core);
        let mut engines = vec![engine.inner.clone()];
        engines.extend(others.iter().map(|e| e.inner.clone()));
        let peer_cores = peer_cores(core, &engines, &allocations);
        let mut g = Graph {
            graph,
            exec,
            nodes,
            timings,
            engines,
            peers: Vec::new(),
            after: None,
            retained: Arc::new(Retained(allocations)),
            node_buffers: Default::default(),
            kernel_nodes: None,
        };
        if !peer_cores.is_empty() {
            let event = |c: &Arc<EngineCore>| {
                c.ctx
                    .new_event(None)
                    .map_err(|source| c.driver("cuEventCreate", source))
            };
            g.after = Some(event(core)?);
            for c in peer_cores {
                g.peers.push(Peer {
                    before: event(&c)?,
                    core: c,
                });
            }
        }
        let t = Instant::now();
        g.upload()?;
        engine.stream().synchronize()?;
        g.timings.upload = t.elapsed();
        let keeper = g.keeper();
        Ok((g, keeper))
    }
}

/// The engines other than `launcher` whose streams a replay must be ordered with: those the
/// capture spans and the owners of memory the graph uses, each once.
fn peer_cores(
    launcher: &Arc<EngineCore>,
    engines: &[Arc<Inner>],
    allocations: &[Arc<Allocation>],
) -> Vec<Arc<EngineCore>> {
    let mut out: Vec<Arc<EngineCore>> = Vec::new();
    let candidates = engines
        .iter()
        .map(|e| &e.core)
        .chain(allocations.iter().map(|a| a.owner()));
    for c in candidates {
        if !Arc::ptr_eq(c, launcher) && !out.iter().any(|o| Arc::ptr_eq(o, c)) {
            out.push(c.clone());
        }
    }
    out
}

pub(crate) fn node_count(graph: sys::CUgraph) -> usize {
    let mut n = 0usize;
    // SAFETY: graph is a valid graph; a null node array asks only for the count, written to n.
    let _ = unsafe { sys::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut n) };
    n
}
