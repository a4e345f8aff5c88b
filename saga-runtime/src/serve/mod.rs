//! Serving saga tools: the [`SagaServer`] rmcp handler, its HTTP and stdio transports, and
//! the [`SagaTools`] registry for use inside other rmcp servers.
//!
//! Its files stand in groups, each using only those below it (`tests/layers.rs` checks
//! it), from the top:
//!
//! | group | files | what |
//! |---|---|---|
//! | transports | `http/`, `stdio.rs` | bytes in and out: the guard's checks, rmcp's transport, the direct path |
//! | the handler | `server.rs`, `builder.rs` | the rmcp `ServerHandler`, and the builder of both |
//! | the route | `route.rs`, `session.rs`, `replay.rs`, `stateless.rs`, `streamed.rs`, `catalog.rs` | a call's way chosen once (`route::route`) and followed (`route::dispatch`) by the one drive (`engine::runner::drive`) with a policy: a session's, a replay's, a stateless request's, a stream's; prompts and resources |
//! | the registry | `tools.rs` | the tools: built, looked up, listed |
//! | a request's head | `head.rs` | what a transport put beside a request, read into its context |
//! | authorization | `auth/` | the bearer-token layer in front of the guard (feature `oauth`) |
//! | the wire formats | `wire/` | translations of the seed formats into MRTR and back |
//! | ground | `principal.rs`, `in_flight.rs`, `limits.rs`, `json_check/`, `tries.rs`, `forwarded.rs`, `error.rs`, `sse.rs`, `param_headers.rs` | who calls, what is in flight, the bounds, why serving stopped, a call's events written, SEP-2243's headers |

#[cfg(feature = "oauth")]
pub mod auth;
mod builder;
mod catalog;
mod error;
#[cfg(feature = "http")]
mod forwarded;
mod head;
mod http;
mod in_flight;
pub(crate) mod json_check;
mod limits;
mod param_headers;
mod principal;
mod replay;
pub(crate) mod route;
mod saga_calls;
mod server;
mod session;
mod shutdown;
#[cfg(feature = "http")]
mod sse;
mod stateless;
mod stdio;
#[cfg(feature = "http")]
mod streamed;
mod tools;
#[cfg(feature = "http")]
mod tries;
pub(crate) mod wire;

pub use crate::engine::caller::pool::{UNVERIFIED_PART, VerifiedPrincipal};
pub use crate::engine::{InspectError, MAX_REPLAYED_CHECKPOINTS};
pub use builder::{Builder, SagaServerBuilder, SagaToolsBuilder};
pub use error::ServeError;
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
pub use shutdown::{DEFAULT_SHUTDOWN_GRACE, shutdown_signal};
pub use tools::{
    BuildError, DEFAULT_CLIENT_REQUEST_TIMEOUT, DEFAULT_MAX_RUN_TIME, InspectRequest, SagaTools,
};
