//! # memra-engine
//!
//! A small CUDA engine for measuring and running kernel walks: a device context with one
//! engine stream, typed device buffers, kernels compiled at run time by NVRTC for the device at
//! hand (and cached on disk), device events, and CUDA-graph capture that is safe when the
//! captured code allocates.
//!
//! ```no_run
//! use memra_engine::Engine;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let e = Engine::new(0)?;
//! let a = e.htod(&[1.0f32; 1024])?;
//! let b = e.htod(&[2.0f32; 1024])?;
//! let mut y = e.zeros::<f32>(1024)?;
//! let (graph, _keeper) = e.capture_graph_retained(|eng| {
//!     let mut tmp = y.clone(); // allocates inside the capture: retained by the keeper
//!     eng.add(&a, &b, &mut tmp, 1024)?;
//!     eng.add(&tmp, &b, &mut y.clone(), 1024)
//! })?;
//! graph.launch()?;
//! e.stream().synchronize()?;
//! # Ok(()) }
//! ```
//!
//! A graph holds every buffer its step touched or allocated (an `Arc` on each allocation), so
//! dropping a buffer, the keeper or the engine never lets a replay write into memory that was
//! handed out again; every free first waits for the streams that may still use the memory.
//!
//! Beyond one frozen graph: [`Graph::update`] follows a step whose arguments changed
//! (`cuGraphExecUpdate`, with a fallback when the driver refuses), [`Graph::set_kernel_node`]
//! changes one node from a checked [`KernelCall`], [`Engine::set_pdl`] launches kernels as
//! programmatic dependents, and [`Engine::capture_while`] runs a step many times in one launch
//! of a conditional WHILE graph. [`Engine::host_staging`] gives page-locked host memory that
//! host↔device copies (and graph copy nodes) use and safe code never reads;
//! [`Engine::hold_stream`] holds the stream with a blocking kernel until the host releases it,
//! so that work queued behind it starts at the GPU's pace.
//!
//! The driver (`libcuda`) and NVRTC are loaded at run time: the crate builds without a CUDA
//! toolkit, and [`Engine::new`] returns an error (never panics) on a machine without them.

mod blas;
mod blas_lt;
mod chase;
mod conditional;
mod context;
mod device;
mod elementwise;
mod engine;
mod error;
mod graph;
mod hold;
mod kernels;
mod launch;
mod memory;
mod ops;
mod peer;
mod profiler;
mod staging;
mod timing;

pub use blas::{Gemm, GemmType};
pub use chase::{chase_ring_words, Chase, ChaseRound, CHASE_LINE_WORDS};
pub use conditional::{LoopCounts, LoopGraph};
pub use device::{device_count, DeviceInfo};
pub use engine::{Engine, EngineOptions, GraphMemory, Stream};
pub use error::{Error, Result};
pub use graph::{CaptureTimings, EdgeCounts, Graph, Keeper, KernelCall, UpdateReport};
pub use hold::StreamHold;
pub use kernels::{cache_dir as kernel_cache_dir, Kernel, KernelCache, KernelInitReport};
pub use launch::{launch_raw, LaunchShape};
pub use memory::{DeviceBuffer, DeviceCopy};
pub use ops::Pace;
pub use peer::PeerPath;
pub use profiler::{profile_kernels, profiling_tool_injected, ProfiledKernel};
pub use staging::HostStaging;
pub use timing::Event;

/// The cudarc version the engine is built on, for callers that issue raw driver calls beside
/// the engine (e.g. measuring the driver's own launch floor in the same process).
pub use cudarc;
