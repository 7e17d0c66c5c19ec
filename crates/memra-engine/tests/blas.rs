//! GEMMs by cuBLAS on a real device: results against the host, eagerly and replayed from a
//! graph whose operands the caller has dropped. Run with `--include-ignored` on the GPU machine.

use memra_engine::{Engine, Error, Gemm, GemmType};

/// Column-major C = op(A) · op(B) on the host, A and B stored densely as `Gemm` describes.
fn host_gemm(g: &Gemm, a: &[f32], b: &[f32]) -> Vec<f32> {
    let (m, n, k) = (g.m as usize, g.n as usize, g.k as usize);
    let at = |i: usize, p: usize| {
        if g.trans_a {
            a[p + i * k]
        } else {
            a[i + p * m]
        }
    };
    let bt = |p: usize, j: usize| {
        if g.trans_b {
            b[j + p * n]
        } else {
            b[p + j * k]
        }
    };
    let mut c = vec![0.0f32; m * n];
    for j in 0..n {
        for i in 0..m {
            c[i + j * m] = (0..k).map(|p| at(i, p) * bt(p, j)).sum();
        }
    }
    c
}

/// Small whole numbers, so f32 sums are exact.
fn values(n: usize, seed: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7 + seed * 3) % 5) as f32 - 2.0)
        .collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn f32_gemms_match_the_host_in_every_transpose() {
    let e = Engine::new(0).expect("a CUDA device at ordinal 0");
    for (trans_a, trans_b) in [(false, false), (true, false), (false, true), (true, true)] {
        let g = Gemm {
            trans_a,
            trans_b,
            ..Gemm::plain(GemmType::F32, 7, 5, 9)
        };
        let (a, b) = (values(63, 1), values(45, 2));
        let (da, db) = (e.htod(&a).unwrap(), e.htod(&b).unwrap());
        let mut dc = e.zeros::<f32>(35).unwrap();
        e.gemm(&g, &da, &db, &mut dc).unwrap();
        assert_eq!(
            e.dtoh(&dc).unwrap(),
            host_gemm(&g, &a, &b),
            "op(A) {trans_a}, op(B) {trans_b}"
        );
    }
}

/// TF32 keeps 10 of f32's 23 mantissa bits: with every operand in [1, 2), each product is
/// within 2^-9 of its f32 value (either rounding of the operands), and so is the sum of such
/// products, all positive.
#[test]
#[ignore = "needs a CUDA device"]
fn tf32_gemms_match_the_host_to_tf32_precision() {
    let e = Engine::new(0).expect("a CUDA device at ordinal 0");
    let g = Gemm::plain(GemmType::Tf32, 128, 64, 256);
    let in_one_two = |n: usize, p: usize| -> Vec<f32> {
        (0..n).map(|i| 1.0 + (i % p) as f32 / p as f32).collect()
    };
    let (a, b) = (in_one_two(128 * 256, 13), in_one_two(256 * 64, 29));
    let (da, db) = (e.htod(&a).unwrap(), e.htod(&b).unwrap());
    let mut dc = e.zeros::<f32>(128 * 64).unwrap();
    e.gemm(&g, &da, &db, &mut dc).unwrap();
    let host = host_gemm(&g, &a, &b);
    let got = e.dtoh(&dc).unwrap();
    let worst = got
        .iter()
        .zip(&host)
        .map(|(g, h)| ((g - h) / h).abs())
        .fold(0.0f32, f32::max);
    assert!(worst <= 2.0e-3, "largest relative difference {worst}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_captured_f16_gemm_replays_into_memory_the_graph_keeps() {
    const ONE: u16 = 0x3C00; // 1.0 in IEEE half
    const TWO: u16 = 0x4000;
    let e = Engine::new(0).expect("a CUDA device at ordinal 0");
    let g = Gemm {
        trans_b: true,
        batch: 3,
        accumulate: true,
        ..Gemm::plain(GemmType::F16, 64, 8, 32)
    };
    let (na, nb, nc) = g.bytes();
    let a = e.htod(&vec![ONE; na / 2]).unwrap();
    let b = e.htod(&vec![TWO; nb / 2]).unwrap();
    let mut c = e.zeros::<u16>(nc / 2).unwrap();
    // Capture runs the step once eagerly first (which makes the cuBLAS handle), then
    // captures it; every run adds 1 · 2 summed over k = 32, 64, to each element of C.
    let graph = e.capture_graph(|eng| eng.gemm(&g, &a, &b, &mut c)).unwrap();
    drop((a, b));
    graph.launch().unwrap();
    graph.launch().unwrap();
    // Two replays accumulate 64 each: 64 (warm-up) + 128 = 192, exact in half (0x5A00).
    assert!(e.dtoh(&c).unwrap().iter().all(|&v| v == 0x5A00));
}

#[test]
#[ignore = "needs a CUDA device"]
fn undersized_operands_are_refused_before_cublas_sees_them() {
    let e = Engine::new(0).expect("a CUDA device at ordinal 0");
    let g = Gemm {
        batch: 2,
        ..Gemm::plain(GemmType::Bf16, 16, 16, 16)
    };
    let a = e.zeros::<u16>(512).unwrap();
    let b = e.zeros::<u16>(256).unwrap(); // one matrix of the batch's two
    let mut c = e.zeros::<u16>(512).unwrap();
    let err = e.gemm(&g, &a, &b, &mut c).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Length {
                arg: "b (bytes)",
                ..
            }
        ),
        "{err}"
    );
}

/// A linear layer's GEMM with its bias in cuBLASLt's epilogue: C = op(A) · op(B) + bias, the
/// bias added to every column, for the transposes PyTorch's `addmm` uses (the weight stored
/// transposed), eagerly and replayed from a graph.
#[test]
#[ignore = "needs a CUDA device"]
fn f32_gemms_with_a_bias_epilogue_match_the_host() {
    let e = Engine::new(0).expect("a CUDA device at ordinal 0");
    for trans_a in [true, false] {
        let g = Gemm {
            trans_a,
            bias: true,
            ..Gemm::plain(GemmType::F32, 24, 16, 40)
        };
        let (a, b, bias) = (values(24 * 40, 1), values(40 * 16, 2), values(24, 3));
        let (da, db, dbias) = (
            e.htod(&a).unwrap(),
            e.htod(&b).unwrap(),
            e.htod(&bias).unwrap(),
        );
        let mut want = host_gemm(&g, &a, &b);
        for (i, w) in want.iter_mut().enumerate() {
            *w += bias[i % 24];
        }
        // C starts as garbage: the epilogue adds the bias, not C (beta 0).
        let mut dc = e.htod(&vec![1.0e6f32; 24 * 16]).unwrap();
        e.gemm_bias(&g, &da, &db, &dbias, &mut dc).unwrap();
        assert_eq!(e.dtoh(&dc).unwrap(), want, "op(A) {trans_a}, eager");
        let mut dc2 = e.htod(&vec![-7.0f32; 24 * 16]).unwrap();
        let graph = e
            .capture_graph(|eng| eng.gemm_bias(&g, &da, &db, &dbias, &mut dc2))
            .unwrap();
        // Capture ran the step once eagerly; the graph's replay writes the same.
        e.htod_into(&vec![-7.0f32; 24 * 16], &mut dc2).unwrap();
        graph.launch().unwrap();
        assert_eq!(e.dtoh(&dc2).unwrap(), want, "op(A) {trans_a}, graph");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_bias_gemm_is_refused_where_it_cannot_run() {
    let e = Engine::new(0).expect("a CUDA device at ordinal 0");
    let g = Gemm {
        bias: true,
        ..Gemm::plain(GemmType::F32, 8, 4, 8)
    };
    let (a, b, mut c) = (
        e.zeros::<f32>(64).unwrap(),
        e.zeros::<f32>(32).unwrap(),
        e.zeros::<f32>(32).unwrap(),
    );
    // Through the plain GEMM, which has no bias buffer.
    let err = e.gemm(&g, &a, &b, &mut c).unwrap_err();
    assert!(err.to_string().contains("gemm_bias"), "{err}");
    // A bias shorter than m.
    let short = e.zeros::<f32>(4).unwrap();
    let err = e.gemm_bias(&g, &a, &b, &short, &mut c).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Length {
                arg: "bias (bytes)",
                ..
            }
        ),
        "{err}"
    );
    // A GEMM without the flag.
    let plain = Gemm::plain(GemmType::F32, 8, 4, 8);
    let bias = e.zeros::<f32>(8).unwrap();
    let err = e.gemm_bias(&plain, &a, &b, &bias, &mut c).unwrap_err();
    assert!(err.to_string().contains("no bias epilogue"), "{err}");
}
