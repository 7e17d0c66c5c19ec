//! The engine's kernels: `.cu` sources compiled at run time by NVRTC for the device's own
//! compute capability, cached on disk, and loaded once per engine.
//!
//! Compiling at run time keeps the crate buildable on machines with no CUDA toolkit, and
//! compiling for the device at hand (not a fixed architecture) means the driver loads code made
//! for it. The disk cache makes the second start fast: NVRTC takes tens of milliseconds per
//! source, a cache hit a file read.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use cudarc::driver::{sys, CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// One `.cu` file of the engine.
pub(crate) struct KernelSource {
    pub file: &'static str,
    /// The file's text after the shared prelude (`pdl.cuh`).
    pub source: &'static str,
    /// Whether the engine starts without it: its kernels then report
    /// [`Error::Unsupported`] when launched (e.g. an NVRTC too old for conditional graphs).
    pub optional: bool,
}

/// A `.cu` file of `kernels/`, with the shared prelude every kernel uses in front of it.
macro_rules! kernel_source {
    ($file:literal, optional: $optional:expr) => {
        KernelSource {
            file: $file,
            source: concat!(
                include_str!("../kernels/pdl.cuh"),
                include_str!(concat!("../kernels/", $file))
            ),
            optional: $optional,
        }
    };
}

const ADD: KernelSource = kernel_source!("add.cu", optional: false);
const NOOP: KernelSource = kernel_source!("noop.cu", optional: false);
const SPIN: KernelSource = kernel_source!("spin.cu", optional: false);
const LOOP: KernelSource = kernel_source!("loop.cu", optional: true);
const HOLD: KernelSource = kernel_source!("hold.cu", optional: false);

/// Every source the engine compiles, in load order.
pub(crate) const SOURCES: &[&KernelSource] = &[&ADD, &NOOP, &SPIN, &LOOP, &HOLD];

/// The kind of one kernel parameter, as the launch builder checks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param {
    /// A device pointer (`T*`), 64 bits.
    Ptr,
    /// `unsigned int`.
    U32,
    /// `unsigned long long`.
    U64,
}

/// The engine's kernels, by id. Adding one means a `.cu` file (or a function in one), a variant
/// here with its source, name and parameters, and one op method that launches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// `add_f32(const float*, const float*, float*, unsigned)`: element-wise add.
    AddF32,
    /// `noop()`: the empty kernel.
    Noop,
    /// `spin_ns(unsigned long long, unsigned*)`: every thread busy for a span of GPU time.
    SpinNs,
    /// `spin_grid_ns(unsigned long long, unsigned long long*)`: one span for a whole grid.
    SpinGridNs,
    /// `loop_next(handle, unsigned*, unsigned*, unsigned)`: ends each body of a WHILE graph.
    LoopNext,
    /// `add_f32_window(const float*, unsigned, const float*, float*, unsigned, const unsigned*)`:
    /// an add whose input window is read from device memory at run time.
    AddF32Window,
    /// `count_step(unsigned*, unsigned*, unsigned)`: a step that counts itself and may stop a
    /// loop from the device.
    CountStep,
    /// `spin_grid_window(unsigned long long, unsigned long long*, unsigned, const unsigned*)`:
    /// `spin_grid_ns` on a slot named in device memory at run time.
    SpinGridWindow,
    /// `hold_until_released(const unsigned*, unsigned*, unsigned long long)`: holds the stream
    /// until the host writes a release word (or a timeout passes).
    HoldUntilReleased,
    /// `stream_grid(const float4*, unsigned long long, unsigned long long, unsigned long long*,
    /// unsigned long long*)`: a grid that reads a span of memory (from a fixed place, or where a
    /// device-side cursor says) and records its own span like `spin_grid_ns`.
    StreamGrid,
    /// `stream_paced(const float4*, unsigned long long, unsigned long long, unsigned long long*,
    /// unsigned long long, unsigned long long*)`: `stream_grid` reading evenly over a span of
    /// GPU time and lasting at least that long.
    StreamPaced,
    /// `chase_grid(unsigned long long, const unsigned*, unsigned, unsigned, unsigned*,
    /// unsigned, unsigned long long*)`: dependent coalesced reads through a ring, then a spin;
    /// records its span like `spin_grid_ns`.
    ChaseGrid,
    /// `spin_blocks_ns(unsigned long long, unsigned long long*)`: every block busy for a span
    /// of GPU time from its own start; records the grid's span like `spin_grid_ns`.
    SpinBlocksNs,
    /// `stream_paced_deep(...)`, the parameters of `stream_paced`: sixteen loads in flight a
    /// thread instead of four, in at most 96 registers.
    StreamPacedDeep,
    /// `barrier_chase_grid(...)`, the parameters of `chase_grid`: every dependent read ends
    /// in a block-wide reduction (shuffles, shared memory, two barriers).
    BarrierChaseGrid,
    /// `add_f32x4(const float*, const float*, float*, unsigned)`: the element-wise add four
    /// elements a thread, through 16-byte loads and stores.
    AddF32x4,
    /// `elementwise_l2(const float4*, float4*, unsigned long long, unsigned, unsigned long long,
    /// unsigned long long*)`: an element-wise sum of packed inputs into a result, then a wait
    /// until a span of GPU time has passed; records its span like `spin_grid_ns`.
    ElementWiseL2,
}

impl Kernel {
    /// Every kernel, in the order of the enum's discriminants.
    pub const ALL: [Kernel; 17] = [
        Kernel::AddF32,
        Kernel::Noop,
        Kernel::SpinNs,
        Kernel::SpinGridNs,
        Kernel::LoopNext,
        Kernel::AddF32Window,
        Kernel::CountStep,
        Kernel::SpinGridWindow,
        Kernel::HoldUntilReleased,
        Kernel::StreamGrid,
        Kernel::StreamPaced,
        Kernel::ChaseGrid,
        Kernel::SpinBlocksNs,
        Kernel::StreamPacedDeep,
        Kernel::BarrierChaseGrid,
        Kernel::AddF32x4,
        Kernel::ElementWiseL2,
    ];

    /// The `extern "C"` function name in its source.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::AddF32 => "add_f32",
            Kernel::Noop => "noop",
            Kernel::SpinNs => "spin_ns",
            Kernel::SpinGridNs => "spin_grid_ns",
            Kernel::LoopNext => "loop_next",
            Kernel::AddF32Window => "add_f32_window",
            Kernel::CountStep => "count_step",
            Kernel::SpinGridWindow => "spin_grid_window",
            Kernel::HoldUntilReleased => "hold_until_released",
            Kernel::StreamGrid => "stream_grid",
            Kernel::StreamPaced => "stream_paced",
            Kernel::ChaseGrid => "chase_grid",
            Kernel::SpinBlocksNs => "spin_blocks_ns",
            Kernel::StreamPacedDeep => "stream_paced_deep",
            Kernel::BarrierChaseGrid => "barrier_chase_grid",
            Kernel::AddF32x4 => "add_f32x4",
            Kernel::ElementWiseL2 => "elementwise_l2",
        }
    }

    pub(crate) fn source(self) -> &'static KernelSource {
        match self {
            Kernel::AddF32 | Kernel::AddF32Window | Kernel::AddF32x4 => &ADD,
            Kernel::Noop => &NOOP,
            Kernel::SpinNs
            | Kernel::SpinGridNs
            | Kernel::SpinGridWindow
            | Kernel::StreamGrid
            | Kernel::StreamPaced
            | Kernel::StreamPacedDeep
            | Kernel::ChaseGrid
            | Kernel::BarrierChaseGrid
            | Kernel::ElementWiseL2
            | Kernel::SpinBlocksNs => &SPIN,
            Kernel::LoopNext | Kernel::CountStep => &LOOP,
            Kernel::HoldUntilReleased => &HOLD,
        }
    }

    /// The parameters, in order, as the launch builder must supply them.
    pub(crate) fn params(self) -> &'static [Param] {
        match self {
            Kernel::AddF32 | Kernel::AddF32x4 => &[Param::Ptr, Param::Ptr, Param::Ptr, Param::U32],
            Kernel::Noop => &[],
            Kernel::SpinNs => &[Param::U64, Param::Ptr],
            Kernel::SpinGridNs | Kernel::SpinBlocksNs => &[Param::U64, Param::Ptr],
            Kernel::LoopNext => &[Param::U64, Param::Ptr, Param::Ptr, Param::U32],
            Kernel::AddF32Window => &[
                Param::Ptr,
                Param::U32,
                Param::Ptr,
                Param::Ptr,
                Param::U32,
                Param::Ptr,
            ],
            Kernel::CountStep => &[Param::Ptr, Param::Ptr, Param::U32],
            Kernel::SpinGridWindow => &[Param::U64, Param::Ptr, Param::U32, Param::Ptr],
            Kernel::HoldUntilReleased => &[Param::Ptr, Param::Ptr, Param::U64],
            Kernel::StreamGrid => &[Param::Ptr, Param::U64, Param::U64, Param::Ptr, Param::Ptr],
            Kernel::StreamPaced | Kernel::StreamPacedDeep => &[
                Param::Ptr,
                Param::U64,
                Param::U64,
                Param::Ptr,
                Param::U64,
                Param::Ptr,
            ],
            Kernel::ElementWiseL2 => &[
                Param::Ptr,
                Param::Ptr,
                Param::U64,
                Param::U32,
                Param::U64,
                Param::Ptr,
            ],
            Kernel::ChaseGrid | Kernel::BarrierChaseGrid => &[
                Param::U64,
                Param::Ptr,
                Param::U32,
                Param::U32,
                Param::Ptr,
                Param::U32,
                Param::Ptr,
            ],
        }
    }
}

/// One loaded function per [`Kernel`], in discriminant order. A kernel of an optional source
/// that did not compile holds the reason instead.
type FunctionSet = Vec<std::result::Result<CudaFunction, String>>;

/// Loaded kernel functions, indexed by [`Kernel`], in two builds: plain, and with programmatic
/// dependent launch (PDL). They differ only in `pdl_enter`: its `griddepcontrol.wait` is not
/// free for a kernel launched without PDL (on an H200 it made an empty 2048-block kernel's
/// graph node 1.7x longer), so kernels launched without PDL use the build without it. A
/// `CudaFunction` keeps its module alive.
pub(crate) struct Kernels {
    plain: FunctionSet,
    pdl: OnceLock<FunctionSet>,
    loader: Loader,
    /// The dynamic shared memory each function (plain builds, then PDL builds, by
    /// discriminant) was allowed beyond the default, bytes.
    shared_allowed: [AtomicU32; 2 * Kernel::ALL.len()],
}

/// Dynamic shared memory a block may ask for without opting in, bytes.
const DEFAULT_SHARED_BYTES: u32 = 48 * 1024;

impl Kernels {
    /// The function of `k` in the build for launches with (`pdl`) or without PDL; the PDL
    /// build must have been loaded ([`Kernels::load_pdl`]).
    pub(crate) fn get(&self, k: Kernel, pdl: bool) -> Result<&CudaFunction> {
        let set = if pdl {
            self.pdl.get().ok_or_else(|| Error::InvalidArgument {
                op: k.name(),
                what: "the PDL build of the kernels is not loaded".into(),
            })?
        } else {
            &self.plain
        };
        // `load_set` fills one entry per entry of Kernel::ALL, in discriminant order.
        set[k as usize].as_ref().map_err(|why| Error::Unsupported {
            feature: k.name(),
            why: why.clone(),
        })
    }

    /// [`Kernels::get`], with the function allowed `shared_bytes` of dynamic shared memory a
    /// block (above 48 KiB a launch must opt in; the attribute is raised once per size, never
    /// lowered). Errors from the driver (more than the device gives a block) come back raw.
    pub(crate) fn get_shared(
        &self,
        k: Kernel,
        pdl: bool,
        shared_bytes: u32,
    ) -> Result<std::result::Result<&CudaFunction, cudarc::driver::DriverError>> {
        let f = self.get(k, pdl)?;
        let allowed = &self.shared_allowed[k as usize + if pdl { Kernel::ALL.len() } else { 0 }];
        if shared_bytes > DEFAULT_SHARED_BYTES && shared_bytes > allowed.load(Ordering::Relaxed) {
            if let Err(e) = f.set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                i32::try_from(shared_bytes).unwrap_or(i32::MAX),
            ) {
                return Ok(Err(e));
            }
            allowed.fetch_max(shared_bytes, Ordering::Relaxed);
        }
        Ok(Ok(f))
    }
}

/// Where compiled kernels are cached on disk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum KernelCache {
    /// `MEMRA_KERNEL_CACHE` (empty or `off` disables the cache), else
    /// `$XDG_CACHE_HOME/memra-engine/kernels`, else `$HOME/.cache/memra-engine/kernels`.
    #[default]
    FromEnvironment,
    /// This directory.
    Dir(PathBuf),
    /// No disk cache: compile every time.
    Off,
}

impl KernelCache {
    /// The directory this setting names, if any.
    pub fn dir(&self) -> Option<PathBuf> {
        match self {
            KernelCache::FromEnvironment => cache_dir(),
            KernelCache::Dir(d) => Some(d.clone()),
            KernelCache::Off => None,
        }
    }
}

/// What starting the engine's kernels cost, so tools can report a cold versus warm start.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelInitReport {
    /// Wall time to obtain PTX (compile or cache read) and load every module.
    pub total: Duration,
    /// Sources that were compiled by NVRTC this time.
    pub compiled: usize,
    /// Sources whose PTX came from the disk cache.
    pub cache_hits: usize,
    /// Where the cache lives; `None` when no cache directory could be found or it is disabled.
    pub cache_dir: Option<PathBuf>,
    /// A cache read or write that failed (the engine then compiles; it never fails for this).
    pub cache_warning: Option<String>,
    /// The NVRTC target, e.g. `compute_90`.
    pub arch: String,
    /// Optional sources that did not compile or load, with the reason; their kernels are
    /// unavailable and the rest of the engine works.
    pub unavailable: Vec<(&'static str, String)>,
}

/// The cache directory: `MEMRA_KERNEL_CACHE` (empty or `off` disables it), else
/// `$XDG_CACHE_HOME/memra-engine/kernels`, else `$HOME/.cache/memra-engine/kernels`.
pub fn cache_dir() -> Option<PathBuf> {
    cache_dir_from(|k| std::env::var_os(k))
}

fn cache_dir_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    if let Some(v) = var("MEMRA_KERNEL_CACHE") {
        if v.is_empty() || v == "off" {
            return None;
        }
        return Some(PathBuf::from(v));
    }
    if let Some(x) = var("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return Some(Path::new(&x).join("memra-engine").join("kernels"));
    }
    var("HOME").filter(|v| !v.is_empty()).map(|h| {
        Path::new(&h)
            .join(".cache")
            .join("memra-engine")
            .join("kernels")
    })
}

/// The cache key: everything that changes the PTX — source, options, target and NVRTC version.
pub(crate) fn cache_key(source: &str, options: &[String], nvrtc_version: (i32, i32)) -> String {
    let mut h = Sha256::new();
    h.update(source.as_bytes());
    for o in options {
        h.update([0u8]);
        h.update(o.as_bytes());
    }
    h.update(format!("\0nvrtc {}.{}", nvrtc_version.0, nvrtc_version.1).as_bytes());
    h.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The NVRTC options for a device of compute capability `major.minor`.
pub(crate) fn nvrtc_options(major: i32, minor: i32) -> Vec<String> {
    vec![
        format!("--gpu-architecture=compute_{major}{minor}"),
        "--std=c++17".to_string(),
    ]
}

/// NVRTC's version, `(major, minor)`.
pub(crate) fn nvrtc_version() -> (i32, i32) {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: both pointers are valid for writes; the library was checked to load before.
    unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (major, minor)
}

/// How to compile and load a set of kernels for one engine's device.
struct Loader {
    ctx: Arc<CudaContext>,
    ordinal: usize,
    cc: (i32, i32),
    cache: KernelCache,
}

impl Kernels {
    /// Compiles (or reads from cache) and loads every source for `ctx`'s device, without PDL;
    /// the PDL set is compiled the first time it is asked for ([`Kernels::load_pdl`]).
    pub(crate) fn load(
        ctx: &Arc<CudaContext>,
        ordinal: usize,
        cc: (i32, i32),
        cache: &KernelCache,
    ) -> Result<(Self, KernelInitReport)> {
        let loader = Loader {
            ctx: ctx.clone(),
            ordinal,
            cc,
            cache: cache.clone(),
        };
        let (functions, report) = loader.load_set(false)?;
        let kernels = Kernels {
            plain: functions,
            pdl: OnceLock::new(),
            loader,
            shared_allowed: std::array::from_fn(|_| AtomicU32::new(0)),
        };
        Ok((kernels, report))
    }

    /// Loads the PDL build of every kernel unless it is loaded already.
    pub(crate) fn load_pdl(&self) -> Result<()> {
        if self.pdl.get().is_none() {
            let (set, _) = self.loader.load_set(true)?;
            // Another thread may have won the race; both sets are equivalent.
            let _ = self.pdl.set(set);
        }
        Ok(())
    }
}

impl Loader {
    /// One set of functions, one per [`Kernel`] in discriminant order. `pdl` compiles with
    /// `MEMRA_PDL` defined, which turns on the `griddepcontrol` instructions of `pdl_enter`.
    fn load_set(&self, pdl: bool) -> Result<(FunctionSet, KernelInitReport)> {
        let start = Instant::now();
        let (ctx, ordinal) = (&self.ctx, self.ordinal);
        let mut options = nvrtc_options(self.cc.0, self.cc.1);
        if pdl {
            options.push("-DMEMRA_PDL".to_string());
        }
        let arch = format!("compute_{}{}", self.cc.0, self.cc.1);
        let version = nvrtc_version();
        let dir = self.cache.dir();
        let mut report = KernelInitReport {
            total: Duration::ZERO,
            compiled: 0,
            cache_hits: 0,
            cache_dir: dir.clone(),
            cache_warning: None,
            arch: arch.clone(),
            unavailable: Vec::new(),
        };
        let mut modules = Vec::with_capacity(SOURCES.len());
        for src in SOURCES {
            match load_source(
                ctx,
                ordinal,
                src,
                &options,
                &arch,
                version,
                dir.as_deref(),
                &mut report,
            ) {
                Ok(module) => modules.push((src.file, Ok(module))),
                Err(e) if src.optional => {
                    report.unavailable.push((src.file, e.to_string()));
                    modules.push((src.file, Err(e.to_string())));
                }
                Err(e) => return Err(e),
            }
        }
        let functions = Kernel::ALL
            .iter()
            .map(|k| {
                let file = k.source().file;
                let module = modules
                    .iter()
                    .find(|(f, _)| *f == file)
                    .map(|(_, m)| m)
                    .ok_or_else(|| Error::InvalidArgument {
                        op: "load kernels",
                        what: format!("{} is not among the compiled sources", file),
                    })?;
                let module = match module {
                    Ok(m) => m,
                    Err(why) => return Ok(Err(format!("{file} is unavailable: {why}"))),
                };
                module
                    .load_function(k.name())
                    .map(Ok)
                    .map_err(|source| Error::Driver {
                        call: "cuModuleGetFunction",
                        device: ordinal,
                        source,
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        report.total = start.elapsed();
        Ok((functions, report))
    }
}

/// PTX for one source from the disk cache, or compiled (and cached), then loaded as a module.
#[allow(clippy::too_many_arguments)]
fn load_source(
    ctx: &Arc<CudaContext>,
    ordinal: usize,
    src: &KernelSource,
    options: &[String],
    arch: &str,
    version: (i32, i32),
    dir: Option<&Path>,
    report: &mut KernelInitReport,
) -> Result<Arc<CudaModule>> {
    let key = cache_key(src.source, options, version);
    let path = dir.map(|d| d.join(format!("{}-{key}.ptx", src.file.trim_end_matches(".cu"))));
    let cached = path.as_ref().and_then(|p| std::fs::read_to_string(p).ok());
    let ptx = match cached {
        Some(text) => {
            report.cache_hits += 1;
            text
        }
        None => {
            let text = compile(src, options, arch)?;
            report.compiled += 1;
            if let Some(p) = &path {
                if let Err(e) = write_atomically(p, &text) {
                    report.cache_warning = Some(format!("could not write {}: {e}", p.display()));
                }
            }
            text
        }
    };
    ctx.load_module(Ptx::from_src(ptx))
        .map_err(|source| Error::Driver {
            call: "cuModuleLoadData",
            device: ordinal,
            source,
        })
}

fn compile(src: &KernelSource, options: &[String], arch: &str) -> Result<String> {
    let opts = CompileOptions {
        options: options.to_vec(),
        name: Some(src.file.to_string()),
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(src.source, opts).map_err(|e| {
        let (reason, log) = match e {
            CompileError::CompileError { nvrtc, log, .. } => {
                (format!("{nvrtc:?}"), log.to_string_lossy().into_owned())
            }
            other => (format!("{other:?}"), String::new()),
        };
        Error::Compile {
            file: src.file,
            arch: arch.to_string(),
            reason,
            log,
        }
    })?;
    Ok(ptx.to_src())
}

/// Writes `text` to `path` through a temporary file and a rename, so a reader never sees half
/// a file, even when two processes fill the cache at once.
pub(crate) fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests;
