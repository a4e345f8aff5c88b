//! A panic in tool code ends that call alone: the step runs under `catch_unwind`, and the
//! caller turns the panic into `-32603` for that request while the server goes on.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::engine::caller::error::Failure;

use crate::log::Escaped;

/// The message every panicking call gets; the panic's own text goes to the log only,
/// since it may hold data the client should not see.
pub const PANIC_MESSAGE: &str = "the tool failed unexpectedly (it panicked); see the server log";

/// Polls `future`, catching a panic in any poll.
///
/// Why `AssertUnwindSafe` is sound here: the future is dropped right after it panics and
/// nothing it borrowed is observed again by this request; other requests share only
/// immutable registry data and the codec, whose state is never left half-updated by tool
/// code.
pub(crate) struct CatchUnwind<F: ?Sized> {
    future: Pin<Box<F>>,
}

/// Catches a panic in a future already boxed: a tool's step behind
/// [`Typed`](crate::engine::contract::typed::Typed).
pub(crate) fn catch_panic_pinned<F: Future + ?Sized>(future: Pin<Box<F>>) -> CatchUnwind<F> {
    CatchUnwind { future }
}

impl<F: Future + ?Sized> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = self.future.as_mut();
        match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

/// Runs `f`, catching a panic.
pub(crate) fn catch_panic_sync<T>(f: impl FnOnce() -> T) -> Result<T, Box<dyn Any + Send>> {
    catch_unwind(AssertUnwindSafe(f))
}

/// The error a panicking call gets; logs the panic's message. A restore that found the
/// state saved by a build with other constants unwinds too, with
/// [`OtherConstants`](crate::engine::expand::refusal::OtherConstants): that call
/// is refused as a token this build cannot read, not reported as the tool's panic.
pub(crate) fn panicked(tool: &str, payload: &(dyn Any + Send)) -> Failure {
    if let Some(other) = payload.downcast_ref::<crate::engine::expand::refusal::OtherConstants>() {
        return crate::engine::caller::error::invalid_state(tool, other);
    }
    if let Some(past) =
        payload.downcast_ref::<crate::engine::identity::slot::values::PastTheBound>()
    {
        return crate::engine::caller::error::invalid_state(tool, past);
    }
    let message = panic_message(payload);
    tracing::error!(tool = %Escaped(tool), panic = %Escaped(message), "tool code panicked; the call gets -32603");
    Failure::Internal(PANIC_MESSAGE.into())
}

/// What a panic said, for the log (never for the client: a panic's text may name what a
/// caller should not see).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a panic payload that is not a string)")
}

/// Logs why a task that runs a call ended without its answer: a panic outside the
/// steps (its text escaped, and for the log only: it may name what the caller should
/// not see), or its abort. `what` says which run it was.
pub(crate) fn log_task_failure(error: tokio::task::JoinError, what: &str) {
    match error.try_into_panic() {
        Ok(panic) => {
            let message = panic_message(&*panic);
            tracing::error!(panic = %Escaped(message), "{what} stopped by a panic outside its steps");
        }
        Err(error) => tracing::error!(%error, "{what} stopped before it answered"),
    }
}
