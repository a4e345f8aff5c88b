//! What every command that talks to a server over HTTP shares: the URLs it can reach,
//! and its failures said whole.
//!
//! Plain http only: reqwest is built without a TLS backend (see Cargo.toml), and an
//! `https://` URL is refused here with one line rather than failing inside reqwest.

use rmcp::transport::streamable_http_client::StreamableHttpError;

/// `url` when this build can reach it: an `https://` one is refused, saying so.
pub fn reachable(url: &str) -> anyhow::Result<&str> {
    if url
        .get(..8)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
    {
        anyhow::bail!(
            "cannot connect to {url}: this saga speaks MCP over plain http only (https is not \
             supported yet)"
        );
    }
    Ok(url)
}

/// A failed HTTP exchange, said whole. reqwest's own message names only the request
/// ("error sending request"), and rmcp's errors keep only the text of their cause: the
/// reason (a refused connection, a name that does not resolve) is in reqwest's sources,
/// which this writes out after it. The URL is left out: the CLI's message names it.
#[derive(Debug)]
pub struct HttpError(reqwest::Error);

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut last = self.0.to_string();
        let mut source = std::error::Error::source(&self.0);
        while let Some(cause) = source {
            let text = cause.to_string();
            // hyper's layers repeat the same words; say each once.
            if !last.contains(&text) {
                write!(f, ": {text}")?;
            }
            last = text;
            source = cause.source();
        }
        Ok(())
    }
}

// Its sources are in its text: rmcp would flatten them anyway.
impl std::error::Error for HttpError {}

/// `error` with reqwest's error said whole ([`HttpError`]); every other kind as it was.
pub fn said_whole(error: StreamableHttpError<reqwest::Error>) -> StreamableHttpError<HttpError> {
    use StreamableHttpError as E;
    match error {
        E::Client(error) => E::Client(HttpError(error.without_url())),
        E::Sse(error) => E::Sse(error),
        E::Io(error) => E::Io(error),
        E::HttpStatus(error) => E::HttpStatus(error),
        E::UnexpectedEndOfStream => E::UnexpectedEndOfStream,
        E::UnexpectedServerResponse(text) => E::UnexpectedServerResponse(text),
        E::ResponseBodyTooLarge { max_size } => E::ResponseBodyTooLarge { max_size },
        E::UnexpectedContentType(content_type) => E::UnexpectedContentType(content_type),
        E::ServerDoesNotSupportSse => E::ServerDoesNotSupportSse,
        E::ServerDoesNotSupportDeleteSession => E::ServerDoesNotSupportDeleteSession,
        E::TokioJoinError(error) => E::TokioJoinError(error),
        E::Deserialize(error) => E::Deserialize(error),
        E::TransportChannelClosed => E::TransportChannelClosed,
        E::MissingSessionIdInResponse => E::MissingSessionIdInResponse,
        E::AuthRequired(error) => E::AuthRequired(error),
        E::InsufficientScope(error) => E::InsufficientScope(error),
        E::ReservedHeaderConflict(name) => E::ReservedHeaderConflict(name),
        E::SessionExpired => E::SessionExpired,
        E::SessionRecoveryTimeout => E::SessionRecoveryTimeout,
        E::ReinitializationFailed(error) => E::ReinitializationFailed(error),
        E::ControlRequestTimeout => E::ControlRequestTimeout,
        // A kind a later rmcp adds: its words, as an answer the client cannot use.
        other => E::UnexpectedServerResponse(other.to_string().into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An https URL is refused before anything is sent, in words; http passes.
    #[test]
    fn https_is_refused_with_the_reason() {
        let refused = reachable("HTTPS://example.com/mcp").expect_err("https");
        assert_eq!(
            refused.to_string(),
            "cannot connect to HTTPS://example.com/mcp: this saga speaks MCP over plain http \
             only (https is not supported yet)"
        );
        assert_eq!(
            reachable("http://127.0.0.1:8080/mcp").ok(),
            Some("http://127.0.0.1:8080/mcp")
        );
    }
}
