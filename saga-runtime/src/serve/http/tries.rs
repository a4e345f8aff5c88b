//! Failed credentials, counted per unverified address: with
//! [`SagaServerBuilder::authenticate`](crate::serve::SagaServerBuilder::authenticate), a
//! request that carries a credential (`Authorization`, `X-Api-Key`, `Api-Key`) the check
//! does not verify is a failed try; past
//! [`max_failed_credentials_per_minute`](super::HttpLimits::max_failed_credentials_per_minute)
//! of them in a minute, the address's requests that carry a credential are refused with
//! 429 before the check runs again (a request without one is served as before), so that keys cannot be guessed at the server's speed (2,400 tries a
//! second from one address, before).
//!
//! Scope: per unverified pool of addresses (one IPv4 address, one IPv6 /64), which a
//! caller cannot multiply by making identities up. Where the server is not told the
//! peer's address (a router mounted without `ConnectInfo`), all such callers share one
//! count: a made-up `Authorization` would otherwise be a pool of its own per guess.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::engine::pool::Pool;

/// The headers a credential travels in: a request that names one and is not verified is
/// a failed try.
const CREDENTIAL_HEADERS: [&str; 3] = ["authorization", "x-api-key", "api-key"];

fn carries_credential(parts: &http::request::Parts) -> bool {
    CREDENTIAL_HEADERS
        .iter()
        .any(|name| parts.headers.contains_key(*name))
}

const WINDOW: Duration = Duration::from_secs(60);

/// Counts are forgotten once their minute ends and there are at least this many.
const SWEEP_AT: usize = 4096;

/// The failed tries of each address pool in its current minute.
pub(super) struct Tries {
    per_minute: u32,
    by_pool: Mutex<(HashMap<Option<Pool>, (Instant, u32)>, usize)>,
}

impl Tries {
    pub(super) fn new(per_minute: u32) -> Self {
        Self {
            per_minute,
            by_pool: Mutex::new((HashMap::new(), 0)),
        }
    }

    /// The pool a request's failed tries count against: its address's.
    fn pool(peer: Option<IpAddr>) -> Option<Pool> {
        peer.map(|peer| Pool::of("", false, Some(peer)))
    }

    /// Whether this request carries a credential and its address has spent its failed
    /// tries for this minute. A request without a credential guesses nothing: it is
    /// served as an unverified caller's.
    pub(super) fn spent(&self, parts: &http::request::Parts, peer: Option<IpAddr>) -> bool {
        if !carries_credential(parts) {
            return false;
        }
        let pool = Self::pool(peer);
        let by_pool = self.by_pool.lock().unwrap_or_else(|p| p.into_inner());
        by_pool
            .0
            .get(&pool)
            .is_some_and(|(began, tries)| began.elapsed() < WINDOW && *tries >= self.per_minute)
    }

    /// Counts the request as a failed try if it carries a credential and was not
    /// verified.
    pub(super) fn note(&self, parts: &http::request::Parts, verified: bool, peer: Option<IpAddr>) {
        if verified || !carries_credential(parts) {
            return;
        }
        let now = Instant::now();
        let mut guard = self.by_pool.lock().unwrap_or_else(|p| p.into_inner());
        let (by_pool, sweep_at) = &mut *guard;
        if by_pool.len() >= (*sweep_at).max(SWEEP_AT) {
            by_pool.retain(|_, (began, _)| now.duration_since(*began) < WINDOW);
            *sweep_at = by_pool.len().saturating_mul(2);
        }
        let entry = by_pool.entry(Self::pool(peer)).or_insert((now, 0));
        if now.duration_since(entry.0) >= WINDOW {
            *entry = (now, 0);
        }
        entry.1 = entry.1.saturating_add(1);
    }
}
