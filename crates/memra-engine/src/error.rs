//! The one error type of the engine.
//!
//! Every variant carries the context a user needs to act on it: which driver call, which
//! kernel, which device. Errors convert with `?` into `Box<dyn std::error::Error>`.

use cudarc::driver::DriverError;

/// Result alias used throughout the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the engine.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `libcuda.so` could not be loaded: no NVIDIA driver on this machine.
    #[error("no CUDA driver library (libcuda.so) could be loaded: this needs an NVIDIA GPU with its driver installed")]
    DriverNotFound,

    /// `libnvrtc.so` could not be loaded, so kernels cannot be compiled.
    #[error("no NVRTC library (libnvrtc.so) could be loaded: install the CUDA toolkit's NVRTC or put it on LD_LIBRARY_PATH")]
    NvrtcNotFound,

    /// The driver loaded but reports no usable device.
    #[error("the CUDA driver reports no usable device ({detail}); check CUDA_VISIBLE_DEVICES and nvidia-smi")]
    NoDevice {
        /// What the driver said.
        detail: String,
    },

    /// The requested ordinal does not name a visible device.
    #[error("device ordinal {ordinal} is out of range: {count} CUDA device(s) visible (valid: 0..{count})")]
    OrdinalOutOfRange {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices are visible.
        count: usize,
    },

    /// A driver call failed.
    #[error("{call} failed on device {device}: {}", describe(source))]
    Driver {
        /// The driver API call (or engine operation) that failed.
        call: &'static str,
        /// Device ordinal.
        device: usize,
        /// The driver's error code.
        source: DriverError,
    },

    /// A kernel launch failed.
    #[error(
        "launching kernel `{kernel}` on device {device} failed: {}",
        describe(source)
    )]
    Launch {
        /// Kernel name.
        kernel: &'static str,
        /// Device ordinal.
        device: usize,
        /// The driver's error code.
        source: DriverError,
    },

    /// NVRTC rejected a kernel source; the log says why.
    #[error("NVRTC could not compile `{file}` for {arch}: {reason}\n{log}")]
    Compile {
        /// The `.cu` file.
        file: &'static str,
        /// Target architecture, e.g. `compute_90`.
        arch: String,
        /// NVRTC's status.
        reason: String,
        /// NVRTC's compile log.
        log: String,
    },

    /// An operation that cannot be part of a CUDA graph was attempted during capture.
    #[error("{op} is not allowed while the engine stream is capturing a graph: {why}")]
    CaptureForbidden {
        /// The refused operation.
        op: &'static str,
        /// Why it cannot be captured.
        why: &'static str,
    },

    /// The stream capture itself failed (invalidated, or the driver refused to end it).
    #[error(
        "graph capture on device {device} failed at {call}: {}",
        describe(source)
    )]
    Capture {
        /// Where it failed.
        call: &'static str,
        /// Device ordinal.
        device: usize,
        /// The driver's error code.
        source: DriverError,
    },

    /// Sizes do not fit: a kernel asked for more elements than a buffer holds, or a copy's
    /// host and device sides differ.
    #[error("{op}: asked for {wanted} elements but `{arg}` holds {len}")]
    Length {
        /// The operation.
        op: &'static str,
        /// The argument that is too short.
        arg: &'static str,
        /// Elements asked for.
        wanted: usize,
        /// Elements the argument holds.
        len: usize,
    },

    /// A size that no launch or allocation can take (zero-sized grid, over the 32-bit limits).
    #[error("{op}: {what}")]
    InvalidArgument {
        /// The operation.
        op: &'static str,
        /// What is wrong.
        what: String,
    },

    /// The device has not enough free memory for an allocation.
    #[error("out of device memory on device {device}: {bytes} bytes asked for, {free} of {total} bytes free")]
    OutOfMemory {
        /// Device ordinal.
        device: usize,
        /// Bytes asked for.
        bytes: usize,
        /// Free bytes at the time.
        free: usize,
        /// Total bytes.
        total: usize,
    },

    /// A buffer from a failed `Clone` was used; `Clone` cannot return an error itself.
    #[error("this buffer is unusable because the clone that made it failed: {0}")]
    Poisoned(String),

    /// Buffers of two different engines were mixed in one call.
    #[error("{op}: buffer `{arg}` belongs to another engine (device {other}), not this one (device {device})")]
    ForeignBuffer {
        /// The operation.
        op: &'static str,
        /// The argument.
        arg: &'static str,
        /// This engine's device.
        device: usize,
        /// The buffer's device.
        other: usize,
    },

    /// `cuGraphExecUpdate` refused the new capture; the executable graph is unchanged, and the
    /// caller may build a new one (see `Graph::update_or_reinstantiate`).
    #[error("the driver refused to update the executable graph: {result}{node}")]
    GraphUpdate {
        /// The driver's `CUgraphExecUpdateResult`, e.g.
        /// `CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED`.
        result: String,
        /// Where: " at a CU_GRAPH_NODE_TYPE_KERNEL node", or empty when the driver named no node.
        node: String,
    },

    /// A CUDA feature this device, driver or NVRTC lacks (e.g. programmatic dependent launch
    /// before compute capability 9.0); the rest of the engine still works.
    #[error("{feature} is not available here: {why}")]
    Unsupported {
        /// The feature or kernel.
        feature: &'static str,
        /// Why not.
        why: String,
    },

    /// A cuBLAS call failed.
    #[error("{call} failed on device {device}: {status}")]
    Blas {
        /// The cuBLAS call.
        call: &'static str,
        /// The device.
        device: usize,
        /// cuBLAS's status, e.g. `CUBLAS_STATUS_NOT_SUPPORTED`.
        status: String,
    },

    /// `libcupti.so` could not be loaded, so kernels cannot be profiled.
    #[error("no CUPTI library (libcupti.so) could be loaded: put the CUDA toolkit directory that holds it (targets/<arch>/lib or extras/CUPTI/lib64) on LD_LIBRARY_PATH")]
    ProfilerNotFound,

    /// Another tool already holds CUPTI in this process (Nsight Systems, Nsight Compute and
    /// compute-sanitizer each subscribe to it, and CUPTI takes one subscriber).
    #[error("{call} failed: another tool holds the profiler (CUPTI) in this process, as Nsight Systems, Nsight Compute and compute-sanitizer do; run without it to profile")]
    ProfilerBusy {
        /// The CUPTI call.
        call: &'static str,
    },

    /// A CUPTI call failed.
    #[error("{call} failed: {detail}")]
    Profiler {
        /// The CUPTI call.
        call: &'static str,
        /// CUPTI's result code.
        detail: String,
    },

    /// An error that happened in a `Drop` (which cannot return one), surfaced later.
    #[error("an earlier release of a device resource failed: {0}")]
    Deferred(Box<Error>),
}

/// `CUDA_ERROR_OUT_OF_MEMORY: out of memory` — name and text, as the driver gives them.
pub(crate) fn describe(e: &DriverError) -> String {
    let name = e
        .error_name()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e
        .error_string()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default();
    if text.is_empty() {
        name
    } else {
        format!("{name}: {text}")
    }
}

impl Error {
    /// The driver error code behind this error, if there is one.
    pub fn driver_error(&self) -> Option<DriverError> {
        match self {
            Error::Driver { source, .. }
            | Error::Launch { source, .. }
            | Error::Capture { source, .. } => Some(*source),
            Error::Deferred(inner) => inner.driver_error(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_context() {
        let e = Error::OrdinalOutOfRange {
            ordinal: 3,
            count: 1,
        };
        assert_eq!(
            e.to_string(),
            "device ordinal 3 is out of range: 1 CUDA device(s) visible (valid: 0..1)"
        );
        let e = Error::CaptureForbidden {
            op: "htod",
            why: "a host-to-device copy reads host memory once, at capture time",
        };
        assert!(e.to_string().starts_with("htod is not allowed while"));
        let e = Error::Length {
            op: "add",
            arg: "y",
            wanted: 10,
            len: 4,
        };
        assert_eq!(e.to_string(), "add: asked for 10 elements but `y` holds 4");
    }

    #[test]
    fn boxes_into_std_error() {
        fn f() -> std::result::Result<(), Box<dyn std::error::Error + Send + Sync>> {
            Err(Error::DriverNotFound)?;
            Ok(())
        }
        let msg = f().unwrap_err().to_string();
        assert!(msg.contains("libcuda.so"), "{msg}");
    }

    #[test]
    fn deferred_keeps_the_driver_code() {
        let inner = Error::NoDevice { detail: "x".into() };
        let e = Error::Deferred(Box::new(inner));
        assert!(e.driver_error().is_none());
        assert!(e.to_string().contains("earlier release"));
    }
}
