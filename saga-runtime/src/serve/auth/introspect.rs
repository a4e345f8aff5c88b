//! Opaque access tokens, verified by asking the authorization server (token
//! introspection, RFC 7662), the answers kept in a bounded cache for at most
//! [`Introspection::cache_for`] and never past the token's expiry.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::discovery::{self, FETCH_TIMEOUT, MAX_DOCUMENT_BYTES};
use super::token::{AccessToken, TokenError, TokenVerifier};
use futures::future::BoxFuture;

/// The most introspection answers kept at once (global).
const MAX_CACHED: usize = 10_000;

/// Verifies opaque tokens of one issuer by introspection, authenticating to it as a
/// client (`client_secret_basic`).
///
/// ```no_run
/// # #[cfg(feature = "oauth")]
/// # fn build() -> Result<(), Box<dyn std::error::Error>> {
/// use saga_runtime::serve::auth::{Introspection, ResourceServer};
/// let auth = ResourceServer::new("https://mcp.example.com/mcp")?.verifier(
///     Introspection::new("https://auth.example.com", "mcp-server", std::env::var("INTROSPECTION_SECRET")?),
/// );
/// # let _ = auth; Ok(()) }
/// ```
pub struct Introspection {
    issuer: String,
    client_id: String,
    secret: zeroize::Zeroizing<String>,
    cache_for: Duration,
    client: Option<crate::net::Client>,
    endpoint: tokio::sync::OnceCell<String>,
    /// When finding the endpoint last failed: it is tried again at most every 5 s
    /// (`FAILED_FETCH_BACKOFF`), not once per request while the authorization server is
    /// away, nor the whole interval once it is back.
    discovery_failed: Mutex<Option<Instant>>,
    cache: Mutex<Cache>,
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        f.debug_struct("Introspection")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Cache {
    answers: HashMap<[u8; 32], (Instant, AccessToken)>,
    order: VecDeque<[u8; 32]>,
}

#[derive(Deserialize)]
struct Answer {
    active: bool,
    #[serde(default)]
    iss: Option<String>,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    exp: Option<u64>,
    #[serde(default)]
    aud: Option<serde_json::Value>,
}

impl Introspection {
    /// Tokens of `issuer`, introspected at the endpoint its metadata names, as the client
    /// `client_id` with `secret`.
    pub fn new(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        secret: impl Into<String>,
    ) -> Self {
        let client = crate::net::client(FETCH_TIMEOUT)
            .inspect_err(
                |error| tracing::warn!(%error, "no HTTP client for the authorization server"),
            )
            .ok();
        Self {
            issuer: issuer.into(),
            client_id: client_id.into(),
            secret: zeroize::Zeroizing::new(secret.into()),
            cache_for: Duration::from_secs(60),
            client,
            endpoint: tokio::sync::OnceCell::new(),
            discovery_failed: Mutex::new(None),
            cache: Mutex::new(Cache::default()),
        }
    }

    /// How long an active token's answer is kept (never past its expiry). Default 60 s:
    /// a token revoked at the authorization server is refused here within it.
    pub fn cache_for(mut self, cache_for: Duration) -> Self {
        self.cache_for = cache_for;
        self
    }

    fn cached_answer(&self, digest: &[u8; 32]) -> Option<AccessToken> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let (at, token) = cache.answers.get(digest)?;
        let fresh = at.elapsed() < self.cache_for
            && token
                .expires_at
                .is_none_or(|exp| exp > crate::state::unix_now());
        fresh.then(|| token.clone())
    }

    fn keep(&self, digest: [u8; 32], token: &AccessToken) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        while cache.answers.len() >= MAX_CACHED {
            let Some(old) = cache.order.pop_front() else {
                break;
            };
            cache.answers.remove(&old);
        }
        if cache
            .answers
            .insert(digest, (Instant::now(), token.clone()))
            .is_none()
        {
            cache.order.push_back(digest);
        }
    }

    async fn endpoint(&self, client: &crate::net::Client) -> Result<&str, TokenError> {
        let recently = self
            .discovery_failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some_and(|at| at.elapsed() < discovery::FAILED_FETCH_BACKOFF);
        if recently && self.endpoint.get().is_none() {
            return Err(TokenError::Unavailable(
                "the issuer's metadata could not be read lately".to_owned(),
            ));
        }
        self.endpoint
            .get_or_try_init(|| async {
                let metadata = discovery::discover(client, &self.issuer).await?;
                metadata.introspection_endpoint.ok_or_else(|| {
                    TokenError::Unavailable(
                        "the issuer's metadata names no introspection_endpoint".to_owned(),
                    )
                })
            })
            .await
            .map(String::as_str)
            .inspect_err(|_| {
                *self
                    .discovery_failed
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
            })
    }

    async fn check(&self, token: &str, resource: &str) -> Result<AccessToken, TokenError> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(known) = self.cached_answer(&digest) {
            return Ok(known);
        }
        let client = self
            .client
            .as_ref()
            .ok_or_else(|| TokenError::Unavailable("no HTTP client".to_owned()))?;
        let endpoint = self.endpoint(client).await?;
        let form = format!("token={}&token_type_hint=access_token", form_encoded(token));
        use base64::Engine as _;
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            form_encoded(&self.client_id),
            form_encoded(&self.secret)
        ));
        let request = http::Request::post(endpoint)
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(http::header::ACCEPT, "application/json")
            .header(http::header::AUTHORIZATION, format!("Basic {basic}"))
            .body(http_body_util::Full::new(form.into()))
            .map_err(|error| TokenError::Unavailable(error.to_string()))?;
        let (status, body) = crate::net::fetch(client, request, MAX_DOCUMENT_BYTES, FETCH_TIMEOUT)
            .await
            .map_err(|failed| TokenError::Unavailable(format!("introspection: {failed}")))?;
        if !status.is_success() {
            return Err(refused_by_status(status, &body));
        }
        let answer: Answer = serde_json::from_slice(&body)
            .map_err(|error| TokenError::Unavailable(format!("introspection: {error}")))?;
        if !answer.active {
            return Err(TokenError::Inactive);
        }
        if answer.iss.as_deref().is_some_and(|iss| iss != self.issuer) {
            return Err(TokenError::WrongIssuer);
        }
        let for_resource = match &answer.aud {
            Some(serde_json::Value::String(aud)) => aud == resource,
            Some(serde_json::Value::Array(auds)) => auds.iter().any(|aud| aud == resource),
            _ => false,
        };
        if !for_resource {
            return Err(TokenError::WrongAudience);
        }
        if answer
            .exp
            .is_some_and(|exp| exp <= crate::state::unix_now())
        {
            return Err(TokenError::Expired);
        }
        let subject = answer
            .sub
            .or_else(|| answer.client_id.clone())
            .ok_or_else(|| TokenError::Invalid("the token names no subject".to_owned()))?;
        let scopes = super::token::scopes_of(answer.scope.as_deref());
        let mut verified = AccessToken::new(self.issuer.clone(), subject, scopes);
        verified.client_id = answer.client_id;
        verified.expires_at = answer.exp;
        self.keep(digest, &verified);
        Ok(verified)
    }
}

/// `text` as `application/x-www-form-urlencoded` writes it.
fn form_encoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(byte as char);
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// What an introspection answered with an error status means. A 400 whose OAuth error
/// is about the token (`unsupported_token_type`: some servers' answer to a token shaped
/// like a JWT they did not issue; `invalid_token`) refuses the token, so that it counts
/// as a failed try (issue 72, finding 3: 500 such tokens from one address were each
/// answered 503, uncounted, and each cost an introspection). Anything else (this server's
/// client refused, the issuer's own failure) is the issuer being unavailable.
fn refused_by_status(status: http::StatusCode, body: &[u8]) -> TokenError {
    #[derive(Deserialize)]
    struct OAuthError {
        error: String,
    }
    if status == http::StatusCode::BAD_REQUEST
        && let Ok(OAuthError { error }) = serde_json::from_slice::<OAuthError>(body)
        && matches!(error.as_str(), "unsupported_token_type" | "invalid_token")
    {
        return TokenError::Invalid(format!("the issuer's introspection said {error}"));
    }
    TokenError::Unavailable(format!("introspection: HTTP {status}"))
}

impl TokenVerifier for Introspection {
    fn verify<'a>(
        &'a self,
        token: &'a str,
        resource: &'a str,
    ) -> BoxFuture<'a, Result<AccessToken, TokenError>> {
        Box::pin(self.check(token, resource))
    }

    fn cached(&self, token: &str, _resource: &str) -> Option<AccessToken> {
        self.cached_answer(&Sha256::digest(token.as_bytes()).into())
    }
}

#[cfg(test)]
mod status_tests {
    use super::*;

    /// Finding 3: a 400 about the token refuses the token (counted as a failed try); any
    /// other error status is the issuer unavailable.
    #[test]
    fn a_400_about_the_token_refuses_it() {
        let bad = http::StatusCode::BAD_REQUEST;
        for error in ["unsupported_token_type", "invalid_token"] {
            let body = format!(r#"{{"error":"{error}","error_description":"x"}}"#);
            assert!(matches!(
                refused_by_status(bad, body.as_bytes()),
                TokenError::Invalid(_)
            ));
        }
        for (status, body) in [
            (bad, r#"{"error":"invalid_client"}"#),
            (bad, "not json"),
            (
                http::StatusCode::UNAUTHORIZED,
                r#"{"error":"invalid_token"}"#,
            ),
            (http::StatusCode::BAD_GATEWAY, ""),
        ] {
            assert!(matches!(
                refused_by_status(status, body.as_bytes()),
                TokenError::Unavailable(_)
            ));
        }
    }
}
