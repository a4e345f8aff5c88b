//! Saga states kept in a task store, by reference: what
//! [`SagaServerBuilder::state_store`](crate::serve::SagaServerBuilder::state_store)
//! configures.
//!
//! A state whose token would be longer than [`StateSettings::inline_max`] is written to
//! the store as the sealed token it is, under a random key, and the client carries a
//! short reference to it (the token format's `kept` module says what the reference
//! holds and how it is checked). The store keeps each state until its token expires (plus
//! the leeway), counted against byte bounds of its own: per verified principal, per pool
//! of unverified callers, for all unverified callers together, and for the whole store.
//! Every task store keeps states: memory, SQLite, Redis, Postgres; a
//! [`TaskBackend`] of your own may implement [`TaskBackend::keep_state`] and
//! [`TaskBackend::read_state`].

use std::sync::Arc;

use super::store::{Quota, Share, TaskStore, TaskStoreError};
use crate::state::{KEPT_KEY_LEN, KeptState, StateStore, StoreError, StoreFuture};

/// Tokens up to this long are handed out as they are: 8 KiB.
pub const DEFAULT_INLINE_MAX: usize = 8 * 1024;
/// Bytes of kept states one quota owner may hold at once: 64 MiB.
pub const DEFAULT_STATE_BYTES_PER_PRINCIPAL: usize = 64 * 1024 * 1024;
/// Bytes of kept states the store may hold at once: 512 MiB, half of it for unverified
/// callers together.
pub const DEFAULT_STATE_STORE_BYTES: usize = 512 * 1024 * 1024;

/// Where and how a server keeps saga states too large for their tokens.
///
/// ```no_run
/// use saga_runtime::prelude::*;
/// use saga_runtime::tasks::StateSettings;
///
/// # fn build() -> anyhow::Result<()> {
/// // With the defaults: a token past 8 KiB is kept in the store.
/// let builder = SagaServer::builder().state_store(TaskStore::sqlite("saga.db")?);
/// // Or with bounds of your own.
/// let builder = SagaServer::builder().state_store(
///     StateSettings::new(TaskStore::sqlite("saga.db")?)
///         .inline_max(4 * 1024)
///         .max_bytes_per_principal(16 * 1024 * 1024),
/// );
/// # let _ = builder;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct StateSettings {
    pub(crate) store: TaskStore,
    pub(crate) inline_max: usize,
    pub(crate) max_bytes_per_principal: usize,
    pub(crate) max_store_bytes: usize,
    pub(crate) unverified_bytes: usize,
}

impl StateSettings {
    /// The defaults, with `store`.
    pub fn new(store: TaskStore) -> Self {
        Self {
            store,
            inline_max: DEFAULT_INLINE_MAX,
            max_bytes_per_principal: DEFAULT_STATE_BYTES_PER_PRINCIPAL,
            max_store_bytes: DEFAULT_STATE_STORE_BYTES,
            unverified_bytes: DEFAULT_STATE_STORE_BYTES / 2,
        }
    }

    /// The longest token handed to the client as it is ([`DEFAULT_INLINE_MAX`]); a longer
    /// one is kept in the store. At most the server's token cap: a token the server would
    /// refuse back is always kept.
    pub fn inline_max(mut self, bytes: usize) -> Self {
        self.inline_max = bytes;
        self
    }

    /// Bytes of live kept states one verified principal, or one pool of unverified
    /// callers, may hold ([`DEFAULT_STATE_BYTES_PER_PRINCIPAL`]).
    pub fn max_bytes_per_principal(mut self, bytes: usize) -> Self {
        self.max_bytes_per_principal = bytes;
        self
    }

    /// Bytes of live kept states the whole store may hold ([`DEFAULT_STATE_STORE_BYTES`]).
    pub fn max_store_bytes(mut self, bytes: usize) -> Self {
        self.max_store_bytes = bytes;
        self
    }

    /// Bytes of live kept states all unverified callers together may hold (half of
    /// [`DEFAULT_STATE_STORE_BYTES`]): made-up identities cannot take more between them.
    pub fn unverified_bytes(mut self, bytes: usize) -> Self {
        self.unverified_bytes = bytes;
        self
    }

    /// The store, as a codec keeps states in it.
    pub(crate) fn keeper(&self) -> Arc<dyn StateStore> {
        Arc::new(KeptIn {
            store: self.store.clone(),
            quota: Quota::per_principal(usize::MAX)
                .with_bytes(self.max_bytes_per_principal, self.max_store_bytes),
            shared: Share {
                tasks: usize::MAX,
                bytes: self.unverified_bytes,
            },
        })
    }
}

impl From<TaskStore> for StateSettings {
    fn from(store: TaskStore) -> Self {
        Self::new(store)
    }
}

/// A state as a task store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeptEntry {
    /// Its key, in hex.
    pub key: String,
    /// The quota owner it counts against.
    pub owner: String,
    /// Whether it counts against the share of unverified callers.
    pub shared: bool,
    /// Unix milliseconds after which it is not read.
    pub expires_ms: u64,
    /// The sealed token.
    pub token: String,
}

/// A task store as a codec's [`StateStore`].
#[derive(Debug)]
struct KeptIn {
    store: TaskStore,
    quota: Quota,
    shared: Share,
}

impl StateStore for KeptIn {
    fn keep<'a>(&'a self, state: KeptState<'a>) -> StoreFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let entry = KeptEntry {
                key: crate::state::hex(state.key),
                owner: state.owner.to_owned(),
                shared: state.shared,
                expires_ms: state.keep_until.saturating_mul(1000),
                token: state.token.to_owned(),
            };
            let quota = if state.shared {
                self.quota.with_share(self.shared)
            } else {
                self.quota
            };
            self.store
                .backend()
                .keep_state(&entry, &quota)
                .await
                .map_err(|error| refused(error, &quota))
        })
    }

    fn read<'a>(
        &'a self,
        key: &'a [u8; KEPT_KEY_LEN],
    ) -> StoreFuture<'a, Result<Option<String>, StoreError>> {
        Box::pin(async move {
            self.store
                .backend()
                .read_state(&crate::state::hex(key))
                .await
                .map_err(|error| StoreError::Unavailable(error.to_string()))
        })
    }
}

/// A task store's refusal of a state, as a codec reports it.
fn refused(error: TaskStoreError, quota: &Quota) -> StoreError {
    match error {
        TaskStoreError::PrincipalBytes(_) | TaskStoreError::PrincipalQuota(_) => {
            StoreError::Quota(format!(
                "the states this caller keeps in the state store already hold their bound of \
                 {} bytes",
                quota.bytes_per_principal
            ))
        }
        TaskStoreError::SharedQuota => {
            StoreError::Quota("the share of the state store for unverified callers is spent".into())
        }
        TaskStoreError::Full => StoreError::Full,
        TaskStoreError::Unavailable(reason) => StoreError::Unavailable(reason),
    }
}
