//! Engine behaviour on a real device. Run with `--include-ignored` on a machine with a GPU
//! (`bash .gpu/run.sh tests` on the GPU machine).

use memra_engine::{Engine, EngineOptions, Error, KernelCache, LaunchShape};

const GPU: &str = "needs a CUDA device";

/// A small xorshift generator: random test data without a dependency.
struct Rng(u64);
impl Rng {
    fn f32s(&mut self, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                (self.0 >> 40) as f32 / (1u64 << 24) as f32 * 200.0 - 100.0
            })
            .collect()
    }
}

fn engine() -> Engine {
    Engine::new(0).expect("a CUDA device at ordinal 0")
}

fn free_bytes(e: &Engine) -> usize {
    e.stream().synchronize().unwrap();
    e.mem_get_info().unwrap().0
}

#[test]
#[ignore = "needs a CUDA device"]
fn add_is_correct_on_random_data() {
    let _ = GPU;
    let e = engine();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for n in [1usize, 255, 256, 257, 4096, 100_003] {
        let (a, b) = (rng.f32s(n), rng.f32s(n));
        let da = e.htod(&a).unwrap();
        let db = e.htod(&b).unwrap();
        // Poison the output so an unwritten element cannot pass.
        let mut dy = e.htod(&vec![f32::NAN; n]).unwrap();
        e.add(&da, &db, &mut dy, n).unwrap();
        let y = e.dtoh(&dy).unwrap();
        for i in 0..n {
            assert_eq!(y[i], a[i] + b[i], "n={n} i={i}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn add_x4_is_correct_on_random_data_of_any_length() {
    let e = engine();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    // Whole fours, a remainder of one to three, and fewer than four.
    for n in [1usize, 3, 4, 5, 1023, 1024, 1027, 100_003] {
        let (a, b) = (rng.f32s(n), rng.f32s(n));
        let da = e.htod(&a).unwrap();
        let db = e.htod(&b).unwrap();
        let mut dy = e.htod(&vec![f32::NAN; n]).unwrap();
        e.add_x4(&da, &db, &mut dy, n).unwrap();
        let y = e.dtoh(&dy).unwrap();
        for i in 0..n {
            assert_eq!(y[i], a[i] + b[i], "n={n} i={i}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn add_on_a_prefix_leaves_the_rest_untouched() {
    let e = engine();
    let a = e.htod(&[1.0f32; 10]).unwrap();
    let b = e.htod(&[2.0f32; 10]).unwrap();
    let mut y = e.htod(&[-1.0f32; 10]).unwrap();
    e.add(&a, &b, &mut y, 4).unwrap();
    let out = e.dtoh(&y).unwrap();
    assert_eq!(&out[..4], &[3.0; 4]);
    assert_eq!(&out[4..], &[-1.0; 6]);
    // The four-wide add on a prefix that ends inside a four: the rest stays.
    let mut y = e.htod(&[-1.0f32; 10]).unwrap();
    e.add_x4(&a, &b, &mut y, 6).unwrap();
    let out = e.dtoh(&y).unwrap();
    assert_eq!(&out[..6], &[3.0; 6]);
    assert_eq!(&out[6..], &[-1.0; 4]);
    assert!(e.add_x4(&a, &b, &mut y, 11).is_err());
    let err = e.add(&a, &b, &mut y, 11).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Length {
                arg: "a",
                wanted: 11,
                len: 10,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn clone_zeros_and_copy_round_trip() {
    let e = engine();
    let mut rng = Rng(7);
    let data = rng.f32s(5000);
    let a = e.htod(&data).unwrap();
    let c = a.clone();
    assert_eq!(e.dtoh(&c).unwrap(), data);
    let z = e.zeros::<f32>(5000).unwrap();
    assert!(e.dtoh(&z).unwrap().iter().all(|&v| v == 0.0));
    let mut d = e.zeros::<f32>(5000).unwrap();
    e.copy(&a, &mut d, 5000).unwrap();
    assert_eq!(e.dtoh(&d).unwrap(), data);
    assert_eq!(c.len(), 5000);
    assert_eq!(c.num_bytes(), 20000);
}

#[test]
#[ignore = "needs a CUDA device"]
fn graph_replay_matches_eager() {
    let e = engine();
    let mut rng = Rng(42);
    let n = 4096;
    let (ha, hb) = (rng.f32s(n), rng.f32s(n));
    let a = e.htod(&ha).unwrap();
    let b = e.htod(&hb).unwrap();
    // Eager: y = (a + b) + b
    let mut t = e.zeros::<f32>(n).unwrap();
    let mut y_eager = e.zeros::<f32>(n).unwrap();
    e.add(&a, &b, &mut t, n).unwrap();
    e.add(&t, &b, &mut y_eager, n).unwrap();
    let eager = e.dtoh(&y_eager).unwrap();

    let mut y_graph = e.htod(&vec![f32::NAN; n]).unwrap();
    let graph = e
        .capture_graph(|eng| {
            let mut tmp = eng.zeros::<f32>(n)?;
            eng.add(&a, &b, &mut tmp, n)?;
            eng.add(&tmp, &b, &mut y_graph, n)
        })
        .unwrap();
    // The capture's warm-up already wrote y_graph: poison it again so only a replay can fix it.
    e.htod_into(&vec![f32::NAN; n], &mut y_graph).unwrap();
    graph.launch().unwrap();
    assert_eq!(e.dtoh(&y_graph).unwrap(), eager);
    assert_eq!(graph.node_count(), 3, "memset + two kernels");
}

#[test]
#[ignore = "needs a CUDA device"]
fn retained_allocating_capture_replays_1000_times_after_the_closure_returned() {
    let e = engine();
    let mut rng = Rng(1234);
    let n = 4096;
    let (ha, hb) = (rng.f32s(n), rng.f32s(n));
    let a = e.htod(&ha).unwrap();
    let b = e.htod(&hb).unwrap();
    let src = e.htod(&ha).unwrap();
    let mut out = e.zeros::<f32>(n).unwrap();
    // The step clones (allocates) a temporary and drops it when it returns; the graph writes
    // into it and then copies it out. Without retention, replays would use freed memory.
    let (graph, keeper) = e
        .capture_graph_retained(|eng| {
            let mut tmp = src.clone();
            eng.add(&a, &b, &mut tmp, n)?;
            eng.add(&tmp, &b, &mut tmp.clone(), n)?;
            eng.copy(&tmp, &mut out, n)
        })
        .unwrap();
    assert!(
        keeper.len() >= 4,
        "warm-up and capture clones retained: {keeper:?}"
    );
    // Churn the allocator so freed memory would be reused by others.
    let churn: Vec<_> = (0..64)
        .map(|_| e.htod(&vec![-7.0f32; n]).unwrap())
        .collect();
    let want: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x + y).collect();
    for i in 0..1000 {
        e.htod_into(&vec![f32::NAN; n], &mut out).unwrap();
        graph.launch().unwrap();
        if i % 100 == 0 || i == 999 {
            assert_eq!(e.dtoh(&out).unwrap(), want, "replay {i}");
        }
    }
    drop(churn);
    drop(graph);
    drop(keeper);
    e.check_deferred().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn dropping_graph_and_keeper_returns_device_memory() {
    let e = engine();
    let big = 16 << 20; // 64 MiB of f32: far above allocator granularity
    let a = e.zeros::<f32>(big).unwrap();
    let cycle = |graph_first: bool| {
        let (graph, keeper) = e
            .capture_graph_retained(|eng| {
                let mut t = a.clone();
                eng.add(&a, &a, &mut t, big)
            })
            .unwrap();
        graph.launch().unwrap();
        let held = keeper.bytes();
        if graph_first {
            drop(graph);
            drop(keeper);
        } else {
            drop(keeper);
            drop(graph);
        }
        held
    };
    cycle(true); // first cycle pays one-time driver allocations
    for graph_first in [true, false] {
        let before = free_bytes(&e);
        let held = cycle(graph_first);
        assert_eq!(
            held,
            3 * big * 4,
            "the touched input, the warm-up clone and the capture clone retained"
        );
        let after = free_bytes(&e);
        assert_eq!(
            after, before,
            "graph_first={graph_first}: free memory must come back"
        );
    }
    e.check_deferred().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn keeper_holds_memory_while_alive() {
    let e = engine();
    let big = 16 << 20;
    let a = e.zeros::<f32>(big).unwrap();
    let before = free_bytes(&e);
    let (graph, keeper) = e
        .capture_graph_retained(|eng| {
            let mut t = a.clone();
            eng.add(&a, &a, &mut t, big)
        })
        .unwrap();
    let during = free_bytes(&e);
    // `a` was allocated before `before` and is retained too (the graph reads it).
    let made_by_capture = keeper.bytes() - a.num_bytes();
    assert_eq!(keeper.bytes(), graph.retained_bytes());
    assert!(
        before - during >= made_by_capture,
        "retained {made_by_capture} new bytes but free memory fell by only {}",
        before - during
    );
    // Dropping the keeper first leaves the memory with the graph.
    drop(keeper);
    assert_eq!(free_bytes(&e), during);
    drop(graph);
    let after = free_bytes(&e);
    assert!(
        after - during >= made_by_capture,
        "dropping the graph gave back {} of {made_by_capture} bytes",
        after - during
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_step_failing_mid_capture_leaves_the_engine_usable() {
    let e = engine();
    let n = 1024;
    let a = e.htod(&vec![1.5f32; n]).unwrap();
    let mut y = e.zeros::<f32>(n).unwrap();
    let mut calls = 0;
    // Fails only on its second call, which is the captured one.
    let err = e
        .capture_graph_retained(|eng| {
            calls += 1;
            eng.add(&a, &a, &mut y, n)?;
            if calls == 2 {
                eng.add(&a, &a, &mut y, n + 1)?;
            }
            Ok(())
        })
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
    assert!(!e.stream().is_capturing());
    // Refused operations inside a capture fail the capture the same way.
    let err = e
        .capture_graph(|eng| {
            if eng.stream().is_capturing() {
                eng.stream().synchronize()?;
            }
            Ok(())
        })
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(err, Error::CaptureForbidden { .. }), "{err}");
    // Eager work and a new capture still work.
    e.add(&a, &a, &mut y, n).unwrap();
    assert_eq!(e.dtoh(&y).unwrap(), vec![3.0; n]);
    let g = e.capture_graph(|eng| eng.add(&a, &a, &mut y, n)).unwrap();
    g.launch().unwrap();
    e.stream().synchronize().unwrap();
    e.check_deferred().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn host_copies_and_waits_are_refused_inside_capture() {
    let e = engine();
    let a = e.htod(&[1.0f32; 8]).unwrap();
    let ev = e.event().unwrap();
    let mut seen = Vec::new();
    let r = e.capture_graph(|eng| {
        if !eng.stream().is_capturing() {
            return Ok(());
        }
        seen.push(eng.htod(&[1.0f32]).map(|_| ()).unwrap_err().to_string());
        seen.push(eng.dtoh(&a).map(|_| ()).unwrap_err().to_string());
        seen.push(eng.stream().synchronize().unwrap_err().to_string());
        seen.push(ev.query().map(|_| ()).unwrap_err().to_string());
        seen.push(ev.synchronize().unwrap_err().to_string());
        Ok(())
    });
    // The step itself returned Ok after the refusals: the (empty) capture still succeeds.
    assert!(r.is_ok());
    assert_eq!(seen.len(), 5);
    for m in &seen {
        assert!(
            m.contains("not allowed while the engine stream is capturing"),
            "{m}"
        );
    }
    let nested = e.capture_graph(|eng| eng.capture_graph(|_| Ok(())).map(|_| ()));
    assert!(matches!(
        nested,
        Err(Error::CaptureForbidden {
            op: "capture_graph",
            ..
        })
    ));
}

#[test]
#[ignore = "needs a CUDA device"]
fn events_time_gpu_work() {
    let e = engine();
    let (start, end) = (e.event().unwrap(), e.event().unwrap());
    start.record().unwrap();
    let shape = LaunchShape::of((1, 1, 1), (32, 1, 1));
    let mut sink = e.zeros::<u32>(1).unwrap();
    e.spin(200_000, shape, Some(&mut sink)).unwrap();
    end.record().unwrap();
    end.synchronize().unwrap();
    assert!(end.query().unwrap());
    let ms = start.elapsed_ms(&end).unwrap();
    // The kernel reports how long it spun by its own clock: the event time must cover it.
    let spun_ns = e.dtoh(&sink).unwrap()[0] as f64;
    assert!(spun_ns >= 200_000.0, "spin ran {spun_ns} ns");
    assert!(
        ms as f64 * 1e6 >= spun_ns,
        "events {ms} ms < spin {spun_ns} ns"
    );
    // The same through gpu_time_ms, which also passes the work's error on.
    let ms = e
        .gpu_time_ms(|| e.spin(200_000, shape, Some(&mut sink)))
        .unwrap();
    let spun_ns = e.dtoh(&sink).unwrap()[0] as f64;
    assert!(ms * 1e6 >= spun_ns, "events {ms} ms < spin {spun_ns} ns");
    let err = e
        .gpu_time_ms(|| {
            Err(memra_engine::Error::InvalidArgument {
                op: "work",
                what: "refused".into(),
            })
        })
        .unwrap_err();
    assert!(err.to_string().contains("refused"), "{err}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_info_and_errors_for_bad_ordinals() {
    let e = engine();
    let info = e.device_info();
    assert!(!info.name.is_empty());
    assert!(info.compute_capability.0 >= 5);
    assert!(info.sm_count > 0);
    assert!(e.kernel_init_report().arch.starts_with("compute_"));
    let count = memra_engine::device_count().unwrap();
    match Engine::new(count + 3) {
        Err(Error::OrdinalOutOfRange { ordinal, count: c }) => {
            assert_eq!((ordinal, c), (count + 3, count))
        }
        other => panic!("expected OrdinalOutOfRange, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn out_of_memory_is_an_error_and_the_engine_stays_usable() {
    let e = engine();
    let (_, total) = e.mem_get_info().unwrap();
    let err = e.zeros::<u8>(total * 2).unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
    let a = e.htod(&[2.0f32; 4]).unwrap();
    let mut y = e.zeros::<f32>(4).unwrap();
    e.add(&a, &a, &mut y, 4).unwrap();
    assert_eq!(e.dtoh(&y).unwrap(), vec![4.0; 4]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn kernel_cache_is_hit_on_second_start() {
    let dir = std::env::temp_dir().join(format!("memra-kc-{}", std::process::id()));
    // The directory is passed in, not set in the environment: other tests in this binary
    // start engines at the same time.
    let options = EngineOptions {
        kernel_cache: KernelCache::Dir(dir.clone()),
        ..EngineOptions::default()
    };
    let first = Engine::with_options(0, &options).unwrap();
    let r1 = first.kernel_init_report().clone();
    drop(first);
    let second = Engine::with_options(0, &options).unwrap();
    let r2 = second.kernel_init_report().clone();
    assert_eq!(r2.cache_dir.as_deref(), Some(dir.as_path()));
    assert_eq!(r1.cache_hits + r1.compiled, 5, "five .cu sources");
    assert!(r1.unavailable.is_empty(), "{r1:?}");
    assert_eq!(r2.cache_hits, 5, "{r2:?}");
    assert_eq!(r2.compiled, 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn memset_zero_clears_a_prefix() {
    let e = engine();
    let mut b = e.htod(&[7u8; 100]).unwrap();
    e.memset_zero(&mut b, 40).unwrap();
    let v = e.dtoh(&b).unwrap();
    assert!(v[..40].iter().all(|&x| x == 0) && v[40..].iter().all(|&x| x == 7));
    assert!(e.memset_zero(&mut b, 101).is_err());
}

#[test]
#[ignore = "needs a CUDA device"]
fn the_profiler_records_each_kernel_launched_with_its_shape() {
    let e = engine();
    e.noop().unwrap();
    e.stream().synchronize().unwrap();
    let shapes = [LaunchShape::linear(1, 32), LaunchShape::linear(3, 64)];
    let mut ran = false;
    let profiled = memra_engine::profile_kernels(|| {
        ran = true;
        for s in shapes {
            e.noop_shaped(s)?;
        }
        e.stream().synchronize()
    });
    let ((), kernels) = match profiled {
        // Under compute-sanitizer (or a profiler) CUPTI is taken: profiling must say so
        // before running anything, and cannot be checked further here.
        Err(memra_engine::Error::ProfilerBusy { .. })
            if memra_engine::profiling_tool_injected() =>
        {
            assert!(!ran);
            eprintln!("CUPTI is held by an injected tool: profile_kernels said so");
            return;
        }
        other => other.unwrap(),
    };
    let got: Vec<_> = kernels.iter().map(|k| (k.grid, k.block)).collect();
    assert_eq!(got, vec![([1, 1, 1], [32, 1, 1]), ([3, 1, 1], [64, 1, 1])]);
    assert!(kernels.iter().all(|k| k.end_ns >= k.start_ns));
    assert!(kernels[1].start_ns >= kernels[0].end_ns, "{kernels:?}");
    // A second session records only its own kernels.
    let ((), again) = memra_engine::profile_kernels(|| {
        e.noop()?;
        e.stream().synchronize()
    })
    .unwrap();
    assert_eq!(again.len(), 1, "{again:?}");
}
