//! Changing a built graph instead of building a new one: re-capture the step and apply it with
//! `cuGraphExecUpdate` (llama.cpp's way), or change one kernel node's arguments in place with
//! `cuGraphExecKernelNodeSetParams`. Either way the graph keeps holding every buffer it may
//! replay into, so the updated graph is as safe to launch as a freshly captured one.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{result, sys};

use super::{destroy_graph, node_count, CaptureGuard, Graph, RetainGuard, Retained};
use crate::context::EngineCore;
use crate::error::{Error, Result};
use crate::kernels::Kernel;
use crate::launch::{check_args, Arg, LaunchShape, MAX_ARGS};
use crate::memory::{Allocation, DeviceBuffer, DeviceCopy};
use crate::Engine;

/// A new capture and the outcome of applying it with `cuGraphExecUpdate`; the capture (and what
/// it retained) is the caller's to adopt or drop.
struct TryUpdate {
    graph: sys::CUgraph,
    retained: Vec<Arc<Allocation>>,
    report: UpdateReport,
    refused: Result<()>,
}

/// What one update cost, phase by phase.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UpdateReport {
    /// Capturing the step again.
    pub capture: Duration,
    /// `cuGraphExecUpdate`, whether it succeeded or not.
    pub update: Duration,
    /// When the driver refused the update and the graph was instantiated again instead:
    /// instantiate + upload. `None` when the update succeeded.
    pub reinstantiate: Option<Duration>,
}

/// A checked launch of one engine kernel, to put into a graph's kernel node with
/// [`Graph::set_kernel_node`]. Made only by the engine's `*_call` methods (e.g.
/// [`Engine::add_call`]), which check buffers, lengths and shape exactly as the launching op
/// does, so a node set from a call can never read or write outside its buffers.
pub struct KernelCall {
    pub(crate) kernel: Kernel,
    pub(crate) shape: LaunchShape,
    pub(crate) args: Vec<Arg>,
    pub(crate) buffers: Vec<Arc<Allocation>>,
    /// The engine whose buffers the call uses (checked like any op's buffers).
    pub(crate) core: Arc<EngineCore>,
}

impl KernelCall {
    pub(crate) fn new(kernel: Kernel, shape: LaunchShape, core: &Arc<EngineCore>) -> Self {
        KernelCall {
            kernel,
            shape,
            args: Vec::with_capacity(MAX_ARGS),
            buffers: Vec::new(),
            core: core.clone(),
        }
    }

    pub(crate) fn buf_at<T: DeviceCopy>(
        mut self,
        b: &DeviceBuffer<T>,
        byte_offset: u64,
    ) -> Result<Self> {
        let a = b.allocation()?;
        self.args.push(Arg::Ptr(a.ptr() + byte_offset));
        self.buffers.push(a.clone());
        Ok(self)
    }

    pub(crate) fn arg(mut self, a: Arg) -> Self {
        self.args.push(a);
        self
    }

    /// The kernel this call launches.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }
}

impl std::fmt::Debug for KernelCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelCall")
            .field("kernel", &self.kernel)
            .field("shape", &self.shape)
            .finish()
    }
}

impl Graph {
    fn single_engine(&self, op: &'static str) -> Result<Engine> {
        if self.engines.len() != 1 || !self.peers.is_empty() {
            return Err(Error::InvalidArgument {
                op,
                what: "the graph spans several engines; build a new one instead".into(),
            });
        }
        Ok(self.engine())
    }

    /// Captures `step` into a new graph (no warm-up: the step runs only as captured), with
    /// everything it touches retained.
    fn recapture<F>(
        &self,
        engine: &Engine,
        mut step: F,
    ) -> Result<(sys::CUgraph, Vec<Arc<Allocation>>, Duration)>
    where
        F: FnMut(&Engine) -> Result<()>,
    {
        let core = &engine.inner.core;
        let retain = RetainGuard::start(vec![core])?;
        let t = Instant::now();
        let mut capture = CaptureGuard::begin(core, vec![core], None)?;
        let g = capture.finish("update", step(engine))?;
        let took = t.elapsed();
        Ok((g, retain.finish(core), took))
    }

    /// Makes `g` (and what its capture retained) this graph's own, after `exec` now runs it.
    fn adopt(&mut self, g: sys::CUgraph, retained: Vec<Arc<Allocation>>) {
        destroy_graph(std::mem::replace(&mut self.graph, g));
        self.nodes = node_count(g);
        // The old buffers go back once every stream that used them has finished (a replay of
        // the old graph may still be running); a Keeper keeps them longer.
        self.retained = Arc::new(Retained(retained));
        self.node_buffers.clear();
        self.kernel_nodes = None;
    }

    /// Captures `step` again and applies it to the executable graph with `cuGraphExecUpdate`:
    /// the cheap way to follow a step whose pointers or sizes changed but whose shape (nodes,
    /// kernels, dependencies) did not. On refusal returns [`Error::GraphUpdate`] with the
    /// driver's reason and node, and the graph is unchanged (still launchable as before).
    pub fn update<F>(&mut self, step: F) -> Result<UpdateReport>
    where
        F: FnMut(&Engine) -> Result<()>,
    {
        let (_, try_update) = self.recapture_and_update(step)?;
        let TryUpdate {
            graph: g,
            retained,
            report,
            refused,
        } = try_update;
        if let Err(e) = refused {
            destroy_graph(g);
            retained.into_iter().for_each(crate::memory::release);
            return Err(e);
        }
        self.adopt(g, retained);
        Ok(report)
    }

    /// The half `update` and `update_or_reinstantiate` share: capture `step` again and try
    /// `cuGraphExecUpdate` with it.
    fn recapture_and_update<F>(&mut self, step: F) -> Result<(Engine, TryUpdate)>
    where
        F: FnMut(&Engine) -> Result<()>,
    {
        let engine = self.single_engine("update")?;
        let (graph, retained, capture) = self.recapture(&engine, step)?;
        let t = Instant::now();
        let refused = self.exec_update(graph);
        let report = UpdateReport {
            capture,
            update: t.elapsed(),
            reinstantiate: None,
        };
        Ok((
            engine,
            TryUpdate {
                graph,
                retained,
                report,
                refused,
            },
        ))
    }

    /// Like [`Graph::update`], but when the driver refuses (a changed topology, kernel or node
    /// kind) builds a new executable graph from the new capture instead, as llama.cpp does;
    /// the report says which happened.
    pub fn update_or_reinstantiate<F>(&mut self, step: F) -> Result<UpdateReport>
    where
        F: FnMut(&Engine) -> Result<()>,
    {
        let (engine, try_update) = self.recapture_and_update(step)?;
        let TryUpdate {
            graph: g,
            retained,
            mut report,
            refused,
        } = try_update;
        if refused.is_err() {
            let t = Instant::now();
            let core = &engine.inner.core;
            core.bind()?;
            // SAFETY: g is a valid graph of the current context; on failure it is destroyed
            // below and never used again.
            let exec =
                match unsafe { result::graph::instantiate(g, sys::CUgraphInstantiate_flags(0)) } {
                    Ok(exec) => exec,
                    Err(source) => {
                        destroy_graph(g);
                        retained.into_iter().for_each(crate::memory::release);
                        return Err(core.driver("cuGraphInstantiate", source));
                    }
                };
            // SAFETY: the old executable graph is owned by this Graph and replaced here; the
            // driver frees one still in flight when it completes.
            if let Err(source) = unsafe { result::graph::exec_destroy(self.exec) } {
                core.sink
                    .record(core.driver("cuGraphExecDestroy (reinstantiate)", source));
            }
            self.exec = exec;
            self.upload()?;
            report.reinstantiate = Some(t.elapsed());
        }
        self.adopt(g, retained);
        Ok(report)
    }

    fn exec_update(&self, g: sys::CUgraph) -> Result<()> {
        let core = self.core();
        core.bind()?;
        // SAFETY: the result info is plain data, written by the driver.
        let mut info: sys::CUgraphExecUpdateResultInfo = unsafe { std::mem::zeroed() };
        // SAFETY: exec and g are live graphs of the current context; info is a valid
        // out-pointer. On failure the driver leaves exec unchanged (cuGraphExecUpdate docs).
        let r = unsafe { sys::cuGraphExecUpdate_v2(self.exec, g, &mut info) };
        if r == sys::CUresult::CUDA_SUCCESS {
            return Ok(());
        }
        Err(Error::GraphUpdate {
            result: format!("{:?}", info.result),
            node: describe_node(info.errorNode),
        })
    }

    /// Kernel nodes of the graph, in dependency order (for a step captured on one stream, the
    /// order its kernels were launched in).
    pub fn kernel_node_count(&mut self) -> Result<usize> {
        Ok(self.kernel_nodes()?.len())
    }

    fn kernel_nodes(&mut self) -> Result<&[sys::CUgraphNode]> {
        if self.kernel_nodes.is_none() {
            self.kernel_nodes = Some(kernel_nodes_in_order(self.graph, self.core())?);
        }
        Ok(self.kernel_nodes.as_deref().unwrap_or_default())
    }

    /// Sets kernel node `index` (in [`Graph::kernel_node_count`]'s order) to `call` from the
    /// next launch on, with `cuGraphExecKernelNodeSetParams`: no capture, no instantiation.
    /// The graph holds the call's buffers from now on (and keeps holding the node's old ones
    /// until it is dropped or updated).
    pub fn set_kernel_node(&mut self, index: usize, call: KernelCall) -> Result<()> {
        let engine = self.single_engine("set_kernel_node")?;
        let core = engine.inner.core.clone();
        let KernelCall {
            kernel,
            shape,
            mut args,
            buffers,
            core: owner,
        } = call;
        if !Arc::ptr_eq(&owner, &core) {
            return Err(Error::ForeignBuffer {
                op: "set_kernel_node",
                arg: "call",
                device: core.ordinal,
                other: owner.ordinal,
            });
        }
        let nodes = self.kernel_nodes()?;
        let node = *nodes.get(index).ok_or_else(|| Error::InvalidArgument {
            op: "set_kernel_node",
            what: format!("kernel node {index} of {}", nodes.len()),
        })?;
        let mut params = [std::ptr::null_mut::<c_void>(); MAX_ARGS];
        check_args(kernel, &mut args, shape, &mut params)?;
        // The build for the engine's current PDL setting (a node keeps its own edges).
        let f = engine
            .inner
            .kernels
            .get_shared(kernel, engine.pdl(), shape.shared_bytes)?
            .map_err(|source| core.driver("cuFuncSetAttribute", source))?
            .cu_function();
        let p = sys::CUDA_KERNEL_NODE_PARAMS {
            func: f,
            gridDimX: shape.grid.0,
            gridDimY: shape.grid.1,
            gridDimZ: shape.grid.2,
            blockDimX: shape.block.0,
            blockDimY: shape.block.1,
            blockDimZ: shape.block.2,
            sharedMemBytes: shape.shared_bytes,
            kernelParams: params.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        };
        core.bind()?;
        // SAFETY: `p` describes a launch of an engine kernel (loaded in this context) whose
        // arguments were just checked against its parameters, each pointed-to value alive until
        // the call returns (the driver copies them); exec and node are live handles of this
        // graph; every buffer argument is held by the graph below before any launch can use it.
        // Its dynamic shared memory is only reserved (no engine kernel declares it).
        unsafe { sys::cuGraphExecKernelNodeSetParams_v2(self.exec, node, &p) }
            .result()
            .map_err(|source| core.driver("cuGraphExecKernelNodeSetParams", source))?;
        for b in buffers {
            b.used_by(&core);
            self.node_buffers.entry(b.ptr()).or_insert(b);
        }
        Ok(())
    }
}

fn describe_node(node: sys::CUgraphNode) -> String {
    if node.is_null() {
        return String::new();
    }
    let mut t = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
    // SAFETY: node was named by the driver for a live graph; t is a valid out-pointer.
    match unsafe { sys::cuGraphNodeGetType(node, &mut t) }.result() {
        Ok(()) => format!(" at a {t:?} node"),
        Err(_) => " at a node of unknown type".into(),
    }
}

/// The kernel nodes of `g` in a topological order (Kahn's algorithm, ties in the driver's node
/// order), so a chain captured on one stream comes out in launch order.
fn kernel_nodes_in_order(
    g: sys::CUgraph,
    core: &crate::context::EngineCore,
) -> Result<Vec<sys::CUgraphNode>> {
    let drv = |call, r: sys::CUresult| r.result().map_err(|source| core.driver(call, source));
    let mut n = 0usize;
    // SAFETY: g is live; null arrays ask only for counts.
    drv("cuGraphGetNodes", unsafe {
        sys::cuGraphGetNodes(g, std::ptr::null_mut(), &mut n)
    })?;
    let mut nodes = vec![std::ptr::null_mut(); n];
    // SAFETY: the array holds n nodes.
    drv("cuGraphGetNodes", unsafe {
        sys::cuGraphGetNodes(g, nodes.as_mut_ptr(), &mut n)
    })?;
    nodes.truncate(n);
    let mut e = 0usize;
    // SAFETY: as above, counts only.
    drv("cuGraphGetEdges", unsafe {
        sys::cuGraphGetEdges_v2(
            g,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut e,
        )
    })?;
    let (mut from, mut to) = (vec![std::ptr::null_mut(); e], vec![std::ptr::null_mut(); e]);
    // SAFETY: both arrays hold e nodes; edge data is not asked for.
    drv("cuGraphGetEdges", unsafe {
        sys::cuGraphGetEdges_v2(
            g,
            from.as_mut_ptr(),
            to.as_mut_ptr(),
            std::ptr::null_mut(),
            &mut e,
        )
    })?;
    let index: HashMap<sys::CUgraphNode, usize> =
        nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let mut indegree = vec![0usize; nodes.len()];
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (f, t) in from.iter().zip(&to).take(e) {
        if let (Some(&fi), Some(&ti)) = (index.get(f), index.get(t)) {
            indegree[ti] += 1;
            next[fi].push(ti);
        }
    }
    let mut ready: std::collections::BTreeSet<usize> =
        (0..nodes.len()).filter(|&i| indegree[i] == 0).collect();
    let mut out = Vec::new();
    while let Some(i) = ready.pop_first() {
        let mut t = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
        // SAFETY: nodes[i] belongs to the live graph g.
        drv("cuGraphNodeGetType", unsafe {
            sys::cuGraphNodeGetType(nodes[i], &mut t)
        })?;
        if t == sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL {
            out.push(nodes[i]);
        }
        for &j in &next[i] {
            indegree[j] -= 1;
            if indegree[j] == 0 {
                ready.insert(j);
            }
        }
    }
    Ok(out)
}
