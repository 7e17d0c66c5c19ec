//! The way users write against the engine (the shape of the seed program, in our own words):
//! `Engine::new`, `htod`, `add`, `stream().synchronize()`, `capture_graph_retained` with a
//! closure that clones a buffer, `graph.launch()`, errors into `Box<dyn Error>`. Compiling this
//! file is the check that the API keeps that shape; running it needs a GPU.

use memra_engine::Engine;

fn price_round(launches: usize) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let engine = Engine::new(0)?;
    let x = engine.htod(&vec![3.0f32; 4096])?;
    let z = engine.htod(&vec![4.0f32; 4096])?;
    let mut out = engine.htod(&vec![0.0f32; 4096])?;
    for _ in 0..8 {
        engine.add(&x, &z, &mut out, 4096)?;
    }
    engine.stream().synchronize()?;
    let started = std::time::Instant::now();
    for _ in 0..launches {
        engine.add(&x, &z, &mut out, 4096)?;
    }
    engine.stream().synchronize()?;
    let eager = started.elapsed().as_secs_f64() / launches as f64;

    let (graph, _keep) = engine.capture_graph_retained(|eng| {
        let mut copy = out.clone();
        for _ in 0..launches {
            eng.add(&x, &z, &mut copy, 4096)?;
        }
        Ok(())
    })?;
    graph.launch()?;
    engine.stream().synchronize()?;
    let started = std::time::Instant::now();
    graph.launch()?;
    engine.stream().synchronize()?;
    let replay = started.elapsed().as_secs_f64() / launches as f64;
    assert_eq!(engine.dtoh(&out)?, vec![7.0f32; 4096]);
    Ok((eager, replay))
}

#[test]
#[ignore = "needs a CUDA device"]
fn the_seed_shape_runs() {
    let (eager, replay) = price_round(128).unwrap();
    assert!(eager > 0.0 && replay > 0.0);
}
