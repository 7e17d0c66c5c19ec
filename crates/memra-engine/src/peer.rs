//! Several devices: peer access, copies between engines, and cross-stream waits.
//!
//! One `Engine` per device. A copy between engines is a unified-addressing `cuMemcpyAsync` on
//! the issuing engine's stream: device to device when peer access is enabled, staged through
//! host memory by the driver when the devices cannot reach each other. A
//! stream waits for work on another engine's stream through an event, which is also how a
//! capture forks to another device and joins back (see [`Engine::capture_graph_across`]).

use cudarc::driver::{result, sys};

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, DeviceCopy};
use crate::timing::Event;

/// How two devices reach each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerPath {
    /// Same device: copies are ordinary device-to-device copies.
    SameDevice,
    /// Peer access enabled: copies go device to device (NVLink or PCIe).
    Direct,
    /// The devices cannot access each other: the driver stages copies through host memory.
    ThroughHost,
}

impl Engine {
    /// Lets this engine's device read and write `other`'s memory directly, where the hardware
    /// allows; says which path copies between the two will take.
    pub fn enable_peer_access(&self, other: &Engine) -> Result<PeerPath> {
        if self.ordinal() == other.ordinal() {
            return Ok(PeerPath::SameDevice);
        }
        let mut can = 0;
        // SAFETY: both devices are valid handles of initialised engines; `can` is writable.
        unsafe {
            sys::cuDeviceCanAccessPeer(
                &mut can,
                self.inner.ctx.cu_device(),
                other.inner.ctx.cu_device(),
            )
        }
        .result()
        .map_err(|source| self.inner.driver("cuDeviceCanAccessPeer", source))?;
        if can == 0 {
            return Ok(PeerPath::ThroughHost);
        }
        self.inner.bind()?;
        // SAFETY: this engine's context is current; the peer context lives as long as `other`.
        match unsafe { sys::cuCtxEnablePeerAccess(other.inner.ctx.cu_ctx(), 0) }.result() {
            Ok(()) => Ok(PeerPath::Direct),
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {
                Ok(PeerPath::Direct)
            }
            Err(source) => Err(self.inner.driver("cuCtxEnablePeerAccess", source)),
        }
    }

    /// Copies `n` elements from `src` (this engine's) into `dst` (held by `dst_engine`, any
    /// device) on this engine's stream. Captured as a copy node inside a capture.
    pub fn copy_to_peer<T: DeviceCopy>(
        &self,
        src: &DeviceBuffer<T>,
        dst_engine: &Engine,
        dst: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<()> {
        self.inner.owns(src, "copy_to_peer", "src")?;
        dst_engine.inner.owns(dst, "copy_to_peer", "dst")?;
        for (arg, len) in [("src", src.len()), ("dst", dst.len())] {
            if n > len {
                return Err(Error::Length {
                    op: "copy_to_peer",
                    arg,
                    wanted: n,
                    len,
                });
            }
        }
        let bytes = n * std::mem::size_of::<T>();
        if bytes == 0 {
            return Ok(());
        }
        self.inner.bind()?;
        // With unified addressing a plain cuMemcpyAsync copies between devices, and unlike
        // cuMemcpyPeerAsync it can be captured into a graph.
        // SAFETY: both ranges lie inside live allocations; the copy is ordered on this
        // engine's stream, which belongs to the current context.
        unsafe {
            sys::cuMemcpyAsync(
                dst.device_ptr()?,
                src.device_ptr()?,
                bytes,
                self.inner.stream.cu_stream(),
            )
        }
        .result()
        .map_err(|source| self.inner.driver("cuMemcpyAsync (peer)", source))
    }

    /// Makes this engine's stream wait until `event` (recorded on any engine's stream) has
    /// completed. Inside a capture this forks the capture onto this stream or joins it back.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.inner.bind()?;
        // SAFETY: the stream belongs to the current context; the event is live (borrowed).
        unsafe {
            result::stream::wait_event(
                self.inner.stream.cu_stream(),
                event.cu_event(),
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
        .map_err(|source| self.inner.driver("cuStreamWaitEvent", source))
    }
}
