//! The caller, as a tool sees it: who calls and what their client can do ([`context`]), the
//! generation of MCP they speak ([`era`]), whom a bound protects ([`pool`]), the model the
//! server may sample with ([`model`]), where a stateless call's notifications go when saga
//! writes its response ([`outbox`]), what a call can fail with ([`error`]), and how
//! large its saved state is ([`state_size`]).
//!
//! Uses `identity` only (an error names the point a token was refused at).

pub(crate) mod context;
pub(crate) mod era;
pub(crate) mod error;
pub mod model;
pub(crate) mod outbox;
pub(crate) mod pool;
pub(crate) mod state_size;
pub(crate) mod tool_use;
