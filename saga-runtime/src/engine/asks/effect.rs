//! A side effect recorded once: `effect("refund", |key| async move { … }).await`.
//!
//! In a `#[saga_tool]` or `#[saga_fn]` body, `effect(name, run).await` runs `run` with an
//! [`EffectKey`], then passes a checkpoint with its result saved: the macros write it as
//!
//! ```text
//! { let result = effect(name, run).await; checkpoint().await; result }
//! ```
//!
//! so that the result is in the saga's state (a task's record, the next token) before the
//! code goes on. A round run again (a task taken over after its worker died, a request
//! sent again without a store that records outcomes) starts from the same state: an
//! effect whose checkpoint was passed is not run again, its result read from the state;
//! one cut off before its checkpoint runs again, with the same key.
//!
//! The key is the same on every run of the same round and differs for every call, every
//! round and every effect of a round: derived from the token the round started from (its
//! nonce, unique to that token), the effect's name, and how many effects of that name the
//! round ran before it, under a secret only the server holds (a key of its ring: the one
//! that sealed the token). Whoever sees the token cannot compute its effects' keys; every
//! replica and restart holding that key computes the same ones. A call's first round starts
//! from no token: its keys are drawn at random, and a first request sent again is a new
//! call with new keys. Hand it to the outside service as its idempotency key
//! (`Idempotency-Key`): the service then does the work once, however often the effect
//! starts.
//!
//! How: the round's secret is 32 bytes of XChaCha20 keystream under the token's key, at a
//! nonce of its own (SHA-256 of a label and the token's nonce: never a token's nonce, so
//! never the keystream that encrypted a token); an effect's key is HMAC-SHA256 of its name
//! and ordinal under that secret, cut to 128 bits.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Mutex;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

tokio::task_local! {
    /// The round being stepped: set by the runner around each step.
    static ROUND: RoundKeys;
}

/// What an effect's key is derived from, for one round.
pub(crate) struct RoundKeys {
    /// The token the round started from: its nonce (unique to that token: two tokens of
    /// one link, a round asked again and the round after it, differ) and the cipher of the
    /// key that sealed it. `None` for a call's first round (which a client sending it
    /// again starts as a new call).
    from: Option<([u8; 24], saga_wire::aead::XChaCha20Poly1305)>,
    /// The round's secret, derived from `from` (or drawn at random for a first round)
    /// only if the round runs an effect: every round steps through here.
    secret: std::sync::OnceLock<zeroize::Zeroizing<[u8; 32]>>,
    /// How many effects of each name the round has run.
    counts: Mutex<Vec<(String, u32)>>,
}

impl std::fmt::Debug for RoundKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoundKeys").finish_non_exhaustive()
    }
}

impl RoundKeys {
    /// The keys of a round started from the token whose nonce is the first of `from`,
    /// sealed under the key whose cipher is the second; or of a call's first round.
    pub(crate) fn of(from: Option<([u8; 24], saga_wire::aead::XChaCha20Poly1305)>) -> Self {
        Self {
            from,
            secret: std::sync::OnceLock::new(),
            counts: Mutex::new(Vec::new()),
        }
    }

    /// The round's secret ([`RoundKeys::secret`]'s field).
    fn secret(&self) -> &[u8; 32] {
        self.secret.get_or_init(|| {
            zeroize::Zeroizing::new(match &self.from {
                Some((nonce, cipher)) => round_secret(nonce, cipher),
                None => random_secret(),
            })
        })
    }

    /// Runs `step` with these keys.
    pub(crate) fn scope<F: Future>(self, step: F) -> impl Future<Output = F::Output> {
        ROUND.scope(self, step)
    }

    fn key(&self, name: &str) -> EffectKey {
        let ordinal = {
            let mut counts = self
                .counts
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            match counts.iter_mut().find(|(seen, _)| seen == name) {
                Some((_, count)) => {
                    *count += 1;
                    *count
                }
                None => {
                    counts.push((name.to_owned(), 0));
                    0
                }
            }
        };
        EffectKey::derive(self.secret(), name, ordinal)
    }
}

/// The secret of a round started from the token of `nonce`, sealed under `cipher`: 32
/// bytes of its keystream at a nonce no token has (see the module's doc).
fn round_secret(nonce: &[u8; 24], cipher: &saga_wire::aead::XChaCha20Poly1305) -> [u8; 32] {
    let mut hasher = ring::digest::Context::new(&ring::digest::SHA256);
    hasher.update(b"saga/effect-secret/v1\0");
    hasher.update(nonce);
    let digest = hasher.finish();
    let mut own_nonce = [0u8; 24];
    own_nonce.copy_from_slice(&digest.as_ref()[..24]);
    let mut secret = [0u8; 32];
    let _tag = cipher.seal_in_place(&own_nonce, b"saga/effect-secret/v1", &mut secret);
    secret
}

/// A random secret, where no token names the round.
fn random_secret() -> [u8; 32] {
    use ring::rand::SecureRandom as _;
    let mut bytes = [0u8; 32];
    // The system's generator fails only where no entropy source exists at all; the
    // tokens' nonces would have failed first. Zeroes then: keys still differ by name.
    let _ = ring::rand::SystemRandom::new().fill(&mut bytes);
    bytes
}

/// The idempotency key of one effect: the same on every run of its round, different for
/// every call, round and effect. 27 characters of base64url (128 bits), prefixed `saga-`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EffectKey(String);

impl EffectKey {
    fn derive(secret: &[u8; 32], name: &str, ordinal: u32) -> Self {
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
        let mut mac = ring::hmac::Context::with_key(&key);
        mac.update(b"saga/effect/v3\0");
        mac.update(&(name.len() as u64).to_be_bytes());
        mac.update(name.as_bytes());
        mac.update(&ordinal.to_be_bytes());
        let digest = mac.sign();
        Self(format!(
            "saga-{}",
            URL_SAFE_NO_PAD.encode(&digest.as_ref()[..16])
        ))
    }

    /// The key's text, as an `Idempotency-Key` header takes it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for EffectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<EffectKey> for String {
    fn from(key: EffectKey) -> Self {
        key.0
    }
}

/// A side effect the saga records once; see [`effect`].
#[must_use = "an effect runs when it is awaited"]
pub struct Effect<F> {
    name: String,
    run: F,
}

impl<F> std::fmt::Debug for Effect<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Effect")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A side effect recorded once: `run` is given the effect's [`EffectKey`] and its result
/// is saved in the saga's state before the code goes on.
///
/// ```
/// use saga_runtime::prelude::*;
///
/// # async fn refund_at_the_bank(order: &str, key: &str) -> Result<String, String> { Ok(format!("re-{order}")) }
/// #[saga_tool]
/// async fn refund(order: String) -> Result<String, SagaError> {
///     let go: bool = elicit(format!("Refund order {order}?")).await?;
///     if !go {
///         return Ok("kept".into());
///     }
///     // Run once: the result is saved before the code goes on, and a round run again
///     // reads it. The bank sees the same key however often the refund starts.
///     let receipt: Result<String, String> = effect("refund", |key| async move {
///         refund_at_the_bank(&order, key.as_str()).await
///     })
///     .await;
///     let receipt = receipt.map_err(SagaError::msg)?;
///     Ok(format!("refunded: {receipt}"))
/// }
/// ```
///
/// An effect whose own error is a [`SagaError`](crate::prelude::SagaError) is awaited with
/// `?` like any request:
///
/// ```
/// use saga_runtime::prelude::*;
///
/// # async fn refund_at_the_bank(order: &str, key: EffectKey) -> Result<String, SagaError> { Ok(format!("{order} {key}")) }
/// #[saga_tool]
/// async fn refund(order: String) -> Result<String, SagaError> {
///     let go: bool = elicit(format!("Refund order {order}?")).await?;
///     if !go {
///         return Ok("kept".into());
///     }
///     let refund = effect("refund", |key| async move { refund_at_the_bank(&order, key).await }).await?;
///     Ok(refund)
/// }
/// ```
///
/// What is guaranteed: the record is exactly once (a round run again after the effect's
/// checkpoint reads the result and does not run `run`); the effect itself is at least
/// once (a worker that dies inside `run`, or after it and before the checkpoint is
/// written, runs it again on the next try), with the same key, which lets the outside
/// service make it once. The result must be `Serialize` and `Deserialize`, as anything the
/// saga keeps across a suspension. Awaited outside a saga's body (a plain `async fn`), it
/// runs `run` with a key of its own and records nothing.
pub fn effect<F, Fut>(name: impl Into<String>, run: F) -> Effect<F>
where
    F: FnOnce(EffectKey) -> Fut,
    Fut: Future,
{
    Effect {
        name: name.into(),
        run,
    }
}

impl<F, Fut> IntoFuture for Effect<F>
where
    F: FnOnce(EffectKey) -> Fut,
    Fut: Future,
{
    type Output = Fut::Output;
    type IntoFuture = Running<F, Fut>;

    fn into_future(self) -> Self::IntoFuture {
        Running {
            start: Some((self.name, self.run)),
            running: None,
        }
    }
}

/// An [`Effect`] being awaited: its key is drawn when it is first polled, in the round
/// that runs it.
#[must_use = "an effect runs when it is awaited"]
pub struct Running<F, Fut> {
    start: Option<(String, F)>,
    running: Option<Pin<Box<Fut>>>,
}

impl<F, Fut> std::fmt::Debug for Running<F, Fut> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("started", &self.running.is_some())
            .finish_non_exhaustive()
    }
}

// `F` is never pinned (it is moved out to be called) and the effect's future is boxed:
// nothing in it relies on staying in place.
impl<F, Fut> Unpin for Running<F, Fut> {}

impl<F, Fut> Future for Running<F, Fut>
where
    F: FnOnce(EffectKey) -> Fut,
    Fut: Future,
{
    type Output = Fut::Output;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        if let Some((name, run)) = self.start.take() {
            let key = ROUND.try_with(|round| round.key(&name)).unwrap_or_else(|_| {
                tracing::debug!(effect = %crate::log::Escaped(&name), "an effect outside a saga's round: a key of its own, nothing recorded");
                EffectKey::derive(&random_secret(), &name, 0)
            });
            self.running = Some(Box::pin(run(key)));
        }
        match self.running.as_mut() {
            Some(running) => running.as_mut().poll(cx),
            // Polled again after it finished: a bug of the caller's, as any future's.
            None => std::task::Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(byte: u8) -> Option<([u8; 24], saga_wire::aead::XChaCha20Poly1305)> {
        Some((
            [byte; 24],
            saga_wire::aead::XChaCha20Poly1305::new(&[7; 32]),
        ))
    }

    #[tokio::test]
    async fn the_same_round_draws_the_same_keys_and_every_other_differs() {
        let keys_of = |round: RoundKeys| {
            round.scope(async {
                let a = effect("refund", |key| async move { key }).await;
                let b = effect("refund", |key| async move { key }).await;
                let c = effect("ticket", |key| async move { key }).await;
                (a, b, c)
            })
        };
        let (a, b, c) = keys_of(RoundKeys::of(token(4))).await;
        assert_eq!(
            (a.clone(), b.clone(), c.clone()),
            keys_of(RoundKeys::of(token(4))).await
        );
        assert_ne!(a, b, "a second effect of the same name");
        assert_ne!(a, c, "another name");
        let (next_round, _, _) = keys_of(RoundKeys::of(token(5))).await;
        let (other_call, _, _) = keys_of(RoundKeys::of(token(6))).await;
        assert_ne!(a, next_round);
        assert_ne!(a, other_call);
        assert!(
            a.as_str().starts_with("saga-") && a.as_str().len() == 27,
            "{a}"
        );
    }

    #[tokio::test]
    async fn a_first_rounds_keys_are_drawn_once_for_the_round() {
        let (a, b) = RoundKeys::of(None)
            .scope(async {
                let a = effect("refund", |key| async move { key }).await;
                let b = effect("ticket", |key| async move { key }).await;
                (a, b)
            })
            .await;
        let round = RoundKeys::of(None);
        assert!(
            round.secret.get().is_none(),
            "nothing drawn before an effect asks"
        );
        let again = round.key("refund");
        assert_eq!(
            round.key("ticket"),
            EffectKey::derive(round.secret.get().expect("drawn"), "ticket", 0)
        );
        assert_ne!(a, again, "another first round, other keys");
        assert_ne!(a, b);
    }

    #[tokio::test]
    async fn outside_a_round_each_effect_draws_a_key_of_its_own() {
        let a = effect("refund", |key| async move { key }).await;
        let b = effect("refund", |key| async move { key }).await;
        assert_ne!(a, b);
    }

    /// The fifth review: a key was SHA-256 of the token's nonce, which the token shows in
    /// clear, so anyone who saw the token computed it. It is keyed by the server's key now:
    /// the same nonce under another key gives other keys, the same key (another replica, a
    /// restart) the same ones, and the old public derivation no longer matches.
    #[tokio::test]
    async fn a_key_needs_the_servers_key_and_is_the_same_under_it() {
        let under = |key: [u8; 32]| {
            RoundKeys::of(Some((
                [4; 24],
                saga_wire::aead::XChaCha20Poly1305::new(&key),
            )))
            .scope(async { effect("refund", |key| async move { key }).await })
        };
        let ours = under([7; 32]).await;
        assert_eq!(ours, under([7; 32]).await, "a restart holding the same key");
        assert_ne!(ours, under([8; 32]).await, "another server's key");
        // What the token's nonce alone gave before.
        let mut public = ring::digest::Context::new(&ring::digest::SHA256);
        public.update(b"saga/effect/v2\0");
        public.update(&[4; 24]);
        public.update(&6u64.to_be_bytes());
        public.update(b"refund");
        public.update(&0u32.to_be_bytes());
        let public = format!(
            "saga-{}",
            URL_SAFE_NO_PAD.encode(&public.finish().as_ref()[..16])
        );
        assert_ne!(ours.as_str(), public);
    }
}
