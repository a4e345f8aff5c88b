//! The tokens this process is working from right now: a token being resumed, and every
//! token a call still running has handed out (seed 002 announces one at each
//! checkpoint). A second resume of such a token while that work runs is refused, so that
//! parallel replays of one token do not run its work side by side.
//!
//! This is per process; across replicas, and after the work ends, a single-use store
//! ([`SagaToolsBuilder::single_use`](super::SagaToolsBuilder::single_use)) is what makes
//! a token redeemable once.

use std::collections::HashMap;
use std::hash::BuildHasher as _;
use std::sync::{Arc, Mutex};

/// The set, shared by a registry's clones.
#[derive(Debug, Default, Clone)]
pub(crate) struct InFlight {
    /// Each marked token, and whether a request brought it (its round's answer is then
    /// recorded, and a copy of the request may wait for it) rather than a running call
    /// handed it out.
    tokens: Arc<Mutex<HashMap<u64, bool>>>,
    /// Keyed per process, so that nobody can make two tokens collide on purpose.
    hasher: std::hash::RandomState,
}

/// A token marked as being worked from, until dropped.
#[derive(Debug)]
pub(crate) struct Marked {
    tokens: Arc<Mutex<HashMap<u64, bool>>>,
    keys: Vec<u64>,
}

/// What a second request from a token still being worked from gets (every path that
/// marks a token answers it so).
pub(crate) fn already_resumed() -> rmcp::ErrorData {
    rmcp::ErrorData::invalid_request(
        "this requestState is already being resumed by a request that is still running; \
         wait for its answer, which carries the next state",
        None,
    )
}

impl InFlight {
    /// Marks `token`; if a request that brought it still runs and `wait` (a retry is
    /// answered from the first request's recorded outcome), waits for it to be free, for
    /// at most `within` (the codec's [`retry_wait`](crate::state::StateCodec::retry_wait)).
    /// A token a running call handed out is refused at once: no answer of it is recorded.
    pub(crate) async fn enter_waiting(
        &self,
        token: &str,
        wait: bool,
        within: std::time::Duration,
    ) -> Result<Marked, rmcp::ErrorData> {
        let deadline = tokio::time::Instant::now() + within;
        let mut pause = std::time::Duration::from_millis(5);
        loop {
            // One look under the lock: entered, or who holds it.
            match self.try_enter(token) {
                Ok(marked) => return Ok(marked),
                Err(brought) if !(wait && brought) => return Err(already_resumed()),
                Err(_) => {}
            }
            if tokio::time::Instant::now() + pause > deadline {
                return Err(crate::engine::runner::retried::still_running_error());
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(std::time::Duration::from_millis(100));
        }
    }

    /// Marks `token`, brought by a request; if it is marked already, whether a request
    /// brought it (rather than a running call handed it out).
    fn try_enter(&self, token: &str) -> Result<Marked, bool> {
        let key = self.hasher.hash_one(token);
        let mut marked = Marked {
            tokens: self.tokens.clone(),
            keys: Vec::new(),
        };
        let Ok(mut tokens) = self.tokens.lock() else {
            return Ok(marked);
        };
        if let Some(brought) = tokens.get(&key) {
            return Err(*brought);
        }
        tokens.insert(key, true);
        marked.keys.push(key);
        Ok(marked)
    }

    /// Marks `token`, brought by a request, unless it is marked already.
    pub(crate) fn enter(&self, token: &str) -> Option<Marked> {
        let mut marked = Marked {
            tokens: self.tokens.clone(),
            keys: Vec::new(),
        };
        self.mark(&mut marked, token, true).then_some(marked)
    }

    /// Nothing marked yet: a run that may hand tokens out.
    pub(crate) fn none(&self) -> Marked {
        Marked {
            tokens: self.tokens.clone(),
            keys: Vec::new(),
        }
    }

    /// Adds `token`, handed out by the running call of `marked`; `false` if it was
    /// marked already.
    pub(crate) fn add(&self, marked: &mut Marked, token: &str) -> bool {
        self.mark(marked, token, false)
    }

    fn mark(&self, marked: &mut Marked, token: &str, brought: bool) -> bool {
        let key = self.hasher.hash_one(token);
        let Ok(mut tokens) = self.tokens.lock() else {
            return true;
        };
        if tokens.contains_key(&key) {
            return false;
        }
        tokens.insert(key, brought);
        marked.keys.push(key);
        true
    }
}

impl Drop for Marked {
    fn drop(&mut self) {
        if self.keys.is_empty() {
            return;
        }
        if let Ok(mut tokens) = self.tokens.lock() {
            for key in &self.keys {
                tokens.remove(key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::InFlight;

    #[test]
    fn a_token_is_entered_once_until_its_run_ends() {
        let in_flight = InFlight::default();
        let first = in_flight.enter("token-a").expect("free");
        assert!(in_flight.enter("token-a").is_none());
        assert_eq!(in_flight.try_enter("token-a").err(), Some(true), "brought");
        assert!(in_flight.enter("token-b").is_some());
        drop(first);
        assert!(in_flight.enter("token-a").is_some());
    }

    #[test]
    fn tokens_handed_out_by_a_running_call_are_marked_with_it() {
        let in_flight = InFlight::default();
        let mut run = in_flight.none();
        assert!(in_flight.add(&mut run, "announced"));
        assert!(in_flight.enter("announced").is_none());
        assert_eq!(
            in_flight.try_enter("announced").err(),
            Some(false),
            "handed out"
        );
        drop(run);
        assert!(in_flight.enter("announced").is_some());
    }
}
