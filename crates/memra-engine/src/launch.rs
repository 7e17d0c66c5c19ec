//! The one way the engine launches a kernel: a builder that collects typed arguments, touches
//! every buffer it is given (so captures retain them and frees wait for them), checks the
//! arguments against the kernel's declared parameters, and calls `cuLaunchKernel` — or
//! `cuLaunchKernelEx` with programmatic stream serialization when the engine has PDL on.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::{result, sys};

use crate::context::EngineCore;
use crate::error::{Error, Result};
use crate::kernels::{Kernel, Kernels, Param};
use crate::memory::{Allocation, DeviceBuffer, DeviceCopy};

/// Launch geometry: grid and block in three dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchShape {
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory each block reserves on its SM, bytes (0: none). A stand-in asks
    /// for it to hold as few blocks an SM as the kernel it stands for could: that, not its
    /// own code, decides what runs beside it on another stream.
    pub shared_bytes: u32,
}

impl LaunchShape {
    /// One-dimensional shape: `grid` blocks of `block` threads.
    pub fn linear(grid: u32, block: u32) -> Self {
        LaunchShape {
            grid: (grid, 1, 1),
            block: (block, 1, 1),
            shared_bytes: 0,
        }
    }

    /// Of `grid` and `block`, reserving no dynamic shared memory.
    pub fn of(grid: (u32, u32, u32), block: (u32, u32, u32)) -> Self {
        LaunchShape {
            grid,
            block,
            shared_bytes: 0,
        }
    }

    /// This shape with each block reserving `bytes` of dynamic shared memory.
    pub fn with_shared(self, bytes: u32) -> Self {
        LaunchShape {
            shared_bytes: bytes,
            ..self
        }
    }

    /// Blocks in the grid.
    pub fn blocks(&self) -> u64 {
        u64::from(self.grid.0) * u64::from(self.grid.1) * u64::from(self.grid.2)
    }

    /// Threads in the whole grid.
    pub fn threads(&self) -> u64 {
        self.blocks() * u64::from(self.block.0) * u64::from(self.block.1) * u64::from(self.block.2)
    }

    /// Checks the shape against CUDA's fixed limits (grid y/z ≤ 65535, ≤ 1024 threads a block).
    pub fn validate(&self, op: &'static str) -> Result<()> {
        let (gx, gy, gz) = self.grid;
        let (bx, by, bz) = self.block;
        let bad = |what: String| Err(Error::InvalidArgument { op, what });
        if gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 {
            return bad(format!(
                "grid {:?} and block {:?} must be non-zero",
                self.grid, self.block
            ));
        }
        if gx > i32::MAX as u32 || gy > 65535 || gz > 65535 {
            return bad(format!(
                "grid {:?} exceeds (2^31-1, 65535, 65535)",
                self.grid
            ));
        }
        if bx > 1024 || by > 1024 || bz > 64 || (bx as u64 * by as u64 * bz as u64) > 1024 {
            return bad(format!(
                "block {:?} exceeds 1024 threads or (1024, 1024, 64)",
                self.block
            ));
        }
        Ok(())
    }
}

/// One argument value, stored where `cuLaunchKernel` can read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arg {
    Ptr(sys::CUdeviceptr),
    U32(u32),
    U64(u64),
}

impl Arg {
    fn kind(&self) -> Param {
        match self {
            Arg::Ptr(_) => Param::Ptr,
            Arg::U32(_) => Param::U32,
            Arg::U64(_) => Param::U64,
        }
    }

    fn as_param(&mut self) -> *mut c_void {
        match self {
            Arg::Ptr(p) => (p as *mut sys::CUdeviceptr).cast(),
            Arg::U32(v) => (v as *mut u32).cast(),
            Arg::U64(v) => (v as *mut u64).cast(),
        }
    }
}

/// The most parameters an engine kernel takes; arguments live on the stack, so a launch
/// allocates nothing.
pub(crate) const MAX_ARGS: usize = 8;

/// Arguments of one launch, in order. The first error (a poisoned buffer, too many arguments)
/// is kept and returned by [`Launch::run`], so call sites chain without `?` at every argument.
pub(crate) struct Launch<'a> {
    core: &'a Arc<EngineCore>,
    kernels: &'a Kernels,
    kernel: Kernel,
    args: [Arg; MAX_ARGS],
    len: usize,
    error: Option<Error>,
}

impl<'a> Launch<'a> {
    pub(crate) fn new(core: &'a Arc<EngineCore>, kernels: &'a Kernels, kernel: Kernel) -> Self {
        Launch {
            core,
            kernels,
            kernel,
            args: [Arg::U64(0); MAX_ARGS],
            len: 0,
            error: None,
        }
    }

    fn push(&mut self, a: Arg) {
        if self.len < MAX_ARGS {
            self.args[self.len] = a;
            self.len += 1;
        } else {
            self.error.get_or_insert(Error::InvalidArgument {
                op: self.kernel.name(),
                what: format!("more than {MAX_ARGS} arguments"),
            });
        }
    }

    /// A buffer argument, passed as its device address plus `byte_offset`. The buffer is
    /// touched: retained by an open capture, and its free will wait for this stream.
    pub(crate) fn buf_at<T: DeviceCopy>(mut self, b: &DeviceBuffer<T>, byte_offset: u64) -> Self {
        match b.touch(self.core) {
            Ok(p) => self.push(Arg::Ptr(p + byte_offset)),
            Err(e) => {
                self.error.get_or_insert(e);
                self.push(Arg::Ptr(0));
            }
        }
        self
    }

    pub(crate) fn buf<T: DeviceCopy>(self, b: &DeviceBuffer<T>) -> Self {
        self.buf_at(b, 0)
    }

    /// The device address `device` of mapped page-locked host memory `a`, whose free will wait
    /// for this stream.
    pub(crate) fn mapped(mut self, a: &Arc<Allocation>, device: sys::CUdeviceptr) -> Self {
        a.used_by(self.core);
        self.push(Arg::Ptr(device));
        self
    }

    /// A null pointer argument (the kernel checks for it).
    pub(crate) fn null(mut self) -> Self {
        self.push(Arg::Ptr(0));
        self
    }

    pub(crate) fn u32(mut self, v: u32) -> Self {
        self.push(Arg::U32(v));
        self
    }

    pub(crate) fn u64(mut self, v: u64) -> Self {
        self.push(Arg::U64(v));
        self
    }

    /// Checks the arguments and shape (see [`check_args`]) and returns the kernel's function.
    fn checked(
        &mut self,
        shape: LaunchShape,
        params: &mut [*mut c_void; MAX_ARGS],
        pdl: bool,
    ) -> Result<sys::CUfunction> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        check_args(self.kernel, &mut self.args[..self.len], shape, params)?;
        let f = self
            .kernels
            .get_shared(self.kernel, pdl, shape.shared_bytes)?
            .map_err(|source| self.core.driver("cuFuncSetAttribute", source))?;
        Ok(f.cu_function())
    }

    /// Launches on the engine stream.
    pub(crate) fn run(mut self, shape: LaunchShape) -> Result<()> {
        let mut params = [std::ptr::null_mut::<c_void>(); MAX_ARGS];
        let pdl = self.core.pdl();
        let f = self.checked(shape, &mut params, pdl)?;
        let params = &mut params[..self.len];
        self.core.bind()?;
        // SAFETY: `params` holds one pointer per kernel parameter, each to a value of the
        // parameter's type (checked against the kernel's declaration in `checked`, which a unit
        // test checks against the .cu source), alive until the call returns (the driver copies
        // the values at launch). Pointer arguments are device addresses of buffers touched for
        // this stream, whose memory is not freed before the stream has finished with it. `f`
        // comes from a module this engine keeps loaded in the context made current above, and
        // the stream belongs to that context. With PDL, every engine kernel waits for its
        // predecessor (griddepcontrol.wait) before touching memory (kernels/pdl.cuh).
        // `shape.shared_bytes` only reserves dynamic shared memory (allowed to the function in
        // `checked` above 48 KiB; the driver refuses more than the device gives a block): no
        // engine kernel declares `extern __shared__`, so none reads or writes it.
        unsafe { launch_raw(f, shape, self.core.cu_stream(), params, pdl) }.map_err(|source| {
            Error::Launch {
                kernel: self.kernel.name(),
                device: self.core.ordinal,
                source,
            }
        })
    }
}

/// Checks `args` against `kernel`'s declared parameters and `shape` against CUDA's limits, and
/// fills `params` with one pointer per argument (pointing into `args`, so valid while `args`
/// lives unmoved).
pub(crate) fn check_args(
    kernel: Kernel,
    args: &mut [Arg],
    shape: LaunchShape,
    params: &mut [*mut c_void; MAX_ARGS],
) -> Result<()> {
    let declared = kernel.params();
    if args.len() != declared.len() || args.iter().zip(declared).any(|(a, p)| a.kind() != *p) {
        let kinds: Vec<Param> = args.iter().map(Arg::kind).collect();
        return Err(Error::InvalidArgument {
            op: kernel.name(),
            what: format!("arguments {kinds:?} do not match the kernel's parameters {declared:?}"),
        });
    }
    shape.validate(kernel.name())?;
    for (slot, a) in params.iter_mut().zip(args.iter_mut()) {
        *slot = a.as_param();
    }
    Ok(())
}

/// Launches `f` with `shape` on `stream`: `cuLaunchKernel`, or with `pdl` `cuLaunchKernelEx`
/// with `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`, which lets the kernel be
/// launched before the previous kernel on the stream has finished (captured, the dependency
/// becomes a programmatic edge). Exposed for tools that time the driver's own floor beside the
/// engine, so both paths launch the same way.
///
/// # Safety
/// As for `cuLaunchKernel`: `f` belongs to the context current on this thread, `stream` to that
/// context, `params` holds one pointer per kernel parameter to a value of its type, and every
/// address the kernel uses stays valid until it has run. With `pdl`, the kernel must not touch
/// memory its predecessor uses before `griddepcontrol.wait` (the CUDA programming guide's rule
/// for programmatic dependent launch); the engine's kernels wait first in their PDL build, the
/// one [`crate::Engine::cu_function`] returns while the engine has PDL on. Each block reserves
/// `shape.shared_bytes` of dynamic shared memory; above 48 KiB `f` must have been allowed as
/// much (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`), else the driver refuses the launch.
pub unsafe fn launch_raw(
    f: sys::CUfunction,
    shape: LaunchShape,
    stream: sys::CUstream,
    params: &mut [*mut c_void],
    pdl: bool,
) -> std::result::Result<(), cudarc::driver::DriverError> {
    if !pdl {
        // SAFETY: the caller's contract is cuLaunchKernel's.
        return unsafe {
            result::launch_kernel(
                f,
                shape.grid,
                shape.block,
                shape.shared_bytes,
                stream,
                params,
            )
        };
    }
    // SAFETY: a launch attribute is plain data; all-zero is a valid value of its union.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: shape.grid.0,
        gridDimY: shape.grid.1,
        gridDimZ: shape.grid.2,
        blockDimX: shape.block.0,
        blockDimY: shape.block.1,
        blockDimZ: shape.block.2,
        sharedMemBytes: shape.shared_bytes,
        hStream: stream,
        attrs: &mut attr,
        numAttrs: 1,
    };
    // SAFETY: `config` and the attribute it points to live until the call returns; the rest is
    // the caller's contract, which cuLaunchKernelEx shares with cuLaunchKernel.
    unsafe { sys::cuLaunchKernelEx(&config, f, params.as_mut_ptr(), std::ptr::null_mut()) }.result()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_shape_limits() {
        assert!(LaunchShape::linear(132, 256).validate("t").is_ok());
        for bad in [
            LaunchShape::linear(0, 1),
            LaunchShape::of((1, 70000, 1), (1, 1, 1)),
            LaunchShape::linear(1, 2048),
            LaunchShape::of((1, 1, 1), (64, 64, 1)),
            LaunchShape::of((1, 1, 1), (1, 1, 65)),
        ] {
            let e = bad.validate("spin").unwrap_err();
            assert!(
                matches!(e, Error::InvalidArgument { op: "spin", .. }),
                "{e}"
            );
        }
    }

    #[test]
    fn args_point_at_values_of_their_own_width() {
        let mut a = [Arg::Ptr(0xdead_beef_0000), Arg::U32(7), Arg::U64(1 << 40)];
        let kinds: Vec<Param> = a.iter().map(Arg::kind).collect();
        assert_eq!(kinds, [Param::Ptr, Param::U32, Param::U64]);
        let p: Vec<*mut c_void> = a.iter_mut().map(Arg::as_param).collect();
        // SAFETY: each pointer was just made from a live element of `a` of the read type.
        unsafe {
            assert_eq!(*(p[0] as *const u64), 0xdead_beef_0000);
            assert_eq!(*(p[1] as *const u32), 7);
            assert_eq!(*(p[2] as *const u64), 1 << 40);
        }
    }
}
