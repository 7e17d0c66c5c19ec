//! Several devices: peer access, copies between engines, and cross-stream waits.
//!
//! One `Engine` per device. A copy between engines is a unified-addressing `cuMemcpyAsync` on
//! the issuing engine's stream: device to device when peer access is enabled, staged through
//! host memory by the driver when the devices cannot reach each other. A
//! stream waits for work on another engine's stream through an event, which is also how a
//! capture forks to another device and joins back (see [`Engine::capture_graph_across`]).
//!
//! Outside a capture a peer copy orders itself with the destination engine's stream (it waits
//! for work queued there, and later work there waits for it), so safe code cannot race it.

use cudarc::driver::{result, sys};

use std::sync::Arc;

use crate::context::EngineCore;
use crate::engine::Engine;
use crate::error::Result;
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
        let (core, peer) = (&self.inner.core, &other.inner.core);
        // SAFETY: both devices are valid handles of initialised engines; `can` is writable.
        unsafe { sys::cuDeviceCanAccessPeer(&mut can, core.ctx.cu_device(), peer.ctx.cu_device()) }
            .result()
            .map_err(|source| core.driver("cuDeviceCanAccessPeer", source))?;
        if can == 0 {
            return Ok(PeerPath::ThroughHost);
        }
        core.bind()?;
        // SAFETY: this engine's context is current; the peer context lives as long as `other`.
        match unsafe { sys::cuCtxEnablePeerAccess(peer.ctx.cu_ctx(), 0) }.result() {
            Ok(()) => Ok(PeerPath::Direct),
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {
                Ok(PeerPath::Direct)
            }
            Err(source) => Err(core.driver("cuCtxEnablePeerAccess", source)),
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
        let (core, peer) = (&self.inner.core, &dst_engine.inner.core);
        src.check_owner(core, "copy_to_peer", "src")?;
        dst.check_owner(peer, "copy_to_peer", "dst")?;
        core.check_len("copy_to_peer", "src", n, src.len())?;
        core.check_len("copy_to_peer", "dst", n, dst.len())?;
        let bytes = n * std::mem::size_of::<T>();
        if bytes == 0 {
            return Ok(());
        }
        let ordered = !Arc::ptr_eq(core, peer) && !core.capture.is_capturing();
        let join = |waiter: &Arc<EngineCore>, on: &Arc<EngineCore>| {
            waiter
                .stream
                .join(&on.stream)
                .map_err(|source| waiter.driver("cuStreamWaitEvent (peer copy)", source))
        };
        if ordered {
            join(core, peer)?;
        }
        let (s, d) = (src.touch(core)?, dst.touch(core)?);
        core.bind()?;
        // With unified addressing a plain cuMemcpyAsync copies between devices, and unlike
        // cuMemcpyPeerAsync it can be captured into a graph.
        // SAFETY: both ranges lie inside allocations touched for this stream; the copy is
        // ordered on this engine's stream, which belongs to the current context.
        unsafe { sys::cuMemcpyAsync(d, s, bytes, core.cu_stream()) }
            .result()
            .map_err(|source| core.driver("cuMemcpyAsync (peer)", source))?;
        if ordered {
            join(peer, core)?;
        }
        Ok(())
    }

    /// Makes this engine's stream wait until `event` (recorded on any engine's stream) has
    /// completed. Inside a capture this forks the capture onto this stream or joins it back.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        let core = &self.inner.core;
        core.bind()?;
        // SAFETY: the stream belongs to the current context; the event is live (borrowed).
        unsafe {
            result::stream::wait_event(
                core.cu_stream(),
                event.cu_event(),
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
        .map_err(|source| core.driver("cuStreamWaitEvent", source))
    }
}
