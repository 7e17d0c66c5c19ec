//! Page-locked host memory as the far end of host↔device copies.
//!
//! Timing a step's host↔device transfers needs copies that run as the real ones do: from and
//! into page-locked host memory, on the engine stream, capturable as graph copy nodes. A
//! [`HostStaging`] block is only ever a copy's source or destination: safe code cannot read or
//! write its bytes, so a copy in flight (eager or in a graph replay) can never race a host
//! access. Like a device buffer it is held by every graph that copied to or from it, and its
//! free waits for every stream that used it.

use std::sync::Arc;

use cudarc::driver::sys;

use crate::context::EngineCore;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::memory::{release, Allocation, DeviceBuffer, DeviceCopy};

/// A block of page-locked host memory the engine copies to and from (see the module docs).
pub struct HostStaging {
    alloc: Option<Arc<Allocation>>,
    core: Arc<EngineCore>,
}

impl std::fmt::Debug for HostStaging {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostStaging")
            .field("bytes", &self.num_bytes())
            .field("device", &self.core.ordinal)
            .finish()
    }
}

impl HostStaging {
    /// Size in bytes.
    pub fn num_bytes(&self) -> usize {
        self.alloc.as_ref().map_or(0, |a| a.bytes())
    }

    /// Records that `issuer`'s stream is about to use the block (retained by a capture in
    /// progress, waited for by the free) and returns its host address.
    fn touch(&self, issuer: &Arc<EngineCore>) -> Result<sys::CUdeviceptr> {
        let a = self
            .alloc
            .as_ref()
            .ok_or_else(|| Error::Poisoned("dropped".into()))?;
        a.used_by(issuer);
        issuer.capture.retain_if_capturing(a);
        Ok(a.ptr())
    }

    fn check_owner(&self, core: &Arc<EngineCore>, op: &'static str) -> Result<()> {
        if Arc::ptr_eq(&self.core, core) {
            Ok(())
        } else {
            Err(Error::ForeignBuffer {
                op,
                arg: "host staging",
                device: core.ordinal,
                other: self.core.ordinal,
            })
        }
    }
}

impl Drop for HostStaging {
    fn drop(&mut self) {
        if let Some(a) = self.alloc.take() {
            release(a);
        }
    }
}

impl Engine {
    /// `bytes` of page-locked host memory, zeroed, for [`Engine::copy_from_host`] and
    /// [`Engine::copy_to_host`].
    pub fn host_staging(&self, bytes: usize) -> Result<HostStaging> {
        let core = &self.inner.core;
        let alloc = Arc::new(Allocation::new_pinned(core, bytes)?);
        core.capture.retain_if_capturing(&alloc);
        Ok(HostStaging {
            alloc: Some(alloc),
            core: core.clone(),
        })
    }

    /// Copies the first `bytes` of `src` (page-locked host memory) into `dst` on the engine
    /// stream: a host-to-device transfer, a copy node inside a capture.
    pub fn copy_from_host<T: DeviceCopy>(
        &self,
        src: &HostStaging,
        dst: &mut DeviceBuffer<T>,
        bytes: usize,
    ) -> Result<()> {
        let core = &self.inner.core;
        src.check_owner(core, "copy_from_host")?;
        dst.check_owner(core, "copy_from_host", "dst")?;
        core.check_len("copy_from_host", "src bytes", bytes, src.num_bytes())?;
        core.check_len("copy_from_host", "dst bytes", bytes, dst.num_bytes())?;
        let (s, d) = (src.touch(core)?, dst.touch(core)?);
        core.copy_htod(s, d, bytes)
    }

    /// Copies the first `bytes` of `src` into `dst` (page-locked host memory) on the engine
    /// stream: a device-to-host transfer, a copy node inside a capture.
    pub fn copy_to_host<T: DeviceCopy>(
        &self,
        src: &DeviceBuffer<T>,
        dst: &mut HostStaging,
        bytes: usize,
    ) -> Result<()> {
        let core = &self.inner.core;
        src.check_owner(core, "copy_to_host", "src")?;
        dst.check_owner(core, "copy_to_host")?;
        core.check_len("copy_to_host", "src bytes", bytes, src.num_bytes())?;
        core.check_len("copy_to_host", "dst bytes", bytes, dst.num_bytes())?;
        let (s, d) = (src.touch(core)?, dst.touch(core)?);
        core.copy_dtoh(s, d, bytes)
    }
}
