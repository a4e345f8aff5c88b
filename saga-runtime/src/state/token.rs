//! The token format: a versioned header in the clear, the state encrypted and
//! authenticated with XChaCha20-Poly1305, the whole in unpadded base64url.
//!
//! ```text
//! size  field
//! 1     format    0x5k: format 0x50 (XChaCha20-Poly1305, postcard state, this layout),
//!                 or 0x6k: 0x60, the same with the state deflated (`deflate`);
//!                 k the sealing key's tag (the low 4 bits of its id)
//! 7-9   point     the suspension point: name tag (4), version (varint), identity tag (2)
//! 4     exp       expiry, big-endian unix seconds (u32: until 2106)
//! 21-25 nonce     chain (8), sequence number (varint), random (12)
//! n+16  ciphertext and tag
//! AAD = header (as sent) || binding digest || the point's whole identity (32)
//! ```
//!
//! The header's two layouts, and why format 0x40 still opens, are in
//! [`format`](super::format).
//!
//! The key's tag does not always select one key: a ring whose keys share a tag tries
//! each (the tag verifies for one key only). That costs an extra AEAD attempt, and only
//! when a ring happens to hold such keys; a whole key id would cost three bytes in every
//! token, which for a short state is a tenth of its length.
//!
//! The header is authenticated too, so neither the expiry nor the point can be edited; it
//! stays in the clear so that a server can pick the key and the point, and log why it
//! refused a token, without decrypting anything. The point's whole identity (a hash of
//! the tool, its version, the point and the exact layout it saved) is in the associated
//! data: a token opens only for the identity it was sealed with.
//!
//! A token of neither format is refused ([`OpenError::Version`]) before any key is tried
//! or anything decrypted.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use std::sync::Arc;

use super::binding::Binding;
use super::format::{self, TokenFormat};
use super::kept::{self, Keeping, KeptState, StateOwner, StateStore};
use super::outcome::Claimed;
use super::single_use::{Claim, StoreError, TokenStore};
use saga_wire::__private::SAGA_TRACE_LEN;
use saga_wire::__private::{hex, key_tag};
use saga_wire::Link;
use saga_wire::SagaTrace;
use saga_wire::unix_now;
use saga_wire::{HeaderError, KeyRing, PointKey, TokenHeader};

/// The longest associated data: a header, the binding's digest, the point's identity.
const AAD_MAX: usize = format::COMPACT_MAX + 32 + 32;
/// Bytes of the Poly1305 tag.
pub(crate) const TAG_LEN: usize = super::aead::TAG_LEN;
/// The default cap on a token's length in bytes (tokens are ASCII), checked before any
/// decoding.
pub const DEFAULT_MAX_TOKEN_LEN: usize = 64 * 1024;
/// How far past its expiry a token is still accepted, for clocks that disagree.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);

/// Why a token was refused. The client never sees this (it gets one fixed message); the
/// server logs it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Longer than the configured cap.
    #[error("token is {len} bytes, over the cap of {max}")]
    TooLong {
        /// The token's length.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// Not unpadded base64url.
    #[error("token is not base64url")]
    Encoding,
    /// Too short to hold a header and a tag.
    #[error("token is {len} bytes, shorter than a header and a tag")]
    Truncated {
        /// The decoded length.
        len: usize,
    },
    /// A first byte that names no format this build knows.
    #[error("unknown token format (first byte {0:#04x})")]
    Version(u8),
    /// No key of the ring has this id (a retired key, or another deployment's).
    #[error("no key with id {0}")]
    UnknownKey(String),
    /// The tag does not verify: tampered, truncated, sealed by another key with the same
    /// id, or bound to another tool, method, principal or arguments.
    #[error("authentication failed (tampered, or bound to another request)")]
    Forged,
    /// Past its expiry plus the leeway.
    #[error("token expired {0} s ago")]
    Expired(u64),
    /// Expires further in the future than any token this server seals.
    #[error("token expiry is {0} s beyond the maximum lifetime")]
    FromTheFuture(u64),
    /// Authentic, but its deflated state does not inflate within
    /// [`MAX_STATE_BYTES`](super::MAX_STATE_BYTES) to the length it declares (a server
    /// fault, not a client's: only what a server sealed is inflated), or a traced state
    /// whose trace does not read.
    #[error("the token's deflated state does not inflate")]
    Uninflatable,
    /// A reference to a kept state (format 0x70), opened where no state store reads it:
    /// by a codec without one, or by a caller that only opens tokens as they are (such as
    /// `SagaTools::inspect`).
    #[error(
        "the token refers to a state kept in the server's state store, and is opened here \
         without it"
    )]
    Kept,
    /// A reference whose state the store no longer holds: it expired there, or the
    /// store lost it. Never another state in its place.
    #[error("the state store no longer holds the state this token refers to")]
    Lost,
    /// The state store could not be read (a server fault: the client may retry).
    #[error("the state store is unavailable: {0}")]
    StoreUnavailable(String),
    /// A state past the inline bound could not be kept: the store refused it (its quota
    /// or its room spent) or could not be reached.
    #[error("the state could not be kept: {0}")]
    NotKept(StoreError),
    /// Opened for another point than the one it names (a server fault, not a client's).
    #[error("token names point {found}, opened as {expected}")]
    Point {
        /// The point it was opened as.
        expected: String,
        /// The point its header names.
        found: String,
    },
}

impl From<HeaderError> for OpenError {
    fn from(error: HeaderError) -> Self {
        match error {
            HeaderError::Encoding => OpenError::Encoding,
            HeaderError::Truncated { len } => OpenError::Truncated { len },
            HeaderError::Version(byte) => OpenError::Version(byte),
        }
    }
}

/// Seals and opens tokens with a [`KeyRing`].
#[derive(Debug)]
pub struct StateCodec {
    keys: KeyRing,
    ttl: Duration,
    leeway: Duration,
    max_token_len: usize,
    single_use: Option<Arc<dyn TokenStore>>,
    /// How long a request holds a token it claimed to record its outcome.
    outcome_lease: Duration,
    format: TokenFormat,
    /// Where states past the inline bound are kept, if anywhere.
    keeping: Option<Keeping>,
    /// The longest state it deflates and inflates, when set apart from its cap (a
    /// session's or a task's codec, whose states stay in the process or the task's
    /// record, holds the server's).
    max_state: Option<usize>,
    /// The most values a state's self-describing slots hold ([`StateCodec::max_state_values`]).
    max_state_values: usize,
    /// How long a request sent again waits for its first sending's answer.
    retry_wait: Duration,
}

/// A token that passed every check, with its plaintext.
#[derive(Debug)]
pub struct Opened {
    /// The decrypted state.
    pub plaintext: Vec<u8>,
    /// The nonce, unique per token: the token's id for single-use bookkeeping.
    pub nonce: [u8; 24],
    /// The token's expiry, unix seconds.
    pub expires_at: u64,
    /// The suspension point its header names.
    pub point: [u8; 8],
    /// The layout its plaintext's head is read in ([`TokenFormat::layout`]: a deflated
    /// token's plaintext is inflated, in the compact layout).
    pub format: TokenFormat,
    /// Characters of the sealed state: the token's, or for a reference, the kept token's.
    pub sealed_len: usize,
    /// The saga's trace (its first round's ids), when the token keeps one (formats 0x80
    /// and 0x90); the plaintext then begins after it.
    pub trace: Option<SagaTrace>,
    /// The id of the key that opened it: the round's effects' keys are derived under it.
    pub key_id: saga_wire::KeyId,
}

impl Opened {
    /// Its place in its call's chain of tokens.
    pub fn link(&self) -> Link {
        Link::of_nonce(&self.nonce)
    }
}

impl StateCodec {
    /// A codec sealing with `keys`, issuing tokens that live for `ttl`.
    pub fn new(keys: KeyRing, ttl: Duration) -> Self {
        Self {
            keys,
            ttl,
            leeway: DEFAULT_LEEWAY,
            max_token_len: DEFAULT_MAX_TOKEN_LEN,
            single_use: None,
            outcome_lease: super::DEFAULT_OUTCOME_LEASE,
            format: TokenFormat::SEALED,
            keeping: None,
            max_state: None,
            max_state_values: super::DEFAULT_MAX_STATE_VALUES,
            retry_wait: super::DEFAULT_RETRY_WAIT,
        }
    }

    /// Waits at most `wait` for a first request's answer when the same request is sent
    /// again while the first still runs (10 s by default), then answers it `-32600`,
    /// retryable. A server whose requests are bounded by a shorter run time waits less
    /// (`SagaServerBuilder` sets a third of `max_run_time`), so that the retry's own bound
    /// does not stop it first and answer `-32603`.
    pub fn with_retry_wait(mut self, wait: Duration) -> Self {
        self.retry_wait = wait;
        self
    }

    /// How long a request sent again waits for its first sending's answer
    /// ([`StateCodec::with_retry_wait`]).
    pub fn retry_wait(&self) -> Duration {
        self.retry_wait
    }

    /// Seals and reads states of at most `values` values in their self-describing slots
    /// (see [`StateCodec::max_state_values`]).
    pub fn with_max_state_values(mut self, values: usize) -> Self {
        self.max_state_values = values;
        self
    }

    /// The most values (scalars, sequences, maps, keys: as a request's JSON values are
    /// counted) a state keeps in its self-describing slots (`serde_json::Value`, the
    /// messages of a sampling history, any type kept as MessagePack), 100,000 by default,
    /// as many as one request may carry. A state's bytes are bounded apart
    /// ([`StateCodec::max_state_bytes`]); its values cost memory out of proportion to
    /// them once read back (a small number is one byte sealed, some 80 bytes read), so a
    /// round whose state would hold more is refused where it is sealed, and a token whose
    /// state holds more is refused before it is read whole. Protects the server: memory
    /// per request, whoever the caller.
    pub fn max_state_values(&self) -> usize {
        self.max_state_values
    }

    /// Deflates and inflates states of up to `max` bytes, whatever its cap (see
    /// [`StateCodec::max_state_bytes`]): a codec whose tokens never reach a client, with
    /// the cap of the largest state the server keeps, holds the server's bound.
    pub fn with_max_state_bytes(mut self, max: usize) -> Self {
        self.max_state = Some(max.min(super::MAX_STATE_BYTES));
        self
    }

    /// Keeps a state whose token would be longer than `inline_max` in `store`, and hands
    /// the client a reference to it instead (format 0x70; see the `kept` module). A kept
    /// state may then seal into up to [`StateCodec::max_sealed_len`] characters.
    pub fn with_state_store(mut self, store: Arc<dyn StateStore>, inline_max: usize) -> Self {
        self.keeping = Some(Keeping { store, inline_max });
        self
    }

    /// Whether a token of `len` characters is kept in the store rather than handed out
    /// as it is ([`StateCodec::keep`]).
    pub fn would_keep(&self, len: usize) -> bool {
        self.keeping
            .as_ref()
            .is_some_and(|keeping| len > keeping.inline_max.min(self.max_token_len))
    }

    /// Whether states past the inline bound are kept in a store.
    pub fn keeps_states(&self) -> bool {
        self.keeping.is_some()
    }

    /// The longest token a state may seal into: the token cap, or with a state store, what
    /// the longest state this codec deflates ([`StateCodec::max_state_bytes`]) seals into
    /// (the store holds it; the client carries a reference).
    pub fn max_sealed_len(&self) -> usize {
        match &self.keeping {
            None => self.max_token_len,
            Some(_) => (format::COMPACT_MAX + self.max_state_bytes() + TAG_LEN)
                .div_ceil(3)
                .saturating_mul(4)
                .max(self.max_token_len),
        }
    }

    /// Makes every token redeemable once, recorded in `store`; see
    /// [`TokenStore`].
    pub fn with_single_use(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.single_use = Some(store);
        self
    }

    /// Holds a token claimed to record its outcome for `lease` (a request's longest run,
    /// and some): a retry after it is told the outcome is lost, never runs the round.
    pub fn with_outcome_lease(mut self, lease: Duration) -> Self {
        self.outcome_lease = lease;
        self
    }

    /// How long a request holds a token it claimed ([`StateCodec::with_outcome_lease`]).
    pub fn outcome_lease(&self) -> Duration {
        self.outcome_lease
    }

    /// The single-use store, if tokens are single use.
    pub fn single_use_store(&self) -> Option<&Arc<dyn TokenStore>> {
        self.single_use.as_ref()
    }

    /// Whether a redeemed token's outcome is recorded: tokens are single use, in a store
    /// that records outcomes (see the `outcome` module).
    pub fn records_outcomes(&self) -> bool {
        self.single_use_store()
            .is_some_and(|store| store.records_outcomes())
    }

    /// Claims `opened` for a request bound to `binding` whose answers' canonical text is
    /// `request` ([`request_text`](super::request_text)): what the store holds of it,
    /// and what its outcome is to be recorded with.
    pub async fn claim(
        &self,
        opened: &Opened,
        binding: &Binding,
        request: Vec<u8>,
    ) -> Result<(Claim, Claimed), StoreError> {
        let keep_until = opened.expires_at.saturating_add(self.leeway.as_secs());
        let claimed = Claimed::new(opened.nonce, keep_until, binding, request);
        let Some(store) = &self.single_use else {
            return Ok((Claim::First, claimed));
        };
        let lease_until = unix_now().saturating_add(self.claim_lease(store).as_secs());
        let mut claim = store
            .claim(claimed.nonce(), keep_until, lease_until)
            .await?;
        if let Claim::Running { lease_until: held } = claim
            && self.take_over(&claimed, held).await?
        {
            claim = Claim::First;
        }
        Ok((claim, claimed))
    }

    /// How long a claim in `store` is held without a renewal: [`RENEWED_LEASE`] where
    /// the store renews leases (its runner renews it while the round runs), else the
    /// whole outcome lease.
    ///
    /// [`RENEWED_LEASE`]: super::RENEWED_LEASE
    fn claim_lease(&self, store: &Arc<dyn TokenStore>) -> Duration {
        if store.leases_renewed() {
            super::RENEWED_LEASE.min(self.outcome_lease)
        } else {
            self.outcome_lease
        }
    }

    /// Takes over `claimed`, held running until `held`, if that lease ran out (its runner
    /// died, or gave the round back) and the store takes claims over: the request that
    /// calls this then runs the round again, from the same token, so that its effects get
    /// the keys they had. `Ok(false)` if the lease holds, or the store does not take over.
    pub async fn take_over(&self, claimed: &Claimed, held: u64) -> Result<bool, StoreError> {
        let Some(store) = &self.single_use else {
            return Ok(false);
        };
        if held >= unix_now() || !store.leases_renewed() {
            return Ok(false);
        }
        let lease_until = unix_now().saturating_add(self.claim_lease(store).as_secs());
        let taken = store.take_over(claimed.nonce(), held, lease_until).await?;
        if taken {
            tracing::info!("a round whose first request stopped before it answered runs again");
        }
        Ok(taken)
    }

    /// What renews this codec's claims while their rounds run: the store and the lease,
    /// where the store renews leases.
    pub fn renewal(&self) -> Option<super::Renewal> {
        let store = self
            .single_use
            .as_ref()
            .filter(|store| store.leases_renewed())?;
        Some(super::Renewal {
            store: Arc::clone(store),
            lease: self.claim_lease(store),
        })
    }

    /// Asks the store again what it holds of `claimed`, read only (a request waiting for
    /// another's outcome never takes the round for itself: [`TokenStore::held`]).
    pub async fn claim_again(&self, claimed: &Claimed) -> Result<Claim, StoreError> {
        let Some(store) = &self.single_use else {
            return Ok(Claim::Spent);
        };
        store.held(claimed.nonce()).await
    }

    /// Gives up `claimed` without an outcome (the request that claimed it stopped before
    /// it answered, or failed in a way its retry may not): in a store that renews leases
    /// the round is given back, and a retry of the same request runs it again from the same
    /// token (its effects under the same keys); in any other store the token is spent, and
    /// a retry refused at once rather than left waiting for the claim's lease. In a task
    /// of its own, as this is called where nothing can be awaited (a drop).
    pub fn abandon(&self, claimed: Claimed) {
        if let Some(store) = &self.single_use {
            super::outcome::abandon(store, claimed);
        }
    }

    /// Records `plaintext` as `claimed`'s outcome, sealed; `None`: none is kept (the
    /// token is spent).
    pub async fn record(
        &self,
        claimed: &Claimed,
        plaintext: Option<&[u8]>,
    ) -> Result<(), StoreError> {
        let Some(store) = &self.single_use else {
            return Ok(());
        };
        let sealed = plaintext.map(|plaintext| self.seal_outcome(claimed, plaintext));
        store
            .record(
                claimed.nonce(),
                sealed.as_deref().unwrap_or_default(),
                claimed.keep_until(),
            )
            .await
    }

    /// `plaintext` sealed for `claimed` (see the `outcome` module).
    pub fn seal_outcome(&self, claimed: &Claimed, plaintext: &[u8]) -> Vec<u8> {
        super::outcome::seal(&self.keys, claimed, plaintext)
    }

    /// The plaintext of an outcome sealed for `claimed`; `None` if it was sealed for
    /// another token, caller or request, in another version, under a key this ring does not
    /// hold, or altered.
    pub fn open_outcome(&self, claimed: &Claimed, sealed: &[u8]) -> Option<Vec<u8>> {
        super::outcome::open(&self.keys, claimed, sealed)
    }

    /// Records `opened` as redeemed, if tokens are single use. `Ok(false)`: it was
    /// redeemed before.
    pub async fn redeem(&self, opened: &Opened) -> Result<bool, StoreError> {
        match &self.single_use {
            None => Ok(true),
            Some(store) => {
                let keep_until = opened.expires_at.saturating_add(self.leeway.as_secs());
                store.redeem(&opened.nonce, keep_until).await
            }
        }
    }

    /// Sets the cap on a token's length in bytes.
    pub fn with_max_token_len(mut self, max: usize) -> Self {
        self.max_token_len = max;
        self
    }

    /// Sets the clock-skew leeway applied to expiry.
    pub fn with_leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The token lifetime.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Seals in `format` (default [`TokenFormat::SEALED`]); see
    /// `SagaServerBuilder::token_format`.
    pub fn with_format(mut self, format: TokenFormat) -> Self {
        self.format = format;
        self
    }

    /// The format this codec seals in.
    pub fn format(&self) -> TokenFormat {
        self.format
    }

    /// The clock-skew leeway applied to expiry.
    pub fn leeway(&self) -> Duration {
        self.leeway
    }

    /// The cap on a token's length in bytes.
    pub fn max_token_len(&self) -> usize {
        self.max_token_len
    }

    /// The longest state this codec deflates, and so the most a token it opens inflates
    /// to: 64 times the token cap (4 MiB for the default 64 KiB), at most
    /// [`MAX_STATE_BYTES`](super::MAX_STATE_BYTES). What one request may cost in memory and
    /// work stays in proportion to the cap the server chose, whoever sends the token.
    pub fn max_state_bytes(&self) -> usize {
        self.max_state.unwrap_or_else(|| {
            self.max_token_len
                .saturating_mul(64)
                .min(super::MAX_STATE_BYTES)
        })
    }

    /// The cipher of the key `id` of this codec's ring, which a round's effects' keys are
    /// derived under (see `engine::asks::effect`): only a server holding that key computes
    /// them, every replica and restart that holds it computes the same.
    pub(crate) fn effect_cipher(
        &self,
        id: &saga_wire::KeyId,
    ) -> Option<saga_wire::aead::XChaCha20Poly1305> {
        self.keys
            .matching(|key| key == id)
            .next()
            .map(|key| key.cipher.clone())
    }

    /// The key ring.
    pub fn keys(&self) -> &KeyRing {
        &self.keys
    }

    /// Seals `plaintext` for `binding`, expiring `ttl` from now.
    pub fn seal(&self, point: &PointKey, binding: &Binding, plaintext: &[u8]) -> String {
        self.seal_at(unix_now(), point, binding, plaintext)
    }

    /// Seals as if the clock read `now` (unix seconds).
    pub fn seal_at(
        &self,
        now: u64,
        point: &PointKey,
        binding: &Binding,
        plaintext: &[u8],
    ) -> String {
        self.seal_until(
            now.saturating_add(self.ttl.as_secs()),
            point,
            binding,
            plaintext,
        )
    }

    /// Seals with an explicit expiry (unix seconds). Re-issuing a round's token keeps the
    /// round's original expiry, so a client cannot keep a saga alive by resending it.
    pub fn seal_until(
        &self,
        expires_at: u64,
        point: &PointKey,
        binding: &Binding,
        plaintext: &[u8],
    ) -> String {
        self.seal_nonce(
            self.format,
            expires_at,
            point,
            binding,
            plaintext,
            super::nonce::first_link(),
            None,
        )
    }

    /// [`StateCodec::seal`] as the first link of a new chain (see [`Link`]): a call's first
    /// round.
    pub fn seal_first(&self, point: &PointKey, binding: &Binding, plaintext: &[u8]) -> String {
        self.seal_round(None, point, binding, plaintext, None, None)
    }

    /// [`StateCodec::seal_until`] as the link `link` of its call's chain (see [`Link`]).
    pub fn seal_linked(
        &self,
        expires_at: u64,
        point: &PointKey,
        binding: &Binding,
        plaintext: &[u8],
        link: Link,
    ) -> String {
        self.seal_round(
            Some(expires_at),
            point,
            binding,
            plaintext,
            Some(link),
            None,
        )
    }

    /// A saga's round: the first link of a new chain (`link` `None`, expiring a lifetime
    /// from now) or `link` of its chain expiring at `expires_at`, keeping the saga's
    /// `trace` when the codec seals the newest format (see `format`).
    pub(crate) fn seal_round(
        &self,
        expires_at: Option<u64>,
        point: &PointKey,
        binding: &Binding,
        plaintext: &[u8],
        link: Option<Link>,
        trace: Option<&SagaTrace>,
    ) -> String {
        let expires_at =
            expires_at.unwrap_or_else(|| unix_now().saturating_add(self.ttl.as_secs()));
        let nonce = match link {
            Some(link) => super::nonce::linked(link.chain, link.seq),
            None => super::nonce::first_link(),
        };
        self.seal_nonce(
            self.format,
            expires_at,
            point,
            binding,
            plaintext,
            nonce,
            trace,
        )
    }

    #[allow(clippy::too_many_arguments)] // each is one field of the token
    fn seal_nonce(
        &self,
        format: TokenFormat,
        expires_at: u64,
        point: &PointKey,
        binding: &Binding,
        plaintext: &[u8],
        nonce: [u8; super::nonce::NONCE_LEN],
        trace: Option<&SagaTrace>,
    ) -> String {
        // The trace leads the plaintext only in the newest format: a codec pinned to an
        // older one (a rolling deploy) writes what every build it serves beside reads.
        let traced = trace
            .filter(|_| format == TokenFormat::TracedDeflated)
            .map(|trace| {
                let mut traced = Vec::with_capacity(SAGA_TRACE_LEN + plaintext.len());
                traced.extend_from_slice(&trace.to_bytes());
                traced.extend_from_slice(plaintext);
                traced
            });
        let plaintext = traced.as_deref().unwrap_or(plaintext);
        // A deflated token only when that makes it smaller: any other is written in the
        // compact format, as a build before deflating wrote it.
        // Sealed as it is, would it be refused? Then deflating is tried whatever the
        // state's start looks like.
        let fits = |len: usize| {
            (format::COMPACT_MAX + len + TAG_LEN).div_ceil(3) * 4 <= self.max_token_len
        };
        let deflated = format
            .deflated()
            .then(|| super::deflate::deflate(plaintext, self.max_state_bytes(), fits))
            .flatten();
        let (format, plaintext) = match (&deflated, traced.is_some()) {
            (Some(deflated), false) => (TokenFormat::Deflated, deflated.as_slice()),
            (Some(deflated), true) => (TokenFormat::TracedDeflated, deflated.as_slice()),
            (None, false) => (format.layout(), plaintext),
            (None, true) => (TokenFormat::Traced, plaintext),
        };
        self.seal_written(format, expires_at, point, binding, plaintext, nonce)
    }

    /// Seals `plaintext` as it is, in the header of `format`.
    fn seal_written(
        &self,
        format: TokenFormat,
        expires_at: u64,
        point: &PointKey,
        binding: &Binding,
        plaintext: &[u8],
        nonce: [u8; super::nonce::NONCE_LEN],
    ) -> String {
        let key = self.keys.sealing();
        let expires_at = u32::try_from(expires_at).unwrap_or(u32::MAX);
        let mut token = Vec::with_capacity(format::COMPACT_MAX + plaintext.len() + TAG_LEN);
        format::write(
            format,
            key_tag(&key.id),
            &point.header,
            expires_at,
            &nonce,
            &mut token,
        );
        let header_len = token.len();
        token.extend_from_slice(plaintext);

        let (header, body) = token.split_at_mut(header_len);
        let mut aad = [0u8; AAD_MAX];
        let aad = associated_data(&mut aad, header, binding, &point.identity);
        let tag = key.cipher.seal_in_place(&nonce, aad, body);
        token.extend_from_slice(&tag);
        URL_SAFE_NO_PAD.encode(&token)
    }

    /// `token`, sealed by `sealed_with` for `binding`, sealed again under this codec's keys
    /// and lifetime: a session's in-process state made portable, for a resume token or a
    /// task that any replica may continue.
    pub(crate) async fn reseal(
        &self,
        sealed_with: &StateCodec,
        token: &str,
        point: &PointKey,
        binding: &Binding,
        owner: &StateOwner,
    ) -> Result<String, OpenError> {
        if std::ptr::eq(self, sealed_with) {
            return Ok(token.to_owned());
        }
        self.reseal_bound(sealed_with, token, point, binding, binding, owner)
            .await
    }

    /// [`StateCodec::reseal`], binding the new token to `to` instead: a task's state is
    /// bound to the task, not to the call that created it.
    pub(crate) async fn reseal_bound(
        &self,
        sealed_with: &StateCodec,
        token: &str,
        point: &PointKey,
        from: &Binding,
        to: &Binding,
        owner: &StateOwner,
    ) -> Result<String, OpenError> {
        let opened = sealed_with.open_kept(token, point, from).await?;
        // The same link of the same chain: the token handed out is the state it reseals,
        // and retiring one retires the other. In the same layout: its plaintext is in
        // that format's layout (deflated if this codec deflates, as a deflated format
        // has the compact layout).
        let expires_at = unix_now().saturating_add(self.ttl.as_secs());
        let link = opened.link();
        let format = if self.format.layout() == opened.format {
            self.format
        } else {
            opened.format
        };
        let token = self.seal_nonce(
            format,
            expires_at,
            point,
            to,
            &opened.plaintext,
            super::nonce::linked(link.chain, link.seq),
            opened.trace.as_ref(),
        );
        // A token this codec would refuse is never handed out (a state deflated by
        // another codec, resealed under a format that does not deflate).
        if token.len() > self.max_sealed_len() {
            return Err(OpenError::TooLong {
                len: token.len(),
                max: self.max_sealed_len(),
            });
        }
        self.keep(token, point, to, owner)
            .await
            .map_err(OpenError::NotKept)
    }

    /// `token`, sealed by this codec for `binding` at `point`, as the client is to carry
    /// it: as it is up to the inline bound (or with no state store), and otherwise kept in
    /// the store for `owner`, the client given a reference to it (format 0x70).
    pub async fn keep(
        &self,
        token: String,
        point: &PointKey,
        binding: &Binding,
        owner: &StateOwner,
    ) -> Result<String, StoreError> {
        // Never past the cap: a token the server would refuse back is always kept.
        let Some(keeping) = self
            .keeping
            .as_ref()
            .filter(|_| self.would_keep(token.len()))
        else {
            return Ok(token);
        };
        let header = TokenHeader::parse(&token)
            .map_err(|error| StoreError::Unavailable(format!("an unreadable token: {error}")))?;
        let key = kept::fresh_key();
        let reference = kept::reference(&key, &kept::digest(&token));
        let link = header.link();
        // The kept token's link, another random part: the reference is that token for
        // single use and retiring, under a nonce of its own.
        let sealed = self.seal_written(
            TokenFormat::Kept,
            header.expires_at,
            point,
            binding,
            &reference,
            super::nonce::linked(link.chain, link.seq),
        );
        keeping
            .store
            .keep(KeptState {
                key: &key,
                owner: &owner.key,
                shared: owner.shared,
                token: &token,
                // A second past the last one its reference opens in: the store never
                // forgets it while the reference is still accepted.
                keep_until: header
                    .expires_at
                    .saturating_add(self.leeway.as_secs())
                    .saturating_add(1),
            })
            .await?;
        Ok(sealed)
    }

    /// For tests of the store's refusals: a reference to `key` with `digest`, sealed as
    /// the reference to `token` would be; and the key and digest `reference` holds.
    #[cfg(test)]
    pub(crate) fn forge_reference(
        &self,
        token: &str,
        point: &PointKey,
        binding: &Binding,
        key: [u8; kept::KEPT_KEY_LEN],
        digest: [u8; 32],
    ) -> String {
        let header = TokenHeader::parse(token).expect("a token");
        let link = header.link();
        self.seal_written(
            TokenFormat::Kept,
            header.expires_at,
            point,
            binding,
            &kept::reference(&key, &digest),
            super::nonce::linked(link.chain, link.seq),
        )
    }

    /// See [`StateCodec::forge_reference`].
    #[cfg(test)]
    pub(crate) fn reference_parts(
        &self,
        reference: &str,
        point: &PointKey,
        binding: &Binding,
    ) -> ([u8; kept::KEPT_KEY_LEN], [u8; 32]) {
        let (opened, _) = self
            .open_within(unix_now(), reference, point, binding, self.max_token_len)
            .expect("a reference of this codec");
        kept::parts(&opened.plaintext).expect("a reference")
    }

    /// [`StateCodec::open`], following a reference (format 0x70) to the state kept in
    /// this codec's store: the reference opens first (its seal, binding and expiry), then
    /// the kept token is read, its digest checked, and opened for the same point and
    /// binding, of the same link and expiry. Any other token opens as `open` opens it.
    pub async fn open_kept(
        &self,
        token: &str,
        point: &PointKey,
        binding: &Binding,
    ) -> Result<Opened, OpenError> {
        self.open_kept_within(token, point, binding, self.max_token_len)
            .await
    }

    /// [`StateCodec::open_kept`] for a token of up to `max_len` characters: a state the
    /// process handed on to itself may be as long as [`StateCodec::max_sealed_len`].
    pub(crate) async fn open_kept_within(
        &self,
        token: &str,
        point: &PointKey,
        binding: &Binding,
        max_len: usize,
    ) -> Result<Opened, OpenError> {
        let now = unix_now();
        let (reference, written) = self.open_within(now, token, point, binding, max_len)?;
        if written != TokenFormat::Kept {
            return Ok(reference);
        }
        let keeping = self.keeping.as_ref().ok_or(OpenError::Kept)?;
        let (key, digest) = kept::parts(&reference.plaintext).ok_or(OpenError::Forged)?;
        let kept = keeping
            .store
            .read(&key)
            .await
            .map_err(|error| OpenError::StoreUnavailable(error.to_string()))?
            .ok_or(OpenError::Lost)?;
        // Other bytes under the key (a store written by someone else) are refused before
        // anything of them is decoded.
        if kept::digest(&kept) != digest {
            return Err(OpenError::Forged);
        }
        let (opened, written) =
            self.open_within(now, &kept, point, binding, self.max_sealed_len())?;
        if written == TokenFormat::Kept
            || opened.link() != reference.link()
            || opened.expires_at != reference.expires_at
        {
            return Err(OpenError::Forged);
        }
        Ok(Opened {
            nonce: reference.nonce,
            ..opened
        })
    }

    /// [`StateCodec::retire`] for the link `token` names (a token of this codec's
    /// format; one whose header does not read retires nothing).
    ///
    /// The link is read from the header, unopened: pass only a token that opened or that
    /// this codec sealed, never a client's as it came (the memory store keys its floors
    /// by the chain with an unkeyed hash, trusting it was drawn by the server).
    pub async fn retire_token(&self, token: &str, inclusive: bool) -> Result<(), StoreError> {
        if self.single_use.is_none() {
            return Ok(());
        }
        match TokenHeader::peek_link(token) {
            Some(link) => self.retire(link, inclusive).await,
            None => Ok(()),
        }
    }

    /// Retires every token of `link`'s chain before `link` (`inclusive`: and `link`
    /// itself), if tokens are single use: the call has handed out a newer one, or ended.
    pub async fn retire(&self, link: Link, inclusive: bool) -> Result<(), StoreError> {
        let Some(store) = &self.single_use else {
            return Ok(());
        };
        let floor = if inclusive {
            link.past()
        } else {
            u64::from(link.seq)
        };
        // Every token of the chain that floor retires expires before a token sealed now.
        let keep_until = unix_now()
            .saturating_add(self.ttl.as_secs())
            .saturating_add(self.leeway.as_secs());
        store.retire(&link.chain, floor, keep_until).await
    }

    /// Opens a token, checking in order: length, encoding, version, key id, tag (which
    /// covers the header, the binding and the point's identity), expiry.
    pub fn open(
        &self,
        token: &str,
        point: &PointKey,
        binding: &Binding,
    ) -> Result<Opened, OpenError> {
        self.open_at(unix_now(), token, point, binding)
    }

    /// Opens as if the clock read `now` (unix seconds).
    ///
    /// A reference to a kept state (format 0x70) is refused here ([`OpenError::Kept`]):
    /// only [`StateCodec::open_kept`] reads the store it refers to.
    pub fn open_at(
        &self,
        now: u64,
        token: &str,
        point: &PointKey,
        binding: &Binding,
    ) -> Result<Opened, OpenError> {
        match self.open_within(now, token, point, binding, self.max_token_len)? {
            (_, TokenFormat::Kept) => Err(OpenError::Kept),
            (opened, _) => Ok(opened),
        }
    }

    /// Opens a token of at most `max_len` characters; with it, the format it was written
    /// in.
    fn open_within(
        &self,
        now: u64,
        token: &str,
        point: &PointKey,
        binding: &Binding,
        max_len: usize,
    ) -> Result<(Opened, TokenFormat), OpenError> {
        if token.len() > max_len {
            return Err(OpenError::TooLong {
                len: token.len(),
                max: max_len,
            });
        }
        let mut bytes = URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| OpenError::Encoding)?;
        let header = TokenHeader::read(&bytes)?;
        let format = header.format().ok_or(OpenError::Version(header.version))?;
        if header.point != point.header {
            return Err(OpenError::Point {
                expected: hex(&point.header),
                found: hex(&header.point),
            });
        }
        let mut keys = self.keys.matching(|id| key_tag(id) == header.key_tag);
        let key = keys
            .next()
            .ok_or_else(|| OpenError::UnknownKey(header.key_id_hex()))?;
        let (header_len, expires_at, nonce) =
            (header.header_len(), header.expires_at, header.nonce);

        let tag_at = bytes.len() - TAG_LEN;
        let tag: [u8; TAG_LEN] = bytes[tag_at..].try_into().map_err(|_| OpenError::Forged)?;
        let (header_bytes, rest) = bytes.split_at_mut(header_len);
        let body = &mut rest[..tag_at - header_len];
        let mut aad = [0u8; AAD_MAX];
        let aad = associated_data(&mut aad, header_bytes, binding, &point.identity);
        // A failed open leaves the body unspecified, so each further key that shares the
        // tag opens a copy; with one key of that tag (nearly always) nothing is copied.
        let others: Vec<_> = keys.collect();
        let sealed = (!others.is_empty()).then(|| body.to_vec());
        let mut opened = key.cipher.open_in_place(&nonce, aad, body, &tag).is_ok();
        let mut key_id = key.id;
        if let Some(sealed) = sealed {
            for other in others {
                if opened {
                    break;
                }
                body.copy_from_slice(&sealed);
                opened = other.cipher.open_in_place(&nonce, aad, body, &tag).is_ok();
                key_id = other.id;
            }
        }
        if !opened {
            return Err(OpenError::Forged);
        }

        let leeway = self.leeway.as_secs();
        if now > expires_at.saturating_add(leeway) {
            return Err(OpenError::Expired(now - expires_at));
        }
        let latest = now
            .saturating_add(self.ttl.as_secs())
            .saturating_add(leeway);
        if expires_at > latest {
            return Err(OpenError::FromTheFuture(expires_at - latest));
        }
        bytes.truncate(tag_at);
        bytes.drain(..header_len);
        // Inflated only now, authenticated: nothing a client wrote is ever inflated.
        let mut plaintext = if format.deflated() {
            super::deflate::inflate(&bytes, self.max_state_bytes())
                .ok_or(OpenError::Uninflatable)?
        } else {
            bytes
        };
        // Authenticated, so written by a server: ids that do not read are a server's
        // fault, refused as a state that does not open.
        let trace = if format.traced() {
            let trace = SagaTrace::from_bytes(&plaintext).ok_or(OpenError::Uninflatable)?;
            plaintext.drain(..SAGA_TRACE_LEN);
            Some(trace)
        } else {
            None
        };
        let opened = Opened {
            trace,
            plaintext,
            nonce,
            expires_at,
            point: header.point,
            format: format.layout(),
            sealed_len: token.len(),
            key_id,
        };
        Ok((opened, format))
    }
}

/// The header, the binding's digest, the point's identity, written into `buffer`.
fn associated_data<'a>(
    buffer: &'a mut [u8; AAD_MAX],
    header: &[u8],
    binding: &Binding,
    identity: &[u8; 32],
) -> &'a [u8] {
    let len = header.len();
    buffer[..len].copy_from_slice(header);
    buffer[len..len + 32].copy_from_slice(binding.digest());
    buffer[len + 32..len + 64].copy_from_slice(identity);
    &buffer[..len + 64]
}

#[cfg(test)]
mod header_tests {
    use super::*;

    /// `OpenError` keeps its own variants for the header's failures (servers log them and
    /// users match them); saga-wire's `HeaderError` mirrors them for `saga inspect`, and
    /// each converts into its twin, said the same.
    #[test]
    fn a_header_error_becomes_the_open_error_it_mirrors() {
        for (header, open) in [
            (HeaderError::Encoding, OpenError::Encoding),
            (
                HeaderError::Truncated { len: 7 },
                OpenError::Truncated { len: 7 },
            ),
            (HeaderError::Version(0x02), OpenError::Version(0x02)),
        ] {
            assert_eq!(header.to_string(), open.to_string());
            assert_eq!(OpenError::from(header), open);
        }
    }

    /// A state whose token at level 4 is past the cap but at level 6 (what saga deflated
    /// such states at before) is under it: sealed at level 6, not refused.
    #[test]
    fn a_state_at_the_caps_edge_is_deflated_harder_before_it_is_refused() {
        // Words of a small vocabulary in an order that repeats only far apart: level 6's
        // longer search finds more of it.
        let mut x = 7u32;
        let words = [
            "saga", "round", "token", "state", "kept", "store", "turn", "page",
        ];
        let text: String = (0..40_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                words[(x % 8) as usize]
            })
            .collect::<Vec<_>>()
            .join(" ");
        let plaintext = text.as_bytes();
        // Fitting at any length, it is deflated at level 4; fitting at none, at level 6
        // too, the shorter kept.
        let deflate = |fits: bool| {
            super::super::deflate::deflate(plaintext, crate::state::MAX_STATE_BYTES, |_| fits)
                .expect("deflates")
        };
        let (normal, harder) = (deflate(true), deflate(false));
        assert!(
            harder.len() < normal.len(),
            "{} {}",
            harder.len(),
            normal.len()
        );
        let sealed_len = |len: usize| (format::COMPACT_MAX + len + TAG_LEN).div_ceil(3) * 4;
        // A cap between the two.
        let cap = (sealed_len(harder.len()) + sealed_len(normal.len())) / 2;
        assert!(sealed_len(normal.len()) > cap && sealed_len(harder.len()) <= cap);
        let codec = StateCodec::new(
            KeyRing::parse(&"45".repeat(32)).unwrap(),
            Duration::from_secs(600),
        )
        .with_max_token_len(cap);
        let binding = Binding::new("tool", "tools/call", "p", None);
        let token = codec.seal(&point(4), &binding, plaintext);
        assert!(token.len() <= cap, "{} over {cap}", token.len());
        let opened = codec.open(&token, &point(4), &binding).expect("opens");
        assert_eq!(opened.plaintext, plaintext);
    }

    /// A state another codec deflated, resealed by one that does not deflate (a replica
    /// pinned to 0x50): past the cap, it is refused, never handed out as a token this
    /// codec would refuse when it comes back.
    #[tokio::test]
    async fn a_reseal_past_the_cap_is_refused() {
        let keys = KeyRing::parse(&"44".repeat(32)).unwrap();
        let deflating =
            StateCodec::new(keys.duplicate(), Duration::from_secs(600)).with_max_token_len(4096);
        let pinned = StateCodec::new(keys, Duration::from_secs(600))
            .with_max_token_len(4096)
            .with_format(TokenFormat::Compact);
        let binding = Binding::new("tool", "tools/call", "p", None);
        let point = point(3);
        let history = "a turn of the conversation again ".repeat(300);
        let token = deflating.seal(&point, &binding, history.as_bytes());
        assert!(token.len() < 4096, "{}", token.len());
        let owner = StateOwner {
            key: "p".into(),
            shared: false,
        };
        assert!(matches!(
            pinned
                .reseal(&deflating, &token, &point, &binding, &owner)
                .await,
            Err(OpenError::TooLong { max: 4096, .. })
        ));
        // A codec that deflates reseals it, deflated, under the cap.
        let again = deflating
            .reseal_bound(&pinned, &token, &point, &binding, &binding, &owner)
            .await;
        assert!(again.is_ok_and(|token| token.len() < 4096));
    }

    fn point(byte: u8) -> PointKey {
        PointKey {
            header: [byte; 8],
            identity: [byte; 32],
        }
    }

    const TRACE: SagaTrace = SagaTrace {
        trace_id: [0x4b; 16],
        span_id: [0x0f; 8],
        flags: 1,
    };

    /// A saga's trace rides in formats 0x80 (and 0x90 when deflated), opens beside the
    /// plaintext it led, and goes on to the next link and through a reseal; a round
    /// without one is sealed as before, and a codec pinned to an older format leaves it
    /// out.
    #[tokio::test]
    async fn a_traced_round_keeps_its_trace_and_an_untraced_one_is_as_before() {
        let keys = KeyRing::parse(&"55".repeat(32)).unwrap();
        let codec = StateCodec::new(keys.duplicate(), Duration::from_secs(600));
        let binding = Binding::new("tool", "tools/call", "p", None);
        let (p, plaintext) = (point(5), b"head and state".as_slice());
        let format_of = |token: &str| TokenHeader::parse(token).unwrap().format().unwrap();

        let traced = codec.seal_round(None, &p, &binding, plaintext, None, Some(&TRACE));
        assert_eq!(format_of(&traced), TokenFormat::Traced);
        let opened = codec.open(&traced, &p, &binding).unwrap();
        assert_eq!(opened.trace, Some(TRACE));
        assert_eq!(opened.plaintext, plaintext);
        assert_eq!(opened.format, TokenFormat::Compact);

        let next = codec.seal_round(
            Some(opened.expires_at),
            &p,
            &binding,
            plaintext,
            Some(opened.link().next()),
            opened.trace.as_ref(),
        );
        let again = codec.open(&next, &p, &binding).unwrap();
        assert_eq!(
            (again.trace, again.link()),
            (Some(TRACE), opened.link().next())
        );

        // Large and repetitive: deflated with its trace.
        let long = "the same turn again ".repeat(200);
        let deflated = codec.seal_round(None, &p, &binding, long.as_bytes(), None, Some(&TRACE));
        assert_eq!(format_of(&deflated), TokenFormat::TracedDeflated);
        let opened_long = codec.open(&deflated, &p, &binding).unwrap();
        assert_eq!(
            (opened_long.trace, opened_long.plaintext.as_slice()),
            (Some(TRACE), long.as_bytes())
        );

        // Untraced: the format and length a build before traces sealed.
        let plain = codec.seal_round(None, &p, &binding, plaintext, None, None);
        let first = codec.seal_first(&p, &binding, plaintext);
        assert_eq!(format_of(&plain), TokenFormat::Compact);
        assert_eq!(plain.len(), first.len());
        let bytes = |token: &str| URL_SAFE_NO_PAD.decode(token).unwrap().len();
        assert_eq!(bytes(&plain) + SAGA_TRACE_LEN, bytes(&traced));
        assert_eq!(codec.open(&plain, &p, &binding).unwrap().trace, None);

        // Pinned to the build before's format for a rolling deploy: no trace, deflated as
        // that build deflates.
        let before = StateCodec::new(keys.duplicate(), Duration::from_secs(600))
            .with_format(TokenFormat::Deflated);
        let token = before.seal_round(None, &p, &binding, plaintext, None, Some(&TRACE));
        assert_eq!(format_of(&token), TokenFormat::Compact);
        assert_eq!(token.len(), plain.len());
        let long_token = before.seal_round(None, &p, &binding, long.as_bytes(), None, Some(&TRACE));
        assert_eq!(format_of(&long_token), TokenFormat::Deflated);
        assert_eq!(before.open(&long_token, &p, &binding).unwrap().trace, None);
        // Pinned further back: no trace either.
        let pinned = StateCodec::new(keys.duplicate(), Duration::from_secs(600))
            .with_format(TokenFormat::Compact);
        let token = pinned.seal_round(None, &p, &binding, plaintext, None, Some(&TRACE));
        assert_eq!(format_of(&token), TokenFormat::Compact);
        assert_eq!(pinned.open(&token, &p, &binding).unwrap().trace, None);
        // A traced token still opens there, its trace read and resealed by a codec that
        // keeps it.
        assert_eq!(
            pinned.open(&traced, &p, &binding).unwrap().trace,
            Some(TRACE)
        );
        let owner = StateOwner {
            key: "p".into(),
            shared: false,
        };
        let other = StateCodec::new(
            KeyRing::parse(&"66".repeat(32)).unwrap(),
            Duration::from_secs(600),
        );
        let resealed = other
            .reseal(&codec, &traced, &p, &binding, &owner)
            .await
            .unwrap();
        assert_eq!(
            other.open(&resealed, &p, &binding).unwrap().trace,
            Some(TRACE)
        );
    }

    /// A traced token's first byte names a format a build before traces does not know:
    /// it is refused there, never read as a state (the byte is all an older build reads
    /// before refusing; `only_the_six_formats_are_known` holds the list).
    #[test]
    fn a_traced_token_names_a_format_of_its_own() {
        let codec = StateCodec::new(
            KeyRing::parse(&"77".repeat(32)).unwrap(),
            Duration::from_secs(600),
        );
        let binding = Binding::new("tool", "tools/call", "p", None);
        let token = codec.seal_round(None, &point(1), &binding, b"x", None, Some(&TRACE));
        let first = URL_SAFE_NO_PAD.decode(&token).unwrap()[0];
        assert_eq!(first & 0xf0, 0x80);
        assert!(!matches!(first & 0xf0, 0x40..=0x70));
    }

    #[test]
    fn parses_the_header_of_a_sealed_token() {
        let hex_key = "11".repeat(32);
        let keys = KeyRing::parse(&hex_key).unwrap();
        let codec = StateCodec::new(KeyRing::parse(&hex_key).unwrap(), Duration::from_secs(600));
        let binding = Binding::new("tool", "tools/call", "p", None);
        let token = codec.seal_until(1_000, &point(7), &binding, b"hello");
        let header = TokenHeader::parse(&token).unwrap();
        assert_eq!(header.version, TokenHeader::CURRENT_VERSION);
        assert_eq!(header.point, [7; 8]);
        assert_eq!(TokenHeader::peek_point(&token), Ok([7; 8]));
        for byte in [0u8, 1, 0x3f, 0x80, 0xfe, 0xff] {
            let header = [byte, byte ^ 0x5a, 3, 4, 5, 6, 7, byte];
            let point = PointKey {
                header,
                identity: [1; 32],
            };
            let token = codec.seal_until(1_000, &point, &binding, b"x");
            assert_eq!(TokenHeader::peek_point(&token), Ok(header));
            assert_eq!(TokenHeader::parse(&token).map(|h| h.point), Ok(header));
        }
        assert_eq!(
            TokenHeader::peek_point("AAAA****AAAAAAAAAAAAAAAA"),
            Err(HeaderError::Encoding)
        );
        let mut earlier = URL_SAFE_NO_PAD.decode(&token).unwrap();
        earlier[0] = 0x02;
        assert_eq!(
            TokenHeader::peek_point(&URL_SAFE_NO_PAD.encode(&earlier)),
            Err(HeaderError::Version(0x02))
        );
        assert!(TokenHeader::peek_point("AAAAéAAAAAAAAAAAAAAAAAAA").is_err());
        // The link, from the header's characters alone, as the whole header reads it.
        let link = crate::state::Link {
            chain: [9; 8],
            seq: 41,
        };
        let linked = codec.seal_linked(1_000, &point(7), &binding, b"state", link);
        assert_eq!(TokenHeader::peek_link(&linked), Some(link));
        assert_eq!(TokenHeader::parse(&linked).map(|h| h.link()), Ok(link));
        assert_eq!(
            TokenHeader::peek_link(&linked[..40]),
            None,
            "shorter than a header"
        );
        // Whole groups of four characters (three bytes): the first that holds the header
        // is enough, the one before is not.
        let header_len = TokenHeader::parse(&linked).expect("reads").header_len();
        assert_eq!(
            header_len, 34,
            "point 7's version (0x0707) is two bytes here"
        );
        let enough = header_len.div_ceil(3) * 4;
        assert_eq!(TokenHeader::peek_link(&linked[..enough]), Some(link));
        assert_eq!(TokenHeader::peek_link(&linked[..enough - 4]), None);
        assert_eq!(TokenHeader::peek_link("!!"), None);
        assert_eq!(header.expires_at, 1_000);
        assert_eq!(header.ciphertext_len(), 5);
        assert!(header.key_known(&keys));
        // A ring whose key has another tag (5; this token's key has tag 2). A random key
        // would share the tag one time in sixteen.
        let other = KeyRing::parse(&"33".repeat(32)).unwrap();
        assert_ne!(
            key_tag(&other.key_ids().next().unwrap()),
            key_tag(&keys.key_ids().next().unwrap())
        );
        assert!(!header.key_known(&other));
        assert_eq!(TokenHeader::parse("!!"), Err(HeaderError::Encoding));
        assert!(matches!(
            TokenHeader::parse("AAAA"),
            Err(HeaderError::Truncated { .. })
        ));
        assert!(matches!(
            TokenHeader::peek_point("AAAA"),
            Err(HeaderError::Truncated { .. })
        ));
    }

    #[test]
    fn a_token_opens_only_for_the_identity_it_was_sealed_with() {
        let codec = StateCodec::new(KeyRing::ephemeral(), Duration::from_secs(600));
        let binding = Binding::new("tool", "tools/call", "p", None);
        let sealed = point(7);
        let token = codec.seal_at(1_000, &sealed, &binding, b"state");
        assert_eq!(
            codec
                .open_at(1_000, &token, &sealed, &binding)
                .unwrap()
                .plaintext,
            b"state"
        );
        // The same header bytes, another identity: another layout behind a colliding tag.
        let collided = PointKey {
            header: sealed.header,
            identity: [8; 32],
        };
        assert_eq!(
            codec.open_at(1_000, &token, &collided, &binding).err(),
            Some(OpenError::Forged)
        );
        assert!(matches!(
            codec.open_at(1_000, &token, &point(9), &binding),
            Err(OpenError::Point { .. })
        ));
    }

    /// A call's first token starts its chain at zero, so that the chain outlasts every
    /// round of the call (a chain that ran out would go on as another, which retiring
    /// the call would miss); each first token is a chain of its own.
    #[test]
    fn a_first_round_starts_a_chain_of_its_own_at_zero() {
        let codec = StateCodec::new(KeyRing::ephemeral(), Duration::from_secs(600));
        let binding = Binding::new("tool", "tools/call", "p", None);
        let first = codec.seal_first(&point(7), &binding, b"state");
        let again = codec.seal_first(&point(7), &binding, b"state");
        let (a, b) = (
            TokenHeader::peek_link(&first).expect("a link"),
            TokenHeader::peek_link(&again).expect("a link"),
        );
        assert_eq!((a.seq, b.seq), (0, 0));
        assert_ne!(a.chain, b.chain);
        let opened = codec.open(&first, &point(7), &binding).expect("opens");
        assert_eq!(opened.link(), a);
    }

    /// The formats of builds before 0x40 (0x01 to 0x03, none released) are refused as
    /// unknown, before any key is tried, as every other first byte but 0x4k and 0x5k.
    #[test]
    fn tokens_of_other_formats_are_refused_before_anything_else() {
        let codec = StateCodec::new(KeyRing::ephemeral(), Duration::from_secs(600));
        let binding = Binding::new("tool", "tools/call", "p", None);
        let token = codec.seal_at(1_000, &point(7), &binding, b"state");
        for version in (0..=u8::MAX).filter(|&v| TokenFormat::of(v).is_none()) {
            let mut bytes = URL_SAFE_NO_PAD.decode(&token).unwrap();
            bytes[0] = version;
            let other = URL_SAFE_NO_PAD.encode(&bytes);
            assert_eq!(
                codec.open_at(1_000, &other, &point(7), &binding).err(),
                Some(OpenError::Version(version))
            );
            assert_eq!(
                TokenHeader::peek_point(&other),
                Err(HeaderError::Version(version))
            );
            assert_eq!(TokenHeader::peek_link(&other), None);
        }
    }

    /// A token of format 0x40, as the builds before 0x50 sealed it, opens, says so, and is
    /// resealed in its own format (its plaintext is in that format's layout); the header
    /// bytes are authenticated, so a 0x40 token rewritten as 0x50 (or back) does not open.
    #[tokio::test]
    async fn a_token_of_format_0x40_still_opens_and_keeps_its_format() {
        let codec = StateCodec::new(KeyRing::ephemeral(), Duration::from_secs(600));
        let binding = Binding::new("tool", "tools/call", "p", None);
        let link = crate::state::Link {
            chain: [3; 8],
            seq: 2,
        };
        let nonce = saga_wire::nonce::linked(link.chain, link.seq);
        let now = unix_now();
        let old = codec.seal_nonce(
            TokenFormat::Fixed,
            now + 60,
            &point(7),
            &binding,
            b"state",
            nonce,
            None,
        );
        let header = TokenHeader::parse(&old).expect("reads");
        assert_eq!(
            (header.version, header.format(), header.header_len()),
            (0x40, Some(TokenFormat::Fixed), 37)
        );
        assert_eq!(TokenHeader::peek_point(&old), Ok(point(7).header));
        assert_eq!(TokenHeader::peek_link(&old), Some(link));
        let opened = codec.open(&old, &point(7), &binding).expect("opens");
        assert_eq!(
            (opened.plaintext.as_slice(), opened.format, opened.link()),
            (&b"state"[..], TokenFormat::Fixed, link)
        );
        let resealed = codec
            .reseal_bound(
                &codec,
                &old,
                &point(7),
                &binding,
                &binding,
                &StateOwner {
                    key: "p".into(),
                    shared: false,
                },
            )
            .await
            .expect("resealed");
        assert_eq!(
            TokenHeader::parse(&resealed).expect("reads").format(),
            Some(TokenFormat::Fixed)
        );
        let new = codec.seal(&point(7), &binding, b"state");
        assert_eq!(
            codec.open(&new, &point(7), &binding).map(|o| o.format),
            Ok(TokenFormat::Compact)
        );
        // The first byte flipped to the other format: read in the other layout, the
        // header is other bytes, and the tag does not verify.
        for token in [&old, &new] {
            let mut bytes = URL_SAFE_NO_PAD.decode(token).unwrap();
            bytes[0] ^= 0x40 ^ 0x50;
            let flipped = URL_SAFE_NO_PAD.encode(&bytes);
            assert!(codec.open(&flipped, &point(7), &binding).is_err());
        }
    }

    /// Two keys of a ring may share a tag: a token opens with the one that sealed it,
    /// whichever comes first in the ring, and with no other.
    #[test]
    fn keys_sharing_a_tag_each_open_their_own_tokens() {
        let keys: Vec<[u8; 32]> = (0..=255u8).map(|byte| [byte; 32]).collect();
        let tag = |key: &[u8; 32]| {
            let ring = KeyRing::from_keys([*key]).unwrap();
            key_tag(&ring.key_ids().next().unwrap())
        };
        let first = keys[0];
        let second = *keys[1..]
            .iter()
            .find(|key| tag(key) == tag(&first))
            .expect("two of 256 keys share a 4-bit tag");
        let binding = Binding::new("tool", "tools/call", "p", None);
        let codec = |ring: &[[u8; 32]]| {
            StateCodec::new(
                KeyRing::from_keys(ring.iter().copied()).unwrap(),
                Duration::from_secs(600),
            )
        };
        let by_second = codec(&[second]).seal_until(2_000, &point(3), &binding, b"second");
        let by_first = codec(&[first]).seal_until(2_000, &point(3), &binding, b"first");
        let both = codec(&[first, second]);
        assert_eq!(
            both.open_at(1_500, &by_second, &point(3), &binding)
                .unwrap()
                .plaintext,
            b"second"
        );
        assert_eq!(
            both.open_at(1_500, &by_first, &point(3), &binding)
                .unwrap()
                .plaintext,
            b"first"
        );
        assert_eq!(
            codec(&[first])
                .open_at(1_500, &by_second, &point(3), &binding)
                .err(),
            Some(OpenError::Forged)
        );
    }

    #[test]
    fn expiries_past_2106_are_sealed_as_the_last_second_u32_holds() {
        let hex_key = "33".repeat(32);
        let codec = StateCodec::new(KeyRing::parse(&hex_key).unwrap(), Duration::from_secs(600));
        let binding = Binding::new("tool", "tools/call", "p", None);
        let token = codec.seal_until(u64::MAX, &point(1), &binding, b"x");
        assert_eq!(
            TokenHeader::parse(&token).unwrap().expires_at,
            u64::from(u32::MAX)
        );
    }
}
