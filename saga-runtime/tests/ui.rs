//! Compile-fail tests for `#[derive(Elicit)]`: each case's error must land on the user's
//! token and say what is wrong, why, and how to fix it.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
