//! Leaks and lifetimes over many cycles: device free memory and host RSS must not grow.
//! Needs a GPU (`bash .gpu/run.sh tests`).

use memra_engine::Engine;

const CYCLES: usize = 1000;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|v| v.parse().unwrap_or(0)))
        })
        .unwrap_or(0)
}

fn free(e: &Engine) -> usize {
    e.stream().synchronize().unwrap();
    e.mem_get_info().unwrap().0
}

/// Host memory may move by allocator noise; a leak of one buffer or module per cycle over
/// 1000 cycles would exceed this many KiB by far.
const RSS_SLACK_KIB: u64 = 8 * 1024;

#[test]
#[ignore = "needs a CUDA device"]
fn engine_create_and_drop_cycles_do_not_leak() {
    // One engine stays, so the primary context lives across cycles (as in a real program).
    let base = Engine::new(0).unwrap();
    let cycle = || {
        let e = Engine::new(0).unwrap();
        let a = e.htod(&[1.0f32; 256]).unwrap();
        let mut y = e.zeros::<f32>(256).unwrap();
        e.add(&a, &a, &mut y, 256).unwrap();
        e.stream().synchronize().unwrap();
        let r = e.kernel_init_report();
        assert_eq!(r.cache_hits + r.compiled, 5, "five .cu sources: {r:?}");
    };
    for _ in 0..10 {
        cycle();
    }
    let (f0, r0) = (free(&base), rss_kib());
    for _ in 0..CYCLES {
        cycle();
    }
    let (f1, r1) = (free(&base), rss_kib());
    assert_eq!(
        f1, f0,
        "device free memory changed over {CYCLES} engine cycles"
    );
    assert!(r1 <= r0 + RSS_SLACK_KIB, "RSS grew from {r0} to {r1} KiB");
    base.check_deferred().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn capture_launch_drop_cycles_do_not_leak_in_either_drop_order() {
    let e = Engine::new(0).unwrap();
    let n = 4096;
    let a = e.htod(&vec![0.5f32; n]).unwrap();
    let mut out = e.zeros::<f32>(n).unwrap();
    let mut cycle = |i: usize| {
        let (graph, keeper) = e
            .capture_graph_retained(|eng| {
                let mut t = a.clone();
                eng.add(&a, &a, &mut t, n)?;
                eng.copy(&t, &mut out, n)
            })
            .unwrap();
        graph.launch().unwrap();
        if i % 2 == 0 {
            drop(graph);
            drop(keeper);
        } else {
            // Keeper first: the graph still holds the memory; it goes back when the graph drops.
            drop(keeper);
            drop(graph);
        }
    };
    for i in 0..10 {
        cycle(i);
    }
    let (f0, r0) = (free(&e), rss_kib());
    for i in 0..CYCLES {
        cycle(i);
    }
    let (f1, r1) = (free(&e), rss_kib());
    assert_eq!(
        f1, f0,
        "device free memory changed over {CYCLES} capture cycles"
    );
    assert!(r1 <= r0 + RSS_SLACK_KIB, "RSS grew from {r0} to {r1} KiB");
    assert_eq!(e.dtoh(&out).unwrap(), vec![1.0f32; n]);
}
