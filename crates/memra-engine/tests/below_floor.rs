//! Programmatic dependent launch and conditional WHILE graphs on a real device (compute
//! capability 9.0+ for PDL). Run with `--include-ignored` on the GPU machine.

use memra_engine::{DeviceBuffer, Engine, EngineOptions};

/// Elements of the chained buffers: 16 Ki blocks, many waves on any GPU, so a consumer that
/// ran ahead of its producer would read values from an earlier step.
const N: usize = 1 << 22;
const STEPS: usize = 200;

fn pdl_engine() -> Engine {
    let e = Engine::with_options(
        0,
        &EngineOptions {
            pdl: true,
            ..EngineOptions::default()
        },
    )
    .expect("a CUDA device of compute capability 9.0+ at ordinal 0");
    assert!(e.pdl());
    e
}

/// `x ← x + one`, STEPS times, alternating two buffers: step i reads what step i-1 wrote.
fn chain(
    e: &Engine,
    one: &DeviceBuffer<f32>,
    x: &mut DeviceBuffer<f32>,
    y: &mut DeviceBuffer<f32>,
) -> memra_engine::Result<()> {
    for i in 0..STEPS {
        if i % 2 == 0 {
            e.add(x, one, y, N)?;
        } else {
            e.add(y, one, x, N)?;
        }
    }
    Ok(())
}

fn assert_all(v: &[f32], want: f32, what: &str) {
    let bad = v.iter().filter(|&&x| x != want).count();
    assert_eq!(
        bad,
        0,
        "{what}: {bad} of {} elements differ from {want}",
        v.len()
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn pdl_consumers_never_read_before_their_producer_wrote() {
    let e = pdl_engine();
    let one = e.htod(&vec![1.0f32; N]).unwrap();
    let mut x = e.zeros::<f32>(N).unwrap();
    let mut y = e.zeros::<f32>(N).unwrap();
    // Eager: each add is a programmatic dependent of the one before.
    chain(&e, &one, &mut x, &mut y).unwrap();
    // STEPS is even: the last step wrote x.
    assert_all(&e.dtoh(&x).unwrap(), STEPS as f32, "eager PDL chain");

    // Captured: the same chain as a graph with programmatic edges, replayed; each replay adds
    // STEPS again (x and y are read and written in place).
    let g = e
        .capture_graph(|eng| chain(eng, &one, &mut x, &mut y))
        .unwrap();
    let edges = g.edge_counts().unwrap();
    assert_eq!(
        edges.programmatic,
        STEPS - 1,
        "every kernel after the first depends programmatically on its predecessor: {edges:?}"
    );
    assert_eq!(edges.full, 0, "{edges:?}");
    // warm-up and capture ran the chain once more eagerly (warm-up) before the replays
    for _ in 0..3 {
        g.launch().unwrap();
    }
    assert_all(
        &e.dtoh(&x).unwrap(),
        (5 * STEPS) as f32,
        "replayed PDL graph",
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn pdl_off_captures_full_edges_and_can_be_switched() {
    let e = Engine::new(0).unwrap();
    assert!(!e.pdl());
    let one = e.htod(&vec![1.0f32; 1024]).unwrap();
    let mut y = e.zeros::<f32>(1024).unwrap();
    let plain = e
        .capture_graph(|eng| {
            for _ in 0..10 {
                eng.add(&one, &one, &mut y, 1024)?;
            }
            Ok(())
        })
        .unwrap();
    let edges = plain.edge_counts().unwrap();
    assert_eq!((edges.full, edges.programmatic), (9, 0), "{edges:?}");
    e.set_pdl(true).unwrap();
    let pdl = e
        .capture_graph(|eng| {
            for _ in 0..10 {
                eng.add(&one, &one, &mut y, 1024)?;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(pdl.edge_counts().unwrap().programmatic, 9);
    e.set_pdl(false).unwrap();
    pdl.launch().unwrap();
    plain.launch().unwrap();
    assert_all(&e.dtoh(&y).unwrap(), 2.0, "both graphs");
}

#[test]
#[ignore = "needs a CUDA device"]
fn while_graph_runs_exactly_k_times() {
    let e = Engine::new(0).unwrap();
    let mut counter = e.zeros::<u32>(1).unwrap();
    const K: u32 = 1000;
    let lg = e
        .capture_while(K, |eng, _stop| eng.count_step(&mut counter, None, 0))
        .unwrap();
    assert_eq!(lg.max_iterations(), K);
    assert_eq!(lg.body_nodes(), 2, "the step's kernel and the loop kernel");
    e.htod_into(&[0u32], &mut counter).unwrap();
    lg.launch().unwrap();
    assert_eq!(e.dtoh(&counter).unwrap(), [K]);
    assert_eq!(lg.counts().unwrap().last, K);
    for _ in 0..4 {
        lg.launch().unwrap();
    }
    assert_eq!(e.dtoh(&counter).unwrap(), [5 * K]);
    assert_eq!(lg.counts().unwrap().total, 5 * K);
}

#[test]
#[ignore = "needs a CUDA device"]
fn while_graph_stops_after_the_step_the_device_decides() {
    let e = Engine::new(0).unwrap();
    let mut counter = e.zeros::<u32>(1).unwrap();
    let lg = e
        .capture_while(1000, |eng, stop| {
            eng.count_step(&mut counter, Some(stop), 7)
        })
        .unwrap();
    e.htod_into(&[0u32], &mut counter).unwrap();
    for launch in 1..=3u32 {
        lg.launch().unwrap();
        assert_eq!(lg.counts().unwrap().last, 7, "launch {launch}");
        assert_eq!(e.dtoh(&counter).unwrap(), [7 * launch]);
    }
    // A limit below the device's stop: the limit wins.
    let mut c2 = e.zeros::<u32>(1).unwrap();
    let short = e
        .capture_while(5, |eng, stop| eng.count_step(&mut c2, Some(stop), 7))
        .unwrap();
    e.htod_into(&[0u32], &mut c2).unwrap();
    short.launch().unwrap();
    assert_eq!(short.counts().unwrap().last, 5);
    assert_eq!(e.dtoh(&c2).unwrap(), [5]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn while_graph_of_zero_iterations_runs_nothing() {
    let e = Engine::new(0).unwrap();
    let mut counter = e.zeros::<u32>(1).unwrap();
    let lg = e
        .capture_while(0, |eng, _| eng.count_step(&mut counter, None, 0))
        .unwrap();
    e.htod_into(&[0u32], &mut counter).unwrap();
    lg.launch().unwrap();
    assert_eq!(e.dtoh(&counter).unwrap(), [0]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn while_graph_holds_what_its_body_touched() {
    let e = Engine::new(0).unwrap();
    let one = e.htod(&vec![1.0f32; 4096]).unwrap();
    let mut acc = e.zeros::<f32>(4096).unwrap();
    let lg = e
        .capture_while(100, |eng, _| {
            let a = acc.clone();
            eng.add(&a, &one, &mut acc, 4096)
        })
        .unwrap();
    assert!(
        lg.graph().retained_bytes() >= 3 * 4096 * 4,
        "one, acc and the clones"
    );
    drop(one);
    drop(acc);
    for _ in 0..50 {
        lg.launch().unwrap();
    }
    assert_eq!(lg.counts().unwrap().total, 50 * 100);
    e.check_deferred().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_failing_body_leaves_the_engine_usable() {
    let e = Engine::new(0).unwrap();
    let mut small = e.zeros::<u32>(1).unwrap();
    let mut calls = 0;
    let err = e
        .capture_while(10, |eng, _| {
            calls += 1;
            if calls == 2 {
                // refused inside the capture: a host copy
                eng.htod_into(&[1u32], &mut small)
            } else {
                eng.count_step(&mut small, None, 0)
            }
        })
        .unwrap_err();
    assert!(
        matches!(err, memra_engine::Error::CaptureForbidden { .. }),
        "{err}"
    );
    assert!(!e.stream().is_capturing());
    e.count_step(&mut small, None, 0).unwrap();
    assert_eq!(e.dtoh(&small).unwrap(), [2]);
}
