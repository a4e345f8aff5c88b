//! Formats: the wire formats a saga's rounds travel in, each driven end to end. MCP
//! 2026-07-28's multi round-trip requests (rmcp's own client, checkpoints, prompts and
//! resources, a server written with rmcp's macros) and the older proposals (seeds 000 to
//! 003: `tools/callSaga`, dependent requests, resumable requests, resume tokens).
//!
//! One binary: `cargo test --test formats`, or one file of it with `cargo test --test
//! formats seed_call_saga::`. The helpers are `saga_examples::harness`
//! (`examples/support/harness/`).

mod catalog;
mod checkpoint;
mod e2e;
mod keeps_json;
mod rmcp_integration;
mod seed_call_saga;
mod seed_dependent_requests;
mod seed_resumable_requests;
mod seed_resumable_stateless;
mod seed_resume_token;
