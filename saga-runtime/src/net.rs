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
// The authorization server's documents only: a model's provider is called by `model::openai`.
#[cfg(feature = "oauth")]
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
// The authorization server's documents only: a model's provider is called by `model::openai`.
#[cfg(feature = "oauth")]
pub(crate) async fn fetch(
    client: &Client,
    request: http::Request<http_body_util::Full<Bytes>>,
    max_bytes: usize,
    timeout: Duration,
) -> Result<(http::StatusCode, Bytes), Failed> {
    fetch_with_max_age(client, request, max_bytes, timeout)
        .await
        .map(|(status, body, _)| (status, body))
}

/// [`fetch`], and how long the answer says it may be kept: its `Cache-Control: max-age`,
/// if it has one (`no-store` and `no-cache` as zero).
// The authorization server's documents only: a model's provider is called by `model::openai`.
#[cfg(feature = "oauth")]
pub(crate) async fn fetch_with_max_age(
    client: &Client,
    request: http::Request<http_body_util::Full<Bytes>>,
    max_bytes: usize,
    timeout: Duration,
) -> Result<(http::StatusCode, Bytes, Option<Duration>), Failed> {
    let exchange = async {
        let response = client
            .request(request)
            .await
            .map_err(|error| Failed::Unreachable(error.to_string()))?;
        let status = response.status();
        let max_age = max_age(response.headers());
        let limited = http_body_util::Limited::new(response.into_body(), max_bytes);
        let body = http_body_util::BodyExt::collect(limited)
            .await
            .map_err(|_| Failed::Body)?
            .to_bytes();
        Ok((status, body, max_age))
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .unwrap_or_else(|_| Err(Failed::Unreachable("no answer in time".to_owned())))
}

/// A response's `Cache-Control` lifetime: `max-age=N` (the first), `no-store` or
/// `no-cache` as zero; `None` without any of these. Anything unreadable is ignored.
// The authorization server's documents only: a model's provider is called by `model::openai`.
#[cfg(feature = "oauth")]
pub(crate) fn max_age(headers: &http::HeaderMap) -> Option<Duration> {
    let mut found = None;
    for value in headers.get_all(http::header::CACHE_CONTROL) {
        let Ok(value) = value.to_str() else { continue };
        for directive in value.split(',').map(str::trim) {
            let lower = directive.to_ascii_lowercase();
            if lower == "no-store" || lower == "no-cache" {
                return Some(Duration::ZERO);
            }
            if let Some(seconds) = lower.strip_prefix("max-age=")
                && found.is_none()
                && let Ok(seconds) = seconds.trim_matches('"').parse::<u64>()
            {
                found = Some(Duration::from_secs(seconds));
            }
        }
    }
    found
}

#[cfg(all(test, feature = "oauth"))]
mod max_age_tests {
    use super::*;

    #[test]
    fn cache_control_lifetimes() {
        let of = |values: &[&str]| {
            let mut headers = http::HeaderMap::new();
            for value in values {
                headers.append(
                    http::header::CACHE_CONTROL,
                    http::HeaderValue::from_str(value).expect("a header value"),
                );
            }
            max_age(&headers)
        };
        assert_eq!(of(&[]), None);
        assert_eq!(of(&["public, max-age=300"]), Some(Duration::from_secs(300)));
        assert_eq!(of(&["Max-Age=\"60\""]), Some(Duration::from_secs(60)));
        assert_eq!(of(&["max-age=60", "no-store"]), Some(Duration::ZERO));
        assert_eq!(of(&["max-age=x", "private"]), None);
    }
}
