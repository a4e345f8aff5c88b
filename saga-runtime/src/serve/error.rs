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
#[non_exhaustive]
pub enum ServeError {
    /// The address could not be bound, or the bound listener's address read.
    Listen(std::io::Error),
    /// Accepting connections, or reading and writing the byte streams, failed.
    Io(std::io::Error),
    /// The MCP session over the byte streams could not start: the client's `initialize`
    /// failed, or the streams closed before it. The cause is rmcp's
    /// `ServerInitializeError` (`downcast_ref` reads it), held behind `dyn Error` so that
    /// a user's crate that drops this error does not compile the drop of every rmcp
    /// message type it may hold.
    Initialize(Box<dyn std::error::Error + Send + Sync>),
    /// The task that served the session ended abnormally (a panic outside any call).
    Session(tokio::task::JoinError),
}

// `Debug`, `Display` and `Error` are written out, each `#[inline(never)]`: a `main` that
// takes this error with `?` builds its `dyn Error` vtable in the user's crate, and derived
// impls, small enough to be inlined across crates, pulled the `Debug` of every rmcp
// message type its cause holds into that crate (10,700 LLVM lines of a one-tool server,
// and 3,000 more of drop glue while the cause was a concrete type; BENCHMARKS.md). Out of
// line, they are compiled once, here.
impl std::fmt::Debug for ServeError {
    #[inline(never)]
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (variant, cause): (&str, &dyn std::fmt::Debug) = match self {
            ServeError::Listen(error) => ("Listen", error),
            ServeError::Io(error) => ("Io", error),
            ServeError::Initialize(error) => ("Initialize", error),
            ServeError::Session(error) => ("Session", error),
        };
        f.debug_tuple(variant).field(cause).finish()
    }
}

impl std::fmt::Display for ServeError {
    #[inline(never)]
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ServeError::Listen(_) => "cannot listen on the address",
            ServeError::Io(_) => "serving the connection failed",
            ServeError::Initialize(_) => "the MCP session could not start",
            ServeError::Session(_) => "the task serving the MCP session failed",
        })
    }
}

impl std::error::Error for ServeError {
    #[inline(never)]
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(match self {
            ServeError::Listen(error) | ServeError::Io(error) => error,
            ServeError::Initialize(error) => error.as_ref() as &(dyn std::error::Error + 'static),
            ServeError::Session(error) => error,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    /// Each variant says what stopped the server, keeps its cause as its source, and an
    /// `initialize` failure is still rmcp's own error, read back by downcasting.
    #[test]
    fn each_error_says_what_stopped_and_keeps_its_cause() {
        let refused = std::io::Error::new(std::io::ErrorKind::AddrInUse, "in use");
        let listen = ServeError::Listen(refused);
        assert_eq!(listen.to_string(), "cannot listen on the address");
        assert_eq!(
            listen.source().map(ToString::to_string).as_deref(),
            Some("in use")
        );
        assert!(format!("{listen:?}").starts_with("Listen("), "{listen:?}");

        let closed = rmcp::service::ServerInitializeError::ConnectionClosed("eof".into());
        let initialize = ServeError::Initialize(Box::new(closed));
        assert_eq!(initialize.to_string(), "the MCP session could not start");
        let cause = initialize.source().expect("a cause");
        assert!(
            matches!(
                cause.downcast_ref::<rmcp::service::ServerInitializeError>(),
                Some(rmcp::service::ServerInitializeError::ConnectionClosed(why)) if why == "eof"
            ),
            "{cause:?}"
        );
        assert!(format!("{initialize:?}").contains("ConnectionClosed"));
    }
}
