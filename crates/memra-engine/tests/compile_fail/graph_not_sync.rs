// One executable graph must not be launched from two threads at once.
use memra_engine::Graph;

fn shared<T: Sync>(_: &T) {}

fn f(g: &Graph) {
    shared(g);
}

fn main() {}
