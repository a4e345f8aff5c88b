//! Serving saga tools: the [`SagaServer`] rmcp handler, its HTTP and stdio transports, and
//! the [`SagaTools`] registry for use inside other rmcp servers.

mod catalog;
pub mod dependent;
mod http;
mod principal;
pub mod result_format;
pub mod resume_token;
pub mod saga_format;
mod server;
mod stdio;
mod tools;

pub use http::{MCP_PATH, default_http_config};
pub use principal::{ANONYMOUS, PrincipalFn, authorization_digest};
pub use server::{DEFAULT_LIST_TTL, DEFAULT_TTL, SagaServer, SagaServerBuilder};
pub use tools::{BuildError, SagaTools};
