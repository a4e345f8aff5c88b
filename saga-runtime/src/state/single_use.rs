//! Optional single use: each token can be redeemed once.
//!
//! Stateless tokens can be replayed: a client (or anyone who saw a token) may present the
//! same `requestState` twice and run the same transition twice. Where that matters (a
//! step with side effects), a server can record each token's nonce when it is redeemed,
//! before the step runs, and refuse it the second time. A call's earlier tokens are
//! retired too, once it hands out a newer one or ends: each chain of tokens
//! ([`Link`]) has a floor below which none is redeemed. The price is state on the server
//! side, shared by every replica: [`MemoryStore`] for one process, [`RedisStore`] (feature
//! `redis`) for several.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use super::clock::unix_now;
use super::link::Link;

pub(super) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a store could not record a token, or keep a state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store holds as much as it may; it refuses rather than forget a token that could
    /// still be replayed, or a state a live token refers to.
    #[error("the store is full")]
    Full,
    /// The store could not be reached.
    #[error("the store is unavailable: {0}")]
    Unavailable(String),
    /// What the caller's quota owner (a verified principal, or a pool of unverified
    /// callers) may keep in the store is spent; the message says which bound.
    #[error("{0}")]
    Quota(String),
}

/// Records redeemed tokens, and how far each call's chain of tokens is retired.
pub trait TokenStore: Send + Sync + std::fmt::Debug + 'static {
    /// Marks the token `id` (its nonce) redeemed until `keep_until` (unix seconds).
    /// `Ok(true)` the first time, `Ok(false)` if it was redeemed before or its link
    /// ([`Link::of_nonce`]) is below its chain's floor. Both checks and the mark are one
    /// atomic step.
    fn redeem<'a>(
        &'a self,
        id: &'a [u8; 24],
        keep_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Raises the floor of `chain` to `floor` (a floor never goes down), kept until
    /// `keep_until`: its tokens of lower sequence numbers are refused from now on.
    fn retire<'a>(
        &'a self,
        chain: &'a [u8; 8],
        floor: u64,
        keep_until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// A store chosen at run time (memory for one process, Redis for replicas).
impl TokenStore for Box<dyn TokenStore> {
    fn redeem<'a>(
        &'a self,
        id: &'a [u8; 24],
        keep_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.as_ref().redeem(id, keep_until)
    }

    fn retire<'a>(
        &'a self,
        chain: &'a [u8; 8],
        floor: u64,
        keep_until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.as_ref().retire(chain, floor, keep_until)
    }
}

/// How many redeems pass between two sweeps, in a database store, of the rows no token
/// can use any more.
const SWEEP_EVERY: u64 = 1024;

/// Whether this redeem also sweeps: one in [`SWEEP_EVERY`], counted per process.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(super) fn sweep_due() -> bool {
    static REDEEMS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    REDEEMS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1
}

/// An in-process store of at most `capacity` live tokens and chain floors together.
///
/// When full, it first drops the entries whose tokens have expired, and if none has, it
/// refuses the new one: it never forgets a token that could still be replayed.
///
/// ```
/// # tokio_test_block(async {
/// use saga_runtime::state::{MemoryStore, TokenStore};
/// let store = MemoryStore::new(1);
/// let far = u64::MAX;
/// assert_eq!(store.redeem(&[1; 24], far).await, Ok(true));
/// assert_eq!(store.redeem(&[1; 24], far).await, Ok(false));
/// assert!(store.redeem(&[2; 24], far).await.is_err(), "full, and nothing has expired");
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Debug)]
pub struct MemoryStore {
    capacity: usize,
    entries: Mutex<Entries>,
}

/// Redeemed nonces and chain floors, each with the unix second it may be forgotten at.
#[derive(Debug, Default)]
struct Entries {
    redeemed: HashMap<[u8; 24], u64>,
    floors: HashMap<[u8; 8], (u64, u64)>,
}

impl Entries {
    fn len(&self) -> usize {
        self.redeemed.len() + self.floors.len()
    }

    /// Room for one more, dropping expired entries if there is none.
    fn room(&mut self, capacity: usize, now: u64) -> Result<(), StoreError> {
        if self.len() >= capacity {
            self.redeemed.retain(|_, until| *until >= now);
            self.floors.retain(|_, (_, until)| *until >= now);
            if self.len() >= capacity {
                return Err(StoreError::Full);
            }
        }
        Ok(())
    }
}

impl MemoryStore {
    /// A store of at most `capacity` live tokens.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: Mutex::default(),
        }
    }

    /// How many tokens and chain floors it holds.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        // A poisoned lock only means another request panicked mid-insert; the maps are
        // still valid maps.
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn redeem_now(&self, id: &[u8; 24], keep_until: u64, now: u64) -> Result<bool, StoreError> {
        let mut entries = self.entries();
        let link = Link::of_nonce(id);
        let retired = entries
            .floors
            .get(&link.chain)
            .is_some_and(|(floor, until)| *until >= now && u64::from(link.seq) < *floor);
        if retired || entries.redeemed.contains_key(id) {
            return Ok(false);
        }
        entries.room(self.capacity, now)?;
        entries.redeemed.insert(*id, keep_until);
        Ok(true)
    }

    fn retire_now(
        &self,
        chain: &[u8; 8],
        floor: u64,
        keep_until: u64,
        now: u64,
    ) -> Result<(), StoreError> {
        let mut entries = self.entries();
        if let Some((held, until)) = entries.floors.get_mut(chain)
            && *until >= now
        {
            *held = (*held).max(floor);
            *until = (*until).max(keep_until);
            return Ok(());
        }
        entries.room(self.capacity, now)?;
        entries.floors.insert(*chain, (floor, keep_until));
        Ok(())
    }
}

impl TokenStore for MemoryStore {
    fn redeem<'a>(
        &'a self,
        id: &'a [u8; 24],
        keep_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(std::future::ready(self.redeem_now(
            id,
            keep_until,
            unix_now(),
        )))
    }

    fn retire<'a>(
        &'a self,
        chain: &'a [u8; 8],
        floor: u64,
        keep_until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(std::future::ready(self.retire_now(
            chain,
            floor,
            keep_until,
            unix_now(),
        )))
    }
}

#[cfg(feature = "redis")]
pub use redis_store::RedisStore;

#[cfg(feature = "redis")]
mod redis_store {
    use super::{BoxFuture, StoreError, TokenStore};

    /// A store in Redis, shared by every replica: a redeemed token is
    /// `saga:used:<nonce> = 1`, a chain's floor `saga:used:chain:<chain> = <floor>`, each
    /// expiring (`EXAT`) when no token it guards can still be presented. A redeem checks
    /// the floor and marks the token in one script. Needs Redis 7 (`EXPIRETIME`).
    #[derive(Clone)]
    pub struct RedisStore {
        connection: redis::aio::ConnectionManager,
        prefix: String,
    }

    impl std::fmt::Debug for RedisStore {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("RedisStore")
                .field("prefix", &self.prefix)
                .finish_non_exhaustive()
        }
    }

    impl RedisStore {
        /// Connects to `url` (e.g. `redis://127.0.0.1/`).
        pub async fn connect(url: &str) -> Result<Self, StoreError> {
            let client = redis::Client::open(url)
                .map_err(|error| StoreError::Unavailable(error.to_string()))?;
            let connection = redis::aio::ConnectionManager::new(client)
                .await
                .map_err(|error| StoreError::Unavailable(error.to_string()))?;
            Ok(Self {
                connection,
                prefix: "saga:used:".into(),
            })
        }

        /// Sets the key prefix (default `saga:used:`).
        pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
            self.prefix = prefix.into();
            self
        }
    }

    impl TokenStore for RedisStore {
        fn redeem<'a>(
            &'a self,
            id: &'a [u8; 24],
            keep_until: u64,
        ) -> BoxFuture<'a, Result<bool, StoreError>> {
            Box::pin(async move {
                let link = crate::state::Link::of_nonce(id);
                let mut connection = self.connection.clone();
                let redeemed: i64 = redis::Script::new(REDEEM)
                    .key(format!("{}{}", self.prefix, crate::state::hex(id)))
                    .key(self.chain_key(&link.chain))
                    .arg(link.seq)
                    .arg(keep_until.max(1))
                    .invoke_async(&mut connection)
                    .await
                    .map_err(|error| StoreError::Unavailable(error.to_string()))?;
                Ok(redeemed == 1)
            })
        }

        fn retire<'a>(
            &'a self,
            chain: &'a [u8; 8],
            floor: u64,
            keep_until: u64,
        ) -> BoxFuture<'a, Result<(), StoreError>> {
            Box::pin(async move {
                let mut connection = self.connection.clone();
                let _: i64 = redis::Script::new(RETIRE)
                    .key(self.chain_key(chain))
                    .arg(floor)
                    .arg(keep_until.max(1))
                    .invoke_async(&mut connection)
                    .await
                    .map_err(|error| StoreError::Unavailable(error.to_string()))?;
                Ok(())
            })
        }
    }

    impl RedisStore {
        fn chain_key(&self, chain: &[u8; 8]) -> String {
            format!("{}chain:{}", self.prefix, crate::state::hex(chain))
        }
    }

    /// KEYS: the token's key, its chain's floor. ARGV: its sequence number, keep-until.
    /// 1 if redeemed now; 0 if retired or redeemed before.
    const REDEEM: &str = r"
        local floor = tonumber(redis.call('GET', KEYS[2]) or '0')
        if tonumber(ARGV[1]) < floor then return 0 end
        if redis.call('SET', KEYS[1], 1, 'NX', 'EXAT', ARGV[2]) then return 1 end
        return 0
    ";

    /// KEYS: the chain's floor. ARGV: the new floor, keep-until. The floor only rises,
    /// and it is kept until the later of its expiries.
    const RETIRE: &str = r"
        local held = tonumber(redis.call('GET', KEYS[1]) or '0')
        local floor = math.max(held, tonumber(ARGV[1]))
        local keep = tonumber(ARGV[2])
        local expires = redis.call('EXPIRETIME', KEYS[1])
        if expires > keep then keep = expires end
        redis.call('SET', KEYS[1], floor, 'EXAT', keep)
        return floor
    ";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_store_drops_only_expired_tokens() {
        let store = MemoryStore::new(2);
        assert_eq!(store.redeem_now(&[1; 24], 100, 50), Ok(true));
        assert_eq!(store.redeem_now(&[2; 24], 200, 50), Ok(true));
        assert_eq!(store.redeem_now(&[3; 24], 300, 50), Err(StoreError::Full));
        // At 150 the first has expired: it makes room; the second is kept.
        assert_eq!(store.redeem_now(&[3; 24], 300, 150), Ok(true));
        assert_eq!(store.redeem_now(&[2; 24], 200, 150), Ok(false));
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn a_chains_floor_retires_its_earlier_tokens_and_only_rises() {
        let store = MemoryStore::new(10);
        let chain = [7u8; 8];
        let token = |seq: u32| {
            let mut nonce = [seq as u8; 24];
            nonce[..8].copy_from_slice(&chain);
            nonce[8..12].copy_from_slice(&seq.to_be_bytes());
            nonce
        };
        assert_eq!(store.retire_now(&chain, 3, 100, 50), Ok(()));
        assert_eq!(store.redeem_now(&token(2), 100, 50), Ok(false), "retired");
        assert_eq!(store.redeem_now(&token(3), 100, 50), Ok(true));
        assert_eq!(store.redeem_now(&token(3), 100, 50), Ok(false), "redeemed");
        assert_eq!(store.retire_now(&chain, 1, 100, 50), Ok(()));
        assert_eq!(
            store.redeem_now(&token(2), 100, 50),
            Ok(false),
            "the floor only rises"
        );
        assert_eq!(store.redeem_now(&token(4), 100, 50), Ok(true));
        // Another chain is not touched.
        assert_eq!(store.redeem_now(&[1; 24], 100, 50), Ok(true));
    }
}
