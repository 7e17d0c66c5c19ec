//! What a replayed GEMM multiplies: values that look like a model's, not a constant.
//!
//! A GEMM's time on a GPU held at its power limit depends on its data: tensor cores switching
//! on a constant or on zeros draw less power than on a model's weights and activations, so
//! the GPU keeps higher clocks. On the H200 the real graph of a prefill of TF32 GEMMs
//! (`tf32_mlp_prefill` in the validation walks) ran 3–5% longer once its first ~100 ms of
//! sustained replays had passed, on three instances, while its replay over operands of one
//! repeated byte kept the cool start's time (2–4% under), even after 300 ms more of replays;
//! over these operands its replay at the lower level came out 0.2% under the real graph there
//! (docs/validation-h200.md, "GEMM operands that draw a model's power"). Each element is drawn
//! with a random sign, exponent and mantissa, magnitude in [1/16, 1), as trained weights and
//! normalised activations are: every bit of the datapath toggles as it would.

use std::sync::OnceLock;

use memra_engine::GemmType;

/// Bytes drawn before they repeat: operands larger than this repeat it (drawing every byte of
/// a multi-GiB operand took seconds), far more than any tensor-core tile spans.
const PERIOD_BYTES: usize = 4 << 20;

/// `bytes` of GEMM operand of element type `dtype`: pseudo-random finite values of magnitude
/// in [1/16, 1) with random signs, repeating every `PERIOD_BYTES`, the same for the same
/// arguments (a fixed seed). A trailing part smaller than one element is zero.
pub fn operand_bytes(dtype: GemmType, bytes: usize) -> Vec<u8> {
    let size = dtype.bytes();
    let whole = |n: usize| n / size * size;
    let period = period(dtype);
    let mut out = Vec::with_capacity(bytes);
    while bytes - out.len() >= PERIOD_BYTES {
        out.extend_from_slice(period);
    }
    // The rest, in whole elements: a prefix of the period (the same draws from the same seed).
    out.extend_from_slice(&period[..whole(bytes - out.len())]);
    out.resize(bytes, 0);
    out
}

/// One period of `dtype`'s elements, drawn once per process: every GEMM of a replay has
/// operands of its own, and drawing the period again for each took milliseconds apiece.
fn period(dtype: GemmType) -> &'static [u8] {
    static F16: OnceLock<Vec<u8>> = OnceLock::new();
    static BF16: OnceLock<Vec<u8>> = OnceLock::new();
    static F32: OnceLock<Vec<u8>> = OnceLock::new();
    let cell = match dtype {
        GemmType::F16 => &F16,
        GemmType::Bf16 => &BF16,
        GemmType::F32 | GemmType::Tf32 => &F32,
    };
    cell.get_or_init(|| drawn(dtype, PERIOD_BYTES))
}

/// `bytes` of freshly drawn elements of `dtype` (a partial last element zero).
fn drawn(dtype: GemmType, bytes: usize) -> Vec<u8> {
    let mut rng = SplitMix64(0x9E37_79B9_7F4A_7C15);
    let mut out = vec![0u8; bytes];
    match dtype {
        GemmType::F16 => fill(&mut out, || {
            // sign | exponent 11..=14 (2^-4 .. 2^-1) | 10 mantissa bits
            let r = rng.next();
            let bits = ((r >> 63) << 15) | ((11 + (r >> 32) % 4) << 10) | (r & 0x3FF);
            (bits as u16).to_le_bytes()
        }),
        GemmType::Bf16 => fill(&mut out, || {
            // sign | exponent 123..=126 | 7 mantissa bits
            let r = rng.next();
            let bits = ((r >> 63) << 15) | ((123 + (r >> 32) % 4) << 7) | (r & 0x7F);
            (bits as u16).to_le_bytes()
        }),
        GemmType::F32 | GemmType::Tf32 => fill(&mut out, || {
            // sign | exponent 123..=126 | 23 mantissa bits
            let r = rng.next();
            let bits = ((r >> 63) << 31) | ((123 + (r >> 32) % 4) << 23) | (r & 0x7F_FFFF);
            (bits as u32).to_le_bytes()
        }),
    }
    out
}

/// Fills `out` element by element with `next`'s bytes, leaving a partial tail as it is.
fn fill<const N: usize>(out: &mut [u8], mut next: impl FnMut() -> [u8; N]) {
    for chunk in out.chunks_exact_mut(N) {
        chunk.copy_from_slice(&next());
    }
}

/// SplitMix64 (Steele, Lea and Flood 2014): a fast, well-mixed generator of 64-bit words,
/// enough for operand values (nothing here needs cryptographic or statistical quality).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// f16 bits to f32 for normal numbers (all this module makes).
    fn f16_value(bits: u16) -> f32 {
        let sign = if bits >> 15 == 1 { -1.0 } else { 1.0 };
        let exp = ((bits >> 10) & 0x1F) as i32 - 15;
        let mant = 1.0 + (bits & 0x3FF) as f32 / 1024.0;
        sign * mant * 2f32.powi(exp)
    }

    fn values(dtype: GemmType, n: usize) -> Vec<f32> {
        let b = operand_bytes(dtype, n * dtype.bytes());
        match dtype {
            GemmType::F16 => b
                .chunks_exact(2)
                .map(|c| f16_value(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
            GemmType::Bf16 => b
                .chunks_exact(2)
                .map(|c| f32::from_bits((u16::from_le_bytes([c[0], c[1]]) as u32) << 16))
                .collect(),
            GemmType::F32 | GemmType::Tf32 => b
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        }
    }

    #[test]
    fn every_type_gets_finite_varied_values_of_both_signs_in_range() {
        for dtype in [GemmType::F16, GemmType::Bf16, GemmType::F32, GemmType::Tf32] {
            let v = values(dtype, 4096);
            assert!(
                v.iter()
                    .all(|x| x.is_finite() && (1.0 / 16.0..1.0).contains(&x.abs())),
                "{dtype:?}"
            );
            let negative = v.iter().filter(|x| **x < 0.0).count();
            assert!((1024..3072).contains(&negative), "{dtype:?}: {negative}");
            let mut distinct: Vec<u32> = v.iter().map(|x| x.to_bits()).collect();
            distinct.sort_unstable();
            distinct.dedup();
            assert!(distinct.len() > 256, "{dtype:?}: {}", distinct.len());
        }
    }

    #[test]
    fn same_arguments_same_bytes_and_a_partial_tail_is_zero() {
        assert_eq!(
            operand_bytes(GemmType::Bf16, 1000),
            operand_bytes(GemmType::Bf16, 1000)
        );
        let b = operand_bytes(GemmType::F32, 10);
        assert_eq!(b.len(), 10);
        assert_eq!(&b[8..], &[0, 0]);
        assert_ne!(&b[..4], &[0, 0, 0, 0]);
    }

    #[test]
    fn large_operands_repeat_the_period_in_whole_elements() {
        let bytes = 2 * PERIOD_BYTES + 7;
        let b = operand_bytes(GemmType::F16, bytes);
        assert_eq!(b.len(), bytes);
        assert_eq!(b[..PERIOD_BYTES], b[PERIOD_BYTES..2 * PERIOD_BYTES]);
        assert_eq!(b[2 * PERIOD_BYTES..bytes - 1], b[..6]);
        assert_eq!(b[bytes - 1], 0, "half an element is left zero");
    }
}
