//! Misuse that safe code can write must not corrupt memory: drop what a graph uses, then
//! replay it. Each case checks that the replay still computes into memory that is the graph's,
//! and that a buffer allocated after the drops (which may reuse freed addresses) is untouched.
//! Needs a GPU (`bash .gpu/run.sh tests`; `bash .gpu/run.sh sanitize soundness` for memcheck).

use memra_engine::Engine;

const N: usize = 1 << 20;

/// 1000 replays; `MEMRA_SOUNDNESS_REPLAYS` lowers it for racecheck, whose host-side records of
/// graph replays grow past 128 GiB of host memory at 1000.
fn replays() -> usize {
    std::env::var("MEMRA_SOUNDNESS_REPLAYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

fn all_equal(v: &[f32], want: f32) -> usize {
    v.iter().filter(|&&x| x != want).count()
}

#[test]
#[ignore = "needs a CUDA device"]
fn dropping_the_buffers_a_graph_uses_leaves_fresh_memory_untouched() {
    let e = Engine::new(0).unwrap();
    let a = e.htod(&vec![1.0f32; N]).unwrap();
    let mut y = e.zeros::<f32>(N).unwrap();
    let g = e.capture_graph(|x| x.add(&a, &a, &mut y, N)).unwrap();
    assert!(g.retained_bytes() >= 2 * N * 4, "a and y are the graph's");
    drop(y);
    drop(a);
    // Addresses freed by now would be handed out again here.
    let z = e.htod(&vec![7.0f32; 2 * N]).unwrap();
    for _ in 0..replays() {
        g.launch().unwrap();
    }
    e.stream().synchronize().unwrap();
    assert_eq!(
        all_equal(&e.dtoh(&z).unwrap(), 7.0),
        0,
        "a replay wrote into z"
    );
    drop(g);
    e.check_deferred().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn dropping_the_keeper_leaves_the_graph_its_memory() {
    let e = Engine::new(0).unwrap();
    let a = e.htod(&vec![1.5f32; N]).unwrap();
    let mut out = e.zeros::<f32>(N).unwrap();
    let (g, keeper) = e
        .capture_graph_retained(|eng| {
            let mut t = eng.zeros::<f32>(N)?; // made and dropped inside the step
            eng.add(&a, &a, &mut t, N)?;
            eng.add(&t, &a, &mut out, N)
        })
        .unwrap();
    let held = keeper.bytes();
    drop(keeper);
    assert_eq!(g.retained_bytes(), held);
    let z = e.htod(&vec![7.0f32; 2 * N]).unwrap();
    for _ in 0..replays() {
        g.launch().unwrap();
    }
    assert_eq!(
        all_equal(&e.dtoh(&z).unwrap(), 7.0),
        0,
        "a replay wrote into z"
    );
    assert_eq!(
        all_equal(&e.dtoh(&out).unwrap(), 4.5),
        0,
        "replays computed 1.5*3"
    );
    drop(g);
    e.check_deferred().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn dropping_the_engine_leaves_the_graph_its_engine() {
    let e = Engine::new(0).unwrap();
    let a = e.htod(&vec![2.0f32; N]).unwrap();
    let mut y = e.zeros::<f32>(N).unwrap();
    let (g, keeper) = e
        .capture_graph_retained(|eng| eng.add(&a, &a, &mut y, N))
        .unwrap();
    drop(e);
    drop(a);
    drop(keeper);
    // A second engine on the same device allocates from the same pool of addresses.
    let other = Engine::new(0).unwrap();
    let z = other.htod(&vec![7.0f32; 2 * N]).unwrap();
    for _ in 0..replays() {
        g.launch().unwrap();
    }
    let ge = g.engine();
    assert_eq!(
        all_equal(&ge.dtoh(&y).unwrap(), 4.0),
        0,
        "replays computed 2+2"
    );
    assert_eq!(all_equal(&other.dtoh(&z).unwrap(), 7.0), 0);
    drop(y);
    drop(g);
    ge.check_deferred().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_buffer_freed_right_after_queued_work_waits_for_it() {
    let e = Engine::new(0).unwrap();
    let mut sink = e.zeros::<u32>(1).unwrap();
    let big = e.zeros::<f32>(N).unwrap();
    let mut out = e.zeros::<f32>(N).unwrap();
    // Keep the stream busy for ~20 ms, queue work on `big`, and drop it at once: the free must
    // wait for the kernel, and memory allocated next must not be written by it.
    e.spin(
        20_000_000,
        memra_engine::LaunchShape::linear(1, 32),
        Some(&mut sink),
    )
    .unwrap();
    e.add(&big, &big, &mut out, N).unwrap();
    drop(out);
    drop(big);
    let z = e.htod(&vec![7.0f32; 2 * N]).unwrap();
    assert_eq!(all_equal(&e.dtoh(&z).unwrap(), 7.0), 0);
    e.check_deferred().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn eager_peer_copies_are_ordered_with_the_destination_stream() {
    let (a, b) = (Engine::new(0).unwrap(), Engine::new(0).unwrap());
    let src = a.htod(&vec![3.0f32; N]).unwrap();
    let mut dst = b.zeros::<f32>(N).unwrap();
    let mut sink = a.zeros::<u32>(1).unwrap();
    // A long kernel ahead of the copy on A: B's add must still see the copied values.
    a.spin(
        5_000_000,
        memra_engine::LaunchShape::linear(1, 32),
        Some(&mut sink),
    )
    .unwrap();
    a.copy_to_peer(&src, &b, &mut dst, N).unwrap();
    let mut y = b.zeros::<f32>(N).unwrap();
    b.add(&dst, &dst, &mut y, N).unwrap();
    assert_eq!(all_equal(&b.dtoh(&y).unwrap(), 6.0), 0);
}
