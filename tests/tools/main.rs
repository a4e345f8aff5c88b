//! Tools: what an author of tools meets: the examples' tools and a newcomer's first hour
//! tested with `saga_runtime::testing`, and the diagrams against their snapshots.
//!
//! One binary: `cargo test -p saga-workspace --test tools`, or one file of it with `cargo test -p saga-workspace --test tools
//! diagrams::`. The helpers are `saga_examples::harness` (`examples/support/harness/`).

mod advice;
mod arguments;
mod constants;
mod diagrams;
mod examples_tested;
mod first_hour;
mod json_values;
mod outgrown;
mod realistic;
mod routes;
mod server_model;
mod state_values;
mod tool_sampling;
