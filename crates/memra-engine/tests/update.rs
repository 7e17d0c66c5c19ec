//! Changing a built graph: exec update (with its refusal and the fallback), per-node argument
//! updates, device-side parameters, and the memory a set of graphs gives back. Run with
//! `--include-ignored` on the GPU machine.

use memra_engine::{DeviceBuffer, Engine, Error};

const N: usize = 4096;

fn engine() -> Engine {
    Engine::new(0).expect("a CUDA device at ordinal 0")
}

fn filled(e: &Engine, v: f32) -> DeviceBuffer<f32> {
    e.htod(&vec![v; N]).unwrap()
}

fn all(e: &Engine, y: &DeviceBuffer<f32>) -> f32 {
    let v = e.dtoh(y).unwrap();
    assert!(
        v.iter().all(|&x| x == v[0]),
        "not uniform: {} .. {}",
        v[0],
        v[N - 1]
    );
    v[0]
}

#[test]
#[ignore = "needs a CUDA device"]
fn update_follows_changed_pointers_and_holds_the_new_buffers() {
    let e = engine();
    let (a0, b) = (filled(&e, 1.0), filled(&e, 0.5));
    let mut y = e.zeros::<f32>(N).unwrap();
    let mut g = e.capture_graph(|eng| eng.add(&a0, &b, &mut y, N)).unwrap();
    g.launch().unwrap();
    assert_eq!(all(&e, &y), 1.5);
    let a1 = filled(&e, 2.0);
    let r = g.update(|eng| eng.add(&a1, &b, &mut y, N)).unwrap();
    assert!(r.reinstantiate.is_none());
    drop(a1); // the updated graph holds it
    drop(a0);
    for _ in 0..10 {
        g.launch().unwrap();
    }
    assert_eq!(all(&e, &y), 2.5);
    e.check_deferred().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_topology_change_is_refused_and_reinstantiated() {
    let e = engine();
    let (a, b) = (filled(&e, 1.0), filled(&e, 1.0));
    let mut y = e.zeros::<f32>(N).unwrap();
    let mut t = e.zeros::<f32>(N).unwrap();
    let mut g = e
        .capture_graph(|eng| eng.add(&a, &b, &mut y, N)) // y = 2
        .unwrap();
    fn longer(
        eng: &Engine,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        t: &mut DeviceBuffer<f32>,
        y: &mut DeviceBuffer<f32>,
    ) -> memra_engine::Result<()> {
        eng.add(a, b, t, N)?; // t = 2
        eng.add(t, b, y, N) // y = 3
    }
    let err = g
        .update(|eng| longer(eng, &a, &b, &mut t, &mut y))
        .unwrap_err();
    match &err {
        Error::GraphUpdate { result, .. } => {
            assert!(result.contains("TOPOLOGY_CHANGED"), "{err}")
        }
        other => panic!("expected a refused update, got {other}"),
    }
    // Refused: the graph is the old one and still works.
    g.launch().unwrap();
    assert_eq!(all(&e, &y), 2.0);
    let r = g
        .update_or_reinstantiate(|eng| longer(eng, &a, &b, &mut t, &mut y))
        .unwrap();
    assert!(r.reinstantiate.is_some(), "{r:?}");
    assert_eq!(g.node_count(), 2);
    g.launch().unwrap();
    assert_eq!(all(&e, &y), 3.0);
}

#[test]
#[ignore = "needs a CUDA device"]
fn set_kernel_node_changes_one_node_and_checks_its_arguments() {
    let e = engine();
    let (a0, a1, b) = (filled(&e, 1.0), filled(&e, 2.0), filled(&e, 0.5));
    let mut ys: Vec<DeviceBuffer<f32>> = (0..5).map(|_| e.zeros(N).unwrap()).collect();
    let mut g = e
        .capture_graph(|eng| {
            for y in ys.iter_mut() {
                eng.add(&a0, &b, y, N)?;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(g.kernel_node_count().unwrap(), 5);
    let call = e.add_call(&a1, &b, &mut ys[2], N).unwrap();
    g.set_kernel_node(2, call).unwrap();
    drop(a1); // held by the graph now
    g.launch().unwrap();
    let got: Vec<f32> = ys.iter().map(|y| all(&e, y)).collect();
    assert_eq!(got, [1.5, 1.5, 2.5, 1.5, 1.5]);

    // A call is checked like the op: no node can be set to read or write past a buffer.
    let err = e.add_call(&a0, &b, &mut ys[0], N + 1).unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
    let call = e.add_call(&a0, &b, &mut ys[0], N).unwrap();
    let err = g.set_kernel_node(5, call).unwrap_err();
    assert!(err.to_string().contains("kernel node 5 of 5"), "{err}");
    // A call made on another engine (another stream of the same device) is refused.
    let other = engine();
    let (oa, ob) = (filled(&other, 1.0), filled(&other, 1.0));
    let mut oy = other.zeros::<f32>(N).unwrap();
    let call = other.add_call(&oa, &ob, &mut oy, N).unwrap();
    let err = g.set_kernel_node(0, call).unwrap_err();
    assert!(matches!(err, Error::ForeignBuffer { .. }), "{err}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_side_window_moves_without_touching_the_graph_and_stays_in_bounds() {
    let e = engine();
    // a holds two inputs back to back: [1.0; N] then [2.0; N]
    let mut host = vec![1.0f32; N];
    host.extend(vec![2.0f32; N]);
    let a = e.htod(&host).unwrap();
    let b = filled(&e, 0.5);
    let mut y = e.zeros::<f32>(N).unwrap();
    let mut win = e.htod(&[0u32, N as u32]).unwrap();
    let g = e
        .capture_graph(|eng| eng.add_window(&a, &b, &mut y, &win, 0))
        .unwrap();
    g.launch().unwrap();
    assert_eq!(all(&e, &y), 1.5);
    e.htod_into(&[N as u32, N as u32], &mut win).unwrap();
    g.launch().unwrap();
    assert_eq!(all(&e, &y), 2.5);
    // A window past the end of `a` writes nothing (and reads nothing outside it).
    e.htod_into(&[2 * N as u32 - 10, N as u32], &mut win)
        .unwrap();
    e.memset_zero(&mut y, N * 4).unwrap();
    g.launch().unwrap();
    let v = e.dtoh(&y).unwrap();
    assert!(v[..10].iter().all(|&x| x == 2.5), "{:?}", &v[..12]);
    assert!(v[10..].iter().all(|&x| x == 0.0));
    let err = e.add_window(&a, &b, &mut y, &win, 1).unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_bucket_set_gives_its_memory_back_when_dropped() {
    let e = engine();
    let b = filled(&e, 1.0);
    // The driver sets up what graphs need in a context once, at the first graph, and keeps it:
    // build and drop one first, so the comparison sees only what the bucket set holds.
    let mut y0 = e.zeros::<f32>(N).unwrap();
    drop(e.capture_graph(|eng| eng.add(&b, &b, &mut y0, N)).unwrap());
    e.stream().synchronize().unwrap();
    let before = e.mem_get_info().unwrap().0;
    let mut graphs = Vec::new();
    for size in [1usize, 2, 4, 8, 16, 32, 64, 128] {
        let n = size * 1024;
        let mut y = e.zeros::<f32>(n).unwrap();
        let a = e.htod(&vec![1.0f32; n]).unwrap();
        let bb = b.clone();
        let g = e
            .capture_graph(|eng| {
                let t = a.clone(); // allocated inside the capture
                eng.add(&t, &bb, &mut y, n.min(N))
            })
            .unwrap();
        graphs.push(g);
    }
    e.stream().synchronize().unwrap();
    let held = e.mem_get_info().unwrap().0;
    assert!(held < before, "the bucket set holds memory");
    drop(graphs);
    e.stream().synchronize().unwrap();
    assert_eq!(e.mem_get_info().unwrap().0, before);
    let gm = e.graph_memory().unwrap();
    assert_eq!(gm.used_current, 0, "{gm:?}");
}
