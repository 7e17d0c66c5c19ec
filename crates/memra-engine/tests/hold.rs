//! Holding the stream until the host releases it: queued work waits for the release, a hold
//! nobody releases runs out and says so, a dropped hold lets the stream go, and a capture
//! refuses it. Needs a GPU (`bash .gpu/run.sh tests hold`).

use std::time::Duration;

use memra_engine::{Engine, Error};

/// Long enough that no test run reaches it: a hold that ends sooner was released.
const LONG: Duration = Duration::from_secs(120);

#[test]
#[ignore = "needs a CUDA device"]
fn queued_work_waits_for_the_release() {
    let e = Engine::new(0).unwrap();
    let n = 4096;
    let a = e.htod(&vec![1.0f32; n]).unwrap();
    let b = e.htod(&vec![2.0f32; n]).unwrap();
    let mut y = e.zeros::<f32>(n).unwrap();
    let hold = e.hold_stream(LONG).unwrap();
    e.add(&a, &b, &mut y, n).unwrap();
    let after = e.event().unwrap();
    after.record().unwrap();
    assert!(
        !after.query().unwrap(),
        "the add ran before the host released the stream"
    );
    assert!(hold.release().unwrap(), "the hold lasted until the release");
    assert!(after.query().unwrap(), "release drains the stream");
    assert!(e.dtoh(&y).unwrap().iter().all(|&v| v == 3.0));
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_hold_nobody_releases_runs_out_and_says_so() {
    let e = Engine::new(0).unwrap();
    let hold = e.hold_stream(Duration::from_millis(1)).unwrap();
    // The host has not written the release word: only the timeout can end the kernel.
    e.stream().synchronize().unwrap();
    assert!(!hold.release().unwrap(), "the hold reports that it ran out");
}

#[test]
#[ignore = "needs a CUDA device"]
fn dropping_a_hold_lets_the_stream_go() {
    let e = Engine::new(0).unwrap();
    let hold = e.hold_stream(LONG).unwrap();
    drop(hold);
    // Returns at once when the drop released the kernel (else only after LONG).
    e.stream().synchronize().unwrap();
    // The stream is usable after the hold, and a new hold works the same.
    let again = e.hold_stream(LONG).unwrap();
    assert!(again.release().unwrap());
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_capture_refuses_a_hold() {
    let e = Engine::new(0).unwrap();
    let Err(err) = e.capture_graph(|x| x.hold_stream(LONG).map(drop)) else {
        panic!("a capture took a hold");
    };
    assert!(
        matches!(
            err,
            Error::CaptureForbidden {
                op: "hold_stream",
                ..
            }
        ),
        "{err}"
    );
}
