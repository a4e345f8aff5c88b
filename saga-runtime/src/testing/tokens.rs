//! Bearer tokens for tests of a server that authorizes (feature `oauth`), without an
//! authorization server: each token a fixed string that stands for a subject and its
//! scopes.

use std::collections::HashMap;

use crate::serve::auth::{AccessToken, BoxFuture, TokenError, TokenVerifier};

/// A [`TokenVerifier`] of fixed tokens, for tests: `.token("t-ops", "ops", ["deploy:write"])`
/// makes `Authorization: Bearer t-ops` a verified token of the subject `ops` with the
/// scope `deploy:write` (issuer [`TestTokens::ISSUER`]); any other token is refused as
/// invalid. It verifies for whatever resource the server names: never use it in
/// production.
///
/// ```
/// use saga_runtime::prelude::*;
/// use saga_runtime::serve::auth::ResourceServer;
/// use saga_runtime::testing::TestTokens;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let auth = ResourceServer::new("http://127.0.0.1:8080/mcp")?
///     .authorization_server(TestTokens::ISSUER)
///     .verifier(
///         TestTokens::new()
///             .token("t-read", "alice", ["mcp:use"])
///             .token("t-ops", "ops", ["mcp:use", "deploy:write"]),
///     )
///     .require_scopes(["mcp:use"])
///     .tool_scopes("deploy", ["deploy:write"]);
/// let server = SagaServer::builder()
///     .keys(KeyRing::ephemeral())
///     .authorization(auth)
///     .build()?;
/// # let _ = server;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct TestTokens {
    tokens: HashMap<String, AccessToken>,
}

impl TestTokens {
    /// The issuer every test token names.
    pub const ISSUER: &'static str = "https://tokens.test";

    /// No token yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// `token` stands for `subject`, granting `scopes`.
    pub fn token<S: Into<String>>(
        mut self,
        token: impl Into<String>,
        subject: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.tokens.insert(
            token.into(),
            AccessToken::new(Self::ISSUER, subject, scopes),
        );
        self
    }
}

impl TokenVerifier for TestTokens {
    fn verify<'a>(
        &'a self,
        token: &'a str,
        _resource: &'a str,
    ) -> BoxFuture<'a, Result<AccessToken, TokenError>> {
        let found = self
            .tokens
            .get(token)
            .cloned()
            .ok_or_else(|| TokenError::Invalid("not one of the test tokens".into()));
        Box::pin(std::future::ready(found))
    }
}
