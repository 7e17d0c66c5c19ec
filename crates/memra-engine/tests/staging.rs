//! Host↔device copies through page-locked staging memory: both directions carry the data,
//! a graph captures them as copy nodes and holds the staging block, and bad lengths or a
//! foreign engine are refused. Needs a GPU (`bash .gpu/run.sh tests staging`).

use memra_engine::{Engine, Error};

const N: usize = 1 << 16;

fn pattern(seed: u32) -> Vec<u32> {
    (0..N as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) ^ seed)
        .collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn data_goes_to_the_host_and_back() {
    let e = Engine::new(0).unwrap();
    let a = e.htod(&pattern(1)).unwrap();
    let mut host = e.host_staging(N * 4).unwrap();
    let mut b = e.zeros::<u32>(N).unwrap();
    e.copy_to_host(&a, &mut host, N * 4).unwrap();
    e.copy_from_host(&host, &mut b, N * 4).unwrap();
    assert_eq!(e.dtoh(&b).unwrap(), pattern(1));
    // A part of the block: only the first half arrives.
    let mut c = e.zeros::<u32>(N).unwrap();
    e.copy_from_host(&host, &mut c, N * 2).unwrap();
    let got = e.dtoh(&c).unwrap();
    assert_eq!(&got[..N / 2], &pattern(1)[..N / 2]);
    assert!(got[N / 2..].iter().all(|&x| x == 0));
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_graph_copies_through_staging_it_holds() {
    let e = Engine::new(0).unwrap();
    let mut a = e.htod(&pattern(2)).unwrap();
    let mut b = e.zeros::<u32>(N).unwrap();
    let mut host = e.host_staging(N * 4).unwrap();
    let g = e
        .capture_graph(|x| {
            x.copy_to_host(&a, &mut host, N * 4)?;
            x.copy_from_host(&host, &mut b, N * 4)
        })
        .unwrap();
    assert!(
        g.retained_bytes() >= 3 * N * 4,
        "a, b and the staging block are the graph's"
    );
    // The graph keeps the staging block after its owner lets go.
    drop(host);
    e.htod_into(&pattern(3), &mut a).unwrap();
    g.launch().unwrap();
    e.stream().synchronize().unwrap();
    assert_eq!(
        e.dtoh(&b).unwrap(),
        pattern(3),
        "the replay copied the new data"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn lengths_and_owners_are_checked() {
    let e = Engine::new(0).unwrap();
    let a = e.zeros::<u32>(N).unwrap();
    let mut small = e.host_staging(16).unwrap();
    let err = e.copy_to_host(&a, &mut small, 32).unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
    let mut b = e.zeros::<u32>(2).unwrap();
    let big = e.host_staging(N * 4).unwrap();
    let err = e.copy_from_host(&big, &mut b, 16).unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
    // Zero bytes is a no-op, also on an empty block.
    let mut empty = e.host_staging(0).unwrap();
    e.copy_to_host(&a, &mut empty, 0).unwrap();
    // A block of another engine is refused.
    let other = Engine::new(0).unwrap();
    let err = other.copy_from_host(&big, &mut b, 4).unwrap_err();
    assert!(matches!(err, Error::ForeignBuffer { .. }), "{err}");
}
