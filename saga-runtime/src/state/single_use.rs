//! Optional single use: each token can be redeemed once.
//!
//! Stateless tokens can be replayed: a client (or anyone who saw a token) may present the
//! same `requestState` twice and run the same transition twice. Where that matters (a
//! step with side effects), a server can record each token's nonce when it is redeemed,
//! before the step runs, and refuse it the second time. The price is state on the server
//! side, shared by every replica: [`MemoryStore`] for one process, [`RedisStore`] (feature
//! `redis`) for several.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use super::clock::unix_now;

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a store could not record a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store holds as many live tokens as it may; it refuses rather than forget one
    /// that could still be replayed.
    #[error("the single-use store is full")]
    Full,
    /// The store could not be reached.
    #[error("the single-use store is unavailable: {0}")]
    Unavailable(String),
}

/// Records redeemed tokens.
pub trait TokenStore: Send + Sync + std::fmt::Debug + 'static {
    /// Marks the token `id` redeemed until `keep_until` (unix seconds). `Ok(true)` the
    /// first time, `Ok(false)` if it was redeemed before.
    fn redeem<'a>(
        &'a self,
        id: &'a [u8; 24],
        keep_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;
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
}

/// An in-process store of at most `capacity` live tokens.
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
    entries: Mutex<HashMap<[u8; 24], u64>>,
}

impl MemoryStore {
    /// A store of at most `capacity` live tokens.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// How many tokens it holds.
    pub fn len(&self) -> usize {
        self.entries.lock().map_or(0, |entries| entries.len())
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn redeem_now(&self, id: &[u8; 24], keep_until: u64, now: u64) -> Result<bool, StoreError> {
        // A poisoned lock only means another request panicked mid-insert; the map is
        // still a valid map.
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if entries.contains_key(id) {
            return Ok(false);
        }
        if entries.len() >= self.capacity {
            entries.retain(|_, until| *until >= now);
            if entries.len() >= self.capacity {
                return Err(StoreError::Full);
            }
        }
        entries.insert(*id, keep_until);
        Ok(true)
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
}

#[cfg(feature = "redis")]
pub use redis_store::RedisStore;

#[cfg(feature = "redis")]
mod redis_store {
    use super::{BoxFuture, StoreError, TokenStore};

    /// A store in Redis, shared by every replica: `SET saga:used:<id> 1 NX EXAT <keep_until>`.
    /// Redis expires the entries itself.
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
                let key = format!("{}{}", self.prefix, crate::state::hex(id));
                let mut connection = self.connection.clone();
                let reply: Option<String> = redis::cmd("SET")
                    .arg(&key)
                    .arg(1)
                    .arg("NX")
                    .arg("EXAT")
                    .arg(keep_until.max(1))
                    .query_async(&mut connection)
                    .await
                    .map_err(|error| StoreError::Unavailable(error.to_string()))?;
                Ok(reply.is_some())
            })
        }
    }
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
}
