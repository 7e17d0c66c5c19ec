//! Conditional graphs: one graph launch that runs a step many times, decided on the device.
//!
//! A WHILE node (CUDA 12.4+) holds a body graph that runs again as long as its condition handle
//! is non-zero; the body's last kernel sets the handle. The host then pays one launch for K
//! steps, and the loop can end early on a value only the GPU knows (a rejected draft token).

use std::time::Instant;

use cudarc::driver::sys;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::graph::{destroy_graph, node_count, CaptureGuard, CaptureTimings, Graph, RetainGuard};
use crate::kernels::Kernel;
use crate::launch::LaunchShape;
use crate::memory::DeviceBuffer;

/// A graph whose one launch runs a captured step in a conditional WHILE node: up to
/// `max_iterations` times, fewer if the step sets the stop flag on the device. Built by
/// [`Engine::capture_while`].
pub struct LoopGraph {
    graph: Graph,
    /// [running count, count of the last finished launch, total over all launches].
    state: DeviceBuffer<u32>,
    max_iterations: u32,
    body_nodes: usize,
}

/// How many iterations a [`LoopGraph`] ran, read back from the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopCounts {
    /// Iterations of the last finished launch.
    pub last: u32,
    /// Iterations over every launch so far.
    pub total: u32,
}

impl LoopGraph {
    /// Launches the loop on the engine stream: one host call for every iteration.
    pub fn launch(&self) -> Result<()> {
        self.graph.launch()
    }

    /// The executable graph (one conditional node; its body is the step plus the loop kernel).
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The most iterations one launch runs.
    pub fn max_iterations(&self) -> u32 {
        self.max_iterations
    }

    /// Nodes in the loop body: the step's nodes and the kernel that decides whether to go on.
    pub fn body_nodes(&self) -> usize {
        self.body_nodes
    }

    /// Iteration counts kept on the device; waits for the engine stream.
    pub fn counts(&self) -> Result<LoopCounts> {
        let s = self.graph.engine().dtoh(&self.state)?;
        Ok(LoopCounts {
            last: s[1],
            total: s[2],
        })
    }
}

impl std::fmt::Debug for LoopGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopGraph")
            .field("max_iterations", &self.max_iterations)
            .field("body_nodes", &self.body_nodes)
            .finish()
    }
}

/// Frees a graph made by `cuGraphCreate` unless it was handed on.
struct OwnedGraph(sys::CUgraph);

impl OwnedGraph {
    fn into_raw(mut self) -> sys::CUgraph {
        std::mem::replace(&mut self.0, std::ptr::null_mut())
    }
}

impl Drop for OwnedGraph {
    fn drop(&mut self) {
        destroy_graph(self.0);
    }
}

impl Engine {
    /// Builds a graph whose one launch runs `step` up to `max_iterations` times, in a
    /// conditional WHILE node, with no host involvement between iterations.
    ///
    /// `step` gets the loop's stop flag (one `u32`, zero at the start of every launch): a
    /// kernel in the step that sets it non-zero ends the loop after the current iteration.
    /// After each iteration the engine's `loop_next` kernel counts it and decides whether to
    /// go on; on exit it records the count ([`LoopGraph::counts`]) and clears the flag.
    ///
    /// As with [`Engine::capture_graph_retained`], `step` first runs once eagerly (warm-up; the
    /// flag is cleared afterwards), then is captured into the loop body; everything it touches
    /// or allocates is held by the graph. Needs a driver with conditional nodes (CUDA 12.4+)
    /// and an NVRTC that compiled the loop kernel; otherwise [`Error::Unsupported`].
    pub fn capture_while<F>(&self, max_iterations: u32, mut step: F) -> Result<LoopGraph>
    where
        F: FnMut(&Engine, &mut DeviceBuffer<u32>) -> Result<()>,
    {
        self.cu_function(Kernel::LoopNext)?;
        let core = &self.inner.core;
        let mut stop = self.zeros::<u32>(1)?;
        let state = self.zeros::<u32>(3)?;
        let retain = RetainGuard::start(vec![core])?;
        let mut timings = CaptureTimings::default();

        let t = Instant::now();
        step(self, &mut stop)?;
        self.memset_zero(&mut stop, 4)?;
        core.sync_stream()?;
        timings.warmup = t.elapsed();

        let t = Instant::now();
        core.bind()?;
        let mut g: sys::CUgraph = std::ptr::null_mut();
        // SAFETY: g is a valid out-pointer; flags must be 0.
        unsafe { sys::cuGraphCreate(&mut g, 0) }
            .result()
            .map_err(|source| core.driver("cuGraphCreate", source))?;
        let parent = OwnedGraph(g);
        let mut handle: sys::CUgraphConditionalHandle = 0;
        // SAFETY: the graph and context are live; the handle is written to a valid out-pointer.
        // With ASSIGN_DEFAULT the handle is reset to the default at every launch of the graph,
        // so a launch with max_iterations > 0 runs the body at least once.
        unsafe {
            sys::cuGraphConditionalHandleCreate(
                &mut handle,
                parent.0,
                core.ctx.cu_ctx(),
                u32::from(max_iterations > 0),
                sys::CU_GRAPH_COND_ASSIGN_DEFAULT,
            )
        }
        .result()
        .map_err(|source| unsupported_or(core.driver("cuGraphConditionalHandleCreate", source)))?;
        // SAFETY: node parameters are plain data; all-zero is a valid start.
        let mut params: sys::CUgraphNodeParams = unsafe { std::mem::zeroed() };
        params.type_ = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL;
        params.__bindgen_anon_1.conditional = sys::CUDA_CONDITIONAL_NODE_PARAMS {
            handle,
            type_: sys::CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_WHILE,
            size: 1,
            phGraph_out: std::ptr::null_mut(),
            ctx: core.ctx.cu_ctx(),
        };
        let mut node: sys::CUgraphNode = std::ptr::null_mut();
        // SAFETY: the parent graph is live, no dependencies (null, 0), and `params` describes a
        // WHILE node of one body in the current context; the driver fills phGraph_out.
        unsafe {
            sys::cuGraphAddNode_v2(
                &mut node,
                parent.0,
                std::ptr::null(),
                std::ptr::null(),
                0,
                &mut params,
            )
        }
        .result()
        .map_err(|source| unsupported_or(core.driver("cuGraphAddNode (WHILE)", source)))?;
        // SAFETY: the union holds the conditional parameters just written; the driver set
        // phGraph_out to an array of `size` (1) body graphs owned by the node.
        let body = unsafe { *params.__bindgen_anon_1.conditional.phGraph_out };

        let mut capture = CaptureGuard::begin(core, vec![core], Some(body))?;
        let stepped = step(self, &mut stop).and_then(|()| {
            self.kernel(Kernel::LoopNext)
                .u64(handle)
                .buf(&state)
                .buf(&stop)
                .u32(max_iterations)
                .run(LaunchShape::linear(1, 1))
        });
        let ended = capture.end();
        timings.capture = t.elapsed();
        stepped?;
        ended?;
        let body_nodes = node_count(body);
        let (graph, _keeper) = Graph::assemble(self, &[], parent.into_raw(), 1, timings, retain)?;
        // The flag and the state are touched by the captured loop kernel, so the graph holds
        // them; the LoopGraph keeps its own handle on the state to read the counts.
        Ok(LoopGraph {
            graph,
            state,
            max_iterations,
            body_nodes,
        })
    }
}

/// A driver that does not know conditional nodes answers "not supported" or "invalid value";
/// say so in words.
fn unsupported_or(e: Error) -> Error {
    use sys::CUresult::*;
    match e.driver_error().map(|d| d.0) {
        Some(CUDA_ERROR_NOT_SUPPORTED | CUDA_ERROR_INVALID_VALUE) => Error::Unsupported {
            feature: "conditional graph nodes",
            why: format!("{e} (they need CUDA 12.4 or later)"),
        },
        _ => e,
    }
}
