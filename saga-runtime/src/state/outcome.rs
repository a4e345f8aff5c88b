//! Recorded outcomes: what a request that redeemed a token answered, sealed for the
//! single-use store ([`TokenStore::record`]), so that the same request sent again gets the
//! same answer and the round does not run twice.
//!
//! An outcome is sealed as a token is (XChaCha20-Poly1305 under the ring's sealing key),
//! bound by its associated data to the token it answers (its nonce), the call's binding
//! (the tool, method, principal and arguments) and the request's answers, their canonical
//! text itself ([`request_text`]): opened for another token, another caller or other
//! answers, it does not open. Its layout:
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
use saga_wire::KeyRing;

/// The version of an outcome's layout and plaintext this build writes and reads.
///
/// 2: the request's canonical text is in the associated data, where version 1 had its
/// SHA-256 (a digest of the same text cost two SHA-256 blocks a round, Poly1305 over the
/// text a fraction of one); an outcome of either version is refused by a build of the
/// other, never opened as another request's.
pub(crate) const OUTCOME_VERSION: u8 = 2;

const HEAD: usize = 1 + 4 + NONCE_LEN;

/// How long a claimed round is held by the request that claimed it, unless the server
/// says otherwise: past it, a retry is told the first request's outcome is lost.
pub const DEFAULT_OUTCOME_LEASE: Duration = Duration::from_secs(360);

/// How long a request sent again waits for its first sending's answer by default, before
/// it is told to send it again later (`-32600`, retryable): see
/// [`StateCodec::with_retry_wait`](super::StateCodec::with_retry_wait).
pub(crate) const DEFAULT_RETRY_WAIT: Duration = Duration::from_secs(10);

/// How long a claim in a store that renews leases ([`super::TokenStore::leases_renewed`])
/// is held without a renewal: its runner renews it every [`RENEW_EVERY`] while the round
/// runs, so that a retry finds a runner that died within this long, and takes the round
/// over.
pub const RENEWED_LEASE: Duration = Duration::from_secs(15);

/// How often a running round renews its claim's lease ([`RENEWED_LEASE`]): a third of
/// it, so that two renewals may fail before the lease runs out.
pub const RENEW_EVERY: Duration = Duration::from_secs(5);

/// What renews a codec's claims while their rounds run
/// ([`StateCodec::renewal`](super::StateCodec::renewal)).
#[derive(Debug, Clone)]
pub struct Renewal {
    pub(crate) store: std::sync::Arc<dyn super::TokenStore>,
    pub(crate) lease: Duration,
}

impl Renewal {
    /// Renews the lease of the claim `claimed()` answers, every third of the lease, for as
    /// long as it is polled (a request's run); never ends. A renewal the store refuses
    /// (the claim is no longer this run's: taken over after a stall, or recorded) is
    /// logged.
    pub async fn renew_while(
        &self,
        claimed: impl Fn() -> Option<Claimed>,
    ) -> std::convert::Infallible {
        let every = (self.lease / 3).max(Duration::from_millis(100));
        loop {
            tokio::time::sleep(every).await;
            let Some(claimed) = claimed() else { continue };
            let lease_until = super::unix_now().saturating_add(self.lease.as_secs().max(1));
            match self.store.renew(&claimed.nonce, lease_until).await {
                Ok(true) => {}
                Ok(false) => tracing::warn!(
                    "a running round's claim is no longer its own (taken over after a stall?)"
                ),
                Err(error) => tracing::warn!(%error, "cannot renew a running round's claim"),
            }
        }
    }
}

/// A token this request claimed: what its outcome is recorded for.
#[derive(Clone)]
pub struct Claimed {
    nonce: [u8; 24],
    keep_until: u64,
    binding: [u8; 32],
    /// The request's canonical text ([`request_text`]), as written: a claim is cloned
    /// only at a renewal of its lease (every few seconds), so it is not shared.
    request: Vec<u8>,
}

/// What a request brings beside its token, as the canonical text its outcome is bound to:
/// its answers and the failures it reports, in canonical JSON (keys sorted), so that the
/// same answers written in another order are the same request.
pub fn request_text<F: serde::Serialize>(
    answers: Option<&BTreeMap<String, Value>>,
    failures: &BTreeMap<String, F>,
) -> Vec<u8> {
    let mut canonical = Vec::with_capacity(256);
    canonical.extend_from_slice(b"saga/request/v1\0");
    match answers {
        Some(answers) => {
            for (key, value) in answers {
                super::binding::write_string(key, &mut canonical);
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
        super::binding::write_string(key, &mut canonical);
        canonical.push(b':');
        super::binding::write_canonical(&value, &mut canonical);
        canonical.push(b',');
    }
    canonical
}

// Not derived: the request's text holds the client's answers, which a log must not show.
impl std::fmt::Debug for Claimed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claimed")
            .field("nonce", &self.nonce)
            .field("keep_until", &self.keep_until)
            .field("request_len", &self.request.len())
            .finish_non_exhaustive()
    }
}

impl Claimed {
    /// The same claim for another request's answers.
    #[cfg(test)]
    pub(crate) fn set_request_for_test(&mut self, request: &[u8]) {
        self.request = request.to_vec();
    }
}

impl Claimed {
    /// The claim of the token whose nonce is `nonce`, kept until `keep_until`, by a
    /// request bound to `binding` whose answers' canonical text is `request`.
    pub(crate) fn new(
        nonce: [u8; 24],
        keep_until: u64,
        binding: &Binding,
        request: Vec<u8>,
    ) -> Self {
        Self {
            nonce,
            keep_until,
            binding: *binding.digest(),
            request,
        }
    }

    /// The claimed token's nonce.
    pub(crate) fn nonce(&self) -> &[u8; 24] {
        &self.nonce
    }

    /// Until when the store keeps what it holds of the token.
    pub(crate) fn keep_until(&self) -> u64 {
        self.keep_until
    }
}

/// `plaintext` sealed for `claimed` under `keys`' sealing key.
pub(crate) fn seal(keys: &KeyRing, claimed: &Claimed, plaintext: &[u8]) -> Vec<u8> {
    let key = keys.sealing();
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

/// The plaintext of an outcome sealed for `claimed`; `None` if it was sealed for another
/// token, caller or request, in another version, under a key `keys` does not hold, or
/// altered.
pub(crate) fn open(keys: &KeyRing, claimed: &Claimed, sealed: &[u8]) -> Option<Vec<u8>> {
    if sealed.len() < HEAD + TAG_LEN || sealed[0] != OUTCOME_VERSION {
        return None;
    }
    let (head, rest) = sealed.split_at(HEAD);
    let (body, tag) = rest.split_at(rest.len() - TAG_LEN);
    let id: [u8; 4] = head[1..5].try_into().ok()?;
    let nonce: [u8; NONCE_LEN] = head[5..].try_into().ok()?;
    let tag: [u8; TAG_LEN] = tag.try_into().ok()?;
    let aad = associated_data(head, claimed);
    keys.matching(|key| *key == id).find_map(|key| {
        let mut plaintext = body.to_vec();
        key.cipher
            .open_in_place(&nonce, &aad, &mut plaintext, &tag)
            .ok()
            .map(|()| plaintext)
    })
}

/// Gives `claimed` back without an outcome, in a task of its own (`StateCodec::abandon`):
/// in a store that renews leases its lease ends now, and a retry of the request takes
/// the round over and runs it again from the same token (its effects under the same keys);
/// in any other store it is spent, and a retry refused.
pub fn abandon(store: &std::sync::Arc<dyn super::TokenStore>, claimed: Claimed) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let store = std::sync::Arc::clone(store);
    runtime.spawn(async move {
        let given_back = if store.leases_renewed() {
            store.renew(&claimed.nonce, 0).await.map(|_| ())
        } else {
            store.record(&claimed.nonce, &[], claimed.keep_until).await
        };
        if let Err(error) = given_back {
            tracing::warn!(%error, "cannot give back an abandoned token: its retry waits for its lease");
        }
    });
}

fn associated_data(head: &[u8], claimed: &Claimed) -> Vec<u8> {
    // Every part but the last is of a fixed length: the text is read unambiguously.
    let mut aad = Vec::with_capacity(16 + HEAD + 24 + 32 + claimed.request.len());
    aad.extend_from_slice(b"saga/outcome/v2\0");
    aad.extend_from_slice(head);
    aad.extend_from_slice(&claimed.nonce);
    aad.extend_from_slice(&claimed.binding);
    aad.extend_from_slice(&claimed.request);
    aad
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claimed(request: u8, principal: &str) -> Claimed {
        Claimed {
            nonce: [3; 24],
            keep_until: u64::MAX,
            binding: *Binding::new("t", "tools/call", principal, None).digest(),
            request: vec![request],
        }
    }

    #[test]
    fn an_outcome_opens_only_for_its_token_caller_and_answers() {
        let keys = KeyRing::from_keys([[1; 32]]).unwrap();
        let sealed = seal(&keys, &claimed(1, "ann"), b"the answer");
        assert_eq!(
            open(&keys, &claimed(1, "ann"), &sealed).as_deref(),
            Some(&b"the answer"[..])
        );
        assert_eq!(
            open(&keys, &claimed(2, "ann"), &sealed),
            None,
            "other answers"
        );
        assert_eq!(
            open(&keys, &claimed(1, "bob"), &sealed),
            None,
            "another caller"
        );
        let mut other_token = claimed(1, "ann");
        other_token.nonce = [4; 24];
        assert_eq!(open(&keys, &other_token, &sealed), None, "another token");
        for index in 0..sealed.len() {
            let mut altered = sealed.clone();
            altered[index] ^= 1;
            assert_eq!(
                open(&keys, &claimed(1, "ann"), &altered),
                None,
                "byte {index}"
            );
        }
        assert_eq!(open(&keys, &claimed(1, "ann"), &sealed[..20]), None);
        let other_keys = KeyRing::from_keys([[2; 32]]).unwrap();
        assert_eq!(open(&other_keys, &claimed(1, "ann"), &sealed), None);
    }

    /// The request's text is the client's answers: a claim's debug form shows only its
    /// length.
    #[test]
    fn a_claim_does_not_show_the_answers() {
        let mut claim = claimed(1, "ann");
        claim.set_request_for_test(b"{\"password\":\"hunter2\"}");
        let shown = format!("{claim:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("request_len: 22"), "{shown}");
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
            request_text(Some(&one), &none),
            request_text(Some(&two), &none)
        );
        assert_ne!(
            request_text(Some(&one), &none),
            request_text(Some(&other), &none)
        );
        assert_ne!(request_text(None, &none), request_text(Some(&none), &none));
        let failed: BTreeMap<String, Value> =
            serde_json::from_str(r#"{"a": {"code": 1, "message": "no"}}"#).unwrap();
        assert_ne!(request_text(None, &none), request_text(None, &failed));
    }

    /// A request's text is bound into every recorded outcome: a replica of another build
    /// opens it only if the text's bytes do not change with the code that writes them.
    /// This is the definition, written out.
    #[test]
    fn the_request_text_is_the_one_outcomes_were_sealed_with() {
        let answers: BTreeMap<String, Value> =
            serde_json::from_str(r#"{"b\"": {"y": [1, "é"], "x": null}, "a": true}"#).unwrap();
        let failures: BTreeMap<String, Value> =
            serde_json::from_str(r#"{"c": {"message": "no", "code": -1}}"#).unwrap();
        let text = "saga/request/v1\0\"a\":true,\"b\\\"\":{\"x\":null,\"y\":[1,\"é\"]},|\
                    \"c\":{\"code\":-1,\"message\":\"no\"},";
        assert_eq!(request_text(Some(&answers), &failures), text.as_bytes());
        assert_eq!(
            request_text::<Value>(None, &BTreeMap::new()),
            b"saga/request/v1\0-|"
        );
    }
}
