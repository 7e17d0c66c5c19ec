use super::*;

#[test]
fn each_write_gets_its_own_target_until_the_bytes_run_out() {
    let mut t = WriteTargets::default();
    assert_eq!(t.place(1 << 20), 0);
    assert_eq!(t.place(16), 1);
    assert_eq!(t.place(1 << 20), 2);
    assert_eq!(t.sizes, vec![1 << 20, 16, 1 << 20]);
}

#[test]
fn beyond_the_bytes_writes_take_placed_targets_large_enough_in_turn() {
    let mut t = WriteTargets::default();
    let half = WRITE_TARGET_BYTES / 2;
    assert_eq!(t.place(half), 0);
    assert_eq!(t.place(16), 1);
    assert_eq!(t.place(half - 16), 2);
    // Full: small writes take the targets in turn; a half-sized one skips those smaller.
    assert_eq!(t.place(8), 0);
    assert_eq!(t.place(8), 1);
    assert_eq!(t.place(half), 0);
    assert_eq!(t.place(8), 1);
    assert_eq!(t.place(8), 2);
    // Larger than any placed target: a new one.
    assert_eq!(t.place(half + 1), 3);
    assert_eq!(t.sizes.len(), 4);
}
