//! Kernel durations as a profiler records them: CUPTI's activity API.
//!
//! A stand-in is matched to a kernel's duration as the profiler recorded it, and what a
//! profiler's start and end add to a kernel's own span differs between GPUs (for the engine's
//! one-block spin, 640–700 ns on an H200, 930–990 on an H100). Only the profiler's own clock
//! says which, so [`profile_kernels`] records the kernels a closure launches as CUPTI sees
//! them, then detaches CUPTI (`cuptiFinalize`): an attached CUPTI slows later launches, so
//! call it after the timings it could disturb.
//!
//! `libcupti` is loaded at run time; where it cannot be, [`Error::ProfilerNotFound`] says so,
//! and where another tool holds CUPTI (a profiler or compute-sanitizer), [`Error::ProfilerBusy`].

use std::alloc::{alloc, dealloc, Layout};
use std::sync::Mutex;

use cudarc::cupti::result::{activity, CuptiError};
use cudarc::cupti::sys;

use crate::error::{Error, Result};

/// One kernel as CUPTI's activity API recorded it (GPU timestamps, ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfiledKernel {
    /// When the profiler saw the kernel start.
    pub start_ns: u64,
    /// When it saw the kernel end.
    pub end_ns: u64,
    /// Its grid, in blocks.
    pub grid: [u32; 3],
    /// Its block, in threads.
    pub block: [u32; 3],
}

impl ProfiledKernel {
    /// The duration the profiler records, ns.
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// The records the completion callback has parsed since the session began.
static RECORDS: Mutex<Vec<ProfiledKernel>> = Mutex::new(Vec::new());
/// One session at a time: CUPTI's callbacks and [`RECORDS`] are process-wide.
static SESSION: Mutex<()> = Mutex::new(());

/// The size of each activity buffer handed to CUPTI (its samples use 8 MiB; a session here
/// records a few hundred kernels).
const BUFFER_BYTES: usize = 1 << 20;
/// CUPTI asks for buffers aligned to 8 bytes.
const BUFFER_ALIGN: usize = 8;

fn buffer_layout() -> Layout {
    // Both are non-zero and the alignment a power of two: this cannot fail.
    Layout::from_size_align(BUFFER_BYTES, BUFFER_ALIGN).expect("a valid layout")
}

extern "C" fn buffer_requested(
    buffer: *mut *mut u8,
    size: *mut usize,
    max_num_records: *mut usize,
) {
    // SAFETY: the layout has a non-zero size; the buffer is freed in `buffer_completed`,
    // which CUPTI calls for every buffer it was given (CUPTI activity API docs).
    let ptr = unsafe { alloc(buffer_layout()) };
    // SAFETY: CUPTI passes valid pointers for the three outputs (CUpti_BuffersCallbackRequestFunc).
    unsafe {
        *buffer = ptr;
        *size = if ptr.is_null() { 0 } else { BUFFER_BYTES };
        *max_num_records = 0; // as many as fit
    }
}

extern "C" fn buffer_completed(
    _context: cudarc::driver::sys::CUcontext,
    _stream_id: u32,
    buffer: *mut u8,
    _size: usize,
    valid_size: usize,
) {
    if buffer.is_null() {
        return;
    }
    let mut parsed = Vec::new();
    let mut record: *mut sys::CUpti_Activity = std::ptr::null_mut();
    loop {
        // SAFETY: `buffer` is a buffer CUPTI filled with `valid_size` bytes of records
        // (CUpti_BuffersCallbackCompleteFunc); `record` is null or the record it last returned.
        if unsafe { activity::get_next_record(buffer, valid_size, &mut record) }.is_err() {
            break;
        }
        // SAFETY: CUPTI returned a valid record; every record begins with its kind.
        let kind = unsafe { (*record).kind };
        if kind == sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL {
            // SAFETY: a CONCURRENT_KERNEL record is a CUpti_ActivityKernel struct (CUPTI docs);
            // every version of it since the fourth begins with the fields read here, in this
            // layout, up to blockZ.
            let k = unsafe { &*(record as *const sys::CUpti_ActivityKernel10) };
            parsed.push(ProfiledKernel {
                start_ns: k.start,
                end_ns: k.end,
                grid: [k.gridX, k.gridY, k.gridZ].map(|v| v.max(0) as u32),
                block: [k.blockX, k.blockY, k.blockZ].map(|v| v.max(0) as u32),
            });
        }
    }
    if let Ok(mut records) = RECORDS.lock() {
        records.extend(parsed);
    }
    // SAFETY: `buffer` was allocated by `buffer_requested` with this layout and CUPTI hands
    // it back once, here. Nothing outlives it: the records above copied their fields out
    // (no pointer into the buffer, nor the kernel's name, is kept), and both callbacks are
    // private, so no safe call sequence reaches this memory once it is freed.
    unsafe { dealloc(buffer, buffer_layout()) };
}

fn cupti(call: &'static str) -> impl Fn(CuptiError) -> Error {
    move |e| match e.0 {
        sys::CUptiResult::CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED => {
            Error::ProfilerBusy { call }
        }
        code => Error::Profiler {
            call,
            detail: format!("{code:?}"),
        },
    }
}

/// Whether a profiling tool is injected into this process (Nsight Systems through
/// `CUDA_INJECTION64_PATH`, compute-sanitizer through `NVTX_INJECTION64_PATH`): where one
/// is, [`profile_kernels`] may find CUPTI taken ([`Error::ProfilerBusy`]).
pub fn profiling_tool_injected() -> bool {
    ["CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|p| !p.is_empty()))
}

/// Runs `f` with CUPTI recording every kernel the process launches, then flushes the records,
/// detaches CUPTI and returns `f`'s value with the kernels in the order they started. `f` must
/// leave its kernels finished (synchronize) before it returns.
pub fn profile_kernels<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, Vec<ProfiledKernel>)> {
    // SAFETY: only loads the library to see whether it can be (libloading).
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::ProfilerNotFound);
    }
    let _session = SESSION.lock().unwrap_or_else(|p| p.into_inner());
    if let Ok(mut r) = RECORDS.lock() {
        r.clear();
    }
    let kind = sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    activity::register_callbacks(Some(buffer_requested), Some(buffer_completed))
        .map_err(cupti("cuptiActivityRegisterCallbacks"))?;
    if let Err(e) = activity::enable(kind) {
        // Detach what registering the callbacks attached; the enable's error is the one to report.
        let _ = cudarc::cupti::result::finalize();
        return Err(cupti("cuptiActivityEnable")(e));
    }
    let out = f();
    // Flush whatever `f` left, whether it failed or not, and detach.
    let forced = sys::CUpti_ActivityFlag::CUPTI_ACTIVITY_FLAG_FLUSH_FORCED as u32;
    let flushed = activity::flush_all(forced).map_err(cupti("cuptiActivityFlushAll"));
    let disabled = activity::disable(kind).map_err(cupti("cuptiActivityDisable"));
    let finalized = cudarc::cupti::result::finalize().map_err(cupti("cuptiFinalize"));
    let value = out?;
    flushed?;
    disabled?;
    finalized?;
    let mut records = RECORDS
        .lock()
        .map(|mut r| std::mem::take(&mut *r))
        .unwrap_or_default();
    records.sort_by_key(|k| k.start_ns);
    Ok((value, records))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cupti_taken_by_another_tool_is_its_own_error() {
        let busy = CuptiError(sys::CUptiResult::CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
        let e = cupti("cuptiActivityRegisterCallbacks")(busy);
        assert!(matches!(e, Error::ProfilerBusy { .. }), "{e:?}");
        assert!(e.to_string().contains("compute-sanitizer"), "{e}");
        let other =
            cupti("cuptiActivityEnable")(CuptiError(sys::CUptiResult::CUPTI_ERROR_NOT_INITIALIZED));
        assert!(
            other.to_string().contains("CUPTI_ERROR_NOT_INITIALIZED"),
            "{other}"
        );
    }

    #[test]
    fn without_cupti_profiling_is_an_error_and_the_closure_does_not_run() {
        // SAFETY: only tries to load the library (libloading).
        let present = unsafe { sys::is_culib_present() };
        let mut ran = false;
        let r = profile_kernels(|| {
            ran = true;
            Ok(())
        });
        match r {
            Err(Error::ProfilerNotFound) => assert!(!present && !ran),
            other => assert!(present, "libcupti is absent, yet: {other:?}"),
        }
    }
}
