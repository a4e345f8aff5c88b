//! What a verified bearer token says, and the trait that verifies one: saga's own
//! verifiers ([`JwtVerifier`](super::JwtVerifier), [`Introspection`](super::Introspection))
//! implement it, and so may yours.

use std::collections::BTreeSet;

/// A boxed future, as [`TokenVerifier`] returns it.
pub use futures::future::BoxFuture;

/// An access token the verifier accepted: whose it is, for which client, with which
/// scopes. It becomes the request's verified principal (`issuer`, `subject`, and the
/// client where it is not the subject), the one a saga's tokens, tasks, sessions and
/// bounds are bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AccessToken {
    /// The issuer (`iss`) that signed or vouched for it.
    pub issuer: String,
    /// Whom it was issued for (`sub`; a client-credentials token's subject is its client).
    pub subject: String,
    /// The client it was issued to (`client_id`, `azp`), if said.
    pub client_id: Option<String>,
    /// The scopes it grants.
    pub scopes: BTreeSet<String>,
    /// When it expires, in Unix seconds, if said.
    pub expires_at: Option<u64>,
}

impl AccessToken {
    /// A token of `subject` from `issuer` granting `scopes`.
    pub fn new<S: Into<String>>(
        issuer: impl Into<String>,
        subject: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        Self {
            issuer: issuer.into(),
            subject: subject.into(),
            client_id: None,
            scopes: scopes.into_iter().map(Into::into).collect(),
            expires_at: None,
        }
    }

    /// This token, issued to `client_id`.
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// This token, expiring at `expires_at` (Unix seconds).
    pub fn with_expiry(mut self, expires_at: u64) -> Self {
        self.expires_at = Some(expires_at);
        self
    }

    /// The verified principal's name: the issuer, the subject and the client where the
    /// token names one, so that two issuers' subjects of one name are two principals, and
    /// one user's tokens given to two applications are two principals too.
    ///
    /// Each part has its `%` and spaces escaped (`%25`, `%20`), so that the name is one
    /// principal's only: joined as they were, the subject `a b` without a client and the
    /// subject `a` of the client `b` were one name (issue 72, finding 9). A name whose
    /// parts hold neither is as it was.
    pub(crate) fn principal(&self) -> String {
        let (issuer, subject) = (escaped(&self.issuer), escaped(&self.subject));
        match &self.client_id {
            Some(client) if *client != self.subject => {
                format!("{issuer} {subject} {}", escaped(client))
            }
            _ => format!("{issuer} {subject}"),
        }
    }
}

/// `part` with `%` and ` ` percent-escaped; borrowed where it holds neither.
fn escaped(part: &str) -> std::borrow::Cow<'_, str> {
    if !part.contains(['%', ' ']) {
        return std::borrow::Cow::Borrowed(part);
    }
    std::borrow::Cow::Owned(part.replace('%', "%25").replace(' ', "%20"))
}

/// The scopes of a space-separated `scope` claim (RFC 9068, RFC 7662).
pub(crate) fn scopes_of(scope: Option<&str>) -> BTreeSet<String> {
    scope
        .unwrap_or_default()
        .split_ascii_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Why a bearer token was not accepted. Each reads as RFC 6750's `invalid_token` to the
/// client (HTTP 401), with no detail of the reason, which goes to the server's log;
/// [`TokenError::Unavailable`] is the server's own failure (HTTP 503).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// Not a token this verifier reads (not a JWT, a bad signature, an algorithm not
    /// allowed, an unknown key).
    #[error("the token is malformed or its signature does not verify: {0}")]
    Invalid(String),
    /// Past its expiry (or not yet valid), beyond the leeway.
    #[error("the token has expired or is not yet valid")]
    Expired,
    /// Issued for another resource: its audience is not this server.
    #[error("the token was issued for another resource")]
    WrongAudience,
    /// Issued by an issuer this server does not trust.
    #[error("the token was issued by another issuer")]
    WrongIssuer,
    /// The authorization server said the token is not active (introspection).
    #[error("the token is not active")]
    Inactive,
    /// The authorization server could not be reached, or answered out of its contract.
    #[error("the authorization server cannot be asked now: {0}")]
    Unavailable(String),
    /// The token names a signing key the issuer's key set did not hold when it was last
    /// fetched, too recently to fetch it again: refused, but not counted as a failed try,
    /// so that a retry once the keys may be fetched again reaches the verifier (a key the
    /// issuer has just started to use). A made-up key id gains nothing from it: no key
    /// verifies the token, and the keys are fetched at most once per interval.
    #[error("the token names a key the issuer's keys did not hold when last fetched")]
    UnknownKey,
}

/// Verifies a bearer token. Implement it for an authorization server of your own (a
/// session store, an API gateway's tokens); saga calls it once per request that carries a
/// token, so cache what you fetch.
pub trait TokenVerifier: Send + Sync + std::fmt::Debug + 'static {
    /// The token's claims if it is valid for `resource` (this server's canonical URI: a
    /// token issued for another resource must be refused).
    fn verify<'a>(
        &'a self,
        token: &'a str,
        resource: &'a str,
    ) -> BoxFuture<'a, Result<AccessToken, TokenError>>;

    /// The token's claims if this verifier verified it for `resource` before and they
    /// still hold, without asking anyone: such a token passes even from an address that
    /// sent too many bad tokens. `None` (the default) when it does not keep any.
    fn cached(&self, _token: &str, _resource: &str) -> Option<AccessToken> {
        None
    }
}

#[cfg(test)]
mod principal_tests {
    use super::*;

    fn principal(subject: &str, client: Option<&str>) -> String {
        let mut token = AccessToken::new("https://as.example", subject, BTreeSet::<String>::new());
        token.client_id = client.map(str::to_owned);
        token.principal()
    }

    /// Finding 9: the subject `a b` without a client and the subject `a` of the client
    /// `b` were one principal; names without a space or `%` are as they were.
    #[test]
    fn a_principals_name_is_one_principals() {
        assert_ne!(principal("a b", None), principal("a", Some("b")));
        assert_ne!(principal("a%20b", None), principal("a b", None));
        assert_eq!(principal("alice", None), "https://as.example alice");
        assert_eq!(
            principal("alice", Some("app")),
            "https://as.example alice app"
        );
        assert_eq!(principal("a b", None), "https://as.example a%20b");
    }
}
