//! How many values a saved state holds, and the bound on them.
//!
//! Why a count of values and not only of bytes: a state's bytes are bounded (the token
//! cap, or the codec's state bound for a deflated or kept state), but what they decode to
//! is not in proportion to them. A `serde_json::Value` kept in a MessagePack slot takes
//! one byte per small number and some 80 bytes once read (`preserve_order`'s maps), so a
//! 4 MiB state of `[0, 0, …]` read back cost some 300 MiB, and a state grown by answers
//! that deflate well fits a token of a few KB (the fifth review: 1 GiB of RSS after 22
//! rounds of such answers). A value of a MessagePack slot (a scalar, a sequence, a map, a
//! key: as [`HttpLimits::max_json_values`] counts a request's) is what costs memory out
//! of proportion to its bytes, so the values of a state's MessagePack slots are bounded
//! where they are written (the seal refuses a state past the bound, blaming whoever grew
//! it) and where they are read (a state past the bound, sealed by a build with a higher
//! one, is refused before it is read whole). Postcard slots are not counted: postcard
//! holds no self-describing values, so what they read back is the tool's own types, each
//! item from at least one byte of the state.
//!
//! The bound is [`StateCodec::max_state_values`](crate::state::StateCodec) (the default,
//! 100,000, is a request's: a state then costs what one request's
//! body may), set for a round by the runner around its step; it protects the server
//! (memory per request, so per request place), whoever the caller.
//!
//! [`HttpLimits::max_json_values`]: crate::serve::HttpLimits::max_json_values

use std::cell::Cell;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::state::DEFAULT_MAX_STATE_VALUES;

tokio::task_local! {
    /// The round being stepped: its bound, and the values of the states it sealed.
    static ROUND: Arc<RoundValues>;
}

thread_local! {
    /// Values of MessagePack slots written by the state being encoded on this thread, while
    /// one is counted.
    static WRITTEN: Cell<Option<usize>> = const { Cell::new(None) };
    /// Values the state being decoded on this thread may still read, while one is.
    static LEFT: Cell<Option<usize>> = const { Cell::new(None) };
    /// Set when the last state decoded on this thread held more values than its bound.
    static EXCEEDED: Cell<bool> = const { Cell::new(false) };
}

/// One round's count: the bound, and the values of the states its step sealed (its own
/// and those of the `#[saga_fn]` helpers suspended in it).
#[derive(Debug)]
pub(crate) struct RoundValues {
    bound: usize,
    sealed: AtomicUsize,
}

impl RoundValues {
    pub(crate) fn new(bound: usize) -> Arc<Self> {
        Arc::new(Self {
            bound,
            sealed: AtomicUsize::new(0),
        })
    }

    /// Values of the states the round's step sealed.
    pub(crate) fn sealed(&self) -> usize {
        self.sealed.load(Ordering::Relaxed)
    }

    /// Runs `step` with this count.
    pub(crate) fn scope<F: Future>(self: &Arc<Self>, step: F) -> impl Future<Output = F::Output> {
        ROUND.scope(Arc::clone(self), step)
    }
}

/// The bound of the round being stepped, or the default outside one (a test's
/// inspection, `saga inspect`).
fn bound() -> usize {
    ROUND
        .try_with(|round| round.bound)
        .unwrap_or(DEFAULT_MAX_STATE_VALUES)
}

/// Runs `write` (one attempt at writing a state) counting the values its MessagePack
/// slots write; adds them to the round's count when it succeeds.
pub(crate) fn counted_write<T, E>(write: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    // Restored however `write` ends, an unwind of the tool's `Serialize` included: a count
    // left behind would be another state's.
    struct Restore(Option<Option<usize>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                WRITTEN.set(outer);
            }
        }
    }
    let mut restore = Restore(Some(WRITTEN.replace(Some(0))));
    let written = write();
    let count = WRITTEN.get().unwrap_or(0);
    if let Some(outer) = restore.0.take() {
        WRITTEN.set(outer);
    }
    if written.is_ok() {
        let _ = ROUND.try_with(|round| round.sealed.fetch_add(count, Ordering::Relaxed));
    }
    written
}

/// Whether a state's write is being counted on this thread (a MessagePack slot's bytes
/// are then scanned for [`note_written`]).
pub(crate) fn counting() -> bool {
    WRITTEN.get().is_some()
}

/// Notes `values` written by a MessagePack slot of the state being counted.
pub(crate) fn note_written(values: usize) {
    WRITTEN.with(|written| {
        if let Some(count) = written.get() {
            written.set(Some(count.saturating_add(values)));
        }
    });
}

/// Runs `read` (one state's decoding) with the round's bound on the values its
/// MessagePack slots read.
pub(crate) fn bounded_read<T>(read: impl FnOnce() -> T) -> T {
    // Restored however `read` ends, an unwind of the tool's `Deserialize` included: a
    // bound left behind would limit reads that are no state's (a seal's read-back).
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            LEFT.set(self.0);
        }
    }
    EXCEEDED.set(false);
    let _restore = Restore(LEFT.replace(Some(bound())));
    read()
}

/// What a slot's reading may still read: `None` outside a bounded read.
pub(crate) fn left() -> Option<usize> {
    LEFT.get()
}

/// Notes what a slot's reading left of the bound.
pub(crate) fn set_left(left: Option<usize>) {
    if LEFT.get().is_some() {
        LEFT.set(left);
    }
}

/// Notes that a state's reading met its bound.
pub(crate) fn note_exceeded() {
    EXCEEDED.set(true);
}

/// Ends the step whose state could not be read because it holds more values than this
/// server reads back, if that is why: the call is refused as a token this server cannot
/// read (`-32602`), as a state sealed under another layout is, not reported as a fault of
/// the tool. `resume_unwind`: the runtime's `catch_unwind` around every step turns the
/// marker into the refusal, and no panic hook runs.
pub(crate) fn refuse_if_exceeded() {
    if EXCEEDED.replace(false) {
        std::panic::resume_unwind(Box::new(PastTheBound));
    }
}

/// The unwinding marker of [`refuse_if_exceeded`].
#[derive(Debug)]
pub(crate) struct PastTheBound;

impl std::fmt::Display for PastTheBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the state holds more values than this server reads back")
    }
}

impl crate::metrics::AsRefusal for PastTheBound {
    fn refusal(&self) -> crate::metrics::Refusal {
        crate::metrics::Refusal::Undecodable(
            "the state holds more values than this server reads back \
             (SagaServerBuilder::max_state_values)"
                .to_owned(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_counts_only_when_it_succeeds_and_restores_the_outer_count() {
        let round = RoundValues::new(10);
        let run = round.scope(async {
            let ok: Result<(), ()> = counted_write(|| {
                note_written(3);
                // A nested count (a helper's state written inside its caller's) is its own.
                let inner: Result<(), ()> = counted_write(|| {
                    note_written(4);
                    Ok(())
                });
                assert!(inner.is_ok());
                note_written(2);
                Ok(())
            });
            assert!(ok.is_ok());
            let failed: Result<(), ()> = counted_write(|| {
                note_written(100);
                Err(())
            });
            assert!(failed.is_err());
        });
        futures::executor::block_on(run);
        assert_eq!(round.sealed(), 3 + 4 + 2);
        assert!(!counting());
    }

    /// The fifth review's review: a `Deserialize` that panics left the bound set on its
    /// thread, and later reads outside any state were limited by it.
    #[test]
    fn an_unwind_leaves_no_bound_or_count_behind() {
        let read = std::panic::catch_unwind(|| bounded_read(|| panic!("a tool's Deserialize")));
        assert!(read.is_err());
        assert_eq!(left(), None);
        let write =
            std::panic::catch_unwind(|| counted_write::<(), ()>(|| panic!("a tool's Serialize")));
        assert!(write.is_err());
        assert!(!counting());
    }

    #[test]
    fn a_read_is_bounded_by_the_rounds_bound_or_the_default() {
        assert_eq!(left(), None);
        assert_eq!(bounded_read(left), Some(DEFAULT_MAX_STATE_VALUES));
        let round = RoundValues::new(7);
        futures::executor::block_on(round.scope(async {
            assert_eq!(bounded_read(left), Some(7));
        }));
        assert_eq!(left(), None);
    }
}
