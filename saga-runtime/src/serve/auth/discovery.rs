//! An authorization server's metadata, found as RFC 8414 says
//! (`/.well-known/oauth-authorization-server`), or as OpenID Connect Discovery says
//! (`/.well-known/openid-configuration`), fetched once and kept.

use std::time::Duration;

use serde::Deserialize;

use super::token::TokenError;
use crate::net::{Client, fetch_with_max_age};

/// The largest metadata or key set document read.
pub(super) const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// How long a fetch from the authorization server may take.
pub(super) const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// How soon a failed fetch of the issuer's metadata (or, before any key is held, its
/// keys) is tried again: its tokens are answered 503 meanwhile, so an issuer back from an
/// outage is asked again within seconds, not the whole refresh interval (issue 72,
/// finding 8).
pub(super) const FAILED_FETCH_BACKOFF: Duration = Duration::from_secs(5);

/// What saga reads of an authorization server's metadata.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct Metadata {
    pub(super) issuer: String,
    pub(super) jwks_uri: Option<String>,
    pub(super) introspection_endpoint: Option<String>,
}

/// The well-known URLs of `issuer`'s metadata, in the order they are tried: RFC 8414's
/// (inserted before the issuer's path), then OpenID Connect's (appended to it).
fn well_known(issuer: &str) -> Result<Vec<String>, TokenError> {
    let uri: http::Uri = issuer
        .parse()
        .map_err(|_| TokenError::Unavailable(format!("the issuer {issuer:?} is not a URL")))?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(TokenError::Unavailable(format!(
            "the issuer {issuer:?} is not an absolute URL"
        )));
    };
    let path = uri.path().trim_end_matches('/');
    Ok(vec![
        format!("{scheme}://{authority}/.well-known/oauth-authorization-server{path}"),
        format!("{scheme}://{authority}{path}/.well-known/openid-configuration"),
    ])
}

/// GETs `url` as JSON, at most [`MAX_DOCUMENT_BYTES`], within [`FETCH_TIMEOUT`].
pub(super) async fn get_json<T: serde::de::DeserializeOwned>(
    client: &Client,
    url: &str,
) -> Result<T, TokenError> {
    get_json_with_max_age(client, url)
        .await
        .map(|(document, _)| document)
}

/// [`get_json`], and the answer's `Cache-Control` lifetime, if it says one.
pub(super) async fn get_json_with_max_age<T: serde::de::DeserializeOwned>(
    client: &Client,
    url: &str,
) -> Result<(T, Option<Duration>), TokenError> {
    let request = http::Request::get(url)
        .header(http::header::ACCEPT, "application/json")
        .body(http_body_util::Full::default())
        .map_err(|error| TokenError::Unavailable(format!("{url}: {error}")))?;
    let (status, body, max_age) =
        fetch_with_max_age(client, request, MAX_DOCUMENT_BYTES, FETCH_TIMEOUT)
            .await
            .map_err(|failed| TokenError::Unavailable(format!("{url}: {failed}")))?;
    if !status.is_success() {
        return Err(TokenError::Unavailable(format!("{url}: HTTP {status}")));
    }
    serde_json::from_slice(&body)
        .map(|document| (document, max_age))
        .map_err(|error| TokenError::Unavailable(format!("{url}: {error}")))
}

/// `issuer`'s metadata; its `issuer` must be `issuer` itself (RFC 8414 §3.3), so that a
/// document served elsewhere cannot name other keys.
pub(super) async fn discover(client: &Client, issuer: &str) -> Result<Metadata, TokenError> {
    let mut last = None;
    for url in well_known(issuer)? {
        match get_json::<Metadata>(client, &url).await {
            Ok(metadata) if metadata.issuer == issuer => return Ok(metadata),
            Ok(metadata) => {
                last = Some(TokenError::Unavailable(format!(
                    "{url} names the issuer {:?}, not {issuer:?}",
                    metadata.issuer
                )));
            }
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or_else(|| TokenError::Unavailable("no metadata".to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_well_known_urls_are_rfc_8414s_then_oidcs() {
        assert_eq!(
            well_known("https://auth.example.com").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            well_known("https://auth.example.com/tenant/1/").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant/1",
                "https://auth.example.com/tenant/1/.well-known/openid-configuration"
            ]
        );
        assert!(well_known("not a url").is_err());
    }
}
