//! HTTP: the Streamable HTTP transport and what it must withstand, over raw HTTP against
//! servers in this process or examples run as their own processes: refused tokens and
//! answers, attacks and their bounds, the direct path against rmcp's, sessions (MCP
//! 2025-11-25) and their caps, processes killed mid-saga, and single-use tokens.
//!
//! One binary: `cargo test -p saga-workspace --test http`, or one file of it with `cargo test -p saga-workspace --test http
//! attacks::`. The helpers are `saga_examples::harness` (`examples/support/harness/`); the
//! raw-HTTP client is its `http` module.

mod attacks;
mod attacks_sessions;
mod credentials;
mod direct;
mod effects_crash;
mod faults;
mod fifth_review;
mod hardening;
mod http_errors;
mod own_routes;
mod pools;
mod retries;
mod server_model;
mod session;
mod session_bounds;
mod session_owners;
mod single_use;
mod stores;
mod wire_page;
