//! `launch-econ`: prices kernel-launch overhead on the GPU at hand. See the README.

fn main() {
    std::process::exit(launch_econ::run(std::env::args_os()));
}
