//! Streamable HTTP: one POST endpoint at `/mcp`, served statelessly through rmcp, behind
//! the bounds of [`HttpLimits`]. The transport itself is the `http` feature (on by
//! default); the limits and the JSON checks are shared with stdio and always compiled.

#[cfg(feature = "http")]
mod direct;
#[cfg(feature = "http")]
mod guard;
#[cfg(feature = "http")]
mod hosts;
pub(crate) mod json_check;
mod limits;
#[cfg(feature = "http")]
mod listener;
#[cfg(feature = "http")]
mod owners;
#[cfg(feature = "http")]
mod refuse;
#[cfg(feature = "http")]
mod reply;
#[cfg(feature = "http")]
mod routes;
#[cfg(feature = "http")]
mod streams;
#[cfg(feature = "http")]
mod tool_list;
#[cfg(feature = "http")]
mod transport;
#[cfg(feature = "http")]
pub(crate) mod tries;

pub use limits::{DEFAULT_MAX_BODY_BYTES, HttpLimits};
#[cfg(feature = "http")]
pub(crate) use owners::SessionGone;
#[cfg(feature = "http")]
pub use transport::{QUIET_SESSION_IDS, default_http_config};

/// The path the MCP endpoint is mounted at.
pub const MCP_PATH: &str = "/mcp";
