//! Both trace readers on hand-written fixtures of every documented variant, and on arbitrary
//! bytes (never a panic, always a clear error).

use std::path::PathBuf;

use launch_econ::trace::{self, kineto, nsys, summarize, Filter, OpKind};
use proptest::prelude::*;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn nsys_with_preamble_greenctx_quoted_names_and_copies() {
    let w = trace::read(&fixture("nsys_greenctx.csv")).unwrap();
    assert_eq!(w.ops.len(), 5);
    // Rows were out of order; the walk is sorted by start.
    let starts: Vec<f64> = w.ops.iter().map(|o| o.start_ns).collect();
    assert_eq!(
        starts,
        vec![1000000.0, 1000500.0, 1003300.0, 1004000.0, 1010000.0]
    );
    assert_eq!(
        w.ops[0].kind,
        OpKind::Memcpy {
            bytes: 262_000,
            direction: "Host-to-Device".into(),
            pageable: true,
        }
    );
    assert_eq!(
        w.ops[1].name,
        "void gemv_kernel<float, 128, 4>(float const*, float const*, float*, int, int)"
    );
    assert_eq!(
        w.ops[1].kind,
        OpKind::Kernel {
            grid: (128, 1, 1),
            block: (256, 1, 1)
        }
    );
    assert_eq!(
        w.ops[2].kind,
        OpKind::Kernel {
            grid: (64, 2, 1),
            block: (128, 2, 1)
        }
    );
    assert_eq!(w.ops[3].kind, OpKind::Memset { bytes: 4000 });
    assert_eq!((w.ops[4].device, w.ops[4].stream), (Some(0), Some(13)));
    let s = summarize(&w, 10);
    assert_eq!(
        (s.kernels, s.copies, s.memsets, s.distinct_kernels),
        (3, 1, 1, 3)
    );
    assert_eq!(s.kernel_gpu_ns, 2600.0 + 5100.0 + 1900.0);
    assert_eq!(s.span_ns, 1011900.0 - 1000000.0);
    let only7 = w.filtered(&Filter {
        stream: Some(7),
        ..Filter::default()
    });
    assert_eq!(only7.ops.len(), 4);
}

#[test]
fn nsys_older_header_in_microseconds() {
    let w = trace::read(&fixture("nsys_2023.csv")).unwrap();
    assert_eq!(w.ops.len(), 2);
    assert_eq!(w.ops[0].duration_ns, 3200.0);
    assert!(w.ops[0]
        .name
        .contains("CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int"));
    assert_eq!(
        w.ops[1].kind,
        OpKind::Memcpy {
            bytes: 1_048_576,
            direction: "DtoH".into(),
            pageable: true,
        }
    );
    assert_eq!(w.ops[1].start_ns, 14500.0);
}

#[test]
fn kineto_object_with_cpu_events_flows_and_metadata() {
    let w = trace::read(&fixture("kineto_step.json")).unwrap();
    assert_eq!(w.ops.len(), 4, "{w:?}");
    assert!(
        matches!(w.ops[0].kind, OpKind::Memcpy { bytes: 8192, ref direction, pageable: true } if direction == "HtoD")
    );
    assert_eq!(
        w.ops[1].kind,
        OpKind::Kernel {
            grid: (66, 1, 1),
            block: (128, 1, 1)
        }
    );
    assert!((w.ops[1].duration_ns - 12750.0).abs() < 1e-6);
    assert_eq!(w.ops[3].kind, OpKind::Memset { bytes: 4096 });
    let s = summarize(&w, 1);
    assert_eq!(s.top.len(), 1);
    assert!(s.top[0].0.starts_with("sm90_xmma_gemm"));
}

#[test]
fn kineto_bare_array_and_device_filter() {
    let w = trace::read(&fixture("kineto_array.json")).unwrap();
    assert_eq!(w.ops.len(), 2);
    assert_eq!(w.ops[0].name, "gemm");
    let d1 = w.filtered(&Filter {
        device: Some(1),
        ..Filter::default()
    });
    assert_eq!(d1.ops.len(), 1);
    assert_eq!(d1.ops[0].name, "noop");
}

/// A gzip-compressed trace (`tensorboard_trace_handler(use_gzip=True)`) reads as the plain one.
#[test]
fn gzip_compressed_traces_read_as_the_plain_ones() {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("le-gz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["kineto_profiler_steps.json", "nsys_greenctx.csv"] {
        let plain = fixture(name);
        let gz = dir.join(format!("{name}.gz"));
        let mut enc = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::fast(),
        );
        enc.write_all(&std::fs::read(&plain).unwrap()).unwrap();
        enc.finish().unwrap();
        assert_eq!(
            trace::read(&gz).unwrap(),
            trace::read(&plain).unwrap(),
            "{name}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn broken_files_get_clear_errors() {
    let dir = std::env::temp_dir().join(format!("le-traces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.csv", vec![], "the file is empty"),
        ("blank.json", b"   \n".to_vec(), "the file is empty"),
        ("binary.bin", vec![0x00, 0xff, 0x13, 0x37, 0x80], "not readable as CSV"),
        ("trunc.json", br#"{"traceEvents":[{"cat":"kernel","na"#.to_vec(), "EOF while parsing"),
        ("cols.csv", b"Time,Length,What\n1,2,k\n".to_vec(), "no cuda_gpu_trace header"),
        ("cpuonly.json", br#"{"traceEvents":[{"cat":"cpu_op","name":"x","ts":1,"dur":1}]}"#.to_vec(), "no kernel, memcpy or memset"),
        ("nan.csv", b"Start (ns),Duration (ns),GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Name\n1,nan,1,1,1,1,1,1,k\n".to_vec(), "not a finite number"),
        ("grid.json", br#"[{"cat":"kernel","name":"k","ts":1,"dur":1,"args":{"grid":[1,100000,1],"block":[1,1,1]}}]"#.to_vec(), "grid limits"),
        ("step.sqlite", b"SQLite format 3\0\x10\x00".to_vec(), "nsys stats --report cuda_gpu_trace"),
        ("step.nsys-rep", vec![0x00, 0x01], "an Nsight Systems report"),
        ("cut.json.gz", vec![0x1f, 0x8b, 0x08, 0x00, 0x00], "cut.json.gz"),
    ];
    for (name, bytes, msg) in cases {
        let p = dir.join(name);
        std::fs::write(&p, &bytes).unwrap();
        let e = trace::read(&p).unwrap_err().to_string();
        assert!(e.contains(msg), "{name}: {e}");
        assert!(e.contains(name), "{name}: error must name the file: {e}");
    }
    let e = trace::read(&dir.join("missing.csv"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot read"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn nsys_reader_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = nsys::read(&bytes[..], "fuzz.csv");
    }

    #[test]
    fn kineto_reader_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = kineto::read(&bytes[..], "fuzz.json");
    }

    #[test]
    fn nsys_reader_survives_mutated_valid_files(pos in 0usize..600, byte in any::<u8>()) {
        let mut s = std::fs::read(fixture("nsys_greenctx.csv")).unwrap();
        let i = pos % s.len();
        s[i] = byte;
        let _ = nsys::read(&s[..], "fuzz.csv");
    }

    #[test]
    fn kineto_reader_survives_mutated_valid_files(pos in 0usize..3000, byte in any::<u8>()) {
        let mut s = std::fs::read(fixture("kineto_step.json")).unwrap();
        let i = pos % s.len();
        s[i] = byte;
        let _ = kineto::read(&s[..], "fuzz.json");
    }
}

/// A real trace: a two-layer decode step profiled with torch.profiler on an H200
/// (scripts/torch_decode.py), GPU activity only.
#[test]
fn real_pytorch_profiler_trace() {
    let w = trace::read(&fixture("torch_decode_small.json")).unwrap();
    let s = summarize(&w, 3);
    assert_eq!(s.kernels, 56);
    assert_eq!((s.copies, s.memsets), (0, 0));
    assert_eq!(s.devices, vec![0]);
    assert!(
        (s.kernel_gpu_ns / 1e3 - 101.948).abs() < 1e-3,
        "{}",
        s.kernel_gpu_ns
    );
    // Every kernel has a shape the GPU accepts and a start after the previous one's.
    assert!(w.ops.windows(2).all(|p| p[0].start_ns <= p[1].start_ns));
    assert!(w.kernels().all(|o| matches!(o.kind, OpKind::Kernel { .. })));
}

/// Two H200 recordings (`scripts/host_read_probe.py`): a step whose host reads a value mid-step
/// (`.item()`: a copy to the host and a synchronize between launches; its capture fails), and
/// one that copies into page-locked memory without waiting (captured). Only the first is
/// warned of.
#[test]
fn a_copy_to_the_host_is_warned_of_only_where_the_host_waits_on_it_mid_step() {
    let reads = trace::read(&fixture("kineto_host_reads_mid_step.json")).unwrap();
    let host = reads.host.expect("the trace records its host side");
    assert_eq!(host.blocking_waits_mid_step, 1);
    let warned = launch_econ::replay::unreproduced(&reads, false).join("\n");
    assert!(
        warned.contains("copies device to host 1 time(s) and the host waits for the GPU 1 time(s) before its last launch"),
        "{warned}"
    );
    let offloads = trace::read(&fixture("kineto_offload_to_host.json")).unwrap();
    assert!(offloads.ops.iter().any(
        |o| matches!(&o.kind, OpKind::Memcpy { direction, .. } if direction.starts_with("DtoH"))
    ));
    assert_eq!(offloads.host.unwrap().blocking_waits_mid_step, 0);
    let quiet = launch_econ::replay::unreproduced(&offloads, false).join("\n");
    assert!(!quiet.contains("device to host"), "{quiet}");
}
