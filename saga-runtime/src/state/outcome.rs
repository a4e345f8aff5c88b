//! Recorded outcomes: what a request that redeemed a token answered, sealed for the
//! single-use store ([`TokenStore::record`]), so that the same request sent again gets the
//! same answer and the round does not run twice.
//!
//! An outcome is sealed as a token is (XChaCha20-Poly1305 under the ring's sealing key),
//! bound by its associated data to the token it answers (its nonce), the call's binding
//! (the tool, method, principal and arguments) and the request's answers: opened for
//! another token, another caller or other answers, it does not open. Its layout:
//!
//! ```text
//! version (1) | key id (4) | nonce (24) | sealed plaintext | tag (16)
//! ```
//!
//! The version names how the plaintext reads (see `engine::runner::retried`); a build
//! that reads another refuses the outcome, and the retry with it, rather than misread it.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::aead::{NONCE_LEN, TAG_LEN};
use super::binding::Binding;
use super::clock::unix_now;
use super::single_use::{Claim, StoreError};
use super::token::{Opened, StateCodec};

/// The version of an outcome's layout and plaintext this build writes and reads.
pub(crate) const OUTCOME_VERSION: u8 = 1;

const HEAD: usize = 1 + 4 + NONCE_LEN;

/// How long a claimed round is held by the request that claimed it, unless the server
/// says otherwise: past it, a retry is told the first request's outcome is lost.
pub const DEFAULT_OUTCOME_LEASE: Duration = Duration::from_secs(360);

/// A token this request claimed: what its outcome is recorded for.
#[derive(Debug, Clone)]
pub struct Claimed {
    nonce: [u8; 24],
    keep_until: u64,
    binding: [u8; 32],
    request: [u8; 32],
}

/// The digest of what a request brings beside its token: its answers and the failures it
/// reports, in canonical JSON (keys sorted), so that the same answers written in another
/// order are the same request.
pub fn request_digest<F: serde::Serialize>(
    answers: Option<&BTreeMap<String, Value>>,
    failures: &BTreeMap<String, F>,
) -> [u8; 32] {
    let mut canonical = Vec::with_capacity(256);
    canonical.extend_from_slice(b"saga/request/v1\0");
    match answers {
        Some(answers) => {
            for (key, value) in answers {
                super::binding::write_canonical(&Value::String(key.clone()), &mut canonical);
                canonical.push(b':');
                super::binding::write_canonical(value, &mut canonical);
                canonical.push(b',');
            }
        }
        None => canonical.push(b'-'),
    }
    canonical.push(b'|');
    for (key, failure) in failures {
        let value = serde_json::to_value(failure).unwrap_or(Value::Null);
        super::binding::write_canonical(&Value::String(key.clone()), &mut canonical);
        canonical.push(b':');
        super::binding::write_canonical(&value, &mut canonical);
        canonical.push(b',');
    }
    let digest = ring::digest::digest(&ring::digest::SHA256, &canonical);
    let mut out = [0; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

impl Claimed {
    /// The same claim for another request's answers.
    #[cfg(test)]
    pub(crate) fn set_request_for_test(&mut self, request: [u8; 32]) {
        self.request = request;
    }
}

impl StateCodec {
    /// Whether a redeemed token's outcome is recorded: tokens are single use, in a store
    /// that records outcomes.
    pub fn records_outcomes(&self) -> bool {
        self.single_use_store()
            .is_some_and(|store| store.records_outcomes())
    }

    /// Claims `opened` for a request bound to `binding` whose answers digest to
    /// `request` ([`request_digest`]): what the store holds of it, and what its outcome
    /// is to be recorded with.
    pub async fn claim(
        &self,
        opened: &Opened,
        binding: &Binding,
        request: [u8; 32],
    ) -> Result<(Claim, Claimed), StoreError> {
        let claimed = Claimed {
            nonce: opened.nonce,
            keep_until: opened.expires_at.saturating_add(self.leeway().as_secs()),
            binding: *binding.digest(),
            request,
        };
        let Some(store) = self.single_use_store() else {
            return Ok((Claim::First, claimed));
        };
        let lease_until = unix_now().saturating_add(self.outcome_lease().as_secs());
        let claim = store
            .claim(&claimed.nonce, claimed.keep_until, lease_until)
            .await?;
        Ok((claim, claimed))
    }

    /// Asks the store again what it holds of `claimed`, read only (a request waiting for
    /// another's outcome never takes the round for itself: [`TokenStore::held`]).
    ///
    /// [`TokenStore::held`]: super::TokenStore::held
    pub async fn claim_again(&self, claimed: &Claimed) -> Result<Claim, StoreError> {
        let Some(store) = self.single_use_store() else {
            return Ok(Claim::Spent);
        };
        store.held(&claimed.nonce).await
    }

    /// Gives up `claimed` without an outcome (the request that claimed it stopped before
    /// it answered, or its answer is not one to give again): its token is then spent, and
    /// a retry refused at once rather than left waiting for the claim's lease. In a task
    /// of its own, as this is called where nothing can be awaited (a drop).
    pub fn abandon(&self, claimed: Claimed) {
        if let Some(store) = self.single_use_store() {
            abandon(store, claimed);
        }
    }

    /// Records `plaintext` as `claimed`'s outcome, sealed; `None`: none is kept (the
    /// token is spent).
    pub async fn record(
        &self,
        claimed: &Claimed,
        plaintext: Option<&[u8]>,
    ) -> Result<(), StoreError> {
        let Some(store) = self.single_use_store() else {
            return Ok(());
        };
        let sealed = plaintext.map(|plaintext| self.seal_outcome(claimed, plaintext));
        store
            .record(
                &claimed.nonce,
                sealed.as_deref().unwrap_or_default(),
                claimed.keep_until,
            )
            .await
    }

    /// `plaintext` sealed for `claimed`.
    pub fn seal_outcome(&self, claimed: &Claimed, plaintext: &[u8]) -> Vec<u8> {
        let key = self.keys().sealing();
        let nonce = super::nonce::fresh();
        let mut sealed = Vec::with_capacity(HEAD + plaintext.len() + TAG_LEN);
        sealed.push(OUTCOME_VERSION);
        sealed.extend_from_slice(&key.id);
        sealed.extend_from_slice(&nonce);
        sealed.extend_from_slice(plaintext);
        let aad = associated_data(&sealed[..HEAD], claimed);
        let tag = key.cipher.seal_in_place(&nonce, &aad, &mut sealed[HEAD..]);
        sealed.extend_from_slice(&tag);
        sealed
    }

    /// The plaintext of an outcome sealed for `claimed`; `None` if it was sealed for
    /// another token, caller or request, in another version, under a key this ring does not
    /// hold, or altered.
    pub fn open_outcome(&self, claimed: &Claimed, sealed: &[u8]) -> Option<Vec<u8>> {
        if sealed.len() < HEAD + TAG_LEN || sealed[0] != OUTCOME_VERSION {
            return None;
        }
        let (head, rest) = sealed.split_at(HEAD);
        let (body, tag) = rest.split_at(rest.len() - TAG_LEN);
        let id: [u8; 4] = head[1..5].try_into().ok()?;
        let nonce: [u8; NONCE_LEN] = head[5..].try_into().ok()?;
        let tag: [u8; TAG_LEN] = tag.try_into().ok()?;
        let aad = associated_data(head, claimed);
        self.keys().matching(|key| *key == id).find_map(|key| {
            let mut plaintext = body.to_vec();
            key.cipher
                .open_in_place(&nonce, &aad, &mut plaintext, &tag)
                .ok()
                .map(|()| plaintext)
        })
    }
}

/// [`StateCodec::abandon`], given the codec's store.
pub fn abandon(store: &std::sync::Arc<dyn super::TokenStore>, claimed: Claimed) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let store = std::sync::Arc::clone(store);
    runtime.spawn(async move {
        if let Err(error) = store.record(&claimed.nonce, &[], claimed.keep_until).await {
            tracing::warn!(%error, "cannot spend an abandoned token: its retry waits for its lease");
        }
    });
}

fn associated_data(head: &[u8], claimed: &Claimed) -> Vec<u8> {
    let mut aad = Vec::with_capacity(16 + HEAD + 24 + 64);
    aad.extend_from_slice(b"saga/outcome/v1\0");
    aad.extend_from_slice(head);
    aad.extend_from_slice(&claimed.nonce);
    aad.extend_from_slice(&claimed.binding);
    aad.extend_from_slice(&claimed.request);
    aad
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::KeyRing;

    fn claimed(request: u8, principal: &str) -> Claimed {
        Claimed {
            nonce: [3; 24],
            keep_until: u64::MAX,
            binding: *Binding::new("t", "tools/call", principal, None).digest(),
            request: [request; 32],
        }
    }

    #[test]
    fn an_outcome_opens_only_for_its_token_caller_and_answers() {
        let codec = StateCodec::new(
            KeyRing::from_keys([[1; 32]]).unwrap(),
            Duration::from_secs(60),
        );
        let sealed = codec.seal_outcome(&claimed(1, "ann"), b"the answer");
        assert_eq!(
            codec.open_outcome(&claimed(1, "ann"), &sealed).as_deref(),
            Some(&b"the answer"[..])
        );
        assert_eq!(
            codec.open_outcome(&claimed(2, "ann"), &sealed),
            None,
            "other answers"
        );
        assert_eq!(
            codec.open_outcome(&claimed(1, "bob"), &sealed),
            None,
            "another caller"
        );
        let mut other_token = claimed(1, "ann");
        other_token.nonce = [4; 24];
        assert_eq!(
            codec.open_outcome(&other_token, &sealed),
            None,
            "another token"
        );
        for index in 0..sealed.len() {
            let mut altered = sealed.clone();
            altered[index] ^= 1;
            assert_eq!(
                codec.open_outcome(&claimed(1, "ann"), &altered),
                None,
                "byte {index}"
            );
        }
        assert_eq!(codec.open_outcome(&claimed(1, "ann"), &sealed[..20]), None);
        let other_keys = StateCodec::new(
            KeyRing::from_keys([[2; 32]]).unwrap(),
            Duration::from_secs(60),
        );
        assert_eq!(other_keys.open_outcome(&claimed(1, "ann"), &sealed), None);
    }

    #[test]
    fn the_same_answers_in_another_order_are_the_same_request() {
        let one: BTreeMap<String, Value> =
            serde_json::from_str(r#"{"a": {"x": 1, "y": [2, {"p": 1, "q": 2}]}}"#).unwrap();
        let two: BTreeMap<String, Value> =
            serde_json::from_str(r#"{"a": {"y": [2, {"q": 2, "p": 1}], "x": 1}}"#).unwrap();
        let other: BTreeMap<String, Value> =
            serde_json::from_str(r#"{"a": {"x": 2, "y": [2, {"p": 1, "q": 2}]}}"#).unwrap();
        let none: BTreeMap<String, Value> = BTreeMap::new();
        assert_eq!(
            request_digest(Some(&one), &none),
            request_digest(Some(&two), &none)
        );
        assert_ne!(
            request_digest(Some(&one), &none),
            request_digest(Some(&other), &none)
        );
        assert_ne!(
            request_digest(None, &none),
            request_digest(Some(&none), &none)
        );
        let failed: BTreeMap<String, Value> =
            serde_json::from_str(r#"{"a": {"code": 1, "message": "no"}}"#).unwrap();
        assert_ne!(request_digest(None, &none), request_digest(None, &failed));
    }
}
