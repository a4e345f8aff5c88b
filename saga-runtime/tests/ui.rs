//! Compile-fail tests for `#[saga_tool]`, `#[saga_fn]` and `#[derive(Elicit)]`: each
//! case's error must land on the user's token, say what is wrong, why, and how to fix it,
//! and be the only error for its mistake.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
