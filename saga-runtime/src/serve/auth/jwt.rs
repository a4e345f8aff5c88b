//! JWT access tokens (RFC 9068) verified locally against the issuer's keys: the key set
//! (JWKS) found through the issuer's metadata, kept, and fetched again for a key id it
//! does not hold at most once per [`JwtVerifier::refresh_interval`] (global), so that a
//! flood of tokens naming made-up key ids costs the authorization server one fetch per
//! interval, not one per request.
//!
//! The key set is also fetched again, in any traffic, once it is older than the issuer's
//! `Cache-Control: max-age` for it, or the refresh interval where it says none; never
//! sooner than the refresh interval, never later than [`JwtVerifier::max_key_age`]
//! (default 5 minutes). A key the issuer removed (rotated out, compromised) stops
//! verifying within that time, 30 s by default, and the tokens it verified are dropped
//! with it (issue 72, finding 2). Until then, and while the issuer cannot be reached, the
//! keys held are used: one request fetches, the others go on with the keys held.
//!
//! Before any key is held, a failed fetch is tried again after five seconds
//! (`FAILED_FETCH_BACKOFF`), not the whole interval, and a token that needs the keys
//! meanwhile is answered "unavailable" (503, not counted
//! as a failed try): a valid token is not refused as invalid because the issuer was down
//! a moment ago. A token whose key id is not held while the last fetch is too recent to
//! fetch again is refused without counting as a failed try ([`TokenError::UnknownKey`]),
//! so that its retry, once the interval has passed, fetches the new keys (finding 8).
//!
//! The algorithms are pinned to the asymmetric ones (RSA, RSA-PSS, ECDSA, EdDSA): a token
//! signed with `none`, or with an HMAC keyed by a public key, is refused before any key is
//! used, and a key that names its algorithm is used for that algorithm only. The issuer
//! (`iss`), the audience (`aud`: this server's canonical URI, RFC 8707), the expiry and
//! not-before (with a small leeway) are checked.
//!
//! A token that verified is kept (by a SHA-256 of it and the resource, 10,000 at most,
//! oldest out first) until its expiry: the signature is checked once per token, not once
//! per request (measured in BENCHMARKS.md: verifying an RS256 token each request cost
//! 45 % of a first round's throughput).

use std::sync::RwLock;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

use super::discovery::{self, FAILED_FETCH_BACKOFF, Metadata};
use super::token::{AccessToken, TokenError, TokenVerifier};
use futures::future::BoxFuture;

/// The algorithms a token may be signed with: asymmetric only.
const ALLOWED: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Verifies JWT access tokens of one issuer.
///
/// ```no_run
/// # #[cfg(feature = "oauth")]
/// # fn build() -> Result<(), Box<dyn std::error::Error>> {
/// use saga_runtime::serve::auth::{JwtVerifier, ResourceServer};
/// let auth = ResourceServer::new("https://mcp.example.com/mcp")?
///     .verifier(JwtVerifier::new("https://auth.example.com"));
/// # let _ = auth; Ok(()) }
/// ```
pub struct JwtVerifier {
    issuer: String,
    leeway: Duration,
    refresh_interval: Duration,
    client: Option<crate::net::Client>,
    /// The issuer's metadata, once found.
    metadata: RwLock<Option<Metadata>>,
    /// The keys, as last fetched.
    keys: RwLock<JwkSet>,
    max_key_age: Duration,
    /// The last fetch of the metadata and keys: one fetch at a time, and at most one per
    /// `refresh_interval` (after a failure, one per [`FAILED_FETCH_BACKOFF`]).
    fetched: tokio::sync::Mutex<Option<Fetch>>,
    /// When the keys held were fetched, and how long they may be kept: read on every
    /// request, without waiting for a fetch.
    keys_fresh: std::sync::Mutex<Option<(Instant, Duration)>>,
    /// Tokens that verified, until they expire.
    verified: std::sync::Mutex<Verified>,
}

/// The most verified tokens kept at once (global).
const MAX_VERIFIED: usize = 10_000;

/// A fetch of the issuer's metadata and keys: when, and whether it succeeded.
#[derive(Debug, Clone, Copy)]
struct Fetch {
    at: Instant,
    ok: bool,
}

/// Tokens that verified, by a digest of the token and the resource it was verified for.
#[derive(Default)]
struct Verified {
    tokens: std::collections::HashMap<[u8; 32], AccessToken>,
    order: std::collections::VecDeque<[u8; 32]>,
    /// Bumped each time another key set is installed: a token verified against the keys
    /// of an earlier generation is not kept (its check straddled the change).
    generation: u64,
}

impl Verified {
    /// The token kept under `digest`, if it has not expired.
    fn get(&self, digest: &[u8; 32]) -> Option<AccessToken> {
        let token = self.tokens.get(digest)?;
        let now = crate::state::unix_now();
        token
            .expires_at
            .is_some_and(|exp| exp > now)
            .then(|| token.clone())
    }

    fn keep(&mut self, digest: [u8; 32], token: &AccessToken) {
        if token.expires_at.is_none() {
            return;
        }
        while self.tokens.len() >= MAX_VERIFIED {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            self.tokens.remove(&old);
        }
        if self.tokens.insert(digest, token.clone()).is_none() {
            self.order.push_back(digest);
        }
    }
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("leeway", &self.leeway)
            .field("refresh_interval", &self.refresh_interval)
            .field("max_key_age", &self.max_key_age)
            .finish_non_exhaustive()
    }
}

/// The claims read from a JWT access token.
#[derive(Deserialize)]
struct Claims {
    iss: String,
    sub: String,
    exp: Option<u64>,
    /// RFC 9068's space-separated scopes.
    #[serde(default)]
    scope: Option<String>,
    /// Some issuers' array of scopes.
    #[serde(default)]
    scp: Option<Vec<String>>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    azp: Option<String>,
}

impl JwtVerifier {
    /// Tokens of `issuer` (its identifier, exactly as its metadata and tokens name it:
    /// `https://auth.example.com`). Nothing is fetched until the first token comes.
    pub fn new(issuer: impl Into<String>) -> Self {
        let client = crate::net::client(discovery::FETCH_TIMEOUT)
            .inspect_err(
                |error| tracing::warn!(%error, "no HTTP client for the authorization server"),
            )
            .ok();
        Self {
            issuer: issuer.into(),
            leeway: Duration::from_secs(30),
            refresh_interval: Duration::from_secs(30),
            max_key_age: Duration::from_secs(300),
            client,
            metadata: RwLock::new(None),
            keys: RwLock::new(JwkSet { keys: Vec::new() }),
            fetched: tokio::sync::Mutex::new(None),
            keys_fresh: std::sync::Mutex::new(None),
            verified: std::sync::Mutex::default(),
        }
    }

    /// The clock skew allowed on `exp` and `nbf`. Default 30 s.
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The shortest time between two fetches of the issuer's keys (global): a token with
    /// a key id the server does not hold fetches them again only once this has passed.
    /// Default 30 s.
    pub fn refresh_interval(mut self, interval: Duration) -> Self {
        self.refresh_interval = interval;
        self
    }

    /// The longest the issuer's key set is used before it is fetched again, in any traffic
    /// and whatever the issuer's `Cache-Control: max-age` says: a key removed from the set
    /// stops verifying tokens (and the tokens it verified are dropped) within this time,
    /// once the issuer can be reached (while it cannot, the keys held are used, and a
    /// warning is logged each interval). The set is kept for the issuer's `max-age`, or for
    /// the [`refresh_interval`](Self::refresh_interval) where it sends none, within these
    /// two bounds; a bound under the refresh interval is the refresh interval. Default 5
    /// minutes.
    pub fn max_key_age(mut self, age: Duration) -> Self {
        self.max_key_age = age;
        self
    }

    /// Whether the keys held are older than they may be kept (or none were fetched).
    fn keys_stale(&self) -> bool {
        self.keys_fresh
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_none_or(|(at, age)| at.elapsed() >= age)
    }

    /// The key for `kid` (or the only key, for a token without a key id), fetching the
    /// key set again if it is not held and the last fetch is old enough.
    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, TokenError> {
        if let Some(key) = self.held_key(kid, alg)? {
            return Ok(key);
        }
        let fetched = self.refresh().await?;
        match self.held_key(kid, alg)? {
            Some(key) => Ok(key),
            None if fetched => Err(TokenError::Invalid(
                "no key of the issuer has this key id".to_owned(),
            )),
            // Not fetched: the last fetch was too recent. The issuer may have a key since
            // then; the retry will tell, so this is not counted as a failed try.
            None => Err(TokenError::UnknownKey),
        }
    }

    /// The held key for `kid`, if held; an error if it is for another algorithm.
    fn held_key(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Option<DecodingKey>, TokenError> {
        let keys = self.keys.read().unwrap_or_else(|p| p.into_inner());
        let jwk = match kid {
            Some(kid) => keys.find(kid),
            None if keys.keys.len() == 1 => keys.keys.first(),
            None => None,
        };
        let Some(jwk) = jwk else {
            return Ok(None);
        };
        if let Some(own) = jwk.common.key_algorithm
            && own.to_string() != format!("{alg:?}")
        {
            return Err(TokenError::Invalid(format!(
                "the key is for {own}, the token says {alg:?}"
            )));
        }
        DecodingKey::from_jwk(jwk)
            .map(Some)
            .map_err(|error| TokenError::Invalid(format!("the issuer's key: {error}")))
    }

    /// Fetches the metadata (once found, kept) and the key set, unless the last fetch is
    /// more recent than the refresh interval (a failed one: than the backoff, and then
    /// the failure is the answer). One fetch at a time: the requests that find a fetch
    /// running wait for it, then see it recent. Whether it fetched.
    async fn refresh(&self) -> Result<bool, TokenError> {
        let mut fetched = self.fetched.lock().await;
        // Before any key is held a token cannot be checked: a failed fetch is its outage
        // (503), tried again soon. With keys held, the failure is retried at the interval,
        // like any fetch, and a key id they lack is unknown (not a made-up kid's outage).
        let held = self.holds_keys();
        match *fetched {
            Some(Fetch { at, ok: true }) if at.elapsed() < self.refresh_interval => {
                return Ok(false);
            }
            Some(Fetch { at, ok: false }) if held && at.elapsed() < self.refresh_interval => {
                return Ok(false);
            }
            Some(Fetch { at, ok: false })
                if at.elapsed() < FAILED_FETCH_BACKOFF.min(self.refresh_interval) =>
            {
                return Err(TokenError::Unavailable(
                    "the issuer's keys could not be fetched a moment ago".to_owned(),
                ));
            }
            _ => {}
        }
        self.fetch_keys_into(&mut fetched).await.map(|()| true)
    }

    /// Whether any key of the issuer is held (fetched once at least).
    fn holds_keys(&self) -> bool {
        !self
            .keys
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .keys
            .is_empty()
    }

    /// [`fetch_keys`](Self::fetch_keys), its time and outcome recorded in `fetched` (the
    /// fetch lock, held).
    async fn fetch_keys_into(&self, fetched: &mut Option<Fetch>) -> Result<(), TokenError> {
        let at = Instant::now();
        let outcome = self.fetch_keys().await;
        *fetched = Some(Fetch {
            at,
            ok: outcome.is_ok(),
        });
        outcome
    }

    /// Fetches the keys held again, they being older than they may be kept; the keys held
    /// stay in use while the issuer cannot be reached. One request fetches: the others
    /// that find it fetching go on with the keys held, rather than wait on the issuer; a
    /// failed fetch is tried again after the refresh interval, so that an issuer down
    /// costs one request's wait per interval, not every request's.
    async fn refresh_stale(&self) {
        if !self.holds_keys() {
            return;
        }
        let Ok(mut fetched) = self.fetched.try_lock() else {
            return;
        };
        match *fetched {
            Some(Fetch { at, ok: false }) if at.elapsed() < self.refresh_interval => return,
            // Fetched while this request waited for the lock.
            _ if !self.keys_stale() => return,
            _ => {}
        }
        let outcome = self.fetch_keys_into(&mut fetched).await;
        if let Err(error) = outcome {
            tracing::warn!(issuer = %self.issuer, %error, "the issuer's keys could not be fetched again; the keys held are used");
        }
    }

    /// Fetches the metadata (once found, kept) and the key set, and holds the set.
    async fn fetch_keys(&self) -> Result<(), TokenError> {
        let client = self
            .client
            .as_ref()
            .ok_or_else(|| TokenError::Unavailable("no HTTP client".to_owned()))?;
        let known = self
            .metadata
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let metadata = match known {
            Some(metadata) => metadata,
            None => {
                let found = discovery::discover(client, &self.issuer).await?;
                *self.metadata.write().unwrap_or_else(|p| p.into_inner()) = Some(found.clone());
                found
            }
        };
        let jwks_uri = metadata.jwks_uri.as_deref().ok_or_else(|| {
            TokenError::Unavailable("the issuer's metadata names no jwks_uri".to_owned())
        })?;
        let (document, max_age): (serde_json::Value, _) =
            discovery::get_json_with_max_age(client, jwks_uri).await?;
        let set = read_keys(&document)?;
        tracing::debug!(issuer = %self.issuer, keys = set.keys.len(), "fetched the issuer's keys");
        crate::metrics::auth_keys_fetched();
        self.install(set);
        let age = key_age(max_age, self.refresh_interval, self.max_key_age);
        *self.keys_fresh.lock().unwrap_or_else(|p| p.into_inner()) = Some((Instant::now(), age));
        Ok(())
    }

    /// Holds `set` from now on. A set that differs from the one held (a key rotated out,
    /// revoked) drops the verified tokens kept: they were verified against the old one.
    fn install(&self, set: JwkSet) {
        let mut keys = self.keys.write().unwrap_or_else(|p| p.into_inner());
        if serde_json::to_value(&*keys).ok() != serde_json::to_value(&set).ok() {
            let mut verified = self.verified.lock().unwrap_or_else(|p| p.into_inner());
            let generation = verified.generation + 1;
            *verified = Verified {
                generation,
                ..Verified::default()
            };
        }
        *keys = set;
    }

    /// A cryptographic digest of `token` for `resource`: a token that collides with a
    /// verified one must be impossible to make, or it would pass unchecked.
    fn digest(token: &str, resource: &str) -> [u8; 32] {
        use sha2::Digest as _;
        sha2::Sha256::new()
            .chain_update(resource.as_bytes())
            .chain_update([0])
            .chain_update(token.as_bytes())
            .finalize()
            .into()
    }

    fn generation(&self) -> u64 {
        self.verified
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .generation
    }

    fn kept(&self, token: &str, resource: &str) -> Option<AccessToken> {
        self.verified
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&Self::digest(token, resource))
    }

    async fn check(&self, token: &str, resource: &str) -> Result<AccessToken, TokenError> {
        let digest = Self::digest(token, resource);
        // Keys older than they may be kept are fetched again first: a key removed since
        // drops the tokens it verified (`install`). (Before any key is held, `key` fetches
        // them.)
        if self.keys_stale() {
            self.refresh_stale().await;
        }
        if let Some(known) = self.kept(token, resource) {
            return Ok(known);
        }
        let generation = self.generation();
        let verified = self.check_signed(token, resource).await?;
        let mut kept = self.verified.lock().unwrap_or_else(|p| p.into_inner());
        // Kept only if no other key set came while it was checked: a token verified with
        // a key removed meanwhile passes this once, and is checked again next time.
        if kept.generation == generation {
            kept.keep(digest, &verified);
        }
        Ok(verified)
    }

    /// [`check`](Self::check) without the kept tokens: the signature and the claims.
    async fn check_signed(&self, token: &str, resource: &str) -> Result<AccessToken, TokenError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|error| TokenError::Invalid(format!("not a JWT: {error}")))?;
        if !ALLOWED.contains(&header.alg) {
            return Err(TokenError::Invalid(format!(
                "the algorithm {:?} is not allowed",
                header.alg
            )));
        }
        let key = self.key(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let data = jsonwebtoken::decode::<Claims>(token, &key, &validation).map_err(|error| {
            use jsonwebtoken::errors::ErrorKind;
            match error.kind() {
                ErrorKind::ExpiredSignature | ErrorKind::ImmatureSignature => TokenError::Expired,
                ErrorKind::InvalidAudience => TokenError::WrongAudience,
                ErrorKind::InvalidIssuer => TokenError::WrongIssuer,
                _ => TokenError::Invalid(error.to_string()),
            }
        })?;
        let claims = data.claims;
        let mut scopes = super::token::scopes_of(claims.scope.as_deref());
        scopes.extend(claims.scp.unwrap_or_default());
        let mut token = AccessToken::new(claims.iss, claims.sub, scopes);
        token.client_id = claims.client_id.or(claims.azp);
        token.expires_at = claims.exp;
        Ok(token)
    }
}

/// How long a key set is kept: as long as the issuer says (the refresh interval where it
/// says nothing), within [refresh interval, max key age].
fn key_age(said: Option<Duration>, refresh_interval: Duration, max_key_age: Duration) -> Duration {
    said.unwrap_or(refresh_interval)
        .clamp(refresh_interval, max_key_age.max(refresh_interval))
}

/// A key set read key by key: one key of a kind this build does not read (an algorithm
/// it does not know) must not make the whole set, and so every token, unreadable.
/// A set of which no key reads is an error, and the keys held are kept.
fn read_keys(document: &serde_json::Value) -> Result<JwkSet, TokenError> {
    let listed = document
        .get("keys")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| TokenError::Unavailable("the issuer's key set has no keys".to_owned()))?;
    let keys: Vec<_> = listed
        .iter()
        .filter_map(|key| match serde_json::from_value(key.clone()) {
            Ok(key) => Some(key),
            Err(error) => {
                // The key's id only: nothing of its material.
                let kid = key.get("kid").and_then(serde_json::Value::as_str);
                let kid = crate::log::Escaped(kid.unwrap_or(""));
                tracing::warn!(%kid, %error, "a key of the issuer's set is not read");
                None
            }
        })
        .collect();
    if keys.is_empty() {
        return Err(TokenError::Unavailable(
            "no key of the issuer's key set could be read".to_owned(),
        ));
    }
    Ok(JwkSet { keys })
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(
        &'a self,
        token: &'a str,
        resource: &'a str,
    ) -> BoxFuture<'a, Result<AccessToken, TokenError>> {
        Box::pin(self.check(token, resource))
    }

    fn cached(&self, token: &str, resource: &str) -> Option<AccessToken> {
        // Not while the keys are due to be fetched again: `verify` fetches them first.
        if self.keys_stale() {
            return None;
        }
        self.kept(token, resource)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Finding 2: keys are fetched again after the issuer's `max-age`, or the refresh
    /// interval without one, never sooner than that interval nor later than the bound.
    #[test]
    fn a_key_set_is_kept_as_the_issuer_says_within_bounds() {
        let s = Duration::from_secs;
        assert_eq!(key_age(None, s(30), s(300)), s(30));
        assert_eq!(key_age(Some(s(120)), s(30), s(300)), s(120));
        assert_eq!(key_age(Some(s(86_400)), s(30), s(300)), s(300));
        assert_eq!(key_age(Some(s(0)), s(30), s(300)), s(30));
        // A bound under the interval is the interval: never more often than that.
        assert_eq!(key_age(None, s(30), s(10)), s(30));
        assert_eq!(key_age(Some(s(0)), s(30), s(0)), s(30));
    }

    #[test]
    fn a_key_this_build_cannot_read_leaves_the_others_usable() {
        let document = serde_json::json!({"keys": [
            {"kty": "EC", "crv": "secp256k1", "alg": "ES256K", "kid": "odd", "x": "AA", "y": "AA"},
            {"kty": "RSA", "alg": "RS256", "kid": "good", "n": "sXch", "e": "AQAB"},
        ]});
        let set = read_keys(&document).expect("read");
        assert!(set.find("good").is_some());
        assert!(set.find("odd").is_none());
        // A set of which no key reads is an error: the keys held stay.
        let unreadable = serde_json::json!({"keys": [
            {"kty": "EC", "crv": "secp256k1", "alg": "ES256K", "kid": "odd", "x": "AA", "y": "AA"},
        ]});
        assert!(matches!(
            read_keys(&unreadable),
            Err(TokenError::Unavailable(_))
        ));
    }

    #[test]
    fn a_changed_key_set_drops_the_tokens_verified_with_the_old_one() {
        let verifier = JwtVerifier::new("https://issuer.example");
        let first = read_keys(&serde_json::json!({"keys": [
            {"kty": "RSA", "alg": "RS256", "kid": "one", "n": "sXch", "e": "AQAB"},
        ]}))
        .expect("read");
        verifier.install(first.clone());
        let live = AccessToken::new("https://issuer.example", "alice", ["a"])
            .with_expiry(crate::state::unix_now() + 600);
        verifier.verified.lock().expect("lock").keep([9; 32], &live);
        verifier.install(first);
        assert!(
            verifier
                .verified
                .lock()
                .expect("lock")
                .get(&[9; 32])
                .is_some(),
            "the same set keeps them"
        );
        let rotated = read_keys(&serde_json::json!({"keys": [
            {"kty": "RSA", "alg": "RS256", "kid": "two", "n": "sXch", "e": "AQAB"},
        ]}))
        .expect("read");
        verifier.install(rotated);
        assert!(
            verifier
                .verified
                .lock()
                .expect("lock")
                .get(&[9; 32])
                .is_none(),
            "a token verified with a key rotated out is verified again"
        );
        assert!(read_keys(&serde_json::json!({"nokeys": []})).is_err());
    }

    #[test]
    fn a_kept_token_is_given_until_it_expires_and_the_kept_are_bounded() {
        let mut verified = Verified::default();
        let now = crate::state::unix_now();
        let live = AccessToken::new("iss", "alice", ["a"]).with_expiry(now + 60);
        let dead = AccessToken::new("iss", "bob", ["a"]).with_expiry(now - 1);
        verified.keep([1; 32], &live);
        verified.keep([2; 32], &dead);
        verified.keep([3; 32], &AccessToken::new("iss", "carol", ["a"]));
        assert_eq!(verified.get(&[1; 32]), Some(live.clone()));
        assert_eq!(
            verified.get(&[2; 32]),
            None,
            "an expired token is checked again"
        );
        assert_eq!(
            verified.get(&[3; 32]),
            None,
            "a token without expiry is not kept"
        );
        for n in 0..MAX_VERIFIED + 10 {
            let mut digest = [0u8; 32];
            digest[..8].copy_from_slice(&(n as u64).to_le_bytes());
            digest[31] = 9;
            verified.keep(digest, &live);
        }
        assert!(verified.tokens.len() <= MAX_VERIFIED);
        assert_eq!(verified.get(&[1; 32]), None, "the oldest went first");
    }
}
