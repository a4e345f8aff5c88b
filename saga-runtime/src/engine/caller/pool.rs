//! Whom a bound protects. A per-principal bound protects only principals that cannot be
//! made up: the default principal digests whatever `Authorization` header a request
//! brings, so a client that makes up identities would otherwise multiply every
//! per-principal bound. Bounds therefore count a request against its [`Pool`]:
//!
//! - a **verified** principal (authenticated by [`SagaServerBuilder::authenticate`], by a
//!   layer in front that put a [`VerifiedPrincipal`] in the request, or every principal
//!   after [`SagaServerBuilder::verified_principals`]) has a share of its own;
//! - everyone else shares the **unverified** pool, split by the peer's address (an IPv6
//!   peer by its /64), so that identities made up at one address share one share; where
//!   the server is not told the address (a router mounted without axum's `ConnectInfo`),
//!   by principal, as before pools;
//! - and the unverified pools together take at most a part of each global bound
//!   ([`UNVERIFIED_PART`]), so that the rest stays free for verified principals.
//!
//! [`SagaServerBuilder::authenticate`]: crate::serve::SagaServerBuilder::authenticate
//! [`SagaServerBuilder::verified_principals`]: crate::serve::SagaServerBuilder::verified_principals

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A principal that the application has authenticated, put in a request's extensions by
/// a layer in front of saga's router (an rmcp or tower auth layer, an axum middleware
/// that checked an OAuth token). The request's principal is then this name (bound into
/// its tokens as `verified:NAME`), and it counts against a share of its own in every
/// bound rather than the pool of unverified callers.
///
/// ```
/// # use saga_runtime::serve::VerifiedPrincipal;
/// # async fn layer(mut request: axum::extract::Request, next: axum::middleware::Next)
/// #     -> axum::response::Response {
/// // After your own check of the request's credentials:
/// request.extensions_mut().insert(VerifiedPrincipal("alice@example.com".to_owned()));
/// next.run(request).await
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedPrincipal(pub String);

/// The prefix of a verified principal's name in its tokens, so that no principal
/// function's output can name a verified principal.
pub(crate) const VERIFIED_PREFIX: &str = "verified:";

/// The address a connection came from, put in each of its requests' extensions by
/// [`SagaServer::serve_listener`](crate::serve::SagaServer::serve_listener). A router mounted in
/// an application reads axum's `ConnectInfo<SocketAddr>` instead, when the application
/// serves with `into_make_service_with_connect_info`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PeerAddr(pub(crate) IpAddr);

/// The peer address of a request, if its server says.
pub(crate) fn peer_of(parts: &http::request::Parts) -> Option<IpAddr> {
    if let Some(PeerAddr(ip)) = parts.extensions.get::<PeerAddr>() {
        return Some(*ip);
    }
    #[cfg(not(feature = "http"))]
    return None;
    #[cfg(feature = "http")]
    parts
        .extensions
        .get::<axum::extract::ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip())
}

/// Who a request is from, as the guard resolved it once: kept in the request's
/// extensions so that nothing after it digests the credentials again.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub(crate) principal: String,
    pub(crate) pool: Pool,
}

/// The part of each global bound that unverified callers take together, in percent: the
/// rest is kept for verified principals.
pub const UNVERIFIED_PART: usize = 75;

/// The part of `total` unverified callers may take together (at least one).
pub(crate) fn unverified_part(total: usize) -> usize {
    (total.saturating_mul(UNVERIFIED_PART) / 100).max(1)
}

/// Whom a bound counts a request against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Pool {
    /// A verified principal: a share of its own.
    Verified(Arc<str>),
    /// The callers nobody verified at one address (an IPv6 address's /64).
    Unverified(IpAddr),
    /// A caller nobody verified at an address the server was not told (a router mounted
    /// without `ConnectInfo`, a call in process): its principal, as before pools, so that
    /// such callers do not all share one share; made-up identities then multiply the
    /// per-pool bounds, within the unverified callers' part of each global bound.
    UnverifiedCaller(Arc<str>),
}

impl Pool {
    /// The pool of a caller: `principal`, `verified` or not, at `peer`.
    pub(crate) fn of(principal: &str, verified: bool, peer: Option<IpAddr>) -> Self {
        if verified {
            Self::Verified(principal.into())
        } else {
            // An IPv6 client usually holds a whole /64: counting it by address would let
            // it make up addresses as it makes up identities.
            match peer {
                Some(IpAddr::V6(v6)) => Self::Unverified(match v6.to_ipv4_mapped() {
                    Some(v4) => IpAddr::V4(v4),
                    None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
                }),
                Some(v4) => Self::Unverified(v4),
                None => Self::UnverifiedCaller(principal.into()),
            }
        }
    }

    /// The pool [`Pool::key`] names.
    pub(crate) fn from_key(key: &str) -> Self {
        if let Some(principal) = key.strip_prefix(CALLER_PREFIX) {
            return Self::UnverifiedCaller(principal.into());
        }
        match key.strip_prefix("unverified:") {
            Some(address) => match address.parse() {
                Ok(address) => Self::Unverified(address),
                // Records of earlier builds name callers of no known address
                // `unverified:unknown`: still unverified, never a verified principal.
                Err(_) => Self::UnverifiedCaller(key.into()),
            },
            None => Self::Verified(key.into()),
        }
    }

    pub(crate) fn is_verified(&self) -> bool {
        matches!(self, Self::Verified(_))
    }

    /// The name a store counts this pool's records under: a verified principal's own, or
    /// `unverified:ADDRESS`.
    pub(crate) fn key(&self) -> String {
        match self {
            Self::Verified(principal) => principal.to_string(),
            Self::Unverified(ip) => format!("unverified:{ip}"),
            Self::UnverifiedCaller(principal) => format!("{CALLER_PREFIX}{principal}"),
        }
    }
}

/// The key prefix of an [`Pool::UnverifiedCaller`]'s records.
const CALLER_PREFIX: &str = "unverified-caller:";

/// Which part of a [`Shares`] bound was spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spent {
    /// The caller's pool holds its share (this many).
    Pool(usize),
    /// The unverified callers together hold their part (this many).
    Unverified(usize),
    /// The whole bound is held (this many).
    Total(usize),
}

impl Spent {
    /// Whether the caller itself holds what was spent (HTTP 429), rather than others.
    pub(crate) fn is_the_callers(self) -> bool {
        matches!(self, Self::Pool(_))
    }
}

/// A bound of `total` places split by [`Pool`]: one pool holds at most `per_pool`, the
/// unverified pools together at most [`unverified_part`] of `total`.
pub(crate) struct Shares {
    total: Arc<Semaphore>,
    unverified: Arc<Semaphore>,
    per_pool: usize,
    sizes: (usize, usize),
    pools: Mutex<PoolMap>,
}

/// The pools' semaphores, and the size at which idle ones are next forgotten.
#[derive(Default)]
struct PoolMap {
    by_pool: HashMap<Pool, Arc<Semaphore>>,
    sweep_at: usize,
}

/// A place under a [`Shares`] bound, given back when dropped.
pub(crate) struct Place {
    /// The pool's, the unverified part's (for an unverified pool) and the bound's: given
    /// back when the share is dropped. The pool's entry in the map stays for its next
    /// request (see `Shares::pool_semaphore`, which forgets idle pools once there are
    /// many).
    permits: [Option<OwnedSemaphorePermit>; 3],
}

/// A request's [`Place`], which a round that goes on after its client left takes over
/// ([`SharedPlace::take`]): a detached round then counts against its caller's share and
/// the server's total until it ends, as its request did. Cloned into the request's
/// context; the request's own holder is a [`PlaceOwner`].
#[derive(Clone)]
pub(crate) struct SharedPlace(Arc<Mutex<Option<Place>>>);

impl std::fmt::Debug for SharedPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedPlace")
    }
}

impl SharedPlace {
    /// The place, if nothing took it before: whoever holds it keeps it.
    pub(crate) fn take(&self) -> Option<Place> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }
}

/// The request's holder of its [`SharedPlace`]: gives the place back when the request
/// ends (its response sent, or its client gone), unless a detached round took it over.
/// Clones of the handle elsewhere (a context kept by a task) never keep it alive.
pub(crate) struct PlaceOwner(SharedPlace);

impl Drop for PlaceOwner {
    fn drop(&mut self) {
        drop(self.0.take());
    }
}

/// `place` shared: its owner, which the request keeps, and a handle for its context.
pub(crate) fn shared(place: Place) -> (PlaceOwner, SharedPlace) {
    let handle = SharedPlace(Arc::new(Mutex::new(Some(place))));
    (PlaceOwner(handle.clone()), handle)
}

impl Shares {
    pub(crate) fn new(total: usize, per_pool: usize) -> Arc<Self> {
        let total = total.max(1);
        let unverified = unverified_part(total);
        Arc::new(Self {
            total: Arc::new(Semaphore::new(total)),
            unverified: Arc::new(Semaphore::new(unverified)),
            per_pool: per_pool.max(1),
            sizes: (total, unverified),
            pools: Mutex::default(),
        })
    }

    fn pool_semaphore(&self, pool: &Pool) -> Arc<Semaphore> {
        match self.pools.lock() {
            Ok(mut pools) => {
                if let Some(semaphore) = pools.by_pool.get(pool) {
                    return semaphore.clone();
                }
                // Pools that hold nothing stay in the map (most requests come from pools
                // seen before, and a lookup is cheaper than an insert and a removal), until
                // the map holds twice as many pools as the bound has places: then they go.
                // The next pass waits until the map has doubled again, so that pools kept
                // by their waiting requests do not cost a pass per new pool.
                if pools.by_pool.len() >= pools.sweep_at.max(self.sizes.0.saturating_mul(2)) {
                    let per_pool = self.per_pool;
                    pools.by_pool.retain(|_, held| {
                        Arc::strong_count(held) > 1 || held.available_permits() < per_pool
                    });
                    pools.sweep_at = pools.by_pool.len().saturating_mul(2);
                }
                let semaphore = Arc::new(Semaphore::new(self.per_pool));
                pools.by_pool.insert(pool.clone(), semaphore.clone());
                semaphore
            }
            // A poisoned map: a share of its own, so the bound still holds globally.
            Err(_) => Arc::new(Semaphore::new(self.per_pool)),
        }
    }

    fn share() -> Place {
        Place {
            permits: [None, None, None],
        }
    }

    /// The most places one pool holds at once.
    pub(crate) fn per_pool(&self) -> usize {
        self.per_pool
    }

    /// A place for `pool` now, or which part is spent.
    pub(crate) fn try_take(self: &Arc<Self>, pool: &Pool) -> Result<Place, Spent> {
        let semaphore = self.pool_semaphore(pool);
        let mut share = Self::share();
        let own = semaphore
            .try_acquire_owned()
            .map_err(|_| Spent::Pool(self.per_pool))?;
        share.set(0, own);
        if !pool.is_verified() {
            let part = self
                .unverified
                .clone()
                .try_acquire_owned()
                .map_err(|_| Spent::Unverified(self.sizes.1))?;
            share.set(1, part);
        }
        let place = self
            .total
            .clone()
            .try_acquire_owned()
            .map_err(|_| Spent::Total(self.sizes.0))?;
        share.set(2, place);
        Ok(share)
    }

    /// A place for `pool`, waiting at most `wait` in all for the parts to free up; or
    /// which part stayed spent.
    pub(crate) async fn take_within(
        self: &Arc<Self>,
        pool: &Pool,
        wait: Duration,
    ) -> Result<Place, Spent> {
        // A free place is taken at once, without arming a timer.
        if let Ok(share) = self.try_take(pool) {
            return Ok(share);
        }
        let deadline = tokio::time::Instant::now() + wait;
        let semaphore = self.pool_semaphore(pool);
        let mut share = Self::share();
        let steps: [(Option<&Arc<Semaphore>>, Spent); 3] = [
            (Some(&semaphore), Spent::Pool(self.per_pool)),
            (
                (!pool.is_verified()).then_some(&self.unverified),
                Spent::Unverified(self.sizes.1),
            ),
            (Some(&self.total), Spent::Total(self.sizes.0)),
        ];
        for (index, (semaphore, spent)) in steps.into_iter().enumerate() {
            let Some(semaphore) = semaphore else { continue };
            match tokio::time::timeout_at(deadline, semaphore.clone().acquire_owned()).await {
                Ok(Ok(permit)) => share.set(index, permit),
                _ => return Err(spent),
            }
        }
        Ok(share)
    }

    /// A place for `pool`, however long it takes.
    pub(crate) async fn take(self: &Arc<Self>, pool: &Pool) -> Option<Place> {
        let semaphore = self.pool_semaphore(pool);
        let mut share = Self::share();
        share.set(0, semaphore.clone().acquire_owned().await.ok()?);
        if !pool.is_verified() {
            share.set(1, self.unverified.clone().acquire_owned().await.ok()?);
        }
        share.set(2, self.total.clone().acquire_owned().await.ok()?);
        Some(share)
    }

    #[cfg(test)]
    fn pools(&self) -> usize {
        self.pools.lock().map_or(0, |pools| pools.by_pool.len())
    }
}

impl Place {
    fn set(&mut self, index: usize, permit: OwnedSemaphorePermit) {
        self.permits[index] = Some(permit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ip: &str) -> Pool {
        Pool::of(
            "authz:made-up",
            false,
            Some(ip.parse().expect("an address")),
        )
    }

    #[test]
    fn made_up_identities_at_one_address_share_one_pool() {
        let a = Pool::of("authz:a", false, Some("10.0.0.1".parse().expect("ip")));
        let b = Pool::of("authz:b", false, Some("10.0.0.1".parse().expect("ip")));
        assert_eq!(a, b);
        assert_ne!(a, at("10.0.0.2"));
        // One IPv6 /64 is one pool; an IPv4-mapped address is its IPv4 address.
        assert_eq!(at("2001:db8::1"), at("2001:db8::ffff:1"));
        assert_ne!(at("2001:db8::1"), at("2001:db8:0:1::1"));
        assert_eq!(at("::ffff:10.0.0.1"), a);
        // A verified principal is its own pool, whatever its address.
        assert_ne!(
            Pool::of("authz:a", true, None),
            Pool::of("authz:b", true, None)
        );
        assert_eq!(a.key(), "unverified:10.0.0.1");
        // Without an address, each caller is its own pool, as before pools.
        assert_ne!(
            Pool::of("authz:a", false, None),
            Pool::of("authz:b", false, None)
        );
        assert!(!Pool::of("authz:a", false, None).is_verified());
        for pool in [
            a,
            Pool::of("authz:a", false, None),
            at("2001:db8::1"),
            Pool::of("x", true, None),
        ] {
            assert_eq!(Pool::from_key(&pool.key()), pool);
        }
        // What earlier builds wrote for a caller of no known address is not verified.
        assert!(!Pool::from_key("unverified:unknown").is_verified());
    }

    #[test]
    fn a_pool_takes_its_share_and_unverified_pools_leave_room_for_verified_ones() {
        let shares = Shares::new(8, 4);
        let mut held = Vec::new();
        for _ in 0..4 {
            held.push(shares.try_take(&at("10.0.0.1")).expect("within the share"));
        }
        assert_eq!(shares.try_take(&at("10.0.0.1")).err(), Some(Spent::Pool(4)));
        for _ in 0..2 {
            held.push(shares.try_take(&at("10.0.0.2")).expect("another address"));
        }
        // Six of eight: the unverified part (75 %) is spent, and verified callers still
        // get the rest.
        assert_eq!(
            shares.try_take(&at("10.0.0.3")).err(),
            Some(Spent::Unverified(6))
        );
        let alice = Pool::of("alice", true, None);
        held.push(shares.try_take(&alice).expect("kept for verified"));
        held.push(shares.try_take(&alice).expect("kept for verified"));
        assert_eq!(shares.try_take(&alice).err(), Some(Spent::Total(8)));
        drop(held);
        assert!(shares.try_take(&at("10.0.0.3")).is_ok());
        // Past twice as many pools as places, the idle ones are forgotten: the map never
        // holds more.
        for n in 0..60 {
            drop(shares.try_take(&at(&format!("10.0.1.{n}"))));
        }
        assert!(shares.pools() <= 16, "{}", shares.pools());
    }

    /// A request's place, shared with its context: given back when the request ends,
    /// unless a round that goes on after its client left took it over, which then holds it
    /// until it ends (the fifth review: such rounds counted against no share).
    #[test]
    fn a_place_taken_over_is_held_until_its_taker_ends() {
        let shares = Shares::new(8, 1);
        let pool = at("10.0.0.1");
        let (owner, handle) = shared(shares.try_take(&pool).expect("free"));
        let context = handle.clone();
        drop(owner);
        assert!(context.take().is_none(), "the request gave its place back");
        let _again = shares
            .try_take(&pool)
            .expect("given back when the request ended");
        drop(_again);

        let (owner, handle) = shared(shares.try_take(&pool).expect("free"));
        let taken = handle.take().expect("the round takes it over");
        drop(owner);
        assert!(
            shares.try_take(&pool).is_err(),
            "the pool's one place stays held while the round runs"
        );
        drop(taken);
        shares
            .try_take(&pool)
            .expect("given back when the round ended");
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_take_gets_a_place_given_back_or_says_what_stayed_spent() {
        let shares = Shares::new(2, 1);
        let first = shares.try_take(&at("10.0.0.1")).expect("free");
        let waiting = {
            let shares = shares.clone();
            tokio::spawn(async move {
                shares
                    .take_within(&at("10.0.0.1"), Duration::from_secs(5))
                    .await
                    .map(drop)
            })
        };
        tokio::time::sleep(Duration::from_secs(1)).await;
        drop(first);
        assert_eq!(waiting.await.expect("joined"), Ok(()));
        let _held = shares.try_take(&at("10.0.0.1")).expect("free");
        assert_eq!(
            shares
                .take_within(&at("10.0.0.1"), Duration::from_secs(5))
                .await
                .err(),
            Some(Spent::Pool(1))
        );
    }
}
