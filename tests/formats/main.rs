//! Formats: the wire formats a saga's rounds travel in, each driven end to end. MCP
//! 2026-07-28's multi round-trip requests (rmcp's own client, checkpoints, prompts and
//! resources, a server written with rmcp's macros) and the older proposals (seeds 000 to
//! 003: `tools/callSaga`, dependent requests, resumable requests, resume tokens).
//!
//! One binary: `cargo test -p saga-workspace --test formats`, or one file of it with `cargo test --test
//! formats tools_call_saga::`. The helpers are `saga_examples::harness`
//! (`examples/support/harness/`).

mod catalog;
mod checkpoint;
mod dependent_requests;
mod e2e;
mod keeps_json;
mod research;
mod research_pages;
mod resumable_requests;
mod resumable_requests_stateless;
mod resume_token;
mod rmcp_integration;
mod tools_call_saga;
