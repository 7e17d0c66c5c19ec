//! The engine: one device context, one stream, the kernels, and the operations users call.

use std::sync::Arc;

use cudarc::driver::{result, sys, CudaContext, DriverError};

use crate::context::EngineCore;
use crate::device::{describe_device, require_nvrtc, DeviceInfo};
use crate::error::{Error, Result};
use crate::kernels::{KernelCache, KernelInitReport, Kernels};
use crate::memory::{DeviceBuffer, DeviceCopy};

/// A CUDA engine on one device: a context, one engine stream that every operation is ordered
/// on, NVRTC-compiled kernels, and graph capture (see [`Engine::capture_graph_retained`]).
///
/// `Engine` is cheap to clone (it is a handle) and can be shared between threads; the context is
/// made current on the calling thread by each operation.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

/// What an engine holds; graphs hold it too, so the kernels a graph launches stay loaded.
pub(crate) struct Inner {
    pub(crate) core: Arc<EngineCore>,
    pub(crate) stream: Stream,
    pub(crate) kernels: Kernels,
    pub(crate) info: DeviceInfo,
    pub(crate) init: KernelInitReport,
    /// The cuBLAS handle, made on first use (see [`crate::blas`]).
    pub(crate) blas: crate::blas::BlasSlot,
    /// The cuBLASLt handle, made on first use (see [`crate::blas_lt`]).
    pub(crate) blas_lt: crate::blas_lt::BlasLtSlot,
}

/// How to start an engine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineOptions {
    /// Where compiled kernels are cached.
    pub kernel_cache: KernelCache,
    /// Launch every kernel with programmatic dependent launch (see [`Engine::set_pdl`]).
    pub pdl: bool,
}

/// Graph memory on a device, bytes (`CUgraphMem_attribute`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GraphMemory {
    /// Used by graph allocations now.
    pub used_current: u64,
    /// The most used since the last reset.
    pub used_high: u64,
    /// Reserved for graph allocations now.
    pub reserved_current: u64,
    /// The most reserved since the last reset.
    pub reserved_high: u64,
}

/// The engine stream. Every engine operation is ordered on it.
pub struct Stream {
    core: Arc<EngineCore>,
}

impl Stream {
    /// Waits until all work queued on the stream has finished. Also reports an error that an
    /// earlier `Drop` recorded. Refused during capture: a graph cannot contain a host wait.
    pub fn synchronize(&self) -> Result<()> {
        self.core.capture.refuse(
            "stream synchronize",
            "a graph cannot wait for the host; synchronize after the capture closure returns",
        )?;
        self.core.sync_stream()?;
        self.core.sink.take()
    }

    /// The raw stream handle, for work issued outside the engine (e.g. measuring the driver's
    /// own floor). Valid while the engine lives.
    pub fn cu_stream(&self) -> sys::CUstream {
        self.core.cu_stream()
    }

    /// Whether a graph capture is open on this stream.
    pub fn is_capturing(&self) -> bool {
        self.core.capture.is_capturing()
    }
}

impl Engine {
    /// Creates a context on device `ordinal`, the engine stream, and loads the kernels
    /// (compiled by NVRTC for this device's compute capability, or read from the disk cache).
    pub fn new(ordinal: usize) -> Result<Self> {
        Self::with_options(ordinal, &EngineOptions::default())
    }

    /// Like [`Engine::new`], with explicit options (e.g. a kernel cache directory, so tests and
    /// tools need not change the process environment).
    pub fn with_options(ordinal: usize, options: &EngineOptions) -> Result<Self> {
        let count = crate::device::device_count()?;
        if count == 0 {
            return Err(Error::NoDevice {
                detail: "cuDeviceGetCount returned 0".into(),
            });
        }
        if ordinal >= count {
            return Err(Error::OrdinalOutOfRange { ordinal, count });
        }
        require_nvrtc()?;
        let drv = |call: &'static str| {
            move |source: DriverError| Error::Driver {
                call,
                device: ordinal,
                source,
            }
        };
        let ctx = CudaContext::new(ordinal).map_err(drv("cuDevicePrimaryCtxRetain"))?;
        // SAFETY: the engine never uses cudarc's CudaSlice, whose cross-stream event tracking
        // this turns off; all engine work is ordered on the one engine stream.
        unsafe { ctx.disable_event_tracking() };
        let cu_stream = ctx.new_stream().map_err(drv("cuStreamCreate"))?;
        let info = describe_device(&ctx, ordinal)?;
        let (kernels, init) = Kernels::load(
            &ctx,
            ordinal,
            info.compute_capability,
            &options.kernel_cache,
        )?;
        let core = Arc::new(EngineCore::new(ordinal, ctx, cu_stream));
        let engine = Engine {
            inner: Arc::new(Inner {
                stream: Stream { core: core.clone() },
                core,
                kernels,
                info,
                init,
                blas: Default::default(),
                blas_lt: Default::default(),
            }),
        };
        engine.set_pdl(options.pdl)?;
        Ok(engine)
    }

    /// Turns programmatic dependent launch (PDL) on or off for the kernels launched from now on.
    ///
    /// With PDL each kernel is launched with `cuLaunchKernelEx` and programmatic stream
    /// serialization: the GPU may launch it while the previous kernel still runs, and it waits on
    /// the device (`griddepcontrol.wait`) before touching memory, so results are the same and
    /// the launch gap shrinks. Captured, consecutive kernels are joined by programmatic edges
    /// (see [`crate::Graph::edge_counts`]). Needs compute capability 9.0 or later; turning it on
    /// elsewhere returns [`Error::Unsupported`] and leaves it off.
    pub fn set_pdl(&self, on: bool) -> Result<()> {
        let (major, minor) = self.inner.info.compute_capability;
        if on && major < 9 {
            return Err(Error::Unsupported {
                feature: "programmatic dependent launch",
                why: format!(
                    "device {} has compute capability {major}.{minor}; PDL needs 9.0 or later",
                    self.inner.core.ordinal
                ),
            });
        }
        if on {
            self.inner.kernels.load_pdl()?;
        }
        self.inner.core.set_pdl(on);
        Ok(())
    }

    /// Whether kernels are launched with programmatic dependent launch.
    pub fn pdl(&self) -> bool {
        self.inner.core.pdl()
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.inner.core.ordinal
    }

    /// What the device is (name, compute capability, clocks, driver version).
    pub fn device_info(&self) -> &DeviceInfo {
        &self.inner.info
    }

    /// What loading the kernels cost, and whether the disk cache was used.
    pub fn kernel_init_report(&self) -> &KernelInitReport {
        &self.inner.init
    }

    /// The engine stream.
    pub fn stream(&self) -> &Stream {
        &self.inner.stream
    }

    /// Free and total device memory in bytes, as the driver reports them.
    pub fn mem_get_info(&self) -> Result<(usize, usize)> {
        let core = &self.inner.core;
        core.bind()?;
        result::mem_get_info().map_err(|source| core.driver("cuMemGetInfo", source))
    }

    /// The device memory graphs hold for their memory nodes (`cuDeviceGetGraphMemAttribute`).
    /// Graphs of this engine allocate in ordinary memory (their buffers show in
    /// [`crate::Graph::retained_bytes`]), so these count what other graph users on the device
    /// hold; compare [`Engine::mem_get_info`] before and after to see a graph's whole cost.
    pub fn graph_memory(&self) -> Result<GraphMemory> {
        let core = &self.inner.core;
        core.bind()?;
        let dev = core.ctx.cu_device();
        let get = |attr| {
            let mut v: u64 = 0;
            // SAFETY: dev is this engine's device; the attribute value is a u64 (cuuint64_t)
            // written to a valid out-pointer.
            unsafe { sys::cuDeviceGetGraphMemAttribute(dev, attr, (&mut v as *mut u64).cast()) }
                .result()
                .map(|()| v)
                .map_err(|source| core.driver("cuDeviceGetGraphMemAttribute", source))
        };
        use sys::CUgraphMem_attribute::*;
        Ok(GraphMemory {
            used_current: get(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT)?,
            used_high: get(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH)?,
            reserved_current: get(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT)?,
            reserved_high: get(CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)?,
        })
    }

    /// Reports (and clears) the first error recorded by a `Drop` since the last check.
    pub fn check_deferred(&self) -> Result<()> {
        self.inner.core.sink.take()
    }

    /// Copies a host slice into a new device buffer. Refused during capture: a graph would
    /// copy the host memory as it is at capture time, not at replay, which is never what the
    /// caller means. Upload before capturing and capture device-to-device copies instead.
    pub fn htod<T: DeviceCopy>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        self.inner.core.capture.refuse(
            "htod (host-to-device copy)",
            "the graph would replay the host data as it was at capture time; upload before capturing",
        )?;
        let buf = DeviceBuffer::alloc(&self.inner.core, data.len())?;
        self.write_host(data, &buf)?;
        Ok(buf)
    }

    /// Overwrites a device buffer with a host slice of the same length. Refused during capture,
    /// for the same reason as [`Engine::htod`].
    pub fn htod_into<T: DeviceCopy>(&self, data: &[T], dst: &mut DeviceBuffer<T>) -> Result<()> {
        self.inner.core.capture.refuse(
            "htod_into (host-to-device copy)",
            "the graph would replay the host data as it was at capture time; upload before capturing",
        )?;
        dst.check_owner(&self.inner.core, "htod_into", "dst")?;
        if dst.len() != data.len() {
            return Err(Error::Length {
                op: "htod_into",
                arg: "dst",
                wanted: data.len(),
                len: dst.len(),
            });
        }
        self.write_host(data, dst)
    }

    fn write_host<T: DeviceCopy>(&self, data: &[T], dst: &DeviceBuffer<T>) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let core = &self.inner.core;
        let ptr = dst.touch(core)?;
        core.bind()?;
        // SAFETY: dst holds exactly data.len() elements of T and is touched for this stream.
        // From pinned host memory the copy is fully asynchronous (CUDA's API synchronization
        // behavior), and `data` may be pinned: the stream is synchronized before returning, so
        // `data` has been read before the caller can free or change it.
        unsafe { result::memcpy_htod_async(ptr, data, core.cu_stream()) }
            .map_err(|source| core.driver("cuMemcpyHtoDAsync", source))?;
        self.stream().synchronize()
    }

    /// Copies a device buffer back to the host, waiting for the stream. Refused during capture:
    /// the host cannot read a result that the graph has not produced yet.
    pub fn dtoh<T: DeviceCopy + Default>(&self, src: &DeviceBuffer<T>) -> Result<Vec<T>> {
        self.inner.core.capture.refuse(
            "dtoh (device-to-host copy)",
            "the host would read before the graph has run; read results after launching the graph",
        )?;
        src.check_owner(&self.inner.core, "dtoh", "src")?;
        let mut out = vec![T::default(); src.len()];
        if !out.is_empty() {
            let core = &self.inner.core;
            let ptr = src.touch(core)?;
            core.bind()?;
            // SAFETY: `out` holds src.len() elements; the stream is synchronized below, before
            // `out` is read or moved; src is touched for this stream.
            unsafe { result::memcpy_dtoh_async(&mut out, ptr, core.cu_stream()) }
                .map_err(|source| core.driver("cuMemcpyDtoHAsync", source))?;
        }
        self.stream().synchronize()?;
        Ok(out)
    }

    /// A new device buffer of `len` zeroed elements (a memset on the engine stream; allowed
    /// during capture, where it becomes a memset node).
    pub fn zeros<T: DeviceCopy>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let buf = DeviceBuffer::alloc(&self.inner.core, len)?;
        if buf.num_bytes() > 0 {
            let core = &self.inner.core;
            let ptr = buf.touch(core)?;
            core.bind()?;
            // SAFETY: the range is exactly the allocation just made, touched for this stream.
            unsafe { result::memset_d8_async(ptr, 0, buf.num_bytes(), core.cu_stream()) }
                .map_err(|source| core.driver("cuMemsetD8Async", source))?;
        }
        Ok(buf)
    }

    /// Copies `n` elements from `src` to `dst` on the engine stream (a copy node in a capture).
    pub fn copy<T: DeviceCopy>(
        &self,
        src: &DeviceBuffer<T>,
        dst: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<()> {
        let core = &self.inner.core;
        src.check_owner(core, "copy", "src")?;
        dst.check_owner(core, "copy", "dst")?;
        core.check_len("copy", "src", n, src.len())?;
        core.check_len("copy", "dst", n, dst.len())?;
        let (s, d) = (src.touch(core)?, dst.touch(core)?);
        core.copy_dtod(s, d, n * std::mem::size_of::<T>())
    }

    /// Makes the engine's context current on this thread (needed before raw driver calls).
    pub fn bind_to_thread(&self) -> Result<()> {
        self.inner.core.bind()
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("device", &self.inner.core.ordinal)
            .field("name", &self.inner.info.name)
            .finish()
    }
}
