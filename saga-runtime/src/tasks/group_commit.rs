//! Group commit for the SQL task stores: the writes that arrive while a transaction
//! commits wait for the next one, and share it and its one fsync.
//!
//! A write is queued with a channel for its outcome. If no flush is running, the writer
//! that queued it starts one ([`Queued::Start`]); the flush takes everything queued,
//! applies it in one transaction, commits, and only then answers each write: a write is
//! acknowledged after its commit, as when each had its own. Writes queued meanwhile wait
//! for the flush's next turn, which takes them all at once; the flush ends when it finds
//! the queue empty. Under load, one commit carries as many writes as arrived during the
//! last one; alone, a write commits at once, as before.
//!
//! The batch is bounded ([`MAX_BATCH`]): one transaction never grows with the load, and
//! the writes behind it wait one commit more.

use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use super::store::TaskStoreError;

/// The most writes one transaction carries.
pub(super) const MAX_BATCH: usize = 256;

/// A write's outcome: `Ok(true)` written, `Ok(false)` not (another writer moved the row
/// on), or why not.
pub(super) type Outcome = Result<bool, TaskStoreError>;

/// A queued write and where its outcome goes.
pub(super) struct QueuedWrite<W> {
    pub(super) write: W,
    answer: oneshot::Sender<Outcome>,
}

impl<W> QueuedWrite<W> {
    /// Answers the writer (who may have stopped waiting: then nobody hears it).
    pub(super) fn answer(self, outcome: Outcome) {
        let _ = self.answer.send(outcome);
    }
}

/// The writes waiting for a transaction.
pub(super) struct Queue<W> {
    state: Mutex<State<W>>,
}

struct State<W> {
    waiting: Vec<QueuedWrite<W>>,
    flushing: bool,
}

/// What queuing a write asks of its writer.
pub(super) enum Queued {
    /// No flush is running: start one.
    Start,
    /// A running flush will take it.
    Joined,
}

impl<W> std::fmt::Debug for Queue<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("waiting", &self.lock().waiting.len())
            .finish()
    }
}

impl<W> Default for Queue<W> {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                waiting: Vec::new(),
                flushing: false,
            }),
        }
    }
}

impl<W> Queue<W> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<W>> {
        // The lock guards a vector and a flag, each left whole by every critical section.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queues `write`; the receiver hears its outcome once its transaction committed.
    pub(super) fn push(&self, write: W) -> (oneshot::Receiver<Outcome>, Queued) {
        let (answer, outcome) = oneshot::channel();
        let mut state = self.lock();
        state.waiting.push(QueuedWrite { write, answer });
        let queued = if state.flushing {
            Queued::Joined
        } else {
            state.flushing = true;
            Queued::Start
        };
        (outcome, queued)
    }

    /// The next batch, oldest first; `None` ends the flush (nothing was waiting).
    pub(super) fn take(&self) -> Option<Vec<QueuedWrite<W>>> {
        let mut state = self.lock();
        if state.waiting.is_empty() {
            state.flushing = false;
            return None;
        }
        let batch = state.waiting.len().min(MAX_BATCH);
        let later = state.waiting.split_off(batch);
        Some(std::mem::replace(&mut state.waiting, later))
    }
}

/// The running flush of a queue: hands out its batches. Dropped before it found the queue
/// empty (its thread panicked, its task was cancelled at shutdown), it fails the writes
/// still waiting and lets the next write start a flush again: no writer waits for ever.
/// (The batch it held is dropped with it, and its writers hear [`outcome`]'s error.)
pub(super) struct Flusher<W> {
    queue: Arc<Queue<W>>,
    done: bool,
}

impl<W> Flusher<W> {
    pub(super) fn new(queue: Arc<Queue<W>>) -> Self {
        Self { queue, done: false }
    }

    /// The next batch; `None` when the queue is empty, which ends the flush.
    pub(super) fn next(&mut self) -> Option<Vec<QueuedWrite<W>>> {
        let batch = self.queue.take();
        self.done = batch.is_none();
        batch
    }
}

impl<W> Drop for Flusher<W> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let waiting = {
            let mut state = self.queue.lock();
            state.flushing = false;
            std::mem::take(&mut state.waiting)
        };
        for entry in waiting {
            entry.answer(Err(stopped()));
        }
    }
}

/// Why a batch was not committed, which decides what its writes are told.
#[derive(Debug)]
pub(super) enum Failed {
    /// The database refused one of its writes: the others may succeed without it, so
    /// each is written again alone.
    Write(String),
    /// The connection, the lock, the counts or the commit failed (for a commit whose
    /// answer was lost, the batch may be written): every write of the batch is told so,
    /// none written again.
    Batch(String),
}

/// Answers each write of a committed batch.
pub(super) fn answer<W>(batch: Vec<QueuedWrite<W>>, outcomes: Vec<Outcome>) {
    for (entry, outcome) in batch.into_iter().zip(outcomes) {
        entry.answer(outcome);
    }
}

/// Fails every write of a batch with `why`.
pub(super) fn fail<W>(batch: Vec<QueuedWrite<W>>, why: &str) {
    for entry in batch {
        entry.answer(Err(TaskStoreError::Unavailable(why.to_owned())));
    }
}

fn stopped() -> TaskStoreError {
    TaskStoreError::Unavailable("the task store's writer stopped before committing".into())
}

/// Waits for a queued write's outcome. A flush that ended without answering (it
/// panicked) is the store's error, not a hang.
pub(super) async fn outcome(receiver: oneshot::Receiver<Outcome>) -> Outcome {
    receiver.await.unwrap_or_else(|_| Err(stopped()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_writer_starts_the_flush_and_the_others_join_it() {
        let queue = Queue::default();
        let (_a, first) = queue.push(1);
        let (_b, second) = queue.push(2);
        assert!(matches!(first, Queued::Start));
        assert!(matches!(second, Queued::Joined));
        let batch = queue.take().expect("two waiting");
        assert_eq!(
            batch.iter().map(|entry| entry.write).collect::<Vec<_>>(),
            [1, 2]
        );
        // Queued during the flush: taken by the same flush, not a new one.
        let (_c, third) = queue.push(3);
        assert!(matches!(third, Queued::Joined));
        assert_eq!(queue.take().map(|batch| batch.len()), Some(1));
        assert!(queue.take().is_none(), "the flush ends on an empty queue");
        let (_d, fourth) = queue.push(4);
        assert!(
            matches!(fourth, Queued::Start),
            "and the next write starts one"
        );
    }

    #[test]
    fn a_batch_is_bounded_and_keeps_the_order() {
        let queue = Queue::default();
        let receivers: Vec<_> = (0..MAX_BATCH + 3).map(|n| queue.push(n).0).collect();
        let first = queue.take().expect("a batch");
        assert_eq!(first.len(), MAX_BATCH);
        assert_eq!(first[0].write, 0);
        let second = queue.take().expect("the rest");
        assert_eq!(
            second.iter().map(|entry| entry.write).collect::<Vec<_>>(),
            [MAX_BATCH, MAX_BATCH + 1, MAX_BATCH + 2]
        );
        drop(receivers);
    }

    #[tokio::test]
    async fn a_flusher_that_stops_early_fails_the_waiting_writes_and_lets_a_new_one_start() {
        let queue = Arc::new(Queue::default());
        let (first, started) = queue.push(1);
        assert!(matches!(started, Queued::Start));
        let mut flusher = Flusher::new(Arc::clone(&queue));
        let batch = flusher.next().expect("the first write");
        let (second, joined) = queue.push(2);
        assert!(matches!(joined, Queued::Joined));
        // The flush dies holding its batch (a panic, a cancelled task).
        drop(batch);
        drop(flusher);
        for receiver in [first, second] {
            assert!(matches!(
                outcome(receiver).await,
                Err(TaskStoreError::Unavailable(_))
            ));
        }
        let (_third, queued) = queue.push(3);
        assert!(
            matches!(queued, Queued::Start),
            "the next write starts a flush"
        );
    }

    #[tokio::test]
    async fn a_dropped_entry_is_an_error_not_a_hang() {
        let queue = Queue::default();
        let (receiver, _) = queue.push(());
        drop(queue.take());
        assert!(matches!(
            outcome(receiver).await,
            Err(TaskStoreError::Unavailable(_))
        ));
    }
}
