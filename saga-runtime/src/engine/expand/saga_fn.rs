//! Helpers that suspend: what `#[saga_fn]` compiles to, and how a saga awaits one.
//!
//! A `#[saga_fn]` compiles, like a tool, to a state machine whose `step` runs one
//! transition: from its arguments or from its saved state, until it returns or suspends.
//! Calling it gives a [`SagaCall`] holding the arguments; the saga that awaits it runs the
//! helper's first transition at once, and when the helper suspends, saves the helper's
//! state (as bytes) in its own and ends its transition with the helper's requests. On the
//! next round it runs the helper's next transition with the answers, and so on until the
//! helper returns its value.
//!
//! The macro of the calling saga cannot tell, from the syntax `f(..).await`, whether `f`
//! is a `#[saga_fn]` or an ordinary `async fn`. It lets types decide: [`probe`] followed
//! by `kind()`, with the traits [`ViaSagaFn`] and [`ViaFuture`] in scope, picks
//! [`SagaFnKind`] for a [`SagaCall`] and [`FutureKind`] for any other future (method
//! resolution tries `&&Probe` before `&Probe`). A [`FutureKind`] awaits the future in
//! place and never suspends; the state it would save is [`Unreachable`], which costs
//! nothing and asks nothing of the locals' types.

use std::borrow::BorrowMut;
use std::future::{Future, IntoFuture};
use std::marker::PhantomData;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::engine::asks::outside::awaited_outside;
use crate::engine::asks::outside::sealed::Sealed;
use crate::engine::caller::context::SagaContext;
use crate::engine::contract::opaque::opaque;
use crate::engine::expand::local::{
    ASuspension, CallSaves, Restore, RestoreAmong, SavedAmong, SavedItemPart, SavedLocal,
    SavedLoopItem,
};
use crate::engine::expand::located::Root;
use crate::engine::identity::slot::Slot;
use crate::engine::round::answers::Answers;
use crate::engine::round::requests::Request;

/// A call of a `#[saga_fn]`: its arguments, run by the saga that awaits it.
///
/// Awaiting it is only meaningful inside a `#[saga_tool]` or another `#[saga_fn]`, whose
/// macro turns the `.await` into a suspension.
#[must_use = "a #[saga_fn] runs only when a saga awaits it: `helper(..).await`"]
#[derive(Debug)]
pub struct SagaCall<A>(A);

impl<A: SagaFn> SagaCall<A> {
    #[doc(hidden)]
    pub fn new(arguments: A) -> Self {
        Self(arguments)
    }

    /// The helper's diagram (see [`SagaFn::diagram`]): `confirm("").diagram()` for a
    /// `#[saga_fn] async fn confirm(what: &str)`. Making the call runs nothing; the
    /// diagram is also in the helper's rustdoc.
    pub fn diagram(&self) -> &'static str {
        A::diagram()
    }
}

/// Implemented by no type: the bound that makes a `#[saga_fn]` helper awaited outside a
/// saga (in an `async` block, a closure, a plain `async fn`) one error that says what to
/// do; rustc alone said "`SagaCall<…>` is not a future", with a suggestion that does not
/// compile. Sealed, so that no crate can implement it.
#[diagnostic::on_unimplemented(
    message = "a `#[saga_fn]` helper is awaited where no saga can suspend: its call suspends only where it is awaited (`helper(..).await`) in the body of a `#[saga_tool]` or another `#[saga_fn]` function",
    label = "awaited outside a `#[saga_tool]` or `#[saga_fn]` body",
    note = "if this is an `async` block or a closure inside a tool, await the helper in the tool's own body instead: `let sure = confirm(..).await?;`",
    note = "if this is a plain `async fn`, mark it `#[saga_fn]` as well; its body and its calls stay as they are",
    note = "keep the `.await` (rustc may suggest removing it: the helper would then never run)"
)]
pub trait HelperAwaitedOutsideASaga<R>: Sealed {}

// The probe above rejects this impl, whose bound never holds, so a saga still reads a
// `SagaCall` as a helper.
awaited_outside! {
    HelperAwaitedOutsideASaga: [A: SagaFn] SagaCall<A> => A::Output;
}

/// Where a helper's transition starts.
#[derive(Debug)]
pub enum FnState<A> {
    /// The call: the arguments.
    Start(A),
    /// A later round: the helper's saved state, encoded.
    Resume(Vec<u8>),
    /// Not a round: record the helper's state enum's layout in the running trace of its
    /// caller's, and end (see `SagaFnKind::trace_callee`).
    Trace,
}

/// How a helper's transition ended.
#[derive(Debug)]
pub enum FnStep<O> {
    /// It returned.
    Done(O),
    /// It suspended (a checkpoint when `requests` is empty): the caller saves `state` and
    /// ends its own transition with `requests`.
    Suspend {
        /// The helper's state, encoded.
        state: Vec<u8>,
        /// The requests of the round.
        requests: Vec<Request>,
    },
    /// The requests of its last round again (see [`Step::AskAgain`](crate::engine::Step::AskAgain)):
    /// the caller's transition ends with them, its state unchanged.
    AskAgain(Vec<Request>),
    /// Its state could not be saved or read back; the message says why.
    Failed(&'static str),
}

/// A `#[saga_fn]`'s arguments: the helper's state machine. Implemented by the macro.
pub trait SagaFn: Sized + Send {
    /// What the helper returns.
    type Output;

    /// The same helper with every borrow of its arguments `'static`: what the caller's
    /// saved state names, so that the state does not hold the borrows of one call. It only
    /// ever resumes, and a resumed helper has no arguments left.
    type Resumed: SagaFn<Output = Self::Output> + 'static;

    /// One transition of the helper.
    fn step<'s>(
        state: FnState<Self>,
        answers: &'s mut Answers,
        cx: &'s SagaContext,
    ) -> impl Future<Output = FnStep<Self::Output>> + Send + 's
    where
        Self: 's;

    /// A tag of the helper's code (see [`SagaTool::build_tag`](crate::engine::SagaTool::build_tag)):
    /// folded into the calling tool's, so that rewording a helper's question is another
    /// build.
    fn build_tag() -> u16 {
        0
    }

    /// The helper's diagram: Mermaid `stateDiagram-v2` text, as for a tool
    /// ([`SagaTool::diagram`](crate::engine::SagaTool::diagram)); `#[saga_fn]` builds it, and the
    /// tools that call the helper name it at the call. Empty for a helper written by hand.
    fn diagram() -> &'static str {
        ""
    }
}

/// What ends a transition, for a tool and a helper alike.
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait Exit: Sized {
    /// The transition suspends with `state` and `requests`.
    fn suspended(state: Vec<u8>, requests: Vec<Request>) -> Self;
    /// The transition states the last round's requests again.
    fn asked_again(requests: Vec<Request>) -> Self;
    /// The saga cannot go on.
    fn failed(message: &'static str) -> Self;
    /// The end of a step run in its inspection mode: the state, rendered.
    fn inspected(rendered: Result<serde_json::Value, String>) -> Self;
    /// Whether the state is a helper's, which its caller saves in its own.
    const NESTED: bool = false;
}

impl<O> Exit for FnStep<O> {
    const NESTED: bool = true;

    fn suspended(state: Vec<u8>, requests: Vec<Request>) -> Self {
        FnStep::Suspend { state, requests }
    }
    fn asked_again(requests: Vec<Request>) -> Self {
        FnStep::AskAgain(requests)
    }
    fn failed(message: &'static str) -> Self {
        FnStep::Failed(message)
    }
    fn inspected(_: Result<serde_json::Value, String>) -> Self {
        // A helper's state is inspected as part of its caller's; its step has no such mode.
        FnStep::Failed("a helper's state is inspected through its caller's")
    }
}

/// What the generated code asks of a future awaited as `f(..).await`, to find out which
/// kind it is.
#[derive(Debug)]
pub struct Probe<F>(PhantomData<fn() -> F>);

/// The probe of `call`.
pub fn probe<F>(_call: &F) -> Probe<F> {
    Probe(PhantomData)
}

/// Picks [`SagaFnKind`] for a [`SagaCall`].
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait ViaSagaFn {
    /// The kind.
    type Kind;
    /// The kind.
    fn kind(&self) -> Self::Kind;
}

impl<A: SagaFn> ViaSagaFn for &Probe<SagaCall<A>> {
    type Kind = SagaFnKind<A::Resumed>;
    fn kind(&self) -> SagaFnKind<A::Resumed> {
        SagaFnKind(PhantomData)
    }
}

/// Picks [`FutureKind`] for any other future.
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait ViaFuture {
    /// The kind.
    type Kind;
    /// The kind.
    fn kind(&self) -> Self::Kind;
}

impl<F: IntoFuture> ViaFuture for Probe<F> {
    type Kind = FutureKind<F::Output>;
    fn kind(&self) -> FutureKind<F::Output> {
        FutureKind(PhantomData)
    }
}

/// A `#[saga_fn]` awaited by a saga; `R` is its [`SagaFn::Resumed`].
pub struct SagaFnKind<R>(PhantomData<fn() -> R>);

/// An ordinary future awaited by a saga: awaited in place, it never suspends. `O` is what
/// it gives.
pub struct FutureKind<O>(PhantomData<fn() -> O>);

macro_rules! zero_sized_kind {
    ($kind:ident) => {
        impl<T> Clone for $kind<T> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<T> Copy for $kind<T> {}
        impl<T> Default for $kind<T> {
            fn default() -> Self {
                Self(PhantomData)
            }
        }
        impl<T> std::fmt::Debug for $kind<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(stringify!($kind))
            }
        }
    };
}

zero_sized_kind!(SagaFnKind);
zero_sized_kind!(FutureKind);

/// A helper's call saves the caller's locals while the helper waits.
impl<R> CallSaves for SagaFnKind<R> {
    type Across = ASuspension;
}

/// An ordinary future's call site saves nothing: it never suspends.
impl<O> CallSaves for FutureKind<O> {
    type Across = NoSuspension;
}

/// Where an ordinary future is awaited: its site's locals (and a loop's items there) are
/// never saved, so any type is let through, into a field never filled.
pub struct NoSuspension;

impl<T> SavedLocal<NoSuspension, NoSuspension> for T {
    type Kept = Slot<Unreachable<T>>;

    fn kept(self) -> Slot<Unreachable<T>> {
        Slot(Unreachable(PhantomData))
    }
}

impl<T, W> SavedAmong<NoSuspension, W, NoSuspension> for T {
    type Kept = Slot<Unreachable<T>>;

    fn kept_among(self, _roots: &[Root<'_>], _local: &str) -> Slot<Unreachable<T>> {
        Slot(Unreachable(PhantomData))
    }
}

/// A root of a local kept among roots at a call, made through the call's kind: where a
/// `#[saga_fn]` waits, the root is walked (it is saved, so `Serialize`); where an ordinary
/// future is awaited nothing is saved, and the root is any value (none is walked).
#[doc(hidden)]
pub trait RootAt<X> {
    /// `value` as a root, at this kind of call.
    fn root_at<'a>(&self, value: &'a X) -> Root<'a>;
}

impl<R, X: Serialize> RootAt<X> for SagaFnKind<R> {
    fn root_at<'a>(&self, value: &'a X) -> Root<'a> {
        crate::engine::expand::located::root(value)
    }
}

impl<O, X> RootAt<X> for FutureKind<O> {
    fn root_at<'a>(&self, _value: &'a X) -> Root<'a> {
        crate::engine::expand::located::root(&())
    }
}

impl<T> SavedLoopItem<NoSuspension, NoSuspension> for T {
    type Rest = Slot<Unreachable<Vec<T>>>;

    fn rest(_items: Vec<T>) -> Slot<Unreachable<Vec<T>>> {
        Slot(Unreachable(PhantomData))
    }
}

impl<I> SavedItemPart<I, NoSuspension> for NoSuspension {
    type Kept = Slot<Unreachable<I>>;

    fn kept(_item: I) -> Slot<Unreachable<I>> {
        Slot(Unreachable(PhantomData))
    }
}

impl<R: SagaFn> SagaFnKind<R> {
    /// Runs the helper's first transition.
    pub async fn drive<A: SagaFn<Resumed = R, Output = R::Output>>(
        self,
        call: SagaCall<A>,
        answers: &mut impl BorrowMut<Answers>,
        cx: &SagaContext,
    ) -> FnStep<R::Output> {
        opaque(A::step(FnState::Start(call.0), answers.borrow_mut(), cx)).await
    }

    /// Runs the helper's next transition from its saved state.
    pub async fn resume(
        self,
        state: Vec<u8>,
        answers: &mut impl BorrowMut<Answers>,
        cx: &SagaContext,
    ) -> FnStep<R::Output> {
        opaque(R::step(FnState::Resume(state), answers.borrow_mut(), cx)).await
    }

    /// Traces the helper's state, saved at the caller's variant `variant`, into the
    /// caller's running layout trace: the helper's step runs in its trace mode
    /// ([`FnState::Trace`]), which records its own state enum (and its helpers') there and
    /// ends without waiting, so one poll finishes it.
    pub fn trace_callee(self, variant: &'static str) {
        let frame = crate::engine::identity::layout::frame::in_frame(|| {
            let cx = SagaContext::new("layout");
            let mut answers = Answers::default();
            let mut step = std::pin::pin!(opaque(R::step(FnState::Trace, &mut answers, &cx)));
            let mut poll_cx = std::task::Context::from_waker(std::task::Waker::noop());
            let _ = step.as_mut().poll(&mut poll_cx);
        });
        let mut frame = frame;
        frame.build_tag = R::build_tag();
        crate::engine::identity::layout::frame::record_callee(variant, frame);
    }

    /// A local of the caller, read back.
    pub fn restore<K: Restore>(self, saved: K) -> K::Local {
        saved.restored()
    }

    /// A local of the caller that may hold borrows of `roots`, read back among them (see
    /// `local::restore_among`).
    pub fn restore_among<'r, K: RestoreAmong<'r>>(
        self,
        saved: K,
        roots: &[Root<'r>],
        local: &str,
    ) -> K::Local {
        saved.restored_among(roots, local)
    }

    /// The call's result type, in the body kept beside a failed expansion (never run):
    /// IDEs see the right type, and rustc adds no errors of its own to the macro's.
    pub fn placeholder<A: SagaFn<Resumed = R, Output = R::Output>>(
        self,
        _call: SagaCall<A>,
    ) -> R::Output {
        unreachable!("the placeholder of a saga that did not compile")
    }
}

impl<O> FutureKind<O> {
    /// Awaits the future.
    pub async fn drive<F: IntoFuture<Output = O>>(
        self,
        future: F,
        _answers: &mut impl BorrowMut<Answers>,
        _cx: &SagaContext,
    ) -> FnStep<O> {
        FnStep::Done(future.await)
    }

    /// Never reached: an ordinary future never suspends, so there is no state to resume.
    pub async fn resume(
        self,
        _state: Vec<u8>,
        _answers: &mut impl BorrowMut<Answers>,
        _cx: &SagaContext,
    ) -> FnStep<O> {
        FnStep::Failed("the saga's state could not be read")
    }

    /// An ordinary future never suspends: the caller's variant `variant` is never sealed.
    pub fn trace_callee(self, variant: &'static str) {
        crate::engine::identity::layout::frame::record_unreachable(variant);
    }

    /// Never reached: nothing is saved at an ordinary future.
    pub fn restore<T>(self, _saved: Slot<Unreachable<T>>) -> T {
        unreachable!("an ordinary future never suspends a saga")
    }

    /// Never reached: nothing is saved at an ordinary future.
    pub fn restore_among<T>(
        self,
        _saved: Slot<Unreachable<T>>,
        _roots: &[Root<'_>],
        _local: &str,
    ) -> T {
        unreachable!("an ordinary future never suspends a saga")
    }

    /// See [`SagaFnKind::placeholder`].
    pub fn placeholder<F: IntoFuture<Output = O>>(self, _future: F) -> O {
        unreachable!("the placeholder of a saga that did not compile")
    }
}

/// The marker of a call's kind in the saved state. Costs no bytes.
pub fn kind_marker<K>(_kind: &K) -> PhantomData<fn() -> K> {
    PhantomData
}

/// The kind a marker stands for.
pub fn kind_of<K: Default>(_marker: PhantomData<fn() -> K>) -> K {
    K::default()
}

/// What an ordinary future's call site would save: nothing. It serializes to nothing and
/// never deserializes, since such a state is never made.
pub struct Unreachable<T>(PhantomData<fn() -> T>);

impl<T> Serialize for Unreachable<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_unit()
    }
}

impl<'de, T> Deserialize<'de> for Unreachable<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Only a layout trace reads one, to mark its variant as never sealed.
        struct Marked;
        impl serde::de::Visitor<'_> for Marked {
            type Value = ();
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("nothing: no state is saved where an ordinary future is awaited")
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
                if crate::engine::identity::layout::frame::tracing() {
                    Ok(())
                } else {
                    Err(E::custom(
                        "no state is saved where an ordinary future is awaited",
                    ))
                }
            }
        }
        deserializer.deserialize_unit_struct(
            crate::engine::identity::layout::profile::UNREACHABLE,
            Marked,
        )?;
        Ok(Unreachable(PhantomData))
    }
}
