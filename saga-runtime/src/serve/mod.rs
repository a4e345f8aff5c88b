//! Serving saga tools: the [`SagaServer`] rmcp handler, its HTTP and stdio transports, and
//! the [`SagaTools`] registry for use inside other rmcp servers.

#[cfg(feature = "oauth")]
pub mod auth;
mod builder;
mod catalog;
mod head;
mod http;
mod in_flight;
pub(crate) mod json_check;
mod limits;
mod principal;
mod replay;
pub(crate) mod route;
mod samples;
mod server;
mod session;
mod stdio;
#[cfg(feature = "http")]
mod streamed;
mod tools;
#[cfg(feature = "http")]
mod tries;
pub(crate) mod wire;

pub use crate::engine::pool::{UNVERIFIED_PART, VerifiedPrincipal};
pub use crate::engine::{InspectError, MAX_REPLAYED_CHECKPOINTS};
pub use builder::{Builder, SagaServerBuilder, SagaToolsBuilder};
pub use http::MCP_PATH;
#[cfg(feature = "http")]
pub use http::{QUIET_SESSION_IDS, default_http_config};
pub use limits::{DEFAULT_MAX_BODY_BYTES, HttpLimits};
pub use principal::{
    ANONYMOUS, AuthenticateFn, PrincipalFn, authorization_digest, principal_from_headers,
};
pub use server::{
    DEFAULT_LIST_TTL, DEFAULT_TTL, MAX_SUBSCRIBED_BYTES, MAX_SUBSCRIBED_URI_LEN, MAX_SUBSCRIPTIONS,
    SagaServer,
};
pub use session::MAX_ASKS_AGAIN;
pub use tools::{
    BuildError, DEFAULT_CLIENT_REQUEST_TIMEOUT, DEFAULT_MAX_RUN_TIME, InspectRequest, SagaTools,
};
