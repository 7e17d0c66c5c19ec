//! Device memory: raw allocations and the typed buffers users hold.
//!
//! An [`Allocation`] owns one `cuMemAlloc` block and frees it when the last reference goes.
//! A [`DeviceBuffer`] holds its allocation through an `Arc`, so a graph capture can keep the
//! allocation alive after the buffer itself is dropped (see [`crate::Keeper`]).

use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys, CudaContext};

use crate::engine::Inner;
use crate::error::{Error, Result};

/// Element types that can live in device memory: plain numbers, copied bit for bit.
///
/// # Safety
/// Implementors must be `Copy`, contain no pointers or padding, and be valid for every bit
/// pattern the device may write.
pub unsafe trait DeviceCopy: Copy + Send + Sync + 'static {}

// SAFETY: primitive numbers have no padding and every bit pattern is a valid value.
unsafe impl DeviceCopy for f32 {}
// SAFETY: as above.
unsafe impl DeviceCopy for f64 {}
// SAFETY: as above.
unsafe impl DeviceCopy for u8 {}
// SAFETY: as above.
unsafe impl DeviceCopy for u16 {}
// SAFETY: as above.
unsafe impl DeviceCopy for u32 {}
// SAFETY: as above.
unsafe impl DeviceCopy for u64 {}
// SAFETY: as above.
unsafe impl DeviceCopy for i8 {}
// SAFETY: as above.
unsafe impl DeviceCopy for i16 {}
// SAFETY: as above.
unsafe impl DeviceCopy for i32 {}
// SAFETY: as above.
unsafe impl DeviceCopy for i64 {}

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

/// One block of device memory. Freed with `cuMemFree` when dropped; a failure there is recorded
/// in the engine's error sink, never panicked.
#[derive(Debug)]
pub struct Allocation {
    ptr: sys::CUdeviceptr,
    bytes: usize,
    ordinal: usize,
    ctx: Arc<CudaContext>,
    sink: Arc<ErrorSink>,
}

impl Allocation {
    /// Allocates `bytes` on `ctx`'s device; zero bytes allocate nothing.
    pub(crate) fn new(
        ctx: &Arc<CudaContext>,
        ordinal: usize,
        sink: &Arc<ErrorSink>,
        bytes: usize,
    ) -> Result<Self> {
        let ptr = if bytes == 0 {
            0
        } else {
            ctx.bind_to_thread().map_err(|source| Error::Driver {
                call: "cuCtxSetCurrent",
                device: ordinal,
                source,
            })?;
            // SAFETY: the context is current on this thread; the pointer is owned by the
            // returned Allocation and freed exactly once, in Drop.
            match unsafe { result::malloc_sync(bytes) } {
                Ok(p) => p,
                Err(source) if source.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                    let (free, total) = result::mem_get_info().unwrap_or((0, 0));
                    return Err(Error::OutOfMemory {
                        device: ordinal,
                        bytes,
                        free,
                        total,
                    });
                }
                Err(source) => {
                    return Err(Error::Driver {
                        call: "cuMemAlloc",
                        device: ordinal,
                        source,
                    })
                }
            }
        };
        Ok(Allocation {
            ptr,
            bytes,
            ordinal,
            ctx: ctx.clone(),
            sink: sink.clone(),
        })
    }

    /// The device address.
    pub fn ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        if self.ptr == 0 {
            return;
        }
        let device = self.ordinal;
        if let Err(source) = self.ctx.bind_to_thread() {
            self.sink.record(Error::Driver {
                call: "cuCtxSetCurrent (in drop)",
                device,
                source,
            });
            return;
        }
        // SAFETY: ptr came from cuMemAlloc in this context and is freed only here. cuMemFree
        // waits for work using it to finish, so in-flight kernels never see freed memory.
        if let Err(source) = unsafe { result::free_sync(self.ptr) } {
            self.sink.record(Error::Driver {
                call: "cuMemFree (in drop)",
                device,
                source,
            });
        }
    }
}

/// A typed array in device memory, owned by one engine.
///
/// `Clone` allocates a new buffer on the device and copies into it on the engine stream (it is
/// captured as a copy node when called inside a graph capture). `Clone` cannot return an error:
/// if the allocation fails, the clone is *poisoned* and every use of it returns that error; use
/// [`DeviceBuffer::try_clone`] to get the error at once.
pub struct DeviceBuffer<T: DeviceCopy> {
    pub(crate) alloc: std::result::Result<Arc<Allocation>, String>,
    pub(crate) len: usize,
    pub(crate) engine: Arc<Inner>,
    _t: PhantomData<T>,
}

impl<T: DeviceCopy> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("device", &self.engine.ordinal)
            .field("poisoned", &self.alloc.is_err())
            .finish()
    }
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// An uninitialised buffer of `len` elements; only the engine writes it before handing out.
    pub(crate) fn alloc(engine: &Arc<Inner>, len: usize) -> Result<Self> {
        let bytes =
            len.checked_mul(std::mem::size_of::<T>())
                .ok_or_else(|| Error::InvalidArgument {
                    op: "alloc",
                    what: format!(
                        "{len} elements of {} overflow usize",
                        std::any::type_name::<T>()
                    ),
                })?;
        let alloc = Arc::new(Allocation::new(
            &engine.ctx,
            engine.ordinal,
            &engine.sink,
            bytes,
        )?);
        engine.capture.retain_if_capturing(&alloc);
        Ok(DeviceBuffer {
            alloc: Ok(alloc),
            len,
            engine: engine.clone(),
            _t: PhantomData,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn num_bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// The device ordinal the buffer lives on.
    pub fn device(&self) -> usize {
        self.engine.ordinal
    }

    /// The raw device address, for passing to kernels launched outside the engine. Valid while
    /// this buffer (or a keeper that retained it) lives.
    pub fn device_ptr(&self) -> Result<sys::CUdeviceptr> {
        self.allocation().map(|a| a.ptr())
    }

    pub(crate) fn allocation(&self) -> Result<&Arc<Allocation>> {
        self.alloc.as_ref().map_err(|e| Error::Poisoned(e.clone()))
    }

    /// A copy on the device, with the allocation error if there was one.
    pub fn try_clone(&self) -> Result<Self> {
        let src = self.allocation()?.ptr();
        let out = Self::alloc(&self.engine, self.len)?;
        self.engine
            .copy_dtod(src, out.allocation()?.ptr(), self.num_bytes())?;
        Ok(out)
    }
}

impl<T: DeviceCopy> Clone for DeviceBuffer<T> {
    fn clone(&self) -> Self {
        match self.try_clone() {
            Ok(b) => b,
            Err(e) => DeviceBuffer {
                alloc: Err(e.to_string()),
                len: self.len,
                engine: self.engine.clone(),
                _t: PhantomData,
            },
        }
    }
}

impl<T: DeviceCopy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if let Ok(a) = &self.alloc {
            // While a capture retains allocations, a buffer dropped inside the captured step
            // must not free memory the graph still uses: the keeper takes it.
            self.engine.capture.retain_if_capturing(a);
        }
    }
}
