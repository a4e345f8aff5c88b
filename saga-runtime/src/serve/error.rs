//! Why a server stopped serving: the error of the `serve_*` entry points.

/// The error of [`SagaServer::serve_http`](super::SagaServer::serve_http),
/// [`serve_listener`](super::SagaServer::serve_listener),
/// [`serve_stdio`](super::SagaServer::serve_stdio) and
/// [`serve_io`](super::SagaServer::serve_io): what stopped the server, its cause kept as
/// the [`source`](std::error::Error::source).
///
/// A call's own failures never end up here: each is the error of its request. This is
/// what ends the server itself, so a `main` returning `anyhow::Result` (or any
/// `Box<dyn Error>`) takes it with `?`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The address could not be bound, or the bound listener's address read.
    #[error("cannot listen on the address")]
    Listen(#[source] std::io::Error),
    /// Accepting connections, or reading and writing the byte streams, failed.
    #[error("serving the connection failed")]
    Io(#[source] std::io::Error),
    /// The MCP session over the byte streams could not start: the client's `initialize`
    /// failed, or the streams closed before it.
    #[error("the MCP session could not start")]
    Initialize(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The task that served the session ended abnormally (a panic outside any call).
    #[error("the task serving the MCP session failed")]
    Session(#[source] tokio::task::JoinError),
}
