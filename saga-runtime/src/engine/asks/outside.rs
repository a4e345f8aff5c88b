//! A request awaited where no saga can suspend: in a plain `async fn` helper, an `async`
//! block or a closure. Only `#[saga_tool]` and `#[saga_fn]` rewrite `.await` on a request;
//! anywhere else rustc alone says "`ElicitForm<bool>` is not a future … remove the
//! `.await`", and following that leads to a second error (`?` on a value that is not a
//! `Result`). Each request type therefore implements `Future`, but only for types that
//! implement [`AwaitedOutsideASaga`], which none does: the one error is that trait's,
//! and its note says what to write. The `Output` is what the saga would give, so that the
//! rest of the helper type-checks and nothing else is reported.
//!
//! Inside a saga nothing changes: the macros recognise the request functions by name and
//! never await the request itself, and the probe that classifies `f(..).await` rejects
//! these impls, whose bound never holds.

use crate::engine::asks::join_all::JoinAll;
use crate::engine::round::requests::{Checkpoint, Suspension};

/// The supertrait that seals [`AwaitedOutsideASaga`] and `saga_fn`'s
/// `HelperAwaitedOutsideASaga`: implemented by nothing, nameable by no other crate.
pub(crate) mod sealed {
    pub trait Sealed {}
}

/// Implemented by no type: the bound that makes awaiting a request outside a saga one
/// error that says what to do. Sealed, so that no crate can implement it.
#[diagnostic::on_unimplemented(
    message = "`{R}` is awaited where no saga can suspend: a request suspends only where it is made and awaited (`elicit(..).await`) in the body of a `#[saga_tool]` or `#[saga_fn]` function",
    label = "awaited outside a `#[saga_tool]` or `#[saga_fn]` body, or apart from where it is made",
    note = "if this is a helper the tool calls, mark it `#[saga_fn]`; its body and its calls (`confirm(..).await?`) stay as they are: `#[saga_fn] async fn confirm(what: String) -> Result<bool, SagaError> {{ elicit::<bool>(..).await }}`",
    note = "if this is an `async` block or a closure inside a tool, await the request in the tool's own body instead",
    note = "keep the `.await` (rustc may suggest removing it: the request would then never be made)"
)]
pub trait AwaitedOutsideASaga<R>: sealed::Sealed {}

/// `Future` for each type, bounded by `$bound` (a trait no type implements, whose
/// `on_unimplemented` says what to write). `Future` rather than
/// `IntoFuture`: `.await` goes through std's `IntoFuture for F: Future`, so this impl is the
/// only candidate and rustc reports the bound it misses, with its message; a second
/// `IntoFuture` impl would leave rustc with two and its generic "is not a future".
macro_rules! awaited_outside {
    ($bound:ident: $([$($generics:tt)*] $request:ty => $output:ty;)*) => {$(
        impl<$($generics)*> Future for $request
        where
            // Asked of a reference: rustc reports an unmet bound of the awaited type
            // itself with `Future`'s message ("is not a future") and drops this one's.
            // Higher-ranked, so that the bound of a type without generics is not a
            // trivial bound (an error of its own).
            for<'a> &'a $request: $bound<$request>,
        {
            type Output = $output;
            // Unreachable: the bound holds for no type.
            fn poll(
                self: ::std::pin::Pin<&mut Self>,
                _: &mut ::std::task::Context<'_>,
            ) -> ::std::task::Poll<$output> {
                ::std::task::Poll::Pending
            }
        }
    )*};
}
pub(crate) use awaited_outside;

// A kind's request types are listed in its own `ask.rs` (and `ElicitOutcome`'s in
// `outcome.rs`): adding a kind adds its line there, not here.
awaited_outside! {
    AwaitedOutsideASaga:
    [R: Suspension] JoinAll<R> => <JoinAll<R> as Suspension>::Output;
    [] Checkpoint => ();
}
