//! Device memory: raw allocations and the typed buffers users hold.
//!
//! An `Allocation` owns one `cuMemAlloc` block (or one page-locked host block, for
//! [`crate::HostStaging`]) and frees it when the last reference goes. A
//! [`DeviceBuffer`] holds its allocation through an `Arc`, and so does every graph that touched
//! it during capture: dropping the buffer while a graph can still replay it only drops one
//! reference, and the memory stays the graph's (see [`crate::Graph`]).

use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys};

use crate::context::EngineCore;
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

/// One block of device memory, freed when the last reference goes.
///
/// Before `cuMemFree` the drop waits for every stream that may still use the block: the owning
/// engine's stream, and the streams of other engines that copied into it or replay a graph that
/// touches it. The CUDA documentation says only that `cuMemFree` *may* synchronize, so the
/// engine does not rely on it. A failure there is recorded in the owner's error sink and the
/// block is leaked rather than freed under running work; nothing panics.
#[derive(Debug)]
pub(crate) struct Allocation {
    ptr: sys::CUdeviceptr,
    bytes: usize,
    owner: Arc<EngineCore>,
    /// Engines other than the owner whose streams have used the block.
    users: Mutex<Vec<Arc<EngineCore>>>,
    /// Page-locked host memory (`cuMemHostAlloc`), freed with `cuMemFreeHost`.
    host: bool,
}

impl Allocation {
    /// Allocates `bytes` on `owner`'s device; zero bytes allocate nothing.
    pub(crate) fn new(owner: &Arc<EngineCore>, bytes: usize) -> Result<Self> {
        let ptr = if bytes == 0 {
            0
        } else {
            owner.bind()?;
            // SAFETY: the owner's context is current on this thread (bound above); the pointer
            // is owned by the returned Allocation and freed exactly once, in Drop.
            match unsafe { result::malloc_sync(bytes) } {
                Ok(p) => p,
                Err(source) if source.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                    let (free, total) = result::mem_get_info().unwrap_or((0, 0));
                    return Err(Error::OutOfMemory {
                        device: owner.ordinal,
                        bytes,
                        free,
                        total,
                    });
                }
                Err(source) => return Err(owner.driver("cuMemAlloc", source)),
            }
        };
        Ok(Allocation {
            ptr,
            bytes,
            owner: owner.clone(),
            users: Mutex::new(Vec::new()),
            host: false,
        })
    }

    /// Allocates `bytes` of page-locked host memory in `owner`'s context, zeroed; zero bytes
    /// allocate nothing. Its address is a host address (the engine copies to and from it).
    pub(crate) fn new_pinned(owner: &Arc<EngineCore>, bytes: usize) -> Result<Self> {
        Self::host_block(owner, bytes, 0)
    }

    /// Allocates `bytes` (at least one) of page-locked host memory mapped into the device's
    /// address space, zeroed, and returns it with its device address: memory a kernel reads
    /// and writes while the host does.
    pub(crate) fn new_mapped(
        owner: &Arc<EngineCore>,
        bytes: usize,
    ) -> Result<(Self, sys::CUdeviceptr)> {
        let a = Self::host_block(owner, bytes.max(1), sys::CU_MEMHOSTALLOC_DEVICEMAP)?;
        let mut device = 0;
        // SAFETY: a.ptr is a live allocation from cuMemHostAlloc with DEVICEMAP in the owner's
        // context, which host_block made current on this thread; flags must be 0.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, a.ptr as *mut _, 0) }
            .result()
            .map_err(|source| owner.driver("cuMemHostGetDevicePointer", source))?;
        Ok((a, device))
    }

    fn host_block(owner: &Arc<EngineCore>, bytes: usize, flags: u32) -> Result<Self> {
        let ptr = if bytes == 0 {
            0
        } else {
            owner.bind()?;
            // SAFETY: the owner's context is current (bound above); the block is owned by the
            // returned Allocation and freed exactly once, in Drop.
            let p = unsafe { result::malloc_host(bytes, flags) }
                .map_err(|source| owner.driver("cuMemHostAlloc", source))?;
            // SAFETY: p points to `bytes` bytes of host memory just allocated, which no other
            // code and no GPU work can reach yet.
            unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, bytes) };
            p as sys::CUdeviceptr
        };
        Ok(Allocation {
            ptr,
            bytes,
            owner: owner.clone(),
            users: Mutex::new(Vec::new()),
            host: true,
        })
    }

    /// The device address.
    pub(crate) fn ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }

    /// Size in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The engine whose context allocated the block.
    pub(crate) fn owner(&self) -> &Arc<EngineCore> {
        &self.owner
    }

    fn users(&self) -> std::sync::MutexGuard<'_, Vec<Arc<EngineCore>>> {
        // A poisoned lock only means a panic elsewhere while the list was held.
        self.users.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes that `core`'s stream uses the block, so the free waits for that stream too.
    pub(crate) fn used_by(&self, core: &Arc<EngineCore>) {
        if Arc::ptr_eq(core, &self.owner) {
            return;
        }
        let mut users = self.users();
        if !users.iter().any(|u| Arc::ptr_eq(u, core)) {
            users.push(core.clone());
        }
    }

    /// Every engine whose stream may use the block: the owner first.
    pub(crate) fn streams(&self) -> Vec<Arc<EngineCore>> {
        std::iter::once(self.owner.clone())
            .chain(self.users().iter().cloned())
            .collect()
    }
}

/// Lets go of one reference to an allocation. If an engine that may use it is building a
/// graph, that capture keeps it (the graph may refer to it, and a free would have to wait for a
/// stream that cannot be synchronized while it captures).
pub(crate) fn release(a: Arc<Allocation>) {
    for core in a.streams() {
        core.capture.retain_if_capturing(&a);
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        if self.ptr == 0 {
            return;
        }
        let sink = &self.owner.sink;
        for core in self.streams() {
            if core.capture.is_capturing() {
                sink.record(Error::InvalidArgument {
                    op: "free (in drop)",
                    what: format!(
                        "{} bytes could not be freed while device {}'s stream captures a graph; leaked",
                        self.bytes, core.ordinal
                    ),
                });
                return;
            }
            if let Err(e) = core.bind().and_then(|()| core.sync_stream()) {
                // Freeing now could pull the memory from under running work: leak it instead.
                sink.record(e);
                return;
            }
        }
        if let Err(e) = self.owner.bind() {
            sink.record(e);
            return;
        }
        let (call, freed) = if self.host {
            // SAFETY: ptr came from cuMemHostAlloc in the owner's context (current, bound
            // above) and is freed only here; every stream that may use it was synchronized just
            // before, and no new work can reach it because no Rust owner of it is left.
            ("cuMemFreeHost (in drop)", unsafe {
                result::free_host(self.ptr as *mut std::ffi::c_void)
            })
        } else {
            // SAFETY: as above, for a block from cuMemAlloc.
            ("cuMemFree (in drop)", unsafe {
                result::free_sync(self.ptr)
            })
        };
        if let Err(source) = freed {
            sink.record(self.owner.driver(call, source));
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
    alloc: std::result::Result<Arc<Allocation>, String>,
    len: usize,
    pub(crate) core: Arc<EngineCore>,
    _t: PhantomData<T>,
}

impl<T: DeviceCopy> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("device", &self.core.ordinal)
            .field("poisoned", &self.alloc.is_err())
            .finish()
    }
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// An uninitialised buffer of `len` elements; only the engine writes it before handing out.
    pub(crate) fn alloc(core: &Arc<EngineCore>, len: usize) -> Result<Self> {
        let bytes =
            len.checked_mul(std::mem::size_of::<T>())
                .ok_or_else(|| Error::InvalidArgument {
                    op: "alloc",
                    what: format!(
                        "{len} elements of {} overflow usize",
                        std::any::type_name::<T>()
                    ),
                })?;
        let alloc = Arc::new(Allocation::new(core, bytes)?);
        core.capture.retain_if_capturing(&alloc);
        Ok(DeviceBuffer {
            alloc: Ok(alloc),
            len,
            core: core.clone(),
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
        self.core.ordinal
    }

    /// The raw device address, for passing to work issued outside the engine (which needs
    /// `unsafe` to use it). Valid while this buffer lives; the engine orders its own work, but
    /// raw work on another stream must be ordered by the caller.
    pub fn device_ptr(&self) -> Result<sys::CUdeviceptr> {
        self.allocation().map(|a| a.ptr())
    }

    pub(crate) fn allocation(&self) -> Result<&Arc<Allocation>> {
        self.alloc.as_ref().map_err(|e| Error::Poisoned(e.clone()))
    }

    /// Records that `issuer`'s stream is about to use this buffer, and returns its address.
    ///
    /// Every operation calls this for every buffer it reads or writes: while `issuer` captures
    /// a graph, the allocation is retained by that graph, and an engine other than the owner is
    /// remembered so the eventual free waits for its stream too.
    pub(crate) fn touch(&self, issuer: &Arc<EngineCore>) -> Result<sys::CUdeviceptr> {
        let a = self.allocation()?;
        a.used_by(issuer);
        issuer.capture.retain_if_capturing(a);
        Ok(a.ptr())
    }

    /// Errors unless the buffer belongs to `core`'s engine.
    pub(crate) fn check_owner(
        &self,
        core: &Arc<EngineCore>,
        op: &'static str,
        arg: &'static str,
    ) -> Result<()> {
        if Arc::ptr_eq(&self.core, core) {
            Ok(())
        } else {
            Err(Error::ForeignBuffer {
                op,
                arg,
                device: core.ordinal,
                other: self.core.ordinal,
            })
        }
    }

    /// A copy on the device, with the allocation error if there was one.
    pub fn try_clone(&self) -> Result<Self> {
        let src = self.touch(&self.core)?;
        let out = Self::alloc(&self.core, self.len)?;
        let dst = out.touch(&self.core)?;
        self.core.copy_dtod(src, dst, self.num_bytes())?;
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
                core: self.core.clone(),
                _t: PhantomData,
            },
        }
    }
}

impl<T: DeviceCopy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        let poisoned = Err(String::new());
        if let Ok(a) = std::mem::replace(&mut self.alloc, poisoned) {
            release(a);
        }
    }
}
