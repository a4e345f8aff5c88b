//! A step's future polled through a pointer the optimizer cannot follow.
//!
//! A step's state machine is the biggest function of a tool. LLVM inlines a future's
//! `poll` into a caller that is its only one, whatever its size, and then optimizes the
//! whole body again there; a step awaited by the block around it, which the runtime's
//! combinators poll in turn, was optimized three times over, in each function it landed
//! in, in every user's release build (issue 43). Behind [`Opaque`] it stays a function
//! of its own and is optimized once. What it costs at run time is one indirect call per
//! poll of a step, which does far more than a call: 112,615 instructions per request
//! with it, 113,321 without (`scripts/bench-instructions.sh`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// How [`Opaque`] polls its future: `F::poll`, through a pointer.
type PollFn<F> = fn(Pin<&mut F>, &mut Context<'_>) -> Poll<<F as Future>::Output>;

pin_project_lite::pin_project! {
    /// `F`, polled through a pointer to its `poll` that the optimizer cannot see through,
    /// so that `F`'s body is never inlined into the code that awaits it. See the module
    /// documentation.
    #[must_use = "futures do nothing unless polled"]
    pub struct Opaque<F: Future> {
        #[pin]
        future: F,
        poll: PollFn<F>,
    }
}

/// `future`, polled behind a pointer the optimizer cannot follow (see `Opaque`).
pub fn opaque<F: Future>(future: F) -> Opaque<F> {
    Opaque {
        future,
        // `black_box` hides which function the pointer is: a pointer LLVM could see
        // would be a direct call again, and inlined.
        poll: std::hint::black_box(<F as Future>::poll as PollFn<F>),
    }
}

impl<F: Future> Future for Opaque<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        (*this.poll)(this.future, cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The future behind the pointer is the one polled, to its end, with its output.
    #[test]
    fn an_opaque_future_gives_what_its_future_gives() {
        let mut seen = Vec::new();
        let future = opaque(async {
            seen.push(1);
            tokio::task::yield_now().await;
            seen.push(2);
            7
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        assert_eq!(runtime.block_on(future), 7);
        assert_eq!(seen, [1, 2]);
    }
}
