//! Failed credentials, counted per unverified address: a request that carries a
//! credential (`Authorization`, `X-Api-Key`, `Api-Key`) that the check (an
//! [`authenticate`](crate::serve::SagaServerBuilder::authenticate) closure, or the bearer
//! token verifier) does not verify is a failed try; past
//! [`max_failed_credentials_per_minute`](super::HttpLimits::max_failed_credentials_per_minute)
//! distinct such credentials in a minute, the address's requests that carry another one
//! are refused with 429 before the check runs (a request without a credential, or one
//! that repeats a credential already refused, guesses nothing and is served as before),
//! so that keys cannot be guessed at the server's speed (2,400 tries a second from one
//! address, before).
//!
//! Scope: per unverified pool of addresses (one IPv4 address, one IPv6 /64), which a
//! caller cannot multiply by making identities up.
//!
//! One rule for both kinds of credential, API keys (the HTTP guard) and bearer tokens
//! (the `auth` layer), so that one caller guessing cannot lock out the others who share
//! its address (an office NAT, a carrier's CGNAT, a proxy):
//!
//! - **A credential verified before passes, whatever its address sent** (issue 79): its
//!   digest is kept until a check refuses it (at most [`VERIFIED_PER_PRINCIPAL`] per
//!   principal and [`VERIFIED_KEPT`] principals, the one verified least recently
//!   forgotten first, so that no principal can push the others' out), and the check
//!   still runs on every request, so a revoked key is refused at once. A digest is a
//!   keyed 64-bit hash: a guess that collided with a kept one (one in 2⁶⁴ per kept
//!   credential) would earn one more check, never access.
//! - **A credential never verified, from a spent address, is refused unchecked until
//!   that address's minute ends** (`Retry-After`), a valid one too: it cannot be told from
//!   a guess without checking it, and checking is what the bound limits. Checking such
//!   credentials at a slower rate would let guessing go on at that rate.
//! - **Where the server is not told the peer's address** (a router mounted without
//!   `ConnectInfo`) there is no count to spend, and nothing is refused for it (issue 72,
//!   finding 4): a shared count would let one caller lock every other out. Such a server
//!   bounds guessing only by the check's own speed: serve with `serve_listener`, or
//!   mount the router with `ConnectInfo`. Behind a reverse proxy every caller has the
//!   proxy's address unless the proxy is trusted to name the client's
//!   (`HttpLimits::trusted_proxy`, the `forwarded` module): the credentials verified
//!   before still pass, but a new one waits out a spent minute.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::BuildHasher;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::engine::caller::pool::Pool;

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

/// How many principals' verified credentials are remembered (the JWT verifier keeps as
/// many tokens), the one verified least recently forgotten first.
pub(crate) const VERIFIED_KEPT: usize = 10_000;

/// How many credentials of one principal are remembered, the oldest forgotten first: one
/// principal sending a valid key with ever new junk in another credential header cannot
/// push the other principals' credentials out.
const VERIFIED_PER_PRINCIPAL: usize = 8;

/// The failed credentials of each address pool in its current minute, and the
/// credentials verified before, wherever they came from.
pub(crate) struct Tries {
    per_minute: usize,
    hasher: std::collections::hash_map::RandomState,
    by_pool: Mutex<(HashMap<Pool, Minute>, usize)>,
    verified: Mutex<Verified>,
}

/// Digests of credentials a check verified, by principal: at most
/// [`VERIFIED_PER_PRINCIPAL`] each, and [`VERIFIED_KEPT`] principals, the one verified
/// least recently forgotten first.
#[derive(Default)]
struct Verified {
    /// Each kept credential's principal (a digest of its name).
    kept: HashMap<u64, u64>,
    /// Each principal's credentials, oldest first, and when it was last verified.
    principals: HashMap<u64, (VecDeque<u64>, u64)>,
    /// Principals in the order they were verified, with the number they were verified
    /// under: an entry whose number is not the principal's latest is stale.
    order: VecDeque<(u64, u64)>,
    next: u64,
}

impl Verified {
    fn keep(&mut self, digest: u64, principal: u64) {
        self.next += 1;
        let next = self.next;
        if let Some(&owner) = self.kept.get(&digest)
            && owner != principal
        {
            self.forget(digest);
        }
        let (credentials, last) = self
            .principals
            .entry(principal)
            .or_insert_with(|| (VecDeque::new(), 0));
        *last = next;
        if !credentials.contains(&digest) {
            if credentials.len() >= VERIFIED_PER_PRINCIPAL
                && let Some(oldest) = credentials.pop_front()
            {
                self.kept.remove(&oldest);
            }
            credentials.push_back(digest);
            self.kept.insert(digest, principal);
        }
        self.order.push_back((principal, next));
        while self.principals.len() > VERIFIED_KEPT {
            let Some((oldest, number)) = self.order.pop_front() else {
                break;
            };
            if self
                .principals
                .get(&oldest)
                .is_some_and(|(_, last)| *last == number)
                && let Some((credentials, _)) = self.principals.remove(&oldest)
            {
                for credential in credentials {
                    self.kept.remove(&credential);
                }
            }
        }
        // Stale entries (principals verified again since): dropped once they outnumber
        // the live ones.
        if self.order.len() > 2 * VERIFIED_KEPT.max(self.principals.len()) {
            let principals = &self.principals;
            self.order.retain(|(principal, number)| {
                principals
                    .get(principal)
                    .is_some_and(|(_, last)| last == number)
            });
        }
    }

    fn forget(&mut self, digest: u64) {
        let Some(principal) = self.kept.remove(&digest) else {
            return;
        };
        if let Some((credentials, _)) = self.principals.get_mut(&principal) {
            credentials.retain(|kept| *kept != digest);
        }
    }
}

/// A request's credential against its address's failed ones this minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tried {
    /// Verified before, from any address: checked, whatever its address sent.
    VerifiedBefore,
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
            verified: Mutex::new(Verified::default()),
        }
    }

    /// The pool a request's failed tries count against: its address's, where the server
    /// knows it.
    fn pool(peer: Option<IpAddr>) -> Option<Pool> {
        peer.map(|peer| Pool::of("", false, Some(peer)))
    }

    /// What this request's credential is at its address this minute: one lookup, one
    /// hash. A request without a credential guesses nothing (`Fresh`).
    pub(crate) fn tried(&self, parts: &http::request::Parts, peer: Option<IpAddr>) -> Tried {
        let Some(credential) = credential(parts, &self.hasher) else {
            return Tried::Fresh;
        };
        if self
            .verified
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .kept
            .contains_key(&credential)
        {
            return Tried::VerifiedBefore;
        }
        // An unknown address has no count: nothing is refused for it (see the module).
        let Some(pool) = Self::pool(peer) else {
            return Tried::Fresh;
        };
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

    /// Notes what the check said of the request's credential, if it carries one: one
    /// verified (as the principal `verified` names) is kept, so that it passes from any
    /// address; one not verified is no longer kept (revoked, expired) and counts as failed
    /// at its address.
    pub(crate) fn note(
        &self,
        parts: &http::request::Parts,
        verified: Option<&str>,
        peer: Option<IpAddr>,
    ) {
        let Some(credential) = credential(parts, &self.hasher) else {
            return;
        };
        {
            let mut kept = self.verified.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(principal) = verified {
                kept.keep(credential, self.hasher.hash_one(principal));
                return;
            }
            kept.forget(credential);
        }
        let Some(pool) = Self::pool(peer) else {
            return;
        };
        let now = Instant::now();
        let mut guard = self.by_pool.lock().unwrap_or_else(|p| p.into_inner());
        let (by_pool, sweep_at) = &mut *guard;
        if by_pool.len() >= (*sweep_at).max(SWEEP_AT) {
            by_pool.retain(|_, minute| now.duration_since(minute.began) < WINDOW);
            *sweep_at = by_pool.len().saturating_mul(2);
        }
        let minute = by_pool.entry(pool).or_insert_with(|| Minute {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn with_key(key: &str) -> http::request::Parts {
        http::Request::builder()
            .header("x-api-key", key)
            .body(())
            .expect("a request")
            .into_parts()
            .0
    }

    fn with_junk(key: &str, junk: usize) -> http::request::Parts {
        http::Request::builder()
            .header("x-api-key", key)
            .header("api-key", junk.to_string())
            .body(())
            .expect("a request")
            .into_parts()
            .0
    }

    /// Issue 79's rule: a credential verified before passes a spent address; made-up ones
    /// do not; a revoked one is forgotten; an unknown address is never spent.
    #[test]
    fn a_verified_credential_passes_a_spent_address_and_guesses_do_not() {
        let tries = Tries::new(2);
        let here = Some(IpAddr::from([192, 0, 2, 1]));
        tries.note(&with_key("good"), Some("alice"), here);
        assert_eq!(tries.tried(&with_key("a"), here), Tried::Fresh);
        tries.note(&with_key("a"), None, here);
        assert_eq!(tries.tried(&with_key("good"), here), Tried::VerifiedBefore);
        // Refused by its check now (revoked): forgotten, and counted.
        tries.note(&with_key("good"), None, here);
        assert_eq!(tries.tried(&with_key("good"), here), Tried::FailedBefore);
        assert_eq!(tries.tried(&with_key("c"), here), Tried::Spent);
        assert_eq!(tries.tried(&with_key("a"), here), Tried::FailedBefore);
        // Verified again (restored): it passes the spent address.
        tries.note(&with_key("good"), Some("alice"), here);
        assert_eq!(tries.tried(&with_key("good"), here), Tried::VerifiedBefore);
        // No address: nothing is spent.
        for n in 0..10 {
            tries.note(&with_key(&format!("x{n}")), None, None);
        }
        assert_eq!(tries.tried(&with_key("new"), None), Tried::Fresh);
    }

    /// One principal's valid key with ever new junk beside it keeps at most a few of its
    /// own credentials, and pushes no other principal's out.
    #[test]
    fn one_principal_cannot_push_the_others_credentials_out() {
        let tries = Tries::new(2);
        let here = Some(IpAddr::from([192, 0, 2, 1]));
        tries.note(&with_key("bob-key"), Some("bob"), here);
        for junk in 0..(VERIFIED_KEPT + 50) {
            tries.note(&with_junk("mallory-key", junk), Some("mallory"), here);
        }
        let verified = tries.verified.lock().expect("not poisoned");
        assert!(
            verified.kept.len() <= 2 * VERIFIED_PER_PRINCIPAL,
            "{}",
            verified.kept.len()
        );
        assert!(verified.order.len() <= 2 * VERIFIED_KEPT + 1);
        drop(verified);
        assert_eq!(
            tries.tried(&with_key("bob-key"), here),
            Tried::VerifiedBefore
        );
    }

    /// Past the bound of principals, the one verified least recently is forgotten first;
    /// one verified again since stays.
    #[test]
    fn the_least_recently_verified_principal_goes_first() {
        let tries = Tries::new(2);
        let here = Some(IpAddr::from([192, 0, 2, 1]));
        tries.note(&with_key("first"), Some("p-first"), here);
        tries.note(&with_key("second"), Some("p-second"), here);
        tries.note(&with_key("first"), Some("p-first"), here);
        for n in 0..(VERIFIED_KEPT - 1) {
            tries.note(&with_key(&format!("k{n}")), Some(&format!("p{n}")), here);
        }
        assert_eq!(tries.tried(&with_key("first"), here), Tried::VerifiedBefore);
        assert_ne!(
            tries.tried(&with_key("second"), here),
            Tried::VerifiedBefore
        );
    }
}
