//! Who is calling: the identity every token is bound to.

use std::sync::Arc;

use sha2::{Digest, Sha256};

/// Derives the principal from an HTTP request's head.
pub type PrincipalFn = Arc<dyn Fn(&http::request::Parts) -> String + Send + Sync>;

/// The principal of a request that carries no identity (stdio, or HTTP without an
/// `Authorization` header).
pub const ANONYMOUS: &str = "anonymous";

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
}
