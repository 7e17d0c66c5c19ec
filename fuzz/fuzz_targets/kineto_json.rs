//! Any bytes given to the Kineto / Chrome-trace JSON reader: an error or a walk, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(w) = launch_econ::trace::kineto::read(data, "fuzz.json") {
        let _ = launch_econ::trace::summarize(&w, 5);
    }
});
