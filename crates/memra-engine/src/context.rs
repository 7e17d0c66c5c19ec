//! The bottom layer every other module builds on: one device context, the engine stream, the
//! sink for errors raised in `Drop`, and the state of an open graph capture.
//!
//! Memory, kernels, graphs and the engine all hold an `Arc<EngineCore>`; the core imports none
//! of them, so there is no import cycle and an allocation can outlive the `Engine` handle that
//! made it while still knowing which stream to wait for before it is freed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{sys, CudaContext, CudaStream, DriverError};

use crate::error::{Error, Result};
use crate::memory::Allocation;

/// Context, stream, error sink and capture state of one engine.
pub(crate) struct EngineCore {
    pub(crate) ordinal: usize,
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) capture: CaptureState,
    pub(crate) sink: ErrorSink,
    /// Launch kernels as programmatic dependents of the previous kernel (PDL).
    pdl: AtomicBool,
}

impl EngineCore {
    pub(crate) fn new(ordinal: usize, ctx: Arc<CudaContext>, stream: Arc<CudaStream>) -> Self {
        EngineCore {
            ordinal,
            ctx,
            stream,
            capture: CaptureState::default(),
            sink: ErrorSink::default(),
            pdl: AtomicBool::new(false),
        }
    }

    /// Whether kernels are launched with programmatic dependent launch.
    pub(crate) fn pdl(&self) -> bool {
        self.pdl.load(Ordering::Relaxed)
    }

    pub(crate) fn set_pdl(&self, on: bool) {
        self.pdl.store(on, Ordering::Relaxed);
    }

    pub(crate) fn driver(&self, call: &'static str, source: DriverError) -> Error {
        Error::Driver {
            call,
            device: self.ordinal,
            source,
        }
    }

    /// Makes the context current on the calling thread.
    pub(crate) fn bind(&self) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(|source| self.driver("cuCtxSetCurrent", source))
    }

    pub(crate) fn cu_stream(&self) -> sys::CUstream {
        self.stream.cu_stream()
    }

    /// Waits for the engine stream without looking at the error sink.
    pub(crate) fn sync_stream(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|source| self.driver("cuStreamSynchronize", source))
    }

    /// Errors unless `n` elements fit in a buffer of `len`.
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

    /// A device-to-device copy on the engine stream (a copy node inside a capture).
    /// Callers pass ranges that lie inside allocations they have touched (see
    /// [`crate::memory::DeviceBuffer`]'s `touch`), so the ranges are live while the copy runs.
    pub(crate) fn copy_dtod(
        &self,
        src: sys::CUdeviceptr,
        dst: sys::CUdeviceptr,
        bytes: usize,
    ) -> Result<()> {
        // SAFETY: both ranges lie inside live allocations of this context (callers' contract,
        // upheld by touching the buffers first); the stream belongs to the current context.
        self.enqueue_copy(bytes, "cuMemcpyDtoDAsync", |stream| unsafe {
            sys::cuMemcpyDtoDAsync_v2(dst, src, bytes, stream)
        })
    }

    /// A host-to-device copy on the engine stream from page-locked host memory (a copy node
    /// inside a capture). Callers pass ranges inside allocations they have touched.
    pub(crate) fn copy_htod(
        &self,
        src_host: sys::CUdeviceptr,
        dst: sys::CUdeviceptr,
        bytes: usize,
    ) -> Result<()> {
        // SAFETY: src_host is page-locked host memory and dst device memory, each a range
        // inside a live allocation of this context (callers' contract, upheld by touching
        // both first: the allocations stay alive, and are freed only after this stream is
        // synchronized); the stream belongs to the current context. Nothing on the host writes
        // the source while the copy may run: HostStaging gives out no reference to its bytes.
        self.enqueue_copy(bytes, "cuMemcpyHtoDAsync", |stream| unsafe {
            sys::cuMemcpyHtoDAsync_v2(dst, src_host as *const std::ffi::c_void, bytes, stream)
        })
    }

    /// A device-to-host copy on the engine stream into page-locked host memory (a copy node
    /// inside a capture). Callers pass ranges inside allocations they have touched.
    pub(crate) fn copy_dtoh(
        &self,
        src: sys::CUdeviceptr,
        dst_host: sys::CUdeviceptr,
        bytes: usize,
    ) -> Result<()> {
        // SAFETY: as for copy_htod, with the directions swapped; no Rust reference to the host
        // range exists while the copy may run (HostStaging gives none out).
        self.enqueue_copy(bytes, "cuMemcpyDtoHAsync", |stream| unsafe {
            sys::cuMemcpyDtoHAsync_v2(dst_host as *mut std::ffi::c_void, src, bytes, stream)
        })
    }

    /// Enqueues one copy of `bytes` (none when zero) with this context current: `enqueue`
    /// makes the driver call `call` on the engine stream.
    fn enqueue_copy(
        &self,
        bytes: usize,
        call: &'static str,
        enqueue: impl FnOnce(sys::CUstream) -> sys::CUresult,
    ) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.bind()?;
        enqueue(self.cu_stream())
            .result()
            .map_err(|source| self.driver(call, source))
    }
}

impl std::fmt::Debug for EngineCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EngineCore(device {})", self.ordinal)
    }
}

/// Whether a capture is open, and which allocations it retains.
///
/// Retention is keyed by device address, so an allocation touched by many operations is
/// retained once.
#[derive(Default)]
pub(crate) struct CaptureState {
    pub(crate) capturing: AtomicBool,
    /// Mirrors `retained.is_some()`, so the common case (no capture) costs one atomic load per
    /// touched buffer instead of a lock.
    retaining: AtomicBool,
    retained: Mutex<Option<HashMap<sys::CUdeviceptr, Arc<Allocation>>>>,
}

impl CaptureState {
    fn lock(&self) -> MutexGuard<'_, Option<HashMap<sys::CUdeviceptr, Arc<Allocation>>>> {
        // A poisoned lock only means a panic elsewhere while the map was held; the map is fine.
        self.retained.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts retaining; `false` if retention (a capture) is already under way.
    pub(crate) fn start_retaining(&self) -> bool {
        let mut r = self.lock();
        if r.is_some() {
            return false;
        }
        *r = Some(HashMap::new());
        self.retaining.store(true, Ordering::Release);
        true
    }

    /// Stops retaining and hands over what was retained.
    pub(crate) fn stop_retaining(&self) -> Vec<Arc<Allocation>> {
        let mut r = self.lock();
        self.retaining.store(false, Ordering::Release);
        r.take()
            .map(|m| m.into_values().collect())
            .unwrap_or_default()
    }

    /// While a capture retains, keeps `a` alive with the graph being built. Called for every
    /// buffer an operation touches, every buffer allocated, and every buffer dropped.
    pub(crate) fn retain_if_capturing(&self, a: &Arc<Allocation>) {
        // Retention starts and stops on the thread that runs the capture, before and after the
        // step; operations of that step see the flag set.
        if a.bytes() == 0 || !self.retaining.load(Ordering::Acquire) {
            return;
        }
        if let Some(m) = self.lock().as_mut() {
            m.entry(a.ptr()).or_insert_with(|| a.clone());
        }
    }

    pub(crate) fn is_capturing(&self) -> bool {
        self.capturing.load(Ordering::Acquire)
    }

    pub(crate) fn set_capturing(&self, on: bool) {
        self.capturing.store(on, Ordering::Release);
    }

    /// Errors with [`Error::CaptureForbidden`] while a capture is open.
    pub(crate) fn refuse(&self, op: &'static str, why: &'static str) -> Result<()> {
        if self.is_capturing() {
            Err(Error::CaptureForbidden { op, why })
        } else {
            Ok(())
        }
    }
}

/// Errors raised where no caller can receive them (in `Drop`), kept until someone asks.
#[derive(Debug, Default)]
pub(crate) struct ErrorSink(Mutex<Vec<Error>>);

impl ErrorSink {
    pub(crate) fn record(&self, e: Error) {
        // A poisoned lock only means another thread panicked while pushing; the Vec is fine.
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(e);
    }

    /// The first recorded error, as `Error::Deferred`; clears the sink.
    pub(crate) fn take(&self) -> Result<()> {
        let mut v = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if v.is_empty() {
            return Ok(());
        }
        let first = v.remove(0);
        v.clear();
        Err(Error::Deferred(Box::new(first)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_state_retains_once_per_pointer_and_refuses() {
        let s = CaptureState::default();
        assert!(s.refuse("x", "y").is_ok());
        s.set_capturing(true);
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

    #[test]
    fn error_sink_reports_the_first_error_once() {
        let s = ErrorSink::default();
        assert!(s.take().is_ok());
        s.record(Error::Poisoned("first".into()));
        s.record(Error::Poisoned("second".into()));
        let e = s.take().unwrap_err();
        assert!(e.to_string().contains("first"), "{e}");
        assert!(s.take().is_ok(), "taking clears the sink");
    }
}
