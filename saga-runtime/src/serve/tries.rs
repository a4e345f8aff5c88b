//! Failed credentials, counted per unverified address: with
//! [`SagaServerBuilder::authenticate`](crate::serve::SagaServerBuilder::authenticate), a
//! request that carries a credential (`Authorization`, `X-Api-Key`, `Api-Key`) the check
//! does not verify is a failed try; past
//! [`max_failed_credentials_per_minute`](super::HttpLimits::max_failed_credentials_per_minute)
//! distinct such credentials in a minute, the address's requests that carry another one
//! are refused with 429 before the check runs (a request without a credential, or one
//! that repeats a credential already refused, guesses nothing and is served as before), so that keys cannot be guessed at the server's speed (2,400 tries a
//! second from one address, before).
//!
//! Scope: per unverified pool of addresses (one IPv4 address, one IPv6 /64), which a
//! caller cannot multiply by making identities up. Where the server is not told the
//! peer's address (a router mounted without `ConnectInfo`), all such callers share one
//! count: a made-up `Authorization` would otherwise be a pool of its own per guess.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::engine::pool::Pool;

/// The headers a credential travels in: a request that names one and is not verified is
/// a failed try.
const CREDENTIAL_HEADERS: [&str; 3] = ["authorization", "x-api-key", "api-key"];

/// A digest of the credential a request carries, if it carries one.
fn credential(parts: &http::request::Parts, hasher: &impl BuildHasher) -> Option<u64> {
    let mut found = false;
    let digest = hasher.hash_one(
        CREDENTIAL_HEADERS
            .iter()
            .filter_map(|name| parts.headers.get(*name))
            .inspect(|_| found = true)
            .map(http::HeaderValue::as_bytes)
            .collect::<Vec<_>>(),
    );
    found.then_some(digest)
}

const WINDOW: Duration = Duration::from_secs(60);

/// Counts are forgotten once their minute ends and there are at least this many.
const SWEEP_AT: usize = 4096;

/// One address pool's minute: when it began, and the distinct credentials it sent that
/// were not verified (at most the bound: past it, nothing more is kept).
struct Minute {
    began: Instant,
    failed: HashSet<u64>,
}

/// The failed credentials of each address pool in its current minute.
pub(crate) struct Tries {
    per_minute: usize,
    hasher: std::collections::hash_map::RandomState,
    by_pool: Mutex<(HashMap<Option<Pool>, Minute>, usize)>,
}

/// A request's credential against its address's failed ones this minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tried {
    /// Not refused this minute, and the address may still guess.
    Fresh,
    /// Refused this minute already: a verifier need not be asked again.
    FailedBefore,
    /// A new guess from an address that has spent its failed credentials.
    Spent,
}

impl Tries {
    pub(crate) fn new(per_minute: u32) -> Self {
        Self {
            per_minute: per_minute.max(1) as usize,
            hasher: std::collections::hash_map::RandomState::new(),
            by_pool: Mutex::new((HashMap::new(), 0)),
        }
    }

    /// The pool a request's failed tries count against: its address's.
    fn pool(peer: Option<IpAddr>) -> Option<Pool> {
        peer.map(|peer| Pool::of("", false, Some(peer)))
    }

    /// What this request's credential is at its address this minute: one lookup, one
    /// hash. A request without a credential guesses nothing (`Fresh`).
    pub(crate) fn tried(&self, parts: &http::request::Parts, peer: Option<IpAddr>) -> Tried {
        let Some(credential) = credential(parts, &self.hasher) else {
            return Tried::Fresh;
        };
        let pool = Self::pool(peer);
        let by_pool = self.by_pool.lock().unwrap_or_else(|p| p.into_inner());
        match by_pool.0.get(&pool) {
            Some(minute) if minute.began.elapsed() < WINDOW => {
                if minute.failed.contains(&credential) {
                    Tried::FailedBefore
                } else if minute.failed.len() >= self.per_minute {
                    Tried::Spent
                } else {
                    Tried::Fresh
                }
            }
            _ => Tried::Fresh,
        }
    }

    /// Whether this request carries a credential that would be a new guess from an
    /// address that has spent its failed credentials for this minute. One that repeats a
    /// credential already refused this minute guesses nothing new (a client resending a
    /// token the server does not know): it is served as an unverified caller's.
    pub(crate) fn spent(&self, parts: &http::request::Parts, peer: Option<IpAddr>) -> bool {
        matches!(self.tried(parts, peer), Tried::Spent)
    }

    /// Counts the request's credential as failed if it carries one and was not verified.
    pub(crate) fn note(&self, parts: &http::request::Parts, verified: bool, peer: Option<IpAddr>) {
        if verified {
            return;
        }
        let Some(credential) = credential(parts, &self.hasher) else {
            return;
        };
        let now = Instant::now();
        let mut guard = self.by_pool.lock().unwrap_or_else(|p| p.into_inner());
        let (by_pool, sweep_at) = &mut *guard;
        if by_pool.len() >= (*sweep_at).max(SWEEP_AT) {
            by_pool.retain(|_, minute| now.duration_since(minute.began) < WINDOW);
            *sweep_at = by_pool.len().saturating_mul(2);
        }
        let minute = by_pool.entry(Self::pool(peer)).or_insert_with(|| Minute {
            began: now,
            failed: HashSet::new(),
        });
        if now.duration_since(minute.began) >= WINDOW {
            minute.began = now;
            minute.failed.clear();
        }
        if minute.failed.len() < self.per_minute {
            minute.failed.insert(credential);
        }
    }
}
