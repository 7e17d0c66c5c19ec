//! What the type system must refuse. Runs under `cargo test` here, no GPU needed: the
//! programs are only compiled, and their errors compared with the `.stderr` files beside them.

#[test]
fn misuse_does_not_compile() {
    // trybuild drives cargo; a staged test executable run without cargo (on the GPU machine)
    // has nothing to compile with, and says so instead of failing.
    if std::env::var_os("CARGO").is_none() {
        eprintln!("compile-fail tests need cargo: run them with `cargo test`");
        return;
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/*.rs");
}
