//! The engine: one device context, one stream, the kernels, and the operations users call.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys, CudaContext, CudaFunction, CudaStream, DriverError};

use crate::device::{describe_device, require_nvrtc, DeviceInfo};
use crate::error::{Error, Result};
use crate::kernels::{KernelInitReport, Kernels};
use crate::memory::{Allocation, DeviceBuffer, DeviceCopy, ErrorSink};

/// A CUDA engine on one device: a context, one engine stream that every operation is ordered
/// on, NVRTC-compiled kernels, and graph capture (see [`Engine::capture_graph_retained`]).
///
/// `Engine` is cheap to clone (it is a handle) and can be shared between threads; the context is
/// made current on the calling thread by each operation.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) ordinal: usize,
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Stream,
    pub(crate) kernels: Kernels,
    pub(crate) capture: Arc<CaptureState>,
    pub(crate) sink: Arc<ErrorSink>,
    pub(crate) info: DeviceInfo,
    pub(crate) init: KernelInitReport,
}

/// Whether a capture is open, and which allocations it retains.
#[derive(Default)]
pub(crate) struct CaptureState {
    pub(crate) capturing: AtomicBool,
    retained: Mutex<Option<HashMap<sys::CUdeviceptr, Arc<Allocation>>>>,
}

impl CaptureState {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, Option<HashMap<sys::CUdeviceptr, Arc<Allocation>>>> {
        self.retained.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts retaining; `false` if retention (a capture) is already under way.
    pub(crate) fn start_retaining(&self) -> bool {
        let mut r = self.lock();
        if r.is_some() {
            return false;
        }
        *r = Some(HashMap::new());
        true
    }

    /// Stops retaining and hands over what was retained.
    pub(crate) fn stop_retaining(&self) -> Vec<Arc<Allocation>> {
        self.lock()
            .take()
            .map(|m| m.into_values().collect())
            .unwrap_or_default()
    }

    /// While a capture retains, keeps `a` alive until the keeper drops (called when a buffer is
    /// allocated and when one is dropped).
    pub(crate) fn retain_if_capturing(&self, a: &Arc<Allocation>) {
        if a.bytes() == 0 {
            return;
        }
        if let Some(m) = self.lock().as_mut() {
            m.entry(a.ptr()).or_insert_with(|| a.clone());
        }
    }

    pub(crate) fn refuse(&self, op: &'static str, why: &'static str) -> Result<()> {
        if self.capturing.load(Ordering::Acquire) {
            Err(Error::CaptureForbidden { op, why })
        } else {
            Ok(())
        }
    }
}

/// The engine stream. Every engine operation is ordered on it.
pub struct Stream {
    pub(crate) cu: Arc<CudaStream>,
    pub(crate) ordinal: usize,
    pub(crate) capture: Arc<CaptureState>,
    pub(crate) sink: Arc<ErrorSink>,
}

impl Stream {
    /// Waits until all work queued on the stream has finished. Also reports an error that an
    /// earlier `Drop` recorded. Refused during capture: a graph cannot contain a host wait.
    pub fn synchronize(&self) -> Result<()> {
        self.capture.refuse(
            "stream synchronize",
            "a graph cannot wait for the host; synchronize after the capture closure returns",
        )?;
        self.cu.synchronize().map_err(|source| Error::Driver {
            call: "cuStreamSynchronize",
            device: self.ordinal,
            source,
        })?;
        self.sink.take()
    }

    /// The raw stream handle, for work issued outside the engine (e.g. measuring the driver's
    /// own floor). Valid while the engine lives.
    pub fn cu_stream(&self) -> sys::CUstream {
        self.cu.cu_stream()
    }

    /// Whether a graph capture is open on this stream.
    pub fn is_capturing(&self) -> bool {
        self.capture.capturing.load(Ordering::Acquire)
    }
}

/// Launch geometry: grid and block in three dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchShape {
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
}

impl LaunchShape {
    /// Checks the shape against CUDA's fixed limits (grid y/z ≤ 65535, ≤ 1024 threads a block).
    pub fn validate(&self, op: &'static str) -> Result<()> {
        let (gx, gy, gz) = self.grid;
        let (bx, by, bz) = self.block;
        let bad = |what: String| Err(Error::InvalidArgument { op, what });
        if gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 {
            return bad(format!(
                "grid {:?} and block {:?} must be non-zero",
                self.grid, self.block
            ));
        }
        if gx > i32::MAX as u32 || gy > 65535 || gz > 65535 {
            return bad(format!(
                "grid {:?} exceeds (2^31-1, 65535, 65535)",
                self.grid
            ));
        }
        if bx > 1024 || by > 1024 || bz > 64 || (bx as u64 * by as u64 * bz as u64) > 1024 {
            return bad(format!(
                "block {:?} exceeds 1024 threads or (1024, 1024, 64)",
                self.block
            ));
        }
        Ok(())
    }
}

impl Engine {
    /// Creates a context on device `ordinal`, the engine stream, and loads the kernels
    /// (compiled by NVRTC for this device's compute capability, or read from the disk cache).
    pub fn new(ordinal: usize) -> Result<Self> {
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
        let (kernels, init) = Kernels::load(&ctx, ordinal, info.compute_capability)?;
        let capture = Arc::new(CaptureState::default());
        let sink = Arc::new(ErrorSink::default());
        let stream = Stream {
            cu: cu_stream,
            ordinal,
            capture: capture.clone(),
            sink: sink.clone(),
        };
        Ok(Engine {
            inner: Arc::new(Inner {
                ordinal,
                ctx,
                stream,
                kernels,
                capture,
                sink,
                info,
                init,
            }),
        })
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.inner.ordinal
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
        self.inner.bind()?;
        result::mem_get_info().map_err(|source| self.inner.driver("cuMemGetInfo", source))
    }

    /// Reports (and clears) the first error recorded by a `Drop` since the last check.
    pub fn check_deferred(&self) -> Result<()> {
        self.inner.sink.take()
    }

    /// Copies a host slice into a new device buffer. Refused during capture: a graph would
    /// copy the host memory as it is at capture time, not at replay, which is never what the
    /// caller means. Upload before capturing and capture device-to-device copies instead.
    pub fn htod<T: DeviceCopy>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        self.inner.capture.refuse(
            "htod (host-to-device copy)",
            "the graph would replay the host data as it was at capture time; upload before capturing",
        )?;
        let buf = DeviceBuffer::alloc(&self.inner, data.len())?;
        self.write_host(data, &buf)?;
        Ok(buf)
    }

    /// Overwrites a device buffer with a host slice of the same length. Refused during capture,
    /// for the same reason as [`Engine::htod`].
    pub fn htod_into<T: DeviceCopy>(&self, data: &[T], dst: &mut DeviceBuffer<T>) -> Result<()> {
        self.inner.capture.refuse(
            "htod_into (host-to-device copy)",
            "the graph would replay the host data as it was at capture time; upload before capturing",
        )?;
        self.inner.owns(dst, "htod_into", "dst")?;
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
        self.inner.bind()?;
        // SAFETY: dst holds exactly data.len() elements of T; from pageable memory the copy
        // has read `data` by the time the call returns, so the slice may go right after.
        unsafe { result::memcpy_htod_async(dst.device_ptr()?, data, self.inner.stream.cu_stream()) }
            .map_err(|source| self.inner.driver("cuMemcpyHtoDAsync", source))
    }

    /// Copies a device buffer back to the host, waiting for the stream. Refused during capture:
    /// the host cannot read a result that the graph has not produced yet.
    pub fn dtoh<T: DeviceCopy + Default>(&self, src: &DeviceBuffer<T>) -> Result<Vec<T>> {
        self.inner.capture.refuse(
            "dtoh (device-to-host copy)",
            "the host would read before the graph has run; read results after launching the graph",
        )?;
        self.inner.owns(src, "dtoh", "src")?;
        let mut out = vec![T::default(); src.len()];
        if !out.is_empty() {
            self.inner.bind()?;
            // SAFETY: `out` holds src.len() elements; the stream is synchronized below, before
            // `out` is read or moved.
            unsafe {
                result::memcpy_dtoh_async(
                    &mut out,
                    src.device_ptr()?,
                    self.inner.stream.cu_stream(),
                )
            }
            .map_err(|source| self.inner.driver("cuMemcpyDtoHAsync", source))?;
        }
        self.stream().synchronize()?;
        Ok(out)
    }

    /// A new device buffer of `len` zeroed elements (a memset on the engine stream; allowed
    /// during capture, where it becomes a memset node).
    pub fn zeros<T: DeviceCopy>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let buf = DeviceBuffer::alloc(&self.inner, len)?;
        if buf.num_bytes() > 0 {
            self.inner.bind()?;
            // SAFETY: the range lies inside the allocation just made.
            unsafe {
                result::memset_d8_async(
                    buf.device_ptr()?,
                    0,
                    buf.num_bytes(),
                    self.inner.stream.cu_stream(),
                )
            }
            .map_err(|source| self.inner.driver("cuMemsetD8Async", source))?;
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
        self.inner.owns(src, "copy", "src")?;
        self.inner.owns(dst, "copy", "dst")?;
        self.inner.check_len("copy", "src", n, src.len())?;
        self.inner.check_len("copy", "dst", n, dst.len())?;
        self.inner.copy_dtod(
            src.device_ptr()?,
            dst.device_ptr()?,
            n * std::mem::size_of::<T>(),
        )
    }

    /// Makes the engine's context current on this thread (needed before raw driver calls).
    pub fn bind_to_thread(&self) -> Result<()> {
        self.inner.bind()
    }
}

impl Inner {
    pub(crate) fn driver(&self, call: &'static str, source: DriverError) -> Error {
        Error::Driver {
            call,
            device: self.ordinal,
            source,
        }
    }

    pub(crate) fn bind(&self) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(|source| self.driver("cuCtxSetCurrent", source))
    }

    pub(crate) fn check_len(
        &self,
        op: &'static str,
        arg: &'static str,
        wanted: usize,
        len: usize,
    ) -> Result<()> {
        if wanted > len {
            Err(Error::Length {
                op,
                arg,
                wanted,
                len,
            })
        } else {
            Ok(())
        }
    }

    pub(crate) fn owns<T: DeviceCopy>(
        &self,
        b: &DeviceBuffer<T>,
        op: &'static str,
        arg: &'static str,
    ) -> Result<()> {
        if Arc::ptr_eq(&b.engine.capture, &self.capture) {
            Ok(())
        } else {
            Err(Error::ForeignBuffer {
                op,
                arg,
                device: self.ordinal,
                other: b.engine.ordinal,
            })
        }
    }

    pub(crate) fn copy_dtod(
        &self,
        src: sys::CUdeviceptr,
        dst: sys::CUdeviceptr,
        bytes: usize,
    ) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: callers pass ranges inside live allocations of this context.
        unsafe { result::memcpy_dtod_async(dst, src, bytes, self.stream.cu_stream()) }
            .map_err(|source| self.driver("cuMemcpyDtoDAsync", source))
    }

    /// # Safety
    /// `params` must match the kernel's signature in number, order and type, and every pointer
    /// argument must stay valid until the kernel has run.
    pub(crate) unsafe fn launch(
        &self,
        f: &CudaFunction,
        kernel: &'static str,
        shape: LaunchShape,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        self.bind()?;
        // SAFETY: the caller upholds the parameter contract; f comes from a module this engine
        // keeps loaded, and the stream belongs to the current context.
        unsafe {
            result::launch_kernel(
                f.cu_function(),
                shape.grid,
                shape.block,
                0,
                self.stream.cu_stream(),
                params,
            )
        }
        .map_err(|source| Error::Launch {
            kernel,
            device: self.ordinal,
            source,
        })
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("device", &self.inner.ordinal)
            .field("name", &self.inner.info.name)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_shape_limits() {
        let ok = LaunchShape {
            grid: (132, 1, 1),
            block: (256, 1, 1),
        };
        assert!(ok.validate("t").is_ok());
        for bad in [
            LaunchShape {
                grid: (0, 1, 1),
                block: (1, 1, 1),
            },
            LaunchShape {
                grid: (1, 70000, 1),
                block: (1, 1, 1),
            },
            LaunchShape {
                grid: (1, 1, 1),
                block: (2048, 1, 1),
            },
            LaunchShape {
                grid: (1, 1, 1),
                block: (64, 64, 1),
            },
            LaunchShape {
                grid: (1, 1, 1),
                block: (1, 1, 65),
            },
        ] {
            let e = bad.validate("spin").unwrap_err();
            assert!(
                matches!(e, Error::InvalidArgument { op: "spin", .. }),
                "{e}"
            );
        }
    }

    #[test]
    fn capture_state_retains_once_per_pointer_and_refuses() {
        let s = CaptureState::default();
        assert!(s.refuse("x", "y").is_ok());
        s.capturing.store(true, Ordering::Release);
        let e = s.refuse("dtoh", "because").unwrap_err();
        assert_eq!(
            e.to_string(),
            "dtoh is not allowed while the engine stream is capturing a graph: because"
        );
        assert!(s.start_retaining());
        assert!(!s.start_retaining(), "a second capture must be refused");
        assert!(s.stop_retaining().is_empty());
        assert!(s.start_retaining());
    }
}
