//! `replay --spin-fit`: timed spins shifted in the walk's own graph, by default on every stream
//! (`graph`), only on streams that keep streaming stand-ins with `streamed`.

use crate::common::{assert_usage_error, fixture, json_of, replay, stderr_of, succeeds};

/// By default a walk of spins only (no streaming stand-in to size) still runs its graph
/// rounds, the replay says the spins were fitted, and the JSON records the setting;
/// `--spin-fit streamed` fits nothing on such a walk and says nothing.
#[test]
#[ignore = "needs a CUDA device"]
fn spins_fitted_in_the_graph_say_so() {
    let fx = fixture("nsys_wide_short_kernels.csv");
    let out = succeeds(&replay(&fx, "--trials 2 --reps 3 --export-json -"));
    let stderr = stderr_of(&out);
    assert!(stderr.contains("(--spin-fit graph)"), "{stderr}");
    let v = json_of(&out);
    let r = &v["result"]["replay"];
    assert_eq!(r["config"]["spin_fit"], "graph", "{}", r["config"]);
    assert!(r["summary"]["graph_gpu_ms"]["median"].as_f64().unwrap() > 0.0);
    let streamed = succeeds(&replay(
        &fx,
        "--trials 2 --reps 3 --spin-fit streamed --export-json -",
    ));
    assert!(!stderr_of(&streamed).contains("--spin-fit"));
    assert_eq!(
        json_of(&streamed)["result"]["replay"]["config"]["spin_fit"],
        "streamed"
    );
}

/// On a walk with a streaming stand-in `--spin-fit streamed` fits its stream's spins and says
/// so; `--spin-fit off` does not.
#[test]
#[ignore = "needs a CUDA device"]
fn streamed_fits_spins_where_a_stand_in_streams() {
    let fx = fixture("kineto_step.json");
    let out = succeeds(&replay(
        &fx,
        "--trials 2 --reps 3 --spin-fit streamed --export-json -",
    ));
    let stderr = stderr_of(&out);
    let v = json_of(&out);
    let r = &v["result"]["replay"];
    assert!(r["fidelity"]["streaming_stand_ins"].as_u64().unwrap() >= 1);
    assert!(stderr.contains("(--spin-fit streamed)"), "{stderr}");
    assert_eq!(r["config"]["spin_fit"], "streamed", "{}", r["config"]);
    let off = succeeds(&replay(
        &fx,
        "--trials 2 --reps 3 --spin-fit off --export-json -",
    ));
    assert!(!stderr_of(&off).contains("--spin-fit"));
    assert_eq!(
        json_of(&off)["result"]["replay"]["config"]["spin_fit"],
        "off"
    );
}

/// A `--spin-fit` value other than `off`, `streamed` or `graph` is a usage error naming the
/// option.
#[test]
fn an_unknown_spin_fit_is_a_usage_error() {
    let fx = fixture("nsys_wide_short_kernels.csv");
    assert_usage_error(replay(&fx, "--spin-fit some"), "--spin-fit");
}
