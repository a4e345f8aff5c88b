//! What one drive of a call carries from round to round and to its answer: the claim of
//! the token its request brought (to record the answer), whether that answer was recorded
//! before, the token its rounds' effect keys derive from, and whether the round about to
//! run was handed on within the request.
//!
//! It lives in the drive (`drive::drive` makes one per call it drives) and is lent to each
//! transition, not kept on the [`SagaContext`](crate::engine::SagaContext): the context is what a
//! tool reads, shared with its step and copied into detached rounds and tasks, while this
//! is the run's own bookkeeping, which a copy must never carry into another request.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::ErrorData;
use rmcp::model::CallToolResponse;

use crate::state::Claimed;

/// What a retry of the request gets when the drive finds its answer recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnRetry {
    /// The recorded answer, again: the request was sent before and is answered as it was.
    AnswerAgain,
    /// A refusal, as a redeemed token's: the request's answer begins a task (its token is
    /// spent, not answered from a record), and a second task from a recorded answer would
    /// run that answer's rounds twice.
    Refuse,
}

/// One drive's bookkeeping (see the module).
#[derive(Debug)]
pub(crate) struct PerCall {
    on_retry: OnRetry,
    /// Whether every round's token is kept durably before the next round runs (a task's
    /// record): each round's effects are then keyed by its own token.
    keys_per_token: bool,
    /// The claim of the token the request brought, set by its first round's transition and
    /// taken by the drive when it answers (or gives it back).
    claimed: Mutex<Option<Box<Claimed>>>,
    /// Whether the first round was answered from its recorded outcome.
    replayed: AtomicBool,
    /// Whether the round about to run starts from a token the drive handed on within this
    /// request (a state that never left the process), not one the request brought.
    handed_on: AtomicBool,
    /// The nonce, and the id of the key that sealed it, of the token this request's
    /// rounds' effect keys are derived from when their own tokens are not kept
    /// ([`PerCall::effect_origin`]).
    origin: Mutex<Option<([u8; 24], saga_wire::KeyId)>>,
}

impl PerCall {
    /// A drive whose request answers a retry as `on_retry` says, and whose every round's
    /// token is kept before the next runs when `keys_per_token` (a task's record).
    pub(crate) fn new(on_retry: OnRetry, keys_per_token: bool) -> Self {
        Self {
            on_retry,
            keys_per_token,
            claimed: Mutex::new(None),
            replayed: AtomicBool::new(false),
            handed_on: AtomicBool::new(false),
            origin: Mutex::new(None),
        }
    }

    /// Whether the request's answer is one to give again: it is recorded when the request
    /// answers, and its token spent otherwise.
    pub(crate) fn records_answer(&self) -> bool {
        self.on_retry == OnRetry::AnswerAgain
    }

    /// What the request answers with when its first round found `recorded`, the answer it
    /// gave before: that answer, or the refusal of a task's creation sent again.
    pub(crate) fn answer_again(
        &self,
        tool: &str,
        recorded: CallToolResponse,
    ) -> Result<CallToolResponse, ErrorData> {
        match self.on_retry {
            OnRetry::AnswerAgain => Ok(recorded),
            OnRetry::Refuse => Err(crate::engine::caller::error::invalid_state(
                tool,
                &crate::metrics::Refusal::Redeemed,
            )
            .into()),
        }
    }

    /// Marks the round about to run as handed on by the drive within this request, or
    /// brought by the request.
    pub(crate) fn set_handed_on(&self, handed_on: bool) {
        self.handed_on.store(handed_on, Ordering::Relaxed);
    }

    /// See [`PerCall::set_handed_on`].
    pub(crate) fn handed_on(&self) -> bool {
        self.handed_on.load(Ordering::Relaxed)
    }

    /// Keeps the claim of the token this request brought: its outcome is recorded when
    /// the request answers.
    pub(crate) fn set_claimed(&self, claimed: Claimed) {
        if let Ok(mut slot) = self.claimed.lock() {
            *slot = Some(Box::new(claimed));
        }
    }

    /// The claim [`PerCall::set_claimed`] kept, if it still holds one (its round runs).
    pub(crate) fn claimed(&self) -> Option<Claimed> {
        self.claimed
            .lock()
            .ok()
            .and_then(|slot| slot.as_deref().cloned())
    }

    /// The claim [`PerCall::set_claimed`] kept, taken.
    pub(crate) fn take_claimed(&self) -> Option<Box<Claimed>> {
        self.claimed.lock().ok().and_then(|mut slot| slot.take())
    }

    /// Marks this request's first round as answered from its recorded outcome.
    pub(crate) fn set_replayed(&self) {
        self.replayed.store(true, Ordering::Relaxed);
    }

    /// Whether this request's first round was answered from its recorded outcome.
    pub(crate) fn replayed(&self) -> bool {
        self.replayed.load(Ordering::Relaxed)
    }

    /// The nonce a round's effects' keys are derived from, given the nonce of the token it
    /// started from. A token the request brought (or, in a task, every round's token: its
    /// record keeps it) is its own origin. A token handed on within the request was sealed
    /// with a random nonce no retry would draw again: its round's keys come from the
    /// request's token and the round's number instead, so that the same request run again
    /// (a retry, a take-over of its claim) gives every effect the key it had. `None` for a
    /// handed-on round of a request that brought no token (a first call: new keys). With
    /// the nonce, the id of the key that sealed the origin, which the keys are derived under.
    pub(crate) fn effect_origin(
        &self,
        nonce: [u8; 24],
        key: saga_wire::KeyId,
        round: u32,
    ) -> Option<([u8; 24], saga_wire::KeyId)> {
        let mut origin = self.origin.lock().ok()?;
        if self.keys_per_token || !self.handed_on() {
            *origin = Some((nonce, key));
            return Some((nonce, key));
        }
        let (brought, key) = (*origin)?;
        let mut hasher = ring::digest::Context::new(&ring::digest::SHA256);
        hasher.update(b"saga/effect-round/v1\0");
        hasher.update(&brought);
        hasher.update(&round.to_be_bytes());
        let mut derived = [0u8; 24];
        derived.copy_from_slice(&hasher.finish().as_ref()[..24]);
        Some((derived, key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The review of the fifth pass: a round handed on within a request starts from a
    /// token sealed with a random nonce, so a request run again (a retry, a take-over of
    /// its claim) keyed that round's effects anew. Keyed by the request's token and the
    /// round's number, they are the same on every run of the same request.
    #[test]
    fn a_handed_on_rounds_effects_are_keyed_by_the_requests_token_and_its_number() {
        let run = |handed_on_nonce: [u8; 24]| {
            let per_call = PerCall::new(OnRetry::AnswerAgain, false);
            let brought = per_call.effect_origin([1; 24], [7; 4], 3);
            per_call.set_handed_on(true);
            let next = per_call.effect_origin(handed_on_nonce, [9; 4], 4);
            let after = per_call.effect_origin(handed_on_nonce, [9; 4], 5);
            (brought, next, after)
        };
        // A token the request brought is its own origin.
        let (brought, next, after) = run([2; 24]);
        assert_eq!(brought, Some(([1; 24], [7; 4])));
        // The handed-on rounds: from the brought token and their numbers, under its key,
        // whatever random nonce sealed them.
        let (_, next_again, after_again) = run([3; 24]);
        assert_eq!(next, next_again);
        assert_eq!(after, after_again);
        assert_ne!(next, after, "each round its own");
        assert_eq!(next.map(|(_, key)| key), Some([7; 4]));
        assert_ne!(next.map(|(nonce, _)| nonce), Some([2; 24]));

        // A request that brought no token (a first call): no origin, new keys.
        let first = PerCall::new(OnRetry::AnswerAgain, false);
        first.set_handed_on(true);
        assert_eq!(first.effect_origin([2; 24], [9; 4], 1), None);

        // A task's rounds: every token is kept, each its own origin.
        let task = PerCall::new(OnRetry::AnswerAgain, true);
        let _ = task.effect_origin([1; 24], [7; 4], 3);
        task.set_handed_on(true);
        assert_eq!(
            task.effect_origin([2; 24], [9; 4], 4),
            Some(([2; 24], [9; 4]))
        );
    }

    /// A task's creation sent again finds its first run's answer recorded: refused, not
    /// answered, so that no second task runs that answer's rounds again.
    #[test]
    fn a_recorded_answer_is_given_again_unless_it_began_a_task() {
        let answer = CallToolResponse::Complete(rmcp::model::CallToolResult::success(vec![]));
        let again = PerCall::new(OnRetry::AnswerAgain, false);
        assert!(again.records_answer());
        assert!(again.answer_again("t", answer.clone()).is_ok());
        let task = PerCall::new(OnRetry::Refuse, false);
        assert!(!task.records_answer());
        let refused = task
            .answer_again("t", answer)
            .expect_err("a task's creation sent again is refused");
        assert_eq!(refused.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    }
}
