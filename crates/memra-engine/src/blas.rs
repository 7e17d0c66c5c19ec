//! Matrix multiplies by cuBLAS on the engine stream: the vendor's own GEMM kernels, for tools
//! that need what a real GEMM asks of the GPU (its memory traffic, its SMs, what it does to
//! kernels on other streams) and not what a stand-in of the same duration asks.
//!
//! One cuBLAS handle per engine, made by [`Engine::prepare_gemm`] or the first
//! [`Engine::gemm`] outside a capture (making a handle allocates, which a capture cannot
//! hold), bound to the engine stream and given a workspace the engine owns: cuBLAS then
//! allocates nothing while a GEMM is captured into a graph, and every captured GEMM retains the
//! workspace as it retains its operands. The library is loaded at run time; where it is
//! missing, the GEMM ops return [`Error::Unsupported`].

use std::sync::{Arc, Mutex};

use cudarc::cublas::{result as blas, sys as bsys};

use crate::context::EngineCore;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, DeviceCopy};

/// cuBLAS workspace, bytes: what the cuBLAS guide recommends for Hopper (32 MiB).
const WORKSPACE_BYTES: usize = 32 << 20;

/// Element type of a GEMM's three matrices; the products accumulate in f32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GemmType {
    /// IEEE half precision.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE single precision (no TF32).
    F32,
    /// IEEE single precision stored, multiplied on TF32 tensor cores
    /// (`CUBLAS_COMPUTE_32F_FAST_TF32`), as PyTorch runs f32 GEMMs where it allows TF32.
    Tf32,
}

impl GemmType {
    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            GemmType::F16 | GemmType::Bf16 => 2,
            GemmType::F32 | GemmType::Tf32 => 4,
        }
    }

    fn cuda(self) -> bsys::cudaDataType {
        match self {
            GemmType::F16 => bsys::cudaDataType::CUDA_R_16F,
            GemmType::Bf16 => bsys::cudaDataType::CUDA_R_16BF,
            GemmType::F32 | GemmType::Tf32 => bsys::cudaDataType::CUDA_R_32F,
        }
    }

    /// cuBLAS's compute type: f32 accumulation, TF32 products for [`GemmType::Tf32`].
    fn compute(self) -> bsys::cublasComputeType_t {
        match self {
            GemmType::Tf32 => bsys::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
            _ => bsys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
        }
    }
}

/// One GEMM, or `batch` of them over consecutive matrices, in cuBLAS's column-major terms:
/// C (m × n) = op(A) (m × k) · op(B) (k × n), + C when `accumulate`. Every matrix is stored
/// densely (its leading dimension is its stored row count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Gemm {
    /// Element type of A, B and C.
    pub dtype: GemmType,
    /// Rows of C and of op(A).
    pub m: u32,
    /// Columns of C and of op(B).
    pub n: u32,
    /// The inner dimension.
    pub k: u32,
    /// A is stored k × m and used transposed.
    pub trans_a: bool,
    /// B is stored n × k and used transposed.
    pub trans_b: bool,
    /// Matrices in the batch (1: one GEMM).
    pub batch: u32,
    /// Add the product to C (beta = 1) instead of overwriting it.
    pub accumulate: bool,
    /// Add a bias of `m` elements to every column of C in cuBLASLt's epilogue, as PyTorch's
    /// `addmm` runs a linear layer (run by [`Engine::gemm_bias`]; one matrix, no
    /// `accumulate`).
    pub bias: bool,
}

impl Gemm {
    /// One GEMM C = A · B of `dtype`: nothing transposed, C overwritten. Set the other fields
    /// by struct update (`Gemm { batch: 4, ..Gemm::plain(..) }`).
    pub fn plain(dtype: GemmType, m: u32, n: u32, k: u32) -> Gemm {
        Gemm {
            dtype,
            m,
            n,
            k,
            trans_a: false,
            trans_b: false,
            batch: 1,
            accumulate: false,
            bias: false,
        }
    }

    /// Leading dimensions of A, B and C.
    pub(crate) fn leading(&self) -> (u32, u32, u32) {
        let lda = if self.trans_a { self.k } else { self.m };
        let ldb = if self.trans_b { self.n } else { self.k };
        (lda, ldb, self.m)
    }

    /// Elements of one matrix of A, B and C.
    fn elements(&self) -> (u64, u64, u64) {
        let (m, n, k) = (u64::from(self.m), u64::from(self.n), u64::from(self.k));
        (m * k, k * n, m * n)
    }

    /// Bytes A, B and C take over the whole batch.
    pub fn bytes(&self) -> (usize, usize, usize) {
        let (a, b, c) = self.elements();
        let size = |e: u64| {
            (e * u64::from(self.batch) * self.dtype.bytes() as u64)
                .try_into()
                .unwrap_or(usize::MAX)
        };
        (size(a), size(b), size(c))
    }

    /// Bytes of the bias a bias epilogue adds: one element per row of C.
    pub fn bias_bytes(&self) -> usize {
        self.m as usize * self.dtype.bytes()
    }

    /// Checks the sizes against what cuBLAS takes (positive, within `i32`).
    pub(crate) fn validate(&self) -> Result<()> {
        let dims = [self.m, self.n, self.k, self.batch];
        if dims.iter().any(|&d| d == 0 || d > i32::MAX as u32) {
            return Err(Error::InvalidArgument {
                op: "gemm",
                what: format!(
                    "m {}, n {}, k {} and batch {} must each be between 1 and 2^31-1",
                    self.m, self.n, self.k, self.batch
                ),
            });
        }
        if self.bias && (self.batch != 1 || self.accumulate) {
            return Err(Error::InvalidArgument {
                op: "gemm",
                what: "a bias epilogue takes one matrix (batch 1) and no accumulate".into(),
            });
        }
        Ok(())
    }
}

/// The engine's cuBLAS handle and its workspace.
pub(crate) struct Blas {
    core: Arc<EngineCore>,
    handle: bsys::cublasHandle_t,
    workspace: DeviceBuffer<u8>,
}

// SAFETY: a cuBLAS handle may be used from any thread as long as calls on it do not overlap
// (the cuBLAS guide, "Thread Safety"); the engine reaches it only through its mutex.
unsafe impl Send for Blas {}

impl Blas {
    fn new(core: &Arc<EngineCore>) -> Result<Blas> {
        core.capture.refuse(
            "making the engine's cuBLAS handle",
            "a new handle allocates; call Engine::prepare_gemm (or run one GEMM) before capture",
        )?;
        // SAFETY: only probes whether the library can be opened (libloading); nothing is called.
        if !unsafe { bsys::is_culib_present() } {
            return Err(Error::Unsupported {
                feature: "cuBLAS",
                why:
                    "libcublas could not be loaded; put the CUDA toolkit's lib64 on LD_LIBRARY_PATH"
                        .into(),
            });
        }
        let workspace = DeviceBuffer::<u8>::alloc(core, WORKSPACE_BYTES)?;
        core.bind()?;
        let handle = blas::create_handle().map_err(|e| blas_error(core, "cublasCreate", e))?;
        let made = Blas {
            core: core.clone(),
            handle,
            workspace,
        };
        let ws = made.workspace.touch(core)?;
        // SAFETY: `handle` was just created in this context; the stream belongs to it.
        unsafe { blas::set_stream(handle, core.cu_stream() as bsys::cudaStream_t) }
            .map_err(|e| blas_error(core, "cublasSetStream", e))?;
        // SAFETY: `ws` is a device allocation of WORKSPACE_BYTES that `made` owns and frees
        // only after destroying the handle (Drop), and every GEMM touches it for its stream.
        unsafe {
            bsys::cublasSetWorkspace_v2(handle, ws as *mut std::ffi::c_void, WORKSPACE_BYTES)
        }
        .result()
        .map_err(|e| blas_error(core, "cublasSetWorkspace", e))?;
        Ok(made)
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        let handle = self.handle;
        destroy_on_device(&self.core, "cublasDestroy", || {
            // SAFETY: the handle was created by `Blas::new` and is destroyed only here.
            unsafe { blas::destroy_handle(handle) }.map_err(|e| e.0)
        });
    }
}

/// The end of a library handle's `Drop`: binds its engine's device and destroys it there,
/// recording (never panicking on) a failure of either in the engine's error sink.
pub(crate) fn destroy_on_device<S: std::fmt::Debug>(
    core: &EngineCore,
    call: &'static str,
    destroy: impl FnOnce() -> std::result::Result<(), S>,
) {
    if let Err(e) = core.bind() {
        core.sink.record(e);
        return;
    }
    if let Err(status) = destroy() {
        core.sink.record(library_error(core, call, status));
    }
}

fn blas_error(core: &EngineCore, call: &'static str, e: blas::CublasError) -> Error {
    library_error(core, call, e.0)
}

/// Checks that each operand of a library GEMM is this engine's and holds the bytes the call
/// reads or writes: cuBLAS trusts the pointers it is given, so a short buffer would be overrun.
pub(crate) fn check_operands<T: DeviceCopy, const N: usize>(
    core: &Arc<EngineCore>,
    op: &'static str,
    operands: [(&DeviceBuffer<T>, &'static str, usize); N],
) -> Result<()> {
    for (buf, arg, need) in operands {
        buf.check_owner(core, op, arg)?;
        core.check_len(op, arg, need, buf.num_bytes())?;
    }
    Ok(())
}

/// A cuBLAS or cuBLASLt call's failure, with the status it returned.
pub(crate) fn library_error(
    core: &EngineCore,
    call: &'static str,
    status: impl std::fmt::Debug,
) -> Error {
    Error::Blas {
        call,
        device: core.ordinal,
        status: format!("{status:?}"),
    }
}

/// The engine's handle slot.
pub(crate) type BlasSlot = Mutex<Option<Blas>>;

impl Engine {
    /// Makes the engine's cuBLAS handle now (it is made on the first GEMM otherwise), so
    /// that GEMMs can be captured: a capture cannot hold the allocations a new handle makes.
    pub fn prepare_gemm(&self) -> Result<()> {
        self.blas().map(drop)?;
        self.prepare_gemm_bias()
    }

    /// The engine's handle slot, locked, with a handle in it (made now if there was none).
    fn blas(&self) -> Result<std::sync::MutexGuard<'_, Option<Blas>>> {
        let mut slot = self.inner.blas.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(Blas::new(&self.inner.core)?);
        }
        Ok(slot)
    }

    /// C = op(A) · op(B) (+ C), by cuBLAS on the engine stream (see [`Gemm`]); `a`, `b` and
    /// `c` hold the matrices in `g.dtype` (any element type of the right byte size). Captured,
    /// it becomes cuBLAS's kernel node(s), and the graph retains the buffers.
    pub fn gemm<T: DeviceCopy>(
        &self,
        g: &Gemm,
        a: &DeviceBuffer<T>,
        b: &DeviceBuffer<T>,
        c: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        g.validate()?;
        if g.bias {
            return Err(Error::InvalidArgument {
                op: "gemm",
                what: "a GEMM with a bias epilogue runs by Engine::gemm_bias".into(),
            });
        }
        let core = &self.inner.core;
        let (need_a, need_b, need_c) = g.bytes();
        check_operands(
            core,
            "gemm",
            [
                (a, "a (bytes)", need_a),
                (b, "b (bytes)", need_b),
                (&*c, "c (bytes)", need_c),
            ],
        )?;
        let slot = self.blas()?;
        let Some(h) = slot.as_ref() else {
            unreachable!("blas() leaves a handle or returns its error");
        };
        h.workspace.touch(core)?;
        let (pa, pb, pc) = (a.touch(core)?, b.touch(core)?, c.touch(core)?);
        let (lda, ldb, ldc) = g.leading();
        let (ea, eb, ec) = g.elements();
        let op = |t: bool| {
            if t {
                bsys::cublasOperation_t::CUBLAS_OP_T
            } else {
                bsys::cublasOperation_t::CUBLAS_OP_N
            }
        };
        let (alpha, beta) = (1.0f32, if g.accumulate { 1.0f32 } else { 0.0 });
        let ty = g.dtype.cuda();
        core.bind()?;
        let (ta, tb) = (op(g.trans_a), op(g.trans_b));
        let (m, n, k) = (g.m as i32, g.n as i32, g.k as i32);
        let (alpha_p, beta_p) = ((&alpha as *const f32).cast(), (&beta as *const f32).cast());
        let (pa, pb) = (pa as *const std::ffi::c_void, pb as *const std::ffi::c_void);
        let pc = pc as *mut std::ffi::c_void;
        let compute = g.dtype.compute();
        let algo = bsys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT;
        // One GEMM goes through cublasGemmEx, as frameworks call it (cuBLAS may choose other
        // kernels for a batched call of one).
        let (call, done) = if g.batch == 1 {
            // SAFETY: the handle belongs to this engine's context (made current above) and is
            // bound to its stream; `pa`, `pb`, `pc` are device allocations touched for this
            // stream (a free waits for it, a capture retains them), checked above to hold the
            // dense matrices the sizes and leading dimensions describe; alpha and beta point
            // to f32 host values alive across the call, as the handle's default
            // CUBLAS_POINTER_MODE_HOST and CUBLAS_COMPUTE_32F(_FAST_TF32) take them. The workspace is used
            // only on this engine's stream, eagerly or by its graphs (whose launches are
            // ordered with it), so no two GEMMs of the engine use it at once.
            let r = unsafe {
                blas::gemm_ex(
                    h.handle, ta, tb, m, n, k, alpha_p, pa, ty, lda as i32, pb, ty, ldb as i32,
                    beta_p, pc, ty, ldc as i32, compute, algo,
                )
            };
            ("cublasGemmEx", r)
        } else {
            // SAFETY: as above, with batch × each matrix checked, one after another at the
            // strides given.
            let r = unsafe {
                blas::gemm_strided_batched_ex(
                    h.handle,
                    ta,
                    tb,
                    m,
                    n,
                    k,
                    alpha_p,
                    pa,
                    ty,
                    lda as i32,
                    ea as i64,
                    pb,
                    ty,
                    ldb as i32,
                    eb as i64,
                    beta_p,
                    pc,
                    ty,
                    ldc as i32,
                    ec as i64,
                    g.batch as i32,
                    compute,
                    algo,
                )
            };
            ("cublasGemmStridedBatchedEx", r)
        };
        done.map_err(|e| blas_error(core, call, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(trans_a: bool, trans_b: bool) -> Gemm {
        Gemm {
            trans_a,
            trans_b,
            batch: 2,
            ..Gemm::plain(GemmType::F16, 8, 3, 5)
        }
    }

    #[test]
    fn sizes_and_leading_dimensions() {
        assert_eq!(
            g(false, false).bytes(),
            (2 * 40 * 2, 2 * 15 * 2, 2 * 24 * 2)
        );
        assert_eq!(g(false, false).leading(), (8, 5, 8));
        assert_eq!(g(true, true).leading(), (5, 3, 8));
        assert!(g(false, false).validate().is_ok());
        let zero = Gemm {
            k: 0,
            ..g(false, false)
        };
        assert!(zero
            .validate()
            .unwrap_err()
            .to_string()
            .contains("between 1 and"));
    }

    #[test]
    fn a_bias_epilogue_takes_one_matrix_and_no_accumulate() {
        let bias = Gemm {
            bias: true,
            ..Gemm::plain(GemmType::F32, 8, 3, 5)
        };
        assert!(bias.validate().is_ok());
        for bad in [
            Gemm { batch: 2, ..bias },
            Gemm {
                accumulate: true,
                ..bias
            },
        ] {
            let err = bad.validate().unwrap_err().to_string();
            assert!(err.contains("bias epilogue takes one matrix"), "{err}");
        }
    }
}
