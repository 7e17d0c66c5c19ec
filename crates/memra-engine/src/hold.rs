//! Holding the engine stream until the host lets it go.
//!
//! Timing the GPU's own pace for a run of eager launches needs them queued ahead of the GPU:
//! otherwise each kernel starts when the host gets to it and the events time the host. A
//! [`StreamHold`] is nvbench's blocking kernel: one thread polls a word in mapped page-locked
//! host memory, so everything the host queues behind it waits until the host writes that
//! word. The kernel gives up after a timeout (a host that blocks — on a full launch queue, say
//! — cannot hang the stream for good) and says so, so a caller can tell a hold that lasted
//! from one that ran out instead of assuming it.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::sys;

use crate::context::EngineCore;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::kernels::Kernel;
use crate::launch::LaunchShape;
use crate::memory::{release, Allocation};

/// Word 0: the release word the host writes; word 1: the kernel's timed-out word.
const WORDS: usize = 2;

/// The engine stream, held by a kernel until [`StreamHold::release`] (or the timeout).
/// Dropping an unreleased hold releases it.
pub struct StreamHold {
    words: Option<Arc<Allocation>>,
    core: Arc<EngineCore>,
}

impl std::fmt::Debug for StreamHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamHold")
            .field("device", &self.core.ordinal)
            .field("released", &self.words.is_none())
            .finish()
    }
}

impl StreamHold {
    /// The host side of word `i`.
    fn word(a: &Allocation, i: usize) -> &AtomicU32 {
        assert!(
            i < WORDS && a.bytes() >= WORDS * 4,
            "hold word {i} out of range"
        );
        // SAFETY: the allocation is WORDS u32 of page-locked host memory, 4-byte aligned
        // (hold_stream checks that before any hold exists), alive while `a` is borrowed; the
        // kernel's last access is over once the stream has passed it, and the block is freed
        // only after that (its drop waits for the stream). On the host it is only
        // accessed through these atomics; the device's accesses (the kernel's volatile loads
        // and store) are outside the Rust memory model, like any DMA.
        unsafe { &*(a.ptr() as *const AtomicU32).add(i) }
    }

    /// Lets the stream go, waits for it to drain (everything queued behind the hold runs),
    /// and returns whether the hold lasted until now: `false` when it timed out first, so
    /// work queued behind it may have started at the host's pace.
    pub fn release(mut self) -> Result<bool> {
        let Some(a) = self.words.take() else {
            return Ok(true); // unreachable: only release and drop take the words
        };
        Self::word(&a, 0).store(1, Ordering::SeqCst);
        let drained = self.core.bind().and_then(|()| self.core.sync_stream());
        // The stream has passed the kernel (or failed): the timed-out word is final.
        let timed_out = Self::word(&a, 1).load(Ordering::SeqCst) != 0;
        release(a);
        drained.map(|()| !timed_out)
    }
}

impl Drop for StreamHold {
    fn drop(&mut self) {
        if let Some(a) = self.words.take() {
            // Let the kernel finish; the block's free waits for the stream.
            Self::word(&a, 0).store(1, Ordering::SeqCst);
            release(a);
        }
    }
}

impl Engine {
    /// Holds the engine stream with a kernel that waits until the returned hold is released
    /// (or `timeout` passes on the GPU's clock): work queued behind it starts together when
    /// the host says so. Refused inside a capture (a graph would replay a hold no host
    /// releases).
    pub fn hold_stream(&self, timeout: Duration) -> Result<StreamHold> {
        let core = &self.inner.core;
        core.capture.refuse(
            "hold_stream",
            "a graph would replay the hold with no host to release it",
        )?;
        let (a, device) = Allocation::new_mapped(core, WORDS * 4)?;
        // The host reads and writes the words as atomics, which need their alignment; the
        // CUDA documentation does not promise one for cuMemHostAlloc, so it is checked.
        if a.ptr() % std::mem::align_of::<AtomicU32>() as sys::CUdeviceptr != 0 {
            return Err(Error::InvalidArgument {
                op: "hold_stream",
                what: format!("page-locked words at {:#x} are not 4-byte aligned", a.ptr()),
            });
        }
        let a = Arc::new(a);
        let word_bytes = 4;
        self.kernel(Kernel::HoldUntilReleased)
            .mapped(&a, device)
            .mapped(&a, device + word_bytes as sys::CUdeviceptr)
            .u64(u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX))
            .run(LaunchShape::linear(1, 1))?;
        Ok(StreamHold {
            words: Some(a),
            core: core.clone(),
        })
    }
}
