//! Who is calling: the identity every token is bound to.

use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::engine::caller::pool::{Caller, Pool};

/// Derives the principal from an HTTP request's head.
pub type PrincipalFn = Arc<dyn Fn(&http::request::Parts) -> String + Send + Sync>;

/// Authenticates an HTTP request: the name of the principal whose credentials the
/// request carries and your code checked, or `None` for a caller nobody verified. Set
/// with [`SagaServerBuilder::authenticate`](super::SagaServerBuilder::authenticate).
pub type AuthenticateFn = Arc<dyn Fn(&http::request::Parts) -> Option<String> + Send + Sync>;

/// How a server tells who is calling, and whether anyone verified it.
#[derive(Clone)]
pub(crate) struct Identity {
    pub(crate) principal: PrincipalFn,
    pub(crate) authenticate: Option<AuthenticateFn>,
    /// Whether the principal function's own identities are verified ones.
    pub(crate) verified: bool,
    /// Whether a caller nobody verified is refused (`SagaServerBuilder::require_verified`).
    pub(crate) required: bool,
    /// The tools only verified callers may call (`require_verified_for`).
    pub(crate) verified_tools: Vec<String>,
}

impl Default for Identity {
    fn default() -> Self {
        Self {
            principal: Arc::new(authorization_digest),
            authenticate: None,
            verified: false,
            required: false,
            verified_tools: Vec::new(),
        }
    }
}

impl Identity {
    /// The principal of a request, and whether it is verified: a
    /// [`VerifiedPrincipal`](super::VerifiedPrincipal) a layer in front put in the
    /// request, then the authenticator's, then the principal function's (verified if the
    /// server says its principals are, and never when [`ANONYMOUS`]).
    pub(crate) fn resolve(&self, parts: &http::request::Parts) -> (String, bool) {
        if let Some(caller) = parts.extensions.get::<Caller>() {
            return (caller.principal.clone(), caller.pool.is_verified());
        }
        let verified = parts
            .extensions
            .get::<crate::engine::caller::pool::VerifiedPrincipal>()
            .map(|verified| verified.0.clone())
            .or_else(|| self.authenticate.as_ref().and_then(|check| check(parts)));
        if let Some(name) = verified {
            return (
                format!("{}{name}", crate::engine::caller::pool::VERIFIED_PREFIX),
                true,
            );
        }
        let mut principal = (self.principal)(parts);
        if principal.starts_with(crate::engine::caller::pool::VERIFIED_PREFIX) {
            // Only an authenticated name may read `verified:NAME`: a principal function
            // that passes a header's value through would otherwise let a caller name
            // itself `verified:alice` and resume alice's tokens.
            principal.insert_str(0, "claimed:");
        }
        let verified = self.verified && principal != ANONYMOUS;
        (principal, verified)
    }

    /// The caller of a request: its principal and the pool the bounds count it against.
    pub(crate) fn caller(&self, parts: &http::request::Parts) -> Caller {
        self.caller_from(parts, crate::engine::caller::pool::peer_of(parts))
    }

    /// [`Identity::caller`] of a request from `peer`.
    pub(crate) fn caller_from(
        &self,
        parts: &http::request::Parts,
        peer: Option<std::net::IpAddr>,
    ) -> Caller {
        if let Some(caller) = parts.extensions.get::<Caller>() {
            return caller.clone();
        }
        let (principal, verified) = self.resolve(parts);
        let pool = Pool::of(&principal, verified, peer);
        Caller { principal, pool }
    }
}

pub use crate::state::ANONYMOUS;

/// The default principal: a SHA-256 digest of the `Authorization` header, so that a token
/// issued to one bearer is refused for another, and the credential itself is never kept.
pub fn authorization_digest(parts: &http::request::Parts) -> String {
    match parts.headers.get(http::header::AUTHORIZATION) {
        Some(value) => {
            let digest = Sha256::new()
                .chain_update(b"saga/principal/authorization\0")
                .chain_update(value.as_bytes())
                .finalize();
            format!("authz:{}", crate::state::hex(&digest[..16]))
        }
        None => ANONYMOUS.to_owned(),
    }
}

/// A principal function that digests the named request headers (all their values, in
/// order), for deployments that identify callers by something other than
/// `Authorization`: a session cookie, an API-key header, a header set by an
/// authenticating proxy. A request with none of them is [`ANONYMOUS`].
///
/// ```
/// # use saga_runtime::serve::principal_from_headers;
/// let principal = principal_from_headers(["cookie", "x-api-key"]);
/// ```
///
/// Name every header that identifies a caller: a token is bound to exactly these, so a
/// caller who differs only in a header left out could resume another caller's saga.
pub fn principal_from_headers<I, S>(names: I) -> PrincipalFn
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let names: Vec<http::HeaderName> = names
        .into_iter()
        .filter_map(|name| http::HeaderName::from_bytes(name.as_ref().as_bytes()).ok())
        .collect();
    Arc::new(move |parts: &http::request::Parts| {
        let mut digest = Sha256::new().chain_update(b"saga/principal/headers\0");
        let mut any = false;
        for name in &names {
            for value in parts.headers.get_all(name) {
                any = true;
                // Lengths frame each part, so no two header sets digest alike.
                digest.update((name.as_str().len() as u64).to_be_bytes());
                digest.update(name.as_str().as_bytes());
                digest.update((value.len() as u64).to_be_bytes());
                digest.update(value.as_bytes());
            }
        }
        if any {
            format!("headers:{}", crate::state::hex(&digest.finalize()[..16]))
        } else {
            ANONYMOUS.to_owned()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(authorization: Option<&str>) -> http::request::Parts {
        let mut builder = http::Request::builder();
        if let Some(value) = authorization {
            builder = builder.header("authorization", value);
        }
        builder.body(()).unwrap().into_parts().0
    }

    #[test]
    fn a_principal_function_cannot_name_a_verified_principal() {
        let identity = Identity {
            principal: Arc::new(|parts: &http::request::Parts| {
                parts.headers["x-user"]
                    .to_str()
                    .unwrap_or_default()
                    .to_owned()
            }),
            authenticate: Some(Arc::new(|parts: &http::request::Parts| {
                (parts.headers.get("x-key")?.as_bytes() == b"k").then(|| "alice".to_owned())
            })),
            verified: false,
            required: false,
            verified_tools: Vec::new(),
        };
        let request = |headers: &[(&str, &str)]| {
            let mut builder = http::Request::builder();
            for (name, value) in headers {
                builder = builder.header(*name, *value);
            }
            builder.body(()).unwrap().into_parts().0
        };
        let alice = identity.resolve(&request(&[("x-user", "x"), ("x-key", "k")]));
        assert_eq!(alice, ("verified:alice".to_owned(), true));
        let forged = identity.resolve(&request(&[("x-user", "verified:alice")]));
        assert_ne!(forged.0, alice.0);
        assert!(!forged.1);
    }

    #[test]
    fn distinct_bearers_get_distinct_principals() {
        let alice = authorization_digest(&parts(Some("Bearer alice")));
        let bob = authorization_digest(&parts(Some("Bearer bob")));
        assert_ne!(alice, bob);
        assert!(
            !alice.contains("alice"),
            "the credential must not leak into the principal"
        );
        assert_eq!(authorization_digest(&parts(None)), ANONYMOUS);
    }

    #[test]
    fn named_headers_identify_the_caller() {
        let principal = principal_from_headers(["cookie", "x-api-key"]);
        let with = |headers: &[(&str, &str)]| {
            let mut builder = http::Request::builder();
            for (name, value) in headers {
                builder = builder.header(*name, *value);
            }
            principal(&builder.body(()).unwrap().into_parts().0)
        };
        let alice = with(&[("cookie", "session=alice")]);
        assert_ne!(alice, with(&[("cookie", "session=bob")]));
        assert_ne!(alice, with(&[("x-api-key", "session=alice")]));
        assert_eq!(
            alice,
            with(&[("cookie", "session=alice"), ("authorization", "x")])
        );
        assert_eq!(with(&[("authorization", "Bearer a")]), ANONYMOUS);
        assert!(!alice.contains("alice"));
    }
}
