// A buffer moved into a step closure cannot be dropped by the caller while the closure lives.
use memra_engine::Engine;

fn f(e: &Engine) {
    let a = e.zeros::<f32>(4).unwrap();
    let mut y = e.zeros::<f32>(4).unwrap();
    let step = |x: &Engine| x.add(&a, &a, &mut y, 4);
    drop(a);
    let _ = e.capture_graph(step);
}

fn main() {}
