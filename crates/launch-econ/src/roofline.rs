//! Whether a recorded GEMM is held by its arithmetic or by device memory, from peaks measured
//! on the device at hand.
//!
//! `replay` stands kernels of 2 µs or more in by streaming memory, because a decode step's
//! long kernels are weight reads, and those run longer in a graph than the eager recording
//! shows, which a spin of the recorded duration would not. A GEMM over many tokens is not a
//! weight read: its time is its tensor-core math, which the graph does not stretch (the
//! 512-token prefill's kernels ran 1.5% *shorter* in the real graph than recorded), so a
//! streaming stand-in prices it high. Where the trace recorded the GEMM's shapes, its floor
//! on each resource is known: flops over the device's GEMM peak for its element type, bytes
//! over the device's copy bandwidth; a GEMM whose math floor is the longer is held by its
//! math and stands in by a spin. Both peaks are measured here (a large cuBLAS GEMM of each
//! element type the walk's GEMMs use; a device-to-device copy), nothing is taken from a
//! data sheet.
//!
//! The `f32` peak also says how a recorded `f32` GEMM ran: one that took less time than IEEE
//! single precision needs for its flops ran on TF32 tensor cores (PyTorch's `allow_tf32`,
//! `set_float32_matmul_precision("high")`), several times faster; the engine runs it so too
//! ([`GemmType::Tf32`], whose peak is measured beside the `f32` one).

use std::collections::HashMap;

use memra_engine::{Engine, Gemm, GemmType};
use serde::{Deserialize, Serialize};

use crate::trace::matmul::{operand_bytes, MatmulRole};
use crate::trace::Op;

/// Square size of the GEMM that measures a type's peak: large enough to fill an H200's SMs
/// many times over.
const PEAK_GEMM_SIZE: u32 = 4096;
/// Bytes copied to measure the bandwidth: far beyond any L2.
const COPY_BYTES: usize = 512 << 20;
/// Timed runs of each; the fastest is the peak.
const RUNS: usize = 5;

/// The device's measured peaks.
#[derive(Debug, Clone, PartialEq)]
pub struct Roofline {
    /// Device-memory bandwidth, bytes per ns (a copy reads and writes each byte).
    pub bytes_per_ns: f64,
    /// GEMM throughput by element type, flops per ns.
    pub flops_per_ns: HashMap<GemmType, f64>,
}

/// Arithmetic of a GEMM: two flops per multiply-add.
pub fn flops(g: &Gemm) -> f64 {
    2.0 * f64::from(g.m) * f64::from(g.n) * f64::from(g.k) * f64::from(g.batch)
}

impl Roofline {
    /// Whether `op` is the first kernel of a recorded GEMM whose math floor, at the peak of
    /// the type it runs with ([`Roofline::as_run`]), is longer than its memory floor; `false`
    /// for every other kernel and for element types not measured.
    pub fn math_bound(&self, op: &Op) -> bool {
        self.floors_ns(op)
            .is_some_and(|(math_ns, memory_ns)| math_ns > memory_ns)
    }

    /// Whether `op` is the first kernel of a recorded GEMM far from being held by its math:
    /// its math floor under half its memory floor (a decode GEMM's few tokens). A GEMM near
    /// the ridge (a prefill GEMM of a few hundred tokens, both floors alike) keeps its
    /// tensor cores busy for all of its blocks' time as one above it does. `false` for
    /// every other kernel and for element types not measured.
    pub fn far_below_ridge(&self, op: &Op) -> bool {
        self.floors_ns(op)
            .is_some_and(|(math_ns, memory_ns)| 2.0 * math_ns < memory_ns)
    }

    /// The share of the device's arithmetic `op`'s recorded GEMM kept busy: its math floor
    /// at its type's peak ([`Roofline::as_run`]) over its recorded time, at most 1. 0 for
    /// every other kernel and for element types not measured.
    pub fn math_share(&self, op: &Op) -> f64 {
        match self.floors_ns(op) {
            Some((math_ns, _)) if op.duration_ns > 0.0 => (math_ns / op.duration_ns).min(1.0),
            _ => 0.0,
        }
    }

    /// The (math, memory) floors of `op`'s recorded GEMM as the engine runs it, ns: its flops
    /// at its type's peak, its operand bytes at the bandwidth. `None` for every other kernel,
    /// for element types not measured and without a positive peak and bandwidth.
    fn floors_ns(&self, op: &Op) -> Option<(f64, f64)> {
        let g = self.as_run(op)?;
        let peak = *self.flops_per_ns.get(&g.dtype)?;
        (peak > 0.0 && self.bytes_per_ns > 0.0).then(|| {
            (
                flops(&g) / peak,
                operand_bytes(&g) as f64 / self.bytes_per_ns,
            )
        })
    }

    /// The recorded GEMM of `op` (its first kernel) as the engine runs it: as recorded, but
    /// an `f32` GEMM on TF32 tensor cores ([`GemmType::Tf32`], where its peak was measured)
    /// where it ran on them. A kernel whose name says its math decides
    /// ([`named_math_is_tf32`]: cuBLAS's and CUTLASS's say it, `…_f32f32_tf32f32_…` against
    /// `…_ffma_…` or `…sgemm…`); the name catches TF32 GEMMs too small to beat the `f32` peak,
    /// and f32 FMA kernels that beat it (the peak is one 4096-cubed GEMM's, and an H200 ran a
    /// batched attention GEMM in IEEE f32 3% faster than that). A name that does not say
    /// (`nvjet…`, a CUTLASS kernel of a framework's own) is judged by time: recorded in less
    /// time than its flops take at the measured `f32` peak. `None` for every other kernel.
    pub fn as_run(&self, op: &Op) -> Option<Gemm> {
        let Some(MatmulRole::Call(g)) = op.matmul else {
            return None;
        };
        let f32_peak = self.flops_per_ns.get(&GemmType::F32).copied();
        let faster_than_f32 = f32_peak.is_some_and(|p| p > 0.0 && op.duration_ns < flops(&g) / p);
        let on_tf32 = g.dtype == GemmType::F32
            && self.flops_per_ns.contains_key(&GemmType::Tf32)
            && named_math_is_tf32(&op.name).unwrap_or(faster_than_f32);
        Some(if on_tf32 {
            Gemm {
                dtype: GemmType::Tf32,
                ..g
            }
        } else {
            g
        })
    }
}

/// What an `f32` GEMM kernel's name says of its math: `Some(true)` for TF32 tensor cores
/// (`tf32` in it), `Some(false)` for IEEE f32 on the FMA units (cuBLAS's `…_ffma_…` and
/// `…sgemm…` kernels, CUTLASS's `…simt…`), `None` where it says neither.
pub fn named_math_is_tf32(name: &str) -> Option<bool> {
    let n = name.to_ascii_lowercase();
    if n.contains("tf32") {
        Some(true)
    } else if ["ffma", "sgemm", "simt"].iter().any(|k| n.contains(k)) {
        Some(false)
    } else {
        None
    }
}

/// Device-memory bandwidth, bytes per ns (= GB/s): the fastest of five device-to-device
/// copies of 512 MiB, each byte read and written.
pub fn copy_bandwidth(e: &Engine) -> anyhow::Result<f64> {
    let src = e.zeros::<u8>(COPY_BYTES)?;
    let mut dst = e.zeros::<u8>(COPY_BYTES)?;
    let ms = fastest_ms(|| Ok(e.gpu_time_ms(|| e.copy(&src, &mut dst, COPY_BYTES))?))?;
    Ok(2.0 * COPY_BYTES as f64 / (ms * 1e6))
}

/// The fastest of [`RUNS`] timings by `time` (ms), after one left out as a warm-up.
fn fastest_ms(mut time: impl FnMut() -> anyhow::Result<f64>) -> anyhow::Result<f64> {
    time()?;
    (0..RUNS).try_fold(f64::INFINITY, |best, _| Ok(best.min(time()?)))
}

/// The element types of the recorded GEMMs among `ops`, each once, in the order first seen;
/// TF32 after `f32` (which of the `f32` GEMMs ran on TF32 only the `f32` peak tells).
fn gemm_types<'a>(ops: impl Iterator<Item = &'a Op>) -> Vec<GemmType> {
    let mut types = Vec::new();
    for o in ops {
        if let Some(MatmulRole::Call(g)) = o.matmul {
            if !types.contains(&g.dtype) {
                types.push(g.dtype);
                if g.dtype == GemmType::F32 {
                    types.push(GemmType::Tf32);
                }
            }
        }
    }
    types
}

/// A device's GEMM peaks, TFLOP/s by element type, as a profile keeps them: `replay
/// --summary` tells with them, and the profile's bandwidth, which recorded GEMMs are held by
/// their math ([`Roofline::math_bound`]) without a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GemmPeaks {
    pub f16_tflop_s: f64,
    pub bf16_tflop_s: f64,
    pub tf32_tflop_s: f64,
    pub f32_tflop_s: f64,
}

impl GemmPeaks {
    /// Measures every element type's peak as [`measure`] does for a walk's.
    pub fn measure(e: &Engine) -> anyhow::Result<GemmPeaks> {
        e.prepare_gemm()?;
        let tflop_s = |t| peak_flops_per_ns(e, t).map(|f| f / 1e3);
        Ok(GemmPeaks {
            f16_tflop_s: tflop_s(GemmType::F16)?,
            bf16_tflop_s: tflop_s(GemmType::Bf16)?,
            tf32_tflop_s: tflop_s(GemmType::Tf32)?,
            f32_tflop_s: tflop_s(GemmType::F32)?,
        })
    }

    /// These peaks with device memory giving `bytes_per_ns` (GB/s).
    pub fn roofline(&self, bytes_per_ns: f64) -> Roofline {
        let flops_per_ns = [
            (GemmType::F16, self.f16_tflop_s),
            (GemmType::Bf16, self.bf16_tflop_s),
            (GemmType::Tf32, self.tf32_tflop_s),
            (GemmType::F32, self.f32_tflop_s),
        ]
        .into_iter()
        .filter(|&(_, t)| t > 0.0)
        .map(|(g, t)| (g, t * 1e3))
        .collect();
        Roofline {
            bytes_per_ns,
            flops_per_ns,
        }
    }
}

/// A square GEMM of [`PEAK_GEMM_SIZE`] in `dtype`: its flops over the fastest of [`RUNS`]
/// timings, flops per ns (`prepare_gemm` called).
fn peak_flops_per_ns(e: &Engine, dtype: GemmType) -> anyhow::Result<f64> {
    let g = Gemm::plain(dtype, PEAK_GEMM_SIZE, PEAK_GEMM_SIZE, PEAK_GEMM_SIZE);
    let (a, b, c) = g.bytes();
    let (a, b) = (e.zeros::<u8>(a)?, e.zeros::<u8>(b)?);
    let mut c = e.zeros::<u8>(c)?;
    let ms = fastest_ms(|| Ok(e.gpu_time_ms(|| e.gemm(&g, &a, &b, &mut c))?))?;
    Ok(flops(&g) / (ms * 1e6))
}

/// Measures the peaks for the element types of `walk_ops`' recorded GEMMs; `None` when they
/// have none (nothing to decide).
pub fn measure<'a>(
    e: &Engine,
    walk_ops: impl Iterator<Item = &'a Op>,
) -> anyhow::Result<Option<Roofline>> {
    let types = gemm_types(walk_ops);
    if types.is_empty() {
        return Ok(None);
    }
    let bytes_per_ns = copy_bandwidth(e)?;
    e.prepare_gemm()?;
    let mut flops_per_ns = HashMap::new();
    for dtype in types {
        flops_per_ns.insert(dtype, peak_flops_per_ns(e, dtype)?);
    }
    Ok(Some(Roofline {
        bytes_per_ns,
        flops_per_ns,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gemm_op(m: u32, n: u32, k: u32) -> Op {
        Op {
            matmul: Some(MatmulRole::Call(Gemm::plain(GemmType::Bf16, m, n, k))),
            ..Op::kernel("nvjet", 0.0, 10_000.0)
        }
    }

    /// An H200-like device: 4 TB/s, 700 TFLOP/s in bf16 (a ridge at 175 flops a byte).
    fn device() -> Roofline {
        Roofline {
            bytes_per_ns: 4000.0,
            flops_per_ns: HashMap::from([(GemmType::Bf16, 700_000.0)]),
        }
    }

    #[test]
    fn many_tokens_are_math_bound_and_few_are_memory_bound() {
        let r = device();
        // 512 tokens through a 2048 x 5632 weight: ~380 flops a byte.
        assert!(r.math_bound(&gemm_op(5632, 512, 2048)));
        // 16 tokens: ~16 flops a byte.
        assert!(!r.math_bound(&gemm_op(5632, 16, 2048)));
    }

    #[test]
    fn an_f32_gemm_recorded_faster_than_f32_math_runs_on_tf32() {
        // 2 x 512 x 2048 x 2048 = 4.3 Gflop: 86 us at 50 Tflop/s (f32), 17 us at 250 (TF32).
        let at = |ns: f64, dtype| {
            let mut op = Op {
                duration_ns: ns,
                ..gemm_op(2048, 512, 2048)
            };
            if let Some(MatmulRole::Call(g)) = &mut op.matmul {
                g.dtype = dtype;
            }
            op
        };
        let run_type = |r: &Roofline, op: &Op| r.as_run(op).map(|g| g.dtype);
        let mut r = device();
        let tf32_fast = at(20_000.0, GemmType::F32);
        assert_eq!(
            run_type(&r, &tf32_fast),
            Some(GemmType::F32),
            "f32 not measured"
        );
        r.flops_per_ns.insert(GemmType::F32, 50_000.0);
        assert_eq!(
            run_type(&r, &tf32_fast),
            Some(GemmType::F32),
            "TF32 not measured"
        );
        r.flops_per_ns.insert(GemmType::Tf32, 250_000.0);
        assert_eq!(run_type(&r, &tf32_fast), Some(GemmType::Tf32));
        assert_eq!(
            run_type(&r, &at(90_000.0, GemmType::F32)),
            Some(GemmType::F32)
        );
        assert_eq!(
            run_type(&r, &at(5_000.0, GemmType::Bf16)),
            Some(GemmType::Bf16)
        );
        assert_eq!(run_type(&r, &Op::kernel("relu", 0.0, 1.0)), None);
        // Slower than the f32 peak, but its kernel's name says TF32.
        let named = Op {
            name: "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32".into(),
            ..at(90_000.0, GemmType::F32)
        };
        assert_eq!(run_type(&r, &named), Some(GemmType::Tf32));
        // Faster than the f32 peak, but its kernel's name says f32 FMA: it ran in IEEE f32.
        let simt = Op {
            name:
                "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma"
                    .into(),
            ..at(20_000.0, GemmType::F32)
        };
        assert_eq!(run_type(&r, &simt), Some(GemmType::F32));
        // Held by its math at the TF32 peak, which decides: 17 us against 6.3 us of memory.
        assert!(r.math_bound(&tf32_fast));
    }

    #[test]
    fn a_kernel_name_says_its_math_where_it_can() {
        let says = named_math_is_tf32;
        assert_eq!(
            says("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32"),
            Some(true)
        );
        assert_eq!(
            says("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_ffma"),
            Some(false)
        );
        assert_eq!(says("ampere_sgemm_128x64_tn"), Some(false));
        assert_eq!(
            says("cutlass_80_simt_sgemm_256x128_8x4_nn_align1"),
            Some(false)
        );
        assert_eq!(says("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"), None);
        assert_eq!(
            says("void gemmSN_TN_kernel<float, 128, 16, 2, 4, 4, 4, true>"),
            None
        );
    }

    #[test]
    fn kernels_without_a_recorded_gemm_or_a_measured_type_are_not_math_bound() {
        let r = device();
        assert!(!r.math_bound(&Op::kernel("relu", 0.0, 10_000.0)));
        let mut f32_op = gemm_op(5632, 512, 2048);
        if let Some(MatmulRole::Call(g)) = &mut f32_op.matmul {
            g.dtype = GemmType::F32;
        }
        assert!(!r.math_bound(&f32_op));
        let part = Op {
            matmul: Some(MatmulRole::Part),
            ..Op::kernel("splitKreduce", 0.0, 10_000.0)
        };
        assert!(!r.math_bound(&part));
    }

    #[test]
    fn a_gemms_math_share_is_its_math_floor_over_its_time() {
        let r = device();
        // 2 x 512 x 5632 x 2048 = 11.8 Gflop: 16.9 us at the peak, recorded in 10 us: held
        // at the peak (at most 1).
        assert_eq!(r.math_share(&gemm_op(5632, 512, 2048)), 1.0);
        // 16 tokens: 0.53 us of math in 10 us.
        let few = r.math_share(&gemm_op(5632, 16, 2048));
        assert!((few - 2.0 * 16.0 * 5632.0 * 2048.0 / 700_000.0 / 10_000.0).abs() < 1e-12);
        // No recorded GEMM, or a type not measured: none.
        assert_eq!(r.math_share(&Op::kernel("relu", 0.0, 10_000.0)), 0.0);
        let mut f32_op = gemm_op(5632, 16, 2048);
        if let Some(MatmulRole::Call(g)) = &mut f32_op.matmul {
            g.dtype = GemmType::F32;
        }
        assert_eq!(r.math_share(&f32_op), 0.0);
    }

    #[test]
    fn each_gemm_type_is_measured_once() {
        let set = |op: Op, dtype| Op {
            matmul: op.matmul.map(|m| match m {
                MatmulRole::Call(g) => MatmulRole::Call(Gemm { dtype, ..g }),
                part => part,
            }),
            ..op
        };
        let ops = [
            set(gemm_op(8, 8, 8), GemmType::F16),
            set(gemm_op(8, 8, 8), GemmType::Bf16),
            set(gemm_op(8, 8, 8), GemmType::F16),
            Op::kernel("relu", 0.0, 1.0),
        ];
        assert_eq!(gemm_types(ops.iter()), vec![GemmType::F16, GemmType::Bf16]);
        let f32_ops = [set(gemm_op(8, 8, 8), GemmType::F32)];
        assert_eq!(
            gemm_types(f32_ops.iter()),
            vec![GemmType::F32, GemmType::Tf32]
        );
    }

    #[test]
    #[ignore = "needs a CUDA device"]
    fn peaks_are_measured_for_the_walks_types() {
        let e = Engine::new(0).unwrap();
        let ops = [gemm_op(64, 64, 64)];
        let r = measure(&e, ops.iter()).unwrap().unwrap();
        assert!(r.bytes_per_ns > 0.0);
        assert_eq!(r.flops_per_ns.len(), 1);
        assert!(r.flops_per_ns[&GemmType::Bf16] > 0.0);
        assert!(measure(&e, [Op::kernel("relu", 0.0, 1.0)].iter())
            .unwrap()
            .is_none());
    }

    #[test]
    fn only_gemms_far_below_the_ridge_are_far_below_it() {
        let r = device();
        // The ridge: 175 flops a byte. One token: ~1 flop a byte.
        assert!(r.far_below_ridge(&gemm_op(4096, 1, 4096)));
        // 256 tokens through 2048 x 2048: ~190 flops a byte, near the ridge (math floor
        // 3.1 us, memory floor 2.6 us), and 1024 tokens above it.
        assert!(!r.far_below_ridge(&gemm_op(2048, 256, 2048)));
        assert!(!r.far_below_ridge(&gemm_op(2048, 1024, 2048)));
        // Types without a peak, and kernels that are not a recorded GEMM, are not judged.
        let mut f16 = gemm_op(4096, 1, 4096);
        if let Some(MatmulRole::Call(g)) = &mut f16.matmul {
            g.dtype = GemmType::F16;
        }
        assert!(!r.far_below_ridge(&f16));
        assert!(!r.far_below_ridge(&Op::kernel("nvjet", 0.0, 10_000.0)));
    }

    #[test]
    fn a_profiles_peaks_give_the_roofline_of_the_types_measured() {
        let peaks = GemmPeaks {
            f16_tflop_s: 800.0,
            bf16_tflop_s: 700.0,
            tf32_tflop_s: 0.0,
            f32_tflop_s: 50.0,
        };
        let r = peaks.roofline(4000.0);
        assert_eq!(r.bytes_per_ns, 4000.0);
        assert_eq!(r.flops_per_ns.get(&GemmType::Bf16), Some(&700_000.0));
        assert_eq!(r.flops_per_ns.get(&GemmType::F32), Some(&50_000.0));
        assert!(
            !r.flops_per_ns.contains_key(&GemmType::Tf32),
            "not measured"
        );
        // As a profile stores them.
        let json = serde_json::to_value(peaks).unwrap();
        assert_eq!(json["bf16_tflop_s"], 700.0);
        assert_eq!(serde_json::from_value::<GemmPeaks>(json).unwrap(), peaks);
    }
}
