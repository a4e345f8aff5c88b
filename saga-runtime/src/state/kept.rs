//! Large states kept in a store, by reference (format 0x70, see [`super::format`]).
//!
//! A state that seals into a token longer than a codec's inline bound is not handed to
//! the client: the sealed token (an ordinary one, bound to its tool, method, principal,
//! arguments and layout, with its expiry and link) is written to the server's
//! [`StateStore`] under a fresh random key, and the client gets a short token of format
//! 0x70 whose sealed plaintext is that key and the kept token's SHA-256. The reference is
//! sealed under the same key, header fields and associated data as the token it refers to,
//! with a nonce of the same link (another random part), so it opens only where the kept
//! token would. Reading it back checks, in order: the reference's own seal and expiry;
//! the store's entry, present; its digest; the kept token's seal, for the same point and
//! binding; the same link and expiry. A store that lost the entry, or holds other bytes
//! under its key, gives a refusal ([`OpenError::Lost`](super::OpenError::Lost),
//! [`OpenError::Forged`](super::OpenError::Forged)), never another state.
//!
//! The store holds what the token would have held: a sealed state, readable only with the
//! server's keys, kept until the token expires (plus the leeway). A state store's bound
//! on what it keeps is its own (see `StateSettings` of the runtime's tasks module).

use sha2::{Digest as _, Sha256};

use super::single_use::StoreError;

/// Bytes of a kept state's key in the store.
pub const KEPT_KEY_LEN: usize = 16;
/// Bytes of a kept token's digest in its reference.
pub(super) const DIGEST_LEN: usize = 32;
/// Bytes of a reference's plaintext: the key, then the digest.
pub(super) const REFERENCE_LEN: usize = KEPT_KEY_LEN + DIGEST_LEN;

/// A future a store returns.
pub type StoreFuture<'a, T> = futures::future::BoxFuture<'a, T>;

/// A sealed state to keep, and whose it is.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct KeptState<'a> {
    /// Its key in the store: 16 random bytes.
    pub key: &'a [u8; KEPT_KEY_LEN],
    /// The quota owner it counts against: a verified principal, or the pool of
    /// unverified callers it came from (never an identity a client made up alone).
    pub owner: &'a str,
    /// Whether it counts against the share of the store that unverified callers share.
    pub shared: bool,
    /// The sealed token.
    pub token: &'a str,
    /// Unix seconds after which no reference to it opens: the store may forget it then.
    pub keep_until: u64,
}

/// Where a server keeps the states too large for their tokens: a store shared by every
/// replica that serves the calls (the task stores implement it; see
/// `SagaServerBuilder::state_store`).
pub trait StateStore: Send + Sync + std::fmt::Debug + 'static {
    /// Keeps `state` until its `keep_until`, or refuses it ([`StoreError::Full`],
    /// [`StoreError::Quota`]) rather than forget another that is still live.
    fn keep<'a>(&'a self, state: KeptState<'a>) -> StoreFuture<'a, Result<(), StoreError>>;

    /// The token kept under `key`, if the store still holds it.
    fn read<'a>(
        &'a self,
        key: &'a [u8; KEPT_KEY_LEN],
    ) -> StoreFuture<'a, Result<Option<String>, StoreError>>;
}

/// Whose a kept state is: the quota owner it counts against in the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateOwner {
    /// A verified principal's name, or the key of the pool of unverified callers.
    pub key: String,
    /// Whether it counts against the share unverified callers have between them.
    pub shared: bool,
}

/// What a codec keeps past its inline bound, and where.
#[derive(Debug, Clone)]
pub(super) struct Keeping {
    pub(super) store: std::sync::Arc<dyn StateStore>,
    /// The longest token handed out as it is.
    pub(super) inline_max: usize,
}

/// The digest a reference holds of the token it refers to.
pub(super) fn digest(token: &str) -> [u8; DIGEST_LEN] {
    Sha256::digest(token.as_bytes()).into()
}

/// A reference's plaintext: `key`, then `digest`.
pub(super) fn reference(
    key: &[u8; KEPT_KEY_LEN],
    digest: &[u8; DIGEST_LEN],
) -> [u8; REFERENCE_LEN] {
    let mut plaintext = [0u8; REFERENCE_LEN];
    plaintext[..KEPT_KEY_LEN].copy_from_slice(key);
    plaintext[KEPT_KEY_LEN..].copy_from_slice(digest);
    plaintext
}

/// The key and digest of a reference's plaintext; `None` if it is not one.
pub(super) fn parts(plaintext: &[u8]) -> Option<([u8; KEPT_KEY_LEN], [u8; DIGEST_LEN])> {
    if plaintext.len() != REFERENCE_LEN {
        return None;
    }
    let key = plaintext[..KEPT_KEY_LEN].try_into().ok()?;
    let digest = plaintext[KEPT_KEY_LEN..].try_into().ok()?;
    Some((key, digest))
}

/// A fresh key for a kept state.
pub(super) fn fresh_key() -> [u8; KEPT_KEY_LEN] {
    let mut key = [0u8; KEPT_KEY_LEN];
    // The OS's generator, as for every id of the runtime: a collision would put one
    // call's state under another's key (refused by its digest, but lost to its call).
    getrandom::fill(&mut key).expect("the operating system's random source failed");
    key
}
