//! A round whose outcome is recorded, run in its request's task for as long as its client
//! waits, and in a task of its own once the client leaves.
//!
//! Why: a recorded round must reach its end whether or not its client waits (its outcome
//! is what the same request sent again is answered with). Spawning every such round in a
//! task of its own, and joining it, cost about a tenth of a recorded saga's instructions
//! (the task's cell, its scheduling, the join handle's wake): most clients wait. So the
//! round is polled where its request is, and handed to a task only when the request is
//! dropped before the round ends, which moves the box, never the pinned future in it.
//!
//! A panic outside the round's steps ends the round with `-32603` in either place, its
//! text logged, not sent (it may name what the caller should not see), as a task's
//! join error was before.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::FutureExt as _;
use futures::future::BoxFuture;
use rmcp::ErrorData;
use rmcp::model::CallToolResponse;
use tracing::Instrument as _;

type Outcome = Result<CallToolResponse, ErrorData>;

/// A round polled in its request's task until it ends or the request is dropped; then
/// (dropped first) in a task of its own, within `span`.
pub(crate) struct Detachable {
    round: Option<BoxFuture<'static, Outcome>>,
    span: tracing::Span,
}

impl Detachable {
    /// `round`, to run in the request's task; `span` is the one it runs within if its
    /// client leaves first (the request's, where it began).
    pub(crate) fn new(round: BoxFuture<'static, Outcome>, span: tracing::Span) -> Self {
        Self {
            round: Some(round),
            span,
        }
    }
}

impl Future for Detachable {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let Some(round) = self.round.as_mut() else {
            return Poll::Ready(Err(stopped()));
        };
        match std::panic::catch_unwind(AssertUnwindSafe(|| round.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(outcome)) => {
                self.round = None;
                Poll::Ready(outcome)
            }
            Err(panic) => {
                // Dropped here, in this task, not handed on: a future that panicked is
                // not polled again.
                self.round = None;
                log_panic(&*panic);
                Poll::Ready(Err(stopped()))
            }
        }
    }
}

impl Drop for Detachable {
    fn drop(&mut self) {
        let Some(round) = self.round.take() else {
            return;
        };
        // The client left before the round ended: it goes on in a task of its own, and its
        // outcome is recorded for the same request sent again. Without a runtime (it is
        // shutting down) the round is dropped, and its claim given back by its own drop.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let span = std::mem::replace(&mut self.span, tracing::Span::none());
        runtime.spawn(
            async move {
                if let Err(panic) = AssertUnwindSafe(round).catch_unwind().await {
                    log_panic(&*panic);
                }
            }
            .instrument(span),
        );
    }
}

fn log_panic(panic: &(dyn std::any::Any + Send)) {
    let message = crate::engine::runner::unwind::panic_message(panic);
    tracing::error!(panic = %crate::log::Escaped(message), "a round stopped by a panic outside its steps");
}

/// What a round stopped by a panic outside its steps answers.
fn stopped() -> ErrorData {
    ErrorData::internal_error("the round stopped before it answered", None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// The point of the type: a round whose request is dropped before it ends still
    /// reaches its end (its outcome is recorded there), in a task of its own.
    #[tokio::test]
    async fn a_round_whose_client_left_runs_to_its_end() {
        let ended = Arc::new(AtomicBool::new(false));
        let (go, wait) = tokio::sync::oneshot::channel::<()>();
        let round = {
            let ended = Arc::clone(&ended);
            async move {
                let _ = wait.await;
                ended.store(true, Ordering::SeqCst);
                Ok(CallToolResponse::Complete(
                    rmcp::model::CallToolResult::success(vec![]),
                ))
            }
            .boxed()
        };
        let mut request = Detachable::new(round, tracing::Span::none());
        // Polled once in the request's task: it waits.
        assert!(futures::poll!(&mut request).is_pending());
        drop(request);
        assert!(!ended.load(Ordering::SeqCst));
        go.send(()).expect("the round still waits");
        for _ in 0..100 {
            if ended.load(Ordering::SeqCst) {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the round whose client left did not run to its end");
    }

    /// A panic in the round answers `-32603` without its text, and does not unwind into
    /// the request's task.
    #[tokio::test]
    async fn a_panic_outside_the_steps_is_an_error_for_that_call() {
        let round = async { panic!("secret detail") }.boxed();
        let error = Detachable::new(round, tracing::Span::none())
            .await
            .expect_err("a panic is an error");
        assert_eq!(error.code, rmcp::model::ErrorCode::INTERNAL_ERROR);
        assert!(!error.message.contains("secret"));
    }

    /// A round that ends in its request's task is not run again when the request drops.
    #[tokio::test]
    async fn a_round_that_ended_is_not_handed_on() {
        let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let round = {
            let runs = Arc::clone(&runs);
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                Err(ErrorData::invalid_params("no", None))
            }
            .boxed()
        };
        let error = Detachable::new(round, tracing::Span::none())
            .await
            .expect_err("the round's own error");
        assert_eq!(error.message, "no");
        tokio::task::yield_now().await;
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }
}
