//! Streamable HTTP: one POST endpoint at `/mcp`, served statelessly through rmcp, behind
//! the bounds of [`HttpLimits`](crate::serve::HttpLimits). The transport is the `http`
//! feature (on by default); the limits and the JSON checks it applies live below it
//! (`serve::limits`, `serve::json_check`), shared with stdio.

#[cfg(feature = "http")]
mod catalog_requests;
#[cfg(feature = "http")]
mod client_notices;
#[cfg(feature = "http")]
mod direct;
#[cfg(feature = "http")]
mod guard;
#[cfg(feature = "http")]
mod hosts;
#[cfg(feature = "http")]
mod listener;
#[cfg(feature = "http")]
mod lists;
#[cfg(feature = "http")]
mod message;
#[cfg(feature = "http")]
mod notified;
#[cfg(feature = "http")]
mod owners;
#[cfg(feature = "http")]
mod refuse;
#[cfg(feature = "http")]
mod reply;
#[cfg(feature = "http")]
mod routes;
#[cfg(feature = "http")]
mod seed_calls;
#[cfg(feature = "http")]
mod streams;
#[cfg(feature = "http")]
mod task_requests;
#[cfg(feature = "http")]
mod tool_list;
#[cfg(feature = "http")]
mod transport;
#[cfg(feature = "http")]
mod unserved;

#[cfg(feature = "http")]
pub use transport::{QUIET_SESSION_IDS, default_http_config};

/// The path the MCP endpoint is mounted at.
pub const MCP_PATH: &str = "/mcp";
