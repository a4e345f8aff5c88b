//! How large a call's saved state is, for a tool that keeps it small itself: see
//! [`SagaContext::state_size`](super::context::SagaContext::state_size).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The size of the state the current round resumed from, beside the most a token may
/// hold: what a tool reads to trim its own history before the state outgrows its token
/// (keep the last turns, summarise the older ones).
///
/// ```
/// # use saga_runtime::prelude::*;
/// # fn trim(history: &mut Vec<String>) { history.remove(0); }
/// # fn in_a_tool(cx: &SagaContext, history: &mut Vec<String>) {
/// // Past half the cap, the oldest turns go.
/// if cx.state_size().sealed_share() > 0.5 {
///     trim(history);
/// }
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StateSize {
    /// Bytes of the saved state (its locals, as saved, before compression); 0 in a
    /// call's first round.
    pub saved: usize,
    /// Characters of the token it came in (compressed and sealed); 0 in a first round.
    pub sealed: usize,
    /// The longest token this server issues and accepts back: a state that would seal
    /// longer ends the call with the tool's error.
    pub max_sealed: usize,
}

impl StateSize {
    /// How much of the cap the last token used, from 0 (a first round) to 1.
    pub fn sealed_share(&self) -> f64 {
        if self.max_sealed == 0 {
            return 0.0;
        }
        self.sealed as f64 / self.max_sealed as f64
    }
}

/// The context's copy, set by the transition each round: shared by reference with the
/// tool's step, so written through atomics.
#[derive(Debug, Default)]
pub(crate) struct StateSizeCell {
    saved: AtomicUsize,
    sealed: AtomicUsize,
    max_sealed: AtomicUsize,
}

impl StateSizeCell {
    pub(crate) fn set(&self, size: StateSize) {
        self.saved.store(size.saved, Ordering::Relaxed);
        self.sealed.store(size.sealed, Ordering::Relaxed);
        self.max_sealed.store(size.max_sealed, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> StateSize {
        StateSize {
            saved: self.saved.load(Ordering::Relaxed),
            sealed: self.sealed.load(Ordering::Relaxed),
            max_sealed: self.max_sealed.load(Ordering::Relaxed),
        }
    }
}

impl Clone for StateSizeCell {
    fn clone(&self) -> Self {
        let cell = Self::default();
        cell.set(self.get());
        cell
    }
}
