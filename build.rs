//! The examples and end-to-end tests compare each saga's state machine with its plain run
//! (`tests/corpus`): `#[saga_tool]` compiles that second copy of a saga's body only for a
//! crate built with `SAGA_PLAIN_RUN=1`, so that a user's crate has rustc check the body
//! once (and report an error in it once).

fn main() {
    println!("cargo::rustc-env=SAGA_PLAIN_RUN=1");
    println!("cargo::rerun-if-changed=build.rs");
}
