//! GEMMs with a bias added in cuBLASLt's epilogue, on the engine stream: how PyTorch runs a
//! linear layer's `addmm`. The kernel a GEMM runs depends on how it is called: an IEEE f32
//! GEMM of 3072 × 128 × 3072 on an H200 ran 96 blocks through cuBLASLt with the bias and
//! PyTorch's 1 MiB workspace, 120 blocks split along K through `cublasGemmEx` with the
//! engine's 32 MiB, and beside other streams' kernels the two take the SMs differently.
//!
//! One cuBLASLt handle per engine, made with the cuBLAS handle by [`Engine::prepare_gemm`] (or
//! on the first [`Engine::gemm_bias`] outside a capture), with a workspace the engine owns.
//! Each GEMM asks the heuristic for one algorithm, as PyTorch does, given the workspace's size
//! (PyTorch's) and the operands' alignment as preferences; the descriptors are the call's own.

use std::sync::{Arc, Mutex};

use cudarc::cublaslt::{result as lt, sys as lsys};

use crate::blas::{check_operands, Gemm, GemmType};
use crate::context::EngineCore;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, DeviceCopy};

/// cuBLASLt workspace offered to the heuristic, bytes: PyTorch's for its cuBLASLt GEMMs
/// (1 MiB), whatever its cuBLAS workspace. The workspace bounds how far the heuristic may
/// split K: on an H200 with PyTorch 2.11, an IEEE f32 linear layer of 3072 × 3072 over 128
/// rows ran one kernel of 96 blocks, as the engine's GEMM does with 1 MiB offered, where with
/// 32 MiB it ran 120 blocks split five ways and a second kernel; two chains of such layers
/// side by side replayed 0.81 ms against 0.81 real with 1 MiB, 0.48 with 32.
const WORKSPACE_BYTES: usize = 1 << 20;

/// The engine's cuBLASLt handle and its workspace.
pub(crate) struct BlasLt {
    core: Arc<EngineCore>,
    handle: lsys::cublasLtHandle_t,
    workspace: DeviceBuffer<u8>,
}

// SAFETY: a cuBLASLt handle may be used from any thread as long as calls on it do not
// overlap (the cuBLAS guide, "Thread Safety"); the engine reaches it only through its mutex.
unsafe impl Send for BlasLt {}

/// The engine's handle slot.
pub(crate) type BlasLtSlot = Mutex<Option<BlasLt>>;

impl BlasLt {
    fn new(core: &Arc<EngineCore>) -> Result<BlasLt> {
        core.capture.refuse(
            "making the engine's cuBLASLt handle",
            "a new handle allocates; call Engine::prepare_gemm (or run one GEMM with a bias) before capture",
        )?;
        // SAFETY: only probes whether the library can be opened (libloading); nothing is called.
        if !unsafe { lsys::is_culib_present() } {
            return Err(Error::Unsupported {
                feature: "cuBLASLt",
                why: "libcublasLt could not be loaded; put the CUDA toolkit's lib64 on LD_LIBRARY_PATH"
                    .into(),
            });
        }
        let workspace = DeviceBuffer::<u8>::alloc(core, WORKSPACE_BYTES)?;
        core.bind()?;
        let handle = lt::create_handle().map_err(|e| lt_error(core, "cublasLtCreate", e))?;
        Ok(BlasLt {
            core: core.clone(),
            handle,
            workspace,
        })
    }
}

impl Drop for BlasLt {
    fn drop(&mut self) {
        let handle = self.handle;
        crate::blas::destroy_on_device(&self.core, "cublasLtDestroy", || {
            // SAFETY: the handle was created by `BlasLt::new` and is destroyed only here.
            unsafe { lt::destroy_handle(handle) }.map_err(|e| e.0)
        });
    }
}

fn lt_error(core: &EngineCore, call: &'static str, e: lt::CublasError) -> Error {
    crate::blas::library_error(core, call, e.0)
}

fn data_type(t: GemmType) -> lsys::cudaDataType {
    match t {
        GemmType::F16 => lsys::cudaDataType::CUDA_R_16F,
        GemmType::Bf16 => lsys::cudaDataType::CUDA_R_16BF,
        GemmType::F32 | GemmType::Tf32 => lsys::cudaDataType::CUDA_R_32F,
    }
}

fn compute_type(t: GemmType) -> lsys::cublasComputeType_t {
    match t {
        GemmType::Tf32 => lsys::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
        _ => lsys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
    }
}

/// The largest power of two up to 16 that divides a device address: the alignment PyTorch
/// states to the heuristic for each operand.
fn alignment(address: u64) -> u32 {
    let mut a = 1u32;
    while a < 16 && address % (2 * u64::from(a)) == 0 {
        a *= 2;
    }
    a
}

/// One call's descriptors, destroyed when it ends (errors recorded in the engine's sink).
struct Descriptors<'a> {
    core: &'a EngineCore,
    matmul: Option<lsys::cublasLtMatmulDesc_t>,
    layouts: Vec<lsys::cublasLtMatrixLayout_t>,
    preference: Option<lsys::cublasLtMatmulPreference_t>,
}

impl Drop for Descriptors<'_> {
    fn drop(&mut self) {
        let mut done = Vec::new();
        if let Some(p) = self.preference {
            // SAFETY: made by cublasLtMatmulPreferenceCreate for this call, destroyed once.
            done.push(("cublasLtMatmulPreferenceDestroy", unsafe {
                lt::destroy_matmul_pref(p)
            }));
        }
        for &l in &self.layouts {
            // SAFETY: made by cublasLtMatrixLayoutCreate for this call, destroyed once.
            done.push(("cublasLtMatrixLayoutDestroy", unsafe {
                lt::destroy_matrix_layout(l)
            }));
        }
        if let Some(d) = self.matmul {
            // SAFETY: made by cublasLtMatmulDescCreate for this call, destroyed once.
            done.push(("cublasLtMatmulDescDestroy", unsafe {
                lt::destroy_matmul_desc(d)
            }));
        }
        for (call, r) in done {
            if let Err(e) = r {
                self.core.sink.record(lt_error(self.core, call, e));
            }
        }
    }
}

/// Sets one attribute of a descriptor from a value's bytes.
macro_rules! set_attr {
    ($f:path, $desc:expr, $attr:expr, $value:expr) => {{
        let v = $value;
        // SAFETY: the descriptor is live (made for this call); the buffer is `v`'s bytes, of
        // the type cuBLASLt documents for the attribute, read during the call only.
        unsafe {
            $f(
                $desc,
                $attr,
                std::ptr::from_ref(&v).cast(),
                std::mem::size_of_val(&v),
            )
        }
    }};
}

impl Engine {
    /// The engine's cuBLASLt handle slot, locked, with a handle in it (made now if none).
    fn blas_lt(&self) -> Result<std::sync::MutexGuard<'_, Option<BlasLt>>> {
        let mut slot = self.inner.blas_lt.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(BlasLt::new(&self.inner.core)?);
        }
        Ok(slot)
    }

    /// Makes the cuBLASLt handle now where the library is present, so that GEMMs with a bias
    /// can be captured ([`Engine::prepare_gemm`] calls it); a missing library is not an error
    /// until [`Engine::gemm_bias`] is called.
    pub(crate) fn prepare_gemm_bias(&self) -> Result<()> {
        match self.blas_lt() {
            Ok(_) | Err(Error::Unsupported { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// C = op(A) · op(B) + bias, the bias (`g.m` elements) added to every column of C in
    /// cuBLASLt's epilogue, by the algorithm cuBLASLt's heuristic picks first, on the engine
    /// stream: a linear layer's `addmm` as PyTorch runs it. `g` must have `bias` set, one
    /// matrix (`batch` 1) and no `accumulate`. Captured, it becomes cuBLASLt's kernel node(s),
    /// and the graph retains the buffers and the workspace.
    pub fn gemm_bias<T: DeviceCopy>(
        &self,
        g: &Gemm,
        a: &DeviceBuffer<T>,
        b: &DeviceBuffer<T>,
        bias: &DeviceBuffer<T>,
        c: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        g.validate()?;
        if !g.bias {
            return Err(Error::InvalidArgument {
                op: "gemm_bias",
                what: "the GEMM has no bias epilogue (`bias` unset): run it by Engine::gemm".into(),
            });
        }
        let core = &self.inner.core;
        let (need_a, need_b, need_c) = g.bytes();
        check_operands(
            core,
            "gemm_bias",
            [
                (a, "a (bytes)", need_a),
                (b, "b (bytes)", need_b),
                (bias, "bias (bytes)", g.bias_bytes()),
                (&*c, "c (bytes)", need_c),
            ],
        )?;
        let slot = self.blas_lt()?;
        let Some(h) = slot.as_ref() else {
            unreachable!("blas_lt() leaves a handle or returns its error");
        };
        let ws = h.workspace.touch(core)?;
        let (pa, pb, pbias, pc) = (
            a.touch(core)?,
            b.touch(core)?,
            bias.touch(core)?,
            c.touch(core)?,
        );
        core.bind()?;
        let (lda, ldb, ldc) = g.leading();
        let ty = data_type(g.dtype);
        let err = |call| move |e| lt_error(core, call, e);
        let mut d = Descriptors {
            core,
            matmul: None,
            layouts: Vec::new(),
            preference: None,
        };
        let desc = lt::create_matmul_desc(compute_type(g.dtype), lsys::cudaDataType::CUDA_R_32F)
            .map_err(err("cublasLtMatmulDescCreate"))?;
        d.matmul = Some(desc);
        let op = |t: bool| {
            if t {
                cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_T
            } else {
                cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N
            }
        };
        type DescAttr = lsys::cublasLtMatmulDescAttributes_t;
        set_attr!(
            lt::set_matmul_desc_attribute,
            desc,
            DescAttr::CUBLASLT_MATMUL_DESC_TRANSA,
            op(g.trans_a)
        )
        .map_err(err("cublasLtMatmulDescSetAttribute"))?;
        set_attr!(
            lt::set_matmul_desc_attribute,
            desc,
            DescAttr::CUBLASLT_MATMUL_DESC_TRANSB,
            op(g.trans_b)
        )
        .map_err(err("cublasLtMatmulDescSetAttribute"))?;
        set_attr!(
            lt::set_matmul_desc_attribute,
            desc,
            DescAttr::CUBLASLT_MATMUL_DESC_EPILOGUE,
            lsys::cublasLtEpilogue_t::CUBLASLT_EPILOGUE_BIAS
        )
        .map_err(err("cublasLtMatmulDescSetAttribute"))?;
        set_attr!(
            lt::set_matmul_desc_attribute,
            desc,
            DescAttr::CUBLASLT_MATMUL_DESC_BIAS_POINTER,
            pbias as *const std::ffi::c_void
        )
        .map_err(err("cublasLtMatmulDescSetAttribute"))?;
        // Stored shapes: a transposed operand is stored with its rows and columns swapped.
        let (m, n, k) = (u64::from(g.m), u64::from(g.n), u64::from(g.k));
        let stored = |t: bool, rows: u64, cols: u64| if t { (cols, rows) } else { (rows, cols) };
        for ((rows, cols), ld) in [
            (stored(g.trans_a, m, k), lda),
            (stored(g.trans_b, k, n), ldb),
            ((m, n), ldc),
        ] {
            let l = lt::create_matrix_layout(ty, rows, cols, i64::from(ld))
                .map_err(err("cublasLtMatrixLayoutCreate"))?;
            d.layouts.push(l);
        }
        let pref = lt::create_matmul_pref().map_err(err("cublasLtMatmulPreferenceCreate"))?;
        d.preference = Some(pref);
        type PrefAttr = lsys::cublasLtMatmulPreferenceAttributes_t;
        set_attr!(
            lt::set_matmul_pref_attribute,
            pref,
            PrefAttr::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
            WORKSPACE_BYTES as u64
        )
        .map_err(err("cublasLtMatmulPreferenceSetAttribute"))?;
        for (attr, ptr) in [
            (PrefAttr::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, pa),
            (PrefAttr::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, pb),
            (PrefAttr::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, pc),
            (PrefAttr::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, pbias),
        ] {
            set_attr!(lt::set_matmul_pref_attribute, pref, attr, alignment(ptr))
                .map_err(err("cublasLtMatmulPreferenceSetAttribute"))?;
        }
        let (la, lb, lc) = (d.layouts[0], d.layouts[1], d.layouts[2]);
        // SAFETY: the handle belongs to this engine's context (made current above); every
        // descriptor is live for this call and describes the buffers checked above.
        let heuristic =
            unsafe { lt::get_matmul_algo_heuristic(h.handle, desc, la, lb, lc, lc, pref) }
                .map_err(err("cublasLtMatmulAlgoGetHeuristic"))?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        // SAFETY: as above; `pa`, `pb`, `pbias` and `pc` are device allocations of this context
        // touched for the engine stream (a free waits for it, a capture retains them), checked
        // to hold the matrices and the m-element bias the descriptors describe; C is read with
        // beta 0 and written in place (D = C); alpha and beta are f32 host values alive across
        // the call, as the descriptor's CUDA_R_32F scale type takes them; the workspace is the
        // engine's, of the size the preference offered, used only on its stream.
        unsafe {
            lt::matmul(
                h.handle,
                desc,
                (&alpha as *const f32).cast(),
                (&beta as *const f32).cast(),
                pa as *const std::ffi::c_void,
                la,
                pb as *const std::ffi::c_void,
                lb,
                pc as *const std::ffi::c_void,
                lc,
                pc as *mut std::ffi::c_void,
                lc,
                &heuristic.algo,
                ws as *mut std::ffi::c_void,
                WORKSPACE_BYTES,
                core.cu_stream() as lsys::cudaStream_t,
            )
        }
        .map_err(err("cublasLtMatmul"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_is_the_largest_power_of_two_up_to_16_dividing_the_address() {
        assert_eq!(alignment(0x7f00_0000_0100), 16);
        assert_eq!(alignment(0x1008), 8);
        assert_eq!(alignment(0x1004), 4);
        assert_eq!(alignment(0x1002), 2);
        assert_eq!(alignment(0x1001), 1);
    }
}
