//! The layer in front of the HTTP guard: the bearer token of every request to `/mcp`
//! checked, the scopes its operation needs checked, the verified principal put on the
//! request; and the metadata routes.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Request, StatusCode, header};
use serde::Deserialize;

use super::ResourceServer;
use super::scopes::Operation;
use super::token::TokenError;
use crate::log::Escaped;
use crate::serve::tries::Tried;

/// What the layer holds: the settings, and the failed-credentials count shared with the
/// guard's rules (an address that sends too many tokens that do not verify is refused
/// before they are verified: introspection would otherwise ask the authorization server
/// once per made-up token).
pub(crate) struct Authorize {
    pub(crate) server: ResourceServer,
    pub(crate) max_body_bytes: usize,
    /// How long the body may take to arrive, where scopes need it read.
    pub(crate) body_read_timeout: std::time::Duration,
    pub(crate) tries: crate::serve::tries::Tries,
    /// The reverse proxies trusted to say the client's address.
    pub(crate) proxies: crate::serve::forwarded::TrustedProxies,
}

/// The longest bearer token taken: longer than any an issuer writes, and a bound on what
/// a verifier is given (an introspection endpoint is not sent megabytes).
const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// The request's operation, as far as scopes go, read from its body.
#[derive(Deserialize)]
struct Peek {
    method: Option<String>,
    #[serde(default)]
    params: Option<PeekParams>,
}

#[derive(Deserialize)]
struct PeekParams {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    uri: Option<String>,
    #[serde(default, rename = "sagaToken")]
    saga_token: Option<String>,
}

impl Peek {
    fn operation(self) -> Operation {
        let params = self.params.unwrap_or(PeekParams {
            name: None,
            uri: None,
            saga_token: None,
        });
        match (self.method.as_deref(), params.name, params.uri) {
            (Some("tools/call" | "tools/callSaga"), Some(name), _) => Operation::Tool(name),
            (Some("prompts/get"), Some(name), _) => Operation::Prompt(name),
            (Some("resources/read"), _, Some(uri)) => Operation::Resource(uri),
            // A saga token names its tool before its dot (`tools/resumeSaga`).
            (Some("tools/resumeSaga"), _, _) => params
                .saga_token
                .as_deref()
                .and_then(crate::serve::wire::call_saga::split_token)
                .map_or(Operation::AnyTool, |(name, _)| Operation::Tool(name)),
            // A task is a tool's, and `tasks/update` does not name it: every tool's scopes.
            (Some("tasks/update"), _, _) => Operation::AnyTool,
            // `requests/resume` goes on with a tool's call, a prompt or a resource read
            // without naming it: the scopes of every one of them.
            (Some("requests/resume"), _, _) => Operation::Anything,
            _ => Operation::Other,
        }
    }
}

/// `mcp`, each request checked by `authorize` before it reaches the guard.
pub(crate) fn protect(mcp: axum::Router, authorize: Authorize) -> axum::Router {
    let authorize = Arc::new(authorize);
    mcp.route_layer(axum::middleware::from_fn(
        move |request: Request<Body>, next: axum::middleware::Next| {
            let authorize = authorize.clone();
            async move { authorize.check(request, next).await }
        },
    ))
}

/// The Protected Resource Metadata routes (RFC 9728), readable by any origin (a browser
/// client fetches them before it holds a token).
pub(crate) fn metadata_routes(server: &ResourceServer) -> axum::Router {
    let mut document = server.metadata();
    if server.scopes_supported.is_empty() {
        let named: Vec<String> = server
            .named_scopes()
            .into_iter()
            .filter(|scope| scope != "offline_access")
            .collect();
        document["scopes_supported"] = serde_json::json!(named);
    }
    let body = Bytes::from(document.to_string());
    server
        .metadata_paths()
        .into_iter()
        .fold(axum::Router::new(), |router, path| {
            let body = body.clone();
            router.route(
                &path,
                axum::routing::get(move || {
                    let body = body.clone();
                    async move {
                        (
                            [
                                (header::CONTENT_TYPE, "application/json"),
                                (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
                                (header::CACHE_CONTROL, "max-age=300"),
                            ],
                            body,
                        )
                    }
                }),
            )
        })
}

impl Authorize {
    async fn check(&self, request: Request<Body>, next: axum::middleware::Next) -> Response {
        let (mut parts, body) = request.into_parts();
        // RFC 6750 §2.3's query parameter is refused: MCP allows the header only.
        if parts.uri.query().is_some_and(|query| {
            query
                .split('&')
                .any(|pair| pair.split('=').next() == Some("access_token"))
        }) {
            tracing::info!("refused a token in the query string");
            return self.challenge(
                StatusCode::BAD_REQUEST,
                Some((
                    "invalid_request",
                    "a token is sent in the Authorization header only",
                )),
                &BTreeSet::new(),
            );
        }
        // The token first, from the headers alone: no body is read for a caller without
        // a valid token. The challenge names the scopes every request needs.
        let everywhere = self.server.scopes.needed(&Operation::Other);
        let mut bearers = parts.headers.get_all(header::AUTHORIZATION).iter();
        let (first, second) = (bearers.next(), bearers.next());
        if second.is_some() {
            return self.challenge(
                StatusCode::BAD_REQUEST,
                Some(("invalid_request", "one Authorization header")),
                &everywhere,
            );
        }
        let token = first
            .and_then(|value| value.to_str().ok())
            .and_then(|value| {
                let (scheme, token) = value.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .filter(|token| !token.is_empty());
        let Some(token) = token else {
            // No token: the challenge alone, with the scopes every request needs.
            return self.challenge(StatusCode::UNAUTHORIZED, None, &everywhere);
        };
        let invalid = |this: &Self| {
            crate::metrics::auth_refused("invalid_token");
            this.challenge(
                StatusCode::UNAUTHORIZED,
                Some((
                    "invalid_token",
                    "the access token is not valid for this server",
                )),
                &everywhere,
            )
        };
        if token.len() > MAX_TOKEN_BYTES {
            tracing::info!(
                len = token.len(),
                "refused a bearer token longer than any issued"
            );
            return invalid(self);
        }
        let verifier = match &self.server.verifier {
            Some(verifier) => verifier,
            None => return self.challenge(StatusCode::UNAUTHORIZED, None, &everywhere),
        };
        let peer = self
            .proxies
            .client(&parts, crate::engine::caller::pool::peer_of(&parts));
        // A token verified before passes at once, whatever the address's failed tries:
        // from the verifier's cache, or (a verifier that keeps none) checked again. The
        // rule is the API keys' too (`tries.rs`).
        let verified = match verifier.cached(token, &self.server.resource) {
            Some(verified) => verified,
            None => match self.tries.tried(&parts, peer) {
                // Refused this minute already: not verified again.
                Tried::FailedBefore => return invalid(self),
                // A new guess from an address that spent its tries (only a known address
                // has a count: where it is unknown, nothing is refused for it).
                Tried::Spent => {
                    tracing::info!(
                        "refused a token: its address sent too many that did not verify"
                    );
                    return self.too_many_tries(&everywhere);
                }
                Tried::Fresh | Tried::VerifiedBefore => {
                    match verifier.verify(token, &self.server.resource).await {
                        Ok(verified) => {
                            self.tries.note(&parts, Some(&verified.principal()), peer);
                            verified
                        }
                        Err(TokenError::Unavailable(reason)) => {
                            tracing::warn!(reason = %Escaped(&reason), "a token could not be verified: the authorization server is unavailable");
                            let mut unavailable = (
                                StatusCode::SERVICE_UNAVAILABLE,
                                "the authorization server cannot be asked now; retry later",
                            )
                                .into_response();
                            unavailable
                                .headers_mut()
                                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                            return unavailable;
                        }
                        // Refused, but its retry may verify once the keys are fetched again:
                        // not a failed try.
                        Err(TokenError::UnknownKey) => {
                            tracing::info!("refused a bearer token: its key is not held (yet)");
                            return invalid(self);
                        }
                        Err(error) => {
                            tracing::info!(reason = %Escaped(&error.to_string()), "refused a bearer token");
                            self.tries.note(&parts, None, peer);
                            return invalid(self);
                        }
                    }
                }
            },
        };
        // The operation, where scopes depend on it: its body read (bounded in bytes and
        // time) and kept for the guard.
        let (operation, body) =
            if self.server.scopes.per_operation() && parts.method == http::Method::POST {
                let read = http_body_util::BodyExt::collect(http_body_util::Limited::new(
                    body,
                    self.max_body_bytes,
                ));
                let bytes = match tokio::time::timeout(self.body_read_timeout, read).await {
                    Ok(Ok(collected)) => collected.to_bytes(),
                    Ok(Err(_)) => {
                        return (
                            StatusCode::PAYLOAD_TOO_LARGE,
                            "the request body is too large",
                        )
                            .into_response();
                    }
                    Err(_) => {
                        return (
                            StatusCode::REQUEST_TIMEOUT,
                            "the request body came too slowly",
                        )
                            .into_response();
                    }
                };
                let operation = match serde_json::from_slice::<Peek>(&bytes) {
                    Ok(peek) => peek.operation(),
                    Err(_) => {
                        return (
                            StatusCode::BAD_REQUEST,
                            "the request body is not one JSON-RPC message",
                        )
                            .into_response();
                    }
                };
                (operation, Body::from(bytes))
            } else {
                (Operation::Other, body)
            };
        let needed = self.server.scopes.needed(&operation);
        let missing = self.server.scopes.missing(&needed, &verified.scopes);
        if !missing.is_empty() {
            tracing::info!(missing = ?missing, "refused a request: insufficient scope");
            crate::metrics::auth_refused("insufficient_scope");
            return self.challenge(
                StatusCode::FORBIDDEN,
                Some((
                    "insufficient_scope",
                    "the access token lacks a scope this operation needs",
                )),
                &needed,
            );
        }
        if self.server.hide_unauthorized_tools {
            let scopes = &self.server.scopes;
            let hidden = scopes
                .tools
                .iter()
                .filter(|(_, needed)| !scopes.missing(needed, &verified.scopes).is_empty())
                .map(|(name, _)| name.clone())
                .collect();
            parts.extensions.insert(super::HiddenTools(hidden));
        }
        parts
            .extensions
            .insert(crate::engine::caller::pool::VerifiedPrincipal(
                verified.principal(),
            ));
        parts.extensions.insert(verified);
        next.run(Request::from_parts(parts, body)).await
    }

    /// 429: the address sent more tokens that did not verify this minute than the bound;
    /// this one was not checked. Said as such, with the challenge (no error code: the
    /// token is not known to be invalid).
    fn too_many_tries(&self, everywhere: &BTreeSet<String>) -> Response {
        let mut refused = self.challenge(StatusCode::TOO_MANY_REQUESTS, None, everywhere);
        *refused.body_mut() = Body::from(
            serde_json::json!({
                "error": "too_many_requests",
                "error_description": "this address sent too many tokens this server did not verify; a token not verified before is not checked until the minute ends (Retry-After)",
            })
            .to_string(),
        );
        refused
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
        refused
    }

    /// A refusal with RFC 6750's challenge: the metadata's URL, the scopes the request
    /// needs (all of them, in one challenge), and the error where one applies.
    fn challenge(
        &self,
        status: StatusCode,
        error: Option<(&str, &str)>,
        needed: &BTreeSet<String>,
    ) -> Response {
        let mut challenge = format!(
            "Bearer resource_metadata=\"{}\"",
            self.server.metadata_url()
        );
        if !needed.is_empty() {
            let scopes: Vec<&str> = needed.iter().map(String::as_str).collect();
            challenge.push_str(&format!(", scope=\"{}\"", scopes.join(" ")));
        }
        if let Some((code, description)) = error {
            challenge.push_str(&format!(
                ", error=\"{code}\", error_description=\"{description}\""
            ));
        }
        let body = serde_json::json!({
            "error": error.map_or("unauthorized", |(code, _)| code),
            "error_description": error.map_or("a bearer token is needed", |(_, text)| text),
        });
        let mut response = (status, axum::Json(body)).into_response();
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}
