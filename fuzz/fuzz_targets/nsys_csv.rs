//! Any bytes given to the Nsight Systems CSV reader: an error or a walk, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(w) = launch_econ::trace::nsys::read(data, "fuzz.csv") {
        let _ = launch_econ::trace::summarize(&w, 5);
    }
});
