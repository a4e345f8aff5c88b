//! The HTTP client for the services saga calls itself: a model's provider
//! ([`crate::model`], feature `openai`) and an authorization server
//! ([`crate::serve::auth`], feature `oauth`). hyper-util's pooled client, the stack the
//! server already builds, over rustls with *ring* (the crypto the tokens use) and the
//! system's root certificates: no OpenSSL, no second crypto library. The TLS provider is
//! given to the connector, never installed process-wide, so an application's own rustls
//! setup is left as it is.

use std::time::Duration;

use hyper::body::Bytes;

/// A pooled client for `http://` and `https://`.
pub(crate) type Client = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    http_body_util::Full<Bytes>,
>;

/// Why a call to a service failed, for the caller to say in its own terms.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failed {
    /// Not reached, or no answer within the time.
    #[error("not reached: {0}")]
    Unreachable(String),
    /// A body larger than allowed, or cut off.
    #[error("the answer's body is too large or cut off")]
    Body,
}

/// A client whose connections are made within `connect_timeout`. Without system root
/// certificates (a minimal container), `http://` still works and `https://` is refused
/// when it is called.
pub(crate) fn client(connect_timeout: Duration) -> Result<Client, String> {
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
    http.set_connect_timeout(Some(connect_timeout));
    http.enforce_http(false);
    let builder = match hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_native_roots(provider.clone())
    {
        Ok(builder) => builder,
        Err(error) => {
            tracing::warn!(%error, "no root certificates: https:// services are refused");
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|error| error.to_string())?
                .with_root_certificates(rustls::RootCertStore::empty())
                .with_no_client_auth();
            hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(config)
        }
    };
    let connector = builder.https_or_http().enable_http1().wrap_connector(http);
    Ok(
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build(connector),
    )
}

/// Sends `request` and reads the answer's status and body, the body at most `max_bytes`
/// long, all within `timeout`. Redirects are not followed.
pub(crate) async fn fetch(
    client: &Client,
    request: http::Request<http_body_util::Full<Bytes>>,
    max_bytes: usize,
    timeout: Duration,
) -> Result<(http::StatusCode, Bytes), Failed> {
    let exchange = async {
        let response = client
            .request(request)
            .await
            .map_err(|error| Failed::Unreachable(error.to_string()))?;
        let status = response.status();
        let limited = http_body_util::Limited::new(response.into_body(), max_bytes);
        let body = http_body_util::BodyExt::collect(limited)
            .await
            .map_err(|_| Failed::Body)?
            .to_bytes();
        Ok((status, body))
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .unwrap_or_else(|_| Err(Failed::Unreachable("no answer in time".to_owned())))
}
