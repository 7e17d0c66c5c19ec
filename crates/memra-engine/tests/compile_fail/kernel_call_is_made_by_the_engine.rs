// A kernel node may only be set from a call the engine checked: safe code cannot build one with
// its own kernel, shape and arguments (which could point a node past its buffers).
use memra_engine::{Graph, Kernel, KernelCall};

fn f(g: &mut Graph) {
    let call = KernelCall {
        kernel: Kernel::AddF32,
    };
    g.set_kernel_node(0, call).unwrap();
}

fn main() {}
