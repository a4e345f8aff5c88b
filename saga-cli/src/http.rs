//! The HTTP client of every command that talks to a server: https through rustls with
//! ring (installed in `main`), the system's roots, and failures said whole.

use std::sync::Arc;

use rmcp::transport::streamable_http_client::StreamableHttpError;

/// A client builder with this run's TLS: the system's roots through
/// rustls-platform-verifier, or none where the machine has none (a container without
/// ca-certificates, `SSL_CERT_FILE` naming an empty file). reqwest would refuse to build a
/// client there, and so to reach even a plain-http server; without roots an https server
/// is refused as signed by an unknown authority, with [`UNKNOWN_ISSUER_HINT`].
pub fn client() -> anyhow::Result<reqwest::ClientBuilder> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?;
    let config = match rustls_platform_verifier::Verifier::new(provider) {
        Ok(verifier) => config
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth(),
        Err(_) => config
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth(),
    };
    Ok(reqwest::Client::builder().tls_backend_preconfigured(config))
}

/// A failed HTTP exchange, said whole. reqwest's own message names only the request
/// ("error sending request"), and rmcp's errors keep only the text of their cause: the
/// reason (a refused connection, a name that does not resolve, a certificate not trusted)
/// is in reqwest's sources, which this writes out after it. The URL is left out: the CLI's
/// message names it already.
#[derive(Debug)]
pub struct HttpError(reqwest::Error);

/// What to do when the server's certificate is signed by no authority this machine trusts
/// (rustls's `UnknownIssuer`). On Linux and the BSDs, rustls-platform-verifier reads the
/// system's roots through rustls-native-certs, where `SSL_CERT_FILE` names the authorities
/// to trust in their place.
#[cfg(all(unix, not(target_vendor = "apple"), not(target_os = "android")))]
const UNKNOWN_ISSUER_HINT: &str = "the server's certificate is not signed by an authority \
     this machine trusts; to trust a private one, set SSL_CERT_FILE to a PEM file of the \
     authorities to trust (read instead of the system's)";
/// Elsewhere (macOS, Windows) it asks the system, which reads no variable.
#[cfg(not(all(unix, not(target_vendor = "apple"), not(target_os = "android"))))]
const UNKNOWN_ISSUER_HINT: &str = "the server's certificate is not signed by an authority \
     this machine trusts; to trust a private one, add it to the system's trust store";

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut last = self.0.to_string();
        let mut source = std::error::Error::source(&self.0);
        let mut unknown_issuer = false;
        while let Some(cause) = source {
            let text = cause.to_string();
            // hyper's and rustls's layers repeat the same words; say each once.
            if !last.contains(&text) {
                write!(f, ": {text}")?;
            }
            unknown_issuer |= text.contains("UnknownIssuer");
            last = text;
            source = cause.source();
        }
        if unknown_issuer {
            write!(f, " ({UNKNOWN_ISSUER_HINT})")?;
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
