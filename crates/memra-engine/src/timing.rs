//! Device events: GPU-side timestamps on the engine stream.
//!
//! Host clocks measure what the CPU spent issuing work; events measure what the GPU spent
//! running it. Launch economics needs both, kept apart.

use std::sync::Arc;

use cudarc::driver::{sys, CudaEvent};

use crate::context::EngineCore;
use crate::engine::Engine;
use crate::error::{Error, Result};

/// A timing event recorded on the engine stream.
pub struct Event {
    ev: CudaEvent,
    core: Arc<EngineCore>,
}

impl Engine {
    /// A new event with timing enabled.
    pub fn event(&self) -> Result<Event> {
        let core = &self.inner.core;
        let ev = core
            .ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|source| core.driver("cuEventCreate", source))?;
        Ok(Event {
            ev,
            core: core.clone(),
        })
    }
}

impl Engine {
    /// GPU time of the work `work` issues on the engine stream, ms: an event recorded before
    /// it and one after, waited for. Refused during capture, as waiting is.
    pub fn gpu_time_ms<E: From<Error>>(
        &self,
        work: impl FnOnce() -> std::result::Result<(), E>,
    ) -> std::result::Result<f64, E> {
        let (start, end) = (self.event()?, self.event()?);
        start.record()?;
        work()?;
        end.record()?;
        end.synchronize()?;
        Ok(f64::from(start.elapsed_ms(&end)?))
    }
}

impl Event {
    /// Records the event on the engine stream (allowed during capture, where it becomes an
    /// event-record node).
    pub fn record(&self) -> Result<()> {
        self.ev
            .record(&self.core.stream)
            .map_err(|source| self.core.driver("cuEventRecord", source))
    }

    /// Waits until the work before the event's last record has finished. Refused during
    /// capture: a graph cannot make the host wait.
    pub fn synchronize(&self) -> Result<()> {
        self.core.capture.refuse(
            "event synchronize",
            "a graph cannot make the host wait; synchronize after the capture closure returns",
        )?;
        self.ev
            .synchronize()
            .map_err(|source| self.core.driver("cuEventSynchronize", source))
    }

    /// Whether the work before the event has finished. Refused during capture: the answer
    /// would describe the capture, not a replay.
    pub fn query(&self) -> Result<bool> {
        self.core.capture.refuse(
            "event query",
            "the answer would describe capture time, not a replay; query after launching the graph",
        )?;
        self.ev
            .try_is_complete()
            .map_err(|source| self.core.driver("cuEventQuery", source))
    }

    /// The raw event handle. Valid while this `Event` lives.
    pub fn cu_event(&self) -> sys::CUevent {
        self.ev.cu_event()
    }

    /// GPU time in milliseconds from this event to `end` (both recorded and complete).
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        self.core.capture.refuse(
            "event elapsed time",
            "events recorded inside a capture carry no timestamps until a replay runs",
        )?;
        if !Arc::ptr_eq(&self.core, &end.core) {
            return Err(Error::InvalidArgument {
                op: "elapsed_ms",
                what: "the two events belong to different engines".into(),
            });
        }
        self.ev
            .elapsed_ms(&end.ev)
            .map_err(|source| self.core.driver("cuEventElapsedTime", source))
    }
}
