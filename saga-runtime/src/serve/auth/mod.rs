//! Authorization as MCP specifies it (feature `oauth`): the server as an OAuth 2.1
//! resource server. Its own layer, in front of the HTTP guard:
//!
//! - it publishes its Protected Resource Metadata (RFC 9728) at
//!   `/.well-known/oauth-protected-resource` and the path-suffixed form
//!   (`/.well-known/oauth-protected-resource/mcp`), naming the authorization servers, so
//!   that a client finds where to get a token;
//! - every request to `/mcp` carries `Authorization: Bearer …`; a token missing, malformed,
//!   expired, from another issuer or **issued for another resource** gets HTTP 401 with
//!   `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 6750's `error` where one
//!   applies), and a token in the query string 400;
//! - an operation that needs scopes (a tool's, a prompt's, a resource's, or every
//!   request's) and a token without them gets 403 `insufficient_scope` naming every scope
//!   it needs, in one challenge; a broader scope implies the narrower ones declared under it;
//! - a valid token makes the request's **verified principal** (its issuer and subject):
//!   the one a saga's tokens, its tasks, its session, single use, pools and budgets are
//!   bound to. A token of another subject cannot resume the saga or read the task, and a
//!   token refreshed between two rounds resumes it (the binding is to the subject, not to
//!   the token's text).
//!
//! ```no_run
//! # async fn serve(tool: impl saga_runtime::engine::SagaTool) -> anyhow::Result<()> {
//! use saga_runtime::prelude::*;
//! use saga_runtime::serve::auth::{JwtVerifier, ResourceServer};
//!
//! let auth = ResourceServer::new("https://mcp.example.com/mcp")?
//!     .authorization_server("https://auth.example.com")
//!     .verifier(JwtVerifier::new("https://auth.example.com"))
//!     .scopes_supported(["tools:read", "tools:deploy"])
//!     .tool_scopes("deploy", ["tools:deploy"]);
//! SagaServer::builder()
//!     .keys(KeyRing::from_env("SAGA_KEYS")?)
//!     .tool(tool)
//!     .authorization(auth)
//!     .build()?
//!     .serve_http("0.0.0.0:8080")
//!     .await?;
//! # Ok(())
//! # }
//! ```
//!
//! stdio stays credential-free, as MCP says: this layer is HTTP's.

mod discovery;
mod introspect;
mod jwt;
pub(crate) mod layer;
mod scopes;
mod token;

use std::collections::BTreeSet;
use std::sync::Arc;

pub use introspect::Introspection;
pub use jwt::JwtVerifier;
pub use token::{AccessToken, BoxFuture, TokenError, TokenVerifier};

/// Why an authorization setting was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The resource URI is not an absolute `http(s)` URI without a fragment.
    #[error("the resource {0:?} is not an absolute http(s) URI without a query or fragment")]
    Resource(String),
    /// No verifier, or no authorization server, was given.
    #[error("authorization needs {0}")]
    Incomplete(&'static str),
}

/// The server as an OAuth 2.1 resource server: its canonical URI, the authorization
/// servers that issue its tokens, how a token is verified, and what scopes each
/// operation needs. Given to
/// [`SagaServerBuilder::authorization`](crate::serve::SagaServerBuilder::authorization).
#[derive(Clone)]
pub struct ResourceServer {
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    verifier: Option<Arc<dyn TokenVerifier>>,
    scopes: scopes::Scopes,
    hide_unauthorized_tools: bool,
}

/// The tools a request's token lacks a scope for, put on the request when
/// [`ResourceServer::hide_unauthorized_tools`] is set: `tools/list` leaves them out.
#[derive(Debug, Clone, Default)]
pub(crate) struct HiddenTools(pub(crate) BTreeSet<String>);

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("verifier", &self.verifier)
            .finish_non_exhaustive()
    }
}

impl ResourceServer {
    /// The server at `resource`, its canonical URI as clients reach it
    /// (`https://mcp.example.com/mcp`; behind a reverse proxy, the public one). Its scheme
    /// and host are lower-cased and a trailing slash dropped: the tokens' audience must
    /// name it so.
    pub fn new(resource: impl AsRef<str>) -> Result<Self, AuthError> {
        Ok(Self {
            resource: canonical(resource.as_ref())?,
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            verifier: None,
            scopes: scopes::Scopes::default(),
            hide_unauthorized_tools: false,
        })
    }

    /// An authorization server (its issuer identifier) that issues tokens for this
    /// server, published in the metadata. Call it once per issuer.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// How a bearer token is verified: [`JwtVerifier`], [`Introspection`], or a
    /// [`TokenVerifier`] of your own.
    pub fn verifier(mut self, verifier: impl TokenVerifier) -> Self {
        self.verifier = Some(Arc::new(verifier));
        self
    }

    /// The scopes published in the metadata (`scopes_supported`). `offline_access` is
    /// never published, as MCP says.
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes_supported = scopes
            .into_iter()
            .map(Into::into)
            .filter(|scope| scope != "offline_access")
            .collect();
        self
    }

    /// Scopes every request needs.
    pub fn require_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes
            .everywhere
            .extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Scopes a call of the tool `name` needs (every round of it, in every format).
    pub fn tool_scopes<S: Into<String>>(
        mut self,
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes
            .tools
            .entry(name.into())
            .or_default()
            .extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Scopes `prompts/get` of the prompt `name` needs.
    pub fn prompt_scopes<S: Into<String>>(
        mut self,
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes
            .prompts
            .entry(name.into())
            .or_default()
            .extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Scopes `resources/read` of the resource `uri` needs.
    pub fn resource_scopes<S: Into<String>>(
        mut self,
        uri: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes
            .resources
            .entry(uri.into())
            .or_default()
            .extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Declares that `broader` grants each of `narrower` (`tools:admin` grants
    /// `tools:deploy`): a token with `broader` passes where they are needed.
    pub fn scope_implies<S: Into<String>>(
        mut self,
        broader: impl Into<String>,
        narrower: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes
            .implies
            .entry(broader.into())
            .or_default()
            .extend(narrower.into_iter().map(Into::into));
        self
    }

    /// Whether `tools/list` leaves out the tools the caller's token lacks a scope for.
    /// Off by default: a client then learns of a tool it may get the scope for, and its
    /// call is answered 403 with the scopes to ask for.
    pub fn hide_unauthorized_tools(mut self, hide: bool) -> Self {
        self.hide_unauthorized_tools = hide;
        self
    }

    /// The canonical URI the tokens' audience names.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Where the metadata is published: the path-suffixed form of RFC 9728 §3.1.
    pub fn metadata_url(&self) -> String {
        let (origin, path) = split_origin(&self.resource);
        format!("{origin}/.well-known/oauth-protected-resource{path}")
    }

    /// The paths the metadata is served at: the path-suffixed form, and the root form.
    pub(crate) fn metadata_paths(&self) -> Vec<String> {
        let (_, path) = split_origin(&self.resource);
        let mut paths = vec!["/.well-known/oauth-protected-resource".to_owned()];
        if !path.is_empty() {
            paths.push(format!("/.well-known/oauth-protected-resource{path}"));
        }
        paths
    }

    /// The metadata document (RFC 9728 §2).
    pub(crate) fn metadata(&self) -> serde_json::Value {
        serde_json::json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": self.scopes_supported,
            "bearer_methods_supported": ["header"],
        })
    }

    /// Checks that the settings are whole: a verifier and an authorization server.
    pub(crate) fn checked(self) -> Result<Self, AuthError> {
        if self.verifier.is_none() {
            return Err(AuthError::Incomplete(
                "a token verifier: .verifier(JwtVerifier::new(ISSUER))",
            ));
        }
        if self.scopes.resources.keys().any(|uri| uri.contains('{')) {
            return Err(AuthError::Incomplete(
                "resource_scopes of exact URIs: a template's URIs are read by the URI they \
                 name, so scope its resources one by one or with require_scopes",
            ));
        }
        if self.authorization_servers.is_empty() {
            return Err(AuthError::Incomplete(
                "an authorization server for clients to find: .authorization_server(ISSUER)",
            ));
        }
        Ok(self)
    }

    /// Every scope the settings name, for the metadata when none were listed.
    pub(crate) fn named_scopes(&self) -> BTreeSet<String> {
        let s = &self.scopes;
        s.everywhere
            .iter()
            .chain(s.tools.values().flatten())
            .chain(s.prompts.values().flatten())
            .chain(s.resources.values().flatten())
            .cloned()
            .collect()
    }
}

/// `uri` as a canonical server URI: lower-case scheme and host, no trailing slash, no
/// query or fragment.
fn canonical(uri: &str) -> Result<String, AuthError> {
    let refused = || AuthError::Resource(uri.to_owned());
    let parsed: http::Uri = uri.parse().map_err(|_| refused())?;
    let scheme = parsed
        .scheme_str()
        .ok_or_else(refused)?
        .to_ascii_lowercase();
    if (scheme != "https" && scheme != "http") || uri.contains('#') || parsed.query().is_some() {
        return Err(refused());
    }
    let authority = parsed.authority().ok_or_else(refused)?;
    let host = authority.as_str().to_ascii_lowercase();
    let path = parsed.path().trim_end_matches('/');
    Ok(format!("{scheme}://{host}{path}"))
}

/// `uri`'s origin and path (`""` at the root).
fn split_origin(uri: &str) -> (&str, &str) {
    let after_scheme = uri.find("://").map_or(0, |at| at + 3);
    match uri[after_scheme..].find('/') {
        Some(at) => uri.split_at(after_scheme + at),
        None => (uri, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resource_is_canonical_and_its_metadata_url_path_suffixed() {
        let server = ResourceServer::new("HTTPS://MCP.Example.com/mcp/").unwrap();
        assert_eq!(server.resource(), "https://mcp.example.com/mcp");
        assert_eq!(
            server.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        let root = ResourceServer::new("https://mcp.example.com").unwrap();
        assert_eq!(
            root.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        for bad in [
            "mcp.example.com",
            "ftp://x/y",
            "https://x/y#f",
            "https://x/y?q=1",
        ] {
            assert!(ResourceServer::new(bad).is_err(), "{bad}");
        }
    }
}
