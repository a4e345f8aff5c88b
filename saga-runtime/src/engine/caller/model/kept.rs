//! The server model's answers kept for a retry of the request that asked them: a client
//! that resends a round (its response was lost, or the state it led to could not be
//! sealed) does not make the server pay the provider twice, and reads the same answer.
//!
//! An answer is kept under a digest of what identifies its round: the caller's
//! principal, the token the request resumed, the round's place in that request, the
//! sample's key and its request. A request without a token (a call's first round, the
//! dependent-requests format) is a new call for all the server knows, and keeps nothing.
//! The store is bounded in bytes for the whole server (global), oldest first out, and an
//! answer is kept for as long as a token lives by default.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::{CreateMessageRequestParams, CreateMessageResult};
use sha2::{Digest, Sha256};

/// The bytes of answers kept at once, for the whole server.
pub(crate) const MAX_KEPT_BYTES: usize = 8 * 1024 * 1024;

/// How long an answer is kept: a token's default lifetime.
const KEPT_FOR: Duration = Duration::from_secs(600);

/// What identifies one round's sample across retries of its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct RetryKey([u8; 32]);

/// The round `place` (0 for the round the token asked, 1 for the next this request ran
/// into, …) of a request by `principal` that resumed `token`.
#[derive(Debug, Clone)]
pub(crate) struct RoundOfRequest {
    digest: Sha256,
}

impl RoundOfRequest {
    pub(crate) fn new(principal: &str, token: &str, place: usize) -> Self {
        let digest = Sha256::new()
            .chain_update(b"saga/kept-sample\0")
            .chain_update((principal.len() as u64).to_le_bytes())
            .chain_update(principal.as_bytes())
            .chain_update((token.len() as u64).to_le_bytes())
            .chain_update(token.as_bytes())
            .chain_update((place as u64).to_le_bytes());
        Self { digest }
    }

    /// The key of the sample at `key` asking `request` in this round.
    pub(crate) fn sample(&self, key: &str, request: &CreateMessageRequestParams) -> RetryKey {
        let asked = serde_json::to_vec(request).unwrap_or_default();
        let digest = self
            .digest
            .clone()
            .chain_update((key.len() as u64).to_le_bytes())
            .chain_update(key.as_bytes())
            .chain_update(asked)
            .finalize();
        RetryKey(digest.into())
    }
}

struct KeptAnswer {
    answer: CreateMessageResult,
    bytes: usize,
    at: Instant,
}

#[derive(Default)]
struct Inner {
    by_key: HashMap<RetryKey, KeptAnswer>,
    order: VecDeque<(RetryKey, Instant)>,
    bytes: usize,
}

/// The answers kept.
#[derive(Default)]
pub(crate) struct Kept {
    inner: Mutex<Inner>,
}

impl Kept {
    /// The answer kept under `key`, if one is and it is fresh.
    pub(crate) fn get(&self, key: &RetryKey) -> Option<CreateMessageResult> {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner
            .by_key
            .get(key)
            .filter(|entry| entry.at.elapsed() < KEPT_FOR)
            .map(|entry| entry.answer.clone())
    }

    /// Keeps `answer` under `key`, forgetting the oldest answers to make room.
    pub(crate) fn put(&self, key: RetryKey, answer: &CreateMessageResult) {
        let bytes = serde_json::to_vec(answer).map_or(usize::MAX, |json| json.len());
        if bytes > MAX_KEPT_BYTES / 16 {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        while inner.bytes + bytes > MAX_KEPT_BYTES
            || inner
                .order
                .front()
                .is_some_and(|(_, at)| now.duration_since(*at) >= KEPT_FOR)
        {
            let Some((old, at)) = inner.order.pop_front() else {
                break;
            };
            // Only the entry this place in the queue stands for (a key kept again has a
            // newer place).
            if inner.by_key.get(&old).is_some_and(|entry| entry.at == at)
                && let Some(entry) = inner.by_key.remove(&old)
            {
                inner.bytes -= entry.bytes;
            }
        }
        if let Some(previous) = inner.by_key.insert(
            key,
            KeptAnswer {
                answer: answer.clone(),
                bytes,
                at: now,
            },
        ) {
            inner.bytes -= previous.bytes;
        }
        inner.bytes += bytes;
        inner.order.push_back((key, now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{Role, SamplingMessage, SamplingMessageContentBlock};

    fn answer(text: &str) -> CreateMessageResult {
        CreateMessageResult::new(
            SamplingMessage::new(Role::Assistant, SamplingMessageContentBlock::text(text)),
            "m".to_owned(),
        )
    }

    fn request() -> CreateMessageRequestParams {
        let request: crate::engine::Request = crate::engine::sample("hi").into();
        let crate::engine::kinds::table::Asked::Sample(params) = request.asked else {
            panic!("a sample");
        };
        *params
    }

    #[test]
    fn a_retry_of_the_same_round_finds_its_answer_and_no_other_does() {
        let kept = Kept::default();
        let round = RoundOfRequest::new("alice", "token-1", 0);
        let key = round.sample("sample-2", &request());
        kept.put(key, &answer("kept"));
        let again = RoundOfRequest::new("alice", "token-1", 0).sample("sample-2", &request());
        assert_eq!(kept.get(&again), Some(answer("kept")));
        for other in [
            RoundOfRequest::new("bob", "token-1", 0).sample("sample-2", &request()),
            RoundOfRequest::new("alice", "token-2", 0).sample("sample-2", &request()),
            RoundOfRequest::new("alice", "token-1", 1).sample("sample-2", &request()),
            RoundOfRequest::new("alice", "token-1", 0).sample("sample-3", &request()),
        ] {
            assert_eq!(kept.get(&other), None);
        }
    }

    #[test]
    fn the_kept_bytes_are_bounded_oldest_first() {
        let kept = Kept::default();
        let big = "x".repeat(MAX_KEPT_BYTES / 32);
        let keys: Vec<RetryKey> = (0..100)
            .map(|n| {
                let key = RoundOfRequest::new("a", &format!("t{n}"), 0).sample("s", &request());
                kept.put(key, &answer(&big));
                key
            })
            .collect();
        let inner = kept.inner.lock().unwrap();
        assert!(inner.bytes <= MAX_KEPT_BYTES, "{}", inner.bytes);
        drop(inner);
        assert!(kept.get(&keys[0]).is_none(), "the oldest went first");
        assert!(kept.get(&keys[99]).is_some(), "the newest is kept");
    }
}
