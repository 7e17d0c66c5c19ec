// A kernel's output may not be one of its inputs: the borrow checker refuses the aliasing.
use memra_engine::{DeviceBuffer, Engine};

fn f(e: &Engine, y: &mut DeviceBuffer<f32>) {
    e.add(y, y, y, 4).unwrap();
}

fn main() {}
