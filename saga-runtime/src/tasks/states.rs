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

use super::store::{KeptEntry, Quota, Share, TaskStore, TaskStoreError};
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
/// // With the defaults: a token past 8 KiB is kept in the store (here in memory; with
/// // feature `sqlite`, `TaskStore::sqlite("saga.db")?`; Redis or Postgres for replicas).
/// let builder = SagaServer::builder().state_store(TaskStore::memory());
/// // Or with bounds of your own.
/// let builder = SagaServer::builder().state_store(
///     StateSettings::new(TaskStore::memory())
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

#[cfg(test)]
mod tests {
    //! A reference to a kept state opens only where its token would have: every refusal
    //! the issue names, against the memory store.
    use std::time::Duration;

    use super::*;
    use crate::state::{
        Binding, KeyRing, OpenError, PointKey, StateCodec, StateOwner, TokenFormat, TokenHeader,
        unix_now,
    };

    fn point(byte: u8) -> PointKey {
        PointKey {
            header: [byte; 8],
            identity: [byte; 32],
        }
    }

    /// Bytes that do not deflate: a state that stays long once sealed.
    fn noise(len: usize, seed: u32) -> Vec<u8> {
        crate::state::noise(seed, len)
    }

    fn codec(keys: &KeyRing, store: &TaskStore) -> StateCodec {
        let settings = StateSettings::new(store.clone()).inline_max(1024);
        StateCodec::new(keys.duplicate(), Duration::from_secs(600))
            .with_state_store(settings.keeper(), settings.inline_max)
    }

    fn alice() -> StateOwner {
        StateOwner {
            key: "alice".into(),
            shared: false,
        }
    }

    fn binding(principal: &str, arguments: &str) -> Binding {
        let arguments = serde_json::json!({ "q": arguments });
        Binding::new("agent", "tools/call", principal, arguments.as_object())
    }

    #[tokio::test]
    async fn a_kept_state_opens_only_where_its_token_would() {
        let keys = KeyRing::ephemeral();
        let store = TaskStore::memory();
        let codec = codec(&keys, &store);
        let (p, b) = (point(1), binding("alice", "x"));
        let state = noise(20_000, 7);
        let token = codec.seal_first(&p, &b, &state);
        assert!(token.len() > 20_000);
        let reference = codec
            .keep(token.clone(), &p, &b, &alice())
            .await
            .expect("kept");
        let header = TokenHeader::parse(&reference).expect("reads");
        assert_eq!(header.format(), Some(TokenFormat::Kept));
        assert!(reference.len() < 150, "{} characters", reference.len());
        assert_eq!(header.link(), TokenHeader::parse(&token).unwrap().link());

        // It opens to the state, as the token's link; a plain open refuses it.
        let opened = codec.open_kept(&reference, &p, &b).await.expect("opens");
        assert_eq!(opened.plaintext, state);
        assert_eq!(opened.sealed_len, token.len());
        assert_eq!(opened.nonce, header.nonce);
        assert_eq!(codec.open(&reference, &p, &b).unwrap_err(), OpenError::Kept);

        // Another principal's, another call's (other arguments), another layout.
        for (why, p2, b2) in [
            ("another principal", p, binding("mallory", "x")),
            ("another call", p, binding("alice", "y")),
            (
                "another layout",
                PointKey {
                    identity: [9; 32],
                    ..p
                },
                b,
            ),
        ] {
            assert_eq!(
                codec.open_kept(&reference, &p2, &b2).await.unwrap_err(),
                OpenError::Forged,
                "{why}"
            );
        }

        // A codec without the store refuses it; one whose store lost it says so.
        let plain = StateCodec::new(keys.duplicate(), Duration::from_secs(600));
        assert_eq!(
            plain.open_kept(&reference, &p, &b).await.unwrap_err(),
            OpenError::Kept
        );
        let forgetful = codec_with_empty_store(&keys);
        assert_eq!(
            forgetful.open_kept(&reference, &p, &b).await.unwrap_err(),
            OpenError::Lost
        );
    }

    fn codec_with_empty_store(keys: &KeyRing) -> StateCodec {
        codec(keys, &TaskStore::memory())
    }

    #[tokio::test]
    async fn a_swapped_key_or_digest_is_refused() {
        let keys = KeyRing::ephemeral();
        let store = TaskStore::memory();
        let codec = codec(&keys, &store);
        let (p, b) = (point(2), binding("alice", "x"));
        let first = codec.seal_first(&p, &b, &noise(10_000, 1));
        let second = codec.seal_first(&p, &b, &noise(10_000, 2));
        let to_first = codec.keep(first.clone(), &p, &b, &alice()).await.unwrap();
        let to_second = codec.keep(second.clone(), &p, &b, &alice()).await.unwrap();
        let (first_key, first_digest) = codec.reference_parts(&to_first, &p, &b);
        let (second_key, second_digest) = codec.reference_parts(&to_second, &p, &b);

        // The first's key with the second's digest, and the other way round: the bytes
        // under the key are not the ones the reference names.
        for (key, digest) in [(first_key, second_digest), (second_key, first_digest)] {
            let forged = codec.forge_reference(&first, &p, &b, key, digest);
            assert_eq!(
                codec.open_kept(&forged, &p, &b).await.unwrap_err(),
                OpenError::Forged
            );
        }
        // The second's key and digest under the first's link: the kept token is of
        // another link (another call's chain), so it is refused too.
        let relinked = codec.forge_reference(&first, &p, &b, second_key, second_digest);
        assert_eq!(
            codec.open_kept(&relinked, &p, &b).await.unwrap_err(),
            OpenError::Forged
        );
        // Unchanged, each still opens.
        assert!(codec.open_kept(&to_first, &p, &b).await.is_ok());
        assert!(codec.open_kept(&to_second, &p, &b).await.is_ok());
    }

    #[tokio::test]
    async fn an_expired_reference_is_refused_and_its_state_forgotten() {
        let keys = KeyRing::ephemeral();
        let store = TaskStore::memory();
        let codec = codec(&keys, &store).with_leeway(Duration::ZERO);
        let (p, b) = (point(3), binding("alice", "x"));
        let token = codec.seal_until(unix_now() + 1, &p, &b, &noise(10_000, 3));
        let reference = codec.keep(token, &p, &b, &alice()).await.unwrap();
        assert!(codec.open_kept(&reference, &p, &b).await.is_ok());
        let (key, _) = codec.reference_parts(&reference, &p, &b);
        tokio::time::sleep(Duration::from_millis(2_100)).await;
        assert!(matches!(
            codec.open_kept(&reference, &p, &b).await,
            Err(OpenError::Expired(_))
        ));
        assert_eq!(
            store
                .backend()
                .read_state(&crate::state::hex(&key))
                .await
                .unwrap(),
            None,
            "the store does not read a state past its expiry"
        );
    }

    #[tokio::test]
    async fn a_short_state_is_handed_out_as_it_is_and_a_quota_refuses_the_rest() {
        let keys = KeyRing::ephemeral();
        let store = TaskStore::memory();
        let settings = StateSettings::new(store.clone())
            .inline_max(1024)
            .max_bytes_per_principal(30_000);
        let codec = StateCodec::new(keys, Duration::from_secs(600))
            .with_state_store(settings.keeper(), settings.inline_max);
        let (p, b) = (point(4), binding("alice", "x"));
        let short = codec.seal_first(&p, &b, b"short");
        assert_eq!(codec.keep(short.clone(), &p, &b, &alice()).await, Ok(short));
        let long = codec.seal_first(&p, &b, &noise(20_000, 4));
        codec
            .keep(long.clone(), &p, &b, &alice())
            .await
            .expect("within the bound");
        assert!(matches!(
            codec.keep(long, &p, &b, &alice()).await,
            Err(crate::state::StoreError::Quota(_))
        ));
    }

    /// Single use holds for a reference as for a token: its nonce is redeemed once.
    #[tokio::test]
    async fn a_reference_is_redeemed_once() {
        let keys = KeyRing::ephemeral();
        let codec = codec(&keys, &TaskStore::memory())
            .with_single_use(std::sync::Arc::new(crate::state::MemoryStore::new(100)));
        let (p, b) = (point(5), binding("alice", "x"));
        let token = codec.seal_first(&p, &b, &noise(10_000, 5));
        let reference = codec.keep(token, &p, &b, &alice()).await.unwrap();
        let opened = codec.open_kept(&reference, &p, &b).await.unwrap();
        assert_eq!(codec.redeem(&opened).await, Ok(true));
        let again = codec.open_kept(&reference, &p, &b).await.unwrap();
        assert_eq!(
            codec.redeem(&again).await,
            Ok(false),
            "a replayed reference"
        );
    }
}
