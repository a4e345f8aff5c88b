//! A `#[saga_tool]`'s state as the runtime handles it: encoded at each suspension,
//! decoded at each resume, and read without running the tool's code (rendered as JSON
//! for `saga inspect`, or traced for the state layout a deploy compares). Part of what
//! the macro's expansion calls, apart from the requests and loops in `expand_support`.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::JsonObject;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::engine::caller::context::SagaContext;
use crate::engine::caller::error::SagaError;
use crate::engine::contract::tool::Step;
use crate::engine::contract::typed::{State as TypedState, Typed};
use crate::engine::expand::saga_fn::Exit;
use crate::engine::identity::points::{tag, untag};
use crate::engine::identity::slot;
use crate::engine::identity::state_enum::{
    StateEnum, read_state, render_state, trace_state, write_state,
};
use crate::engine::round::answers::Answers;
use crate::engine::round::requests::Request;

/// The state of a macro-generated saga as the runtime sees it: the arguments of the first
/// request, or the saga's own state enum, postcard-encoded. The enum's field types are
/// inferred by rustc inside the tool's step, so they cannot be named here; only bytes
/// cross this boundary.
///
/// For the same reason the runtime enters the step to learn what only its types know:
/// the layout of the state ([`MacroState::Trace`], for [`macro_layout`]), the sealed
/// state as JSON ([`MacroState::Inspect`], for [`macro_state_json`]) and a round's
/// requests stated again ([`MacroState::Restate`], for [`macro_restate`]). Each is a mode
/// the step is handed explicitly, which its arm of the generated `match` serves; none is
/// ever sealed.
#[derive(Debug)]
pub enum MacroState<A> {
    /// The first round: the call's arguments.
    Start(A),
    /// A later round: the encoded state enum.
    Resume(Vec<u8>),
    /// Not a round: the encoded state enum, whose suspension states its requests again
    /// ([`Step::AskAgain`]) and ends; see [`SagaTool::restate`].
    ///
    /// [`SagaTool::restate`]: crate::engine::SagaTool::restate
    Restate(Vec<u8>),
    /// Not a round: record the state enum's layout in the running trace, and end.
    Trace,
    /// Not a round: render these encoded state bytes as JSON, and end with
    /// [`MacroState::Inspected`].
    Inspect(Vec<u8>),
    /// What an [`MacroState::Inspect`] step ends with: the state as JSON, or why not
    /// (boxed: every state moves through the step, and this one is rare and large).
    Inspected(Box<Result<serde_json::Value, String>>),
}

impl<A> Serialize for MacroState<A> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MacroState::Resume(bytes) => serde_bytes_like(bytes, serializer),
            // A saga suspends only after it has started, so the runtime never seals this.
            MacroState::Start(_) => Err(serde::ser::Error::custom(
                "a saga's arguments are never sealed",
            )),
            // Modes of a step, and an inspection's answer: never a state.
            MacroState::Trace
            | MacroState::Restate(_)
            | MacroState::Inspect(_)
            | MacroState::Inspected(_) => {
                Err(serde::ser::Error::custom("a step's mode is never sealed"))
            }
        }
    }
}

fn serde_bytes_like<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_bytes(bytes)
}

impl<'de, A> Deserialize<'de> for MacroState<A> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Bytes;
        impl serde::de::Visitor<'_> for Bytes {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("the bytes of a saga state")
            }
            fn visit_bytes<E>(self, bytes: &[u8]) -> Result<Vec<u8>, E> {
                Ok(bytes.to_vec())
            }
            fn visit_byte_buf<E>(self, bytes: Vec<u8>) -> Result<Vec<u8>, E> {
                Ok(bytes)
            }
        }
        // A newtype (transparent in postcard) so that a layout trace can tell a tool that
        // traced this instead of its step: a wrapper that did not forward
        // `SagaTool::layout`.
        struct Named;
        impl<'de> serde::de::Visitor<'de> for Named {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("the bytes of a saga state")
            }
            fn visit_newtype_struct<D: Deserializer<'de>>(
                self,
                deserializer: D,
            ) -> Result<Vec<u8>, D::Error> {
                deserializer.deserialize_byte_buf(Bytes)
            }
        }
        deserializer
            .deserialize_newtype_struct(
                crate::engine::identity::layout::profile::MACRO_STATE,
                Named,
            )
            .map(MacroState::Resume)
    }
}

/// Reads the call's arguments into the tool's generated argument struct.
///
/// From the object itself, not from a `Value::Object` as [`parse_arguments`] reads them:
/// the generated struct (always one with named fields) reads an object the same way from
/// both, and a `Value` would compile its array path into every tool's struct as well.
///
/// [`parse_arguments`]: crate::engine::contract::tool::parse_arguments
pub fn start<A: DeserializeOwned>(arguments: JsonObject) -> Result<MacroState<A>, rmcp::ErrorData> {
    serde_path_to_error::deserialize(arguments)
        .map(MacroState::Start)
        .map_err(|error| {
            crate::engine::contract::tool::invalid_arguments(
                crate::engine::caller::tool_use::at_path(&error),
            )
        })
}

/// The step's `__slot`: only a type. It ties every variant to one state type, so that
/// rustc infers the enum's type parameters across the whole step. Zero-sized, with no
/// drop glue: an `Option` of the state, as it was, had its drop compiled at every exit of
/// the step, for a value that is always `None` (issue 43).
pub type StateSlot<S> = PhantomData<S>;

/// A state `slot` never holds, typed as its enum: the borrow check the macro writes
/// after the start matches the enum's variants on it, for their types only.
pub fn slot_state<S>(slot: &StateSlot<S>) -> Option<&S> {
    let _ = slot;
    None
}

/// Ends the transition at a suspension: encodes `state` and asks `requests` (none for a
/// checkpoint). `slot` fixes the state's type (see [`StateSlot`]).
pub fn suspend<S, R>(slot: &StateSlot<S>, state: S, requests: Vec<Request>) -> R
where
    S: SagaState,
    R: Exit,
{
    let _ = slot;
    match state.encode_state(R::NESTED) {
        Ok(bytes) => R::suspended(bytes, requests),
        Err(error) => unsaveable(&error),
    }
}

/// A saga's state enum, as the macro generates it: what a suspension seals.
#[diagnostic::on_unimplemented(
    message = "the saga's state cannot be saved: a local kept across one of its suspension points cannot be saved",
    label = "the locals of this saga that live across a suspension must be `Serialize` and `Deserialize`",
    note = "each local kept across a suspension is checked where it is declared, and the error there says which cannot be saved and how to keep it"
)]
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait SagaState {
    /// The state's bytes (see `encode`).
    fn encode_state(&self, nested: bool) -> Result<Vec<u8>, String>;
}

// Not recommended: a state that cannot be saved is reported once, as `SagaState`, not once
// per serde trait a local lacks. In practice it is never reported: each saved local is
// checked at its declaration, and one that fails leaves the state's type unknown (see
// `expand::local`), which rustc does not report again.
#[diagnostic::do_not_recommend]
impl<S: StateEnum> SagaState for S {
    fn encode_state(&self, nested: bool) -> Result<Vec<u8>, String> {
        encode(self, nested)
    }
}

/// The state's bytes: postcard, each saved local in its slot's encoding; or, if a
/// postcard slot's value does not read back as itself (a `skip_serializing_if` no sample
/// showed), the tagged form, where each local says its own encoding (see [`crate::engine::identity::slot`]).
fn encode<S: StateEnum>(state: &S, nested: bool) -> Result<Vec<u8>, String> {
    // Only the write is `S`'s: the rest is compiled once, not once per state enum.
    encode_with(S::tagged(), std::any::type_name::<S>(), nested, &mut || {
        write_state(state)
    })
}

/// [`encode`] with `write` writing the state (as slots are asked, in the tagged form or
/// not), `tagged` its enum's flag.
fn encode_with(
    tagged: &AtomicBool,
    type_name: &str,
    nested: bool,
    write: &mut dyn FnMut() -> Result<Vec<u8>, postcard::Error>,
) -> Result<Vec<u8>, String> {
    // A helper's state sealed tagged makes its caller's tagged too: the caller's point is
    // then its tagged twin, which a build that reads no tagged state refuses before
    // decoding, instead of failing on the helper's bytes.
    let helper_tagged = slot::take_helper_tagged();
    // A reason left by a failure nobody read is not this seal's.
    let _ = slot::take_unreadable();
    // Each attempt's values are counted, and the round's count has those of the one that
    // is sealed (`slot::values`).
    let mut write = || slot::values::counted_write(&mut *write);
    if !helper_tagged && !tagged.load(Ordering::Relaxed) {
        if let Some(bytes) = slot::write_untagged(&mut write)? {
            return Ok(bytes);
        }
        sealed_tagged_from_now_on(type_name);
        tagged.store(true, Ordering::Relaxed);
    }
    let bytes = slot::with_tagging(true, write).map_err(|error| error.to_string())?;
    if nested {
        slot::note_helper_tagged();
    }
    tag(&bytes).ok_or_else(|| "a state without a variant index".to_owned())
}

/// Logs that states of `state_type` are sealed tagged from now on. Apart from [`encode`]
/// (a log call is large) so that it is compiled once, not once per tool.
fn sealed_tagged_from_now_on(state_type: &str) {
    tracing::info!(
        r#type = state_type,
        "a saved local of a saga does not read back with postcard; its state is sealed \
         in the tagged form from now on"
    );
}

impl<A> Exit for Step<MacroState<A>> {
    fn suspended(state: Vec<u8>, requests: Vec<Request>) -> Self {
        let state = MacroState::Resume(state);
        if requests.is_empty() {
            Step::Checkpoint(state)
        } else {
            Step::Suspend { state, requests }
        }
    }

    fn asked_again(requests: Vec<Request>) -> Self {
        Step::AskAgain(requests)
    }

    fn failed(message: &'static str) -> Self {
        Step::done(Err::<String, _>(SagaError::msg(message)))
    }

    fn inspected(rendered: Result<serde_json::Value, String>) -> Self {
        Step::Checkpoint(MacroState::Inspected(Box::new(rendered)))
    }
}

/// Ends the transition: a helper it awaited could not go on.
pub fn failed<R: Exit>(message: &'static str) -> R {
    R::failed(message)
}

/// At a suspension that keeps its requests in its token, in the restating mode: the
/// runtime asks no such round to be stated again, but a token sealed where an earlier build
/// could state it may reach this one. Ends the step before any of the tool's code runs,
/// so that [`macro_restate`] gives `None` (and the call a `-32603`).
pub fn cannot_restate<R: Exit>() -> R {
    R::failed("this suspension keeps its requests in its token, and states none again")
}

fn unsaveable<R: Exit>(error: &str) -> R {
    // Only the exit is `R`'s: the logging is compiled once, not once per tool and helper.
    R::failed(unsaveable_reason(error))
}

/// Logs why a state could not be saved; what the call's error says.
#[inline(never)]
fn unsaveable_reason(error: &str) -> &'static str {
    if let Some(reason) = slot::take_unreadable() {
        // The caller's own values made it (a `#[serde(flatten)]` map it filled with a key
        // of the struct's own fields): this round's error, said to the caller, and logged
        // below ERROR, which a client must not be able to trigger.
        tracing::info!(reason = %crate::log::Escaped(&reason), "a saga state does not read back");
        return "the tool's state could not be saved: a value it keeps across a suspension does \
             not read back (a #[serde(flatten)] map that holds a key of its struct's own \
             fields writes it twice)";
    }
    log_unsaveable(error);
    "the tool's state could not be saved"
}

fn log_unsaveable(error: &str) {
    tracing::error!(
        %error,
        "the saga's saved locals cannot be written, or do not read back as themselves, \
         as postcard or as JSON"
    );
}

/// Decodes the state enum of a later round; `slot` fixes its type.
pub fn decode<S: StateEnum>(slot: &StateSlot<S>, bytes: &[u8]) -> Result<S, postcard::Error> {
    let _ = slot;
    // Read within the bound on a state's values, before it is read whole (`slot::values`).
    slot::values::bounded_read(|| match untag(bytes) {
        Some(untagged) => slot::with_tagging(true, || read_state(&untagged)),
        None => read_state(bytes),
    })
}

/// The arm of [`MacroState::Inspect`]: the state enum `slot` is typed as, decoded from
/// `bytes` and rendered as JSON; no code of the tool runs.
pub fn inspected<S, R>(slot: &StateSlot<S>, bytes: &[u8]) -> R
where
    S: StateEnum,
    R: Exit,
{
    R::inspected(match decode(slot, bytes) {
        Ok(state) => render_state(&state),
        Err(error) => Err(format!("the state does not decode: {error}")),
    })
}

/// A `#[saga_tool]`'s state as JSON with the tool's own types: `{"Variant": {saved
/// locals}}`. The types of the saved locals are inferred by rustc inside `step`, so this
/// runs `step` in its inspection mode ([`MacroState::Inspect`]), whose arm decodes the
/// state, renders it and ends, before anything else: no code of the tool runs and no
/// request is made. The arm never waits, so one poll finishes it.
pub fn macro_state_json<T, A>(tool: &T, state: MacroState<A>) -> Result<serde_json::Value, String>
where
    T: crate::engine::contract::tool::SagaTool<State = MacroState<A>>,
{
    let MacroState::Resume(bytes) = state else {
        return Err("a saga that has not started has no saved state".into());
    };
    let rendered = match step_in_mode(
        tool,
        in_mode::<T>(MacroState::Inspect(bytes)),
        &inspecting(),
    ) {
        Some(Step::Checkpoint(state)) => match out_of_mode::<T>(state) {
            Some(MacroState::Inspected(rendered)) => Some(rendered),
            _ => None,
        },
        _ => None,
    };
    inspection(rendered)
}

/// The context an inspection steps a tool in. Apart from [`macro_state_json`], as
/// [`inspection`] is, so that each is compiled once, not once per tool.
fn inspecting() -> SagaContext {
    SagaContext::new("inspect")
}

/// What an inspection ended with. (The state's request markers, which hold nothing,
/// are not rendered: see `identity::state_enum`.)
fn inspection(
    rendered: Option<Box<Result<serde_json::Value, String>>>,
) -> Result<serde_json::Value, String> {
    match rendered {
        Some(rendered) => *rendered,
        None => Err("the tool's step has no inspection mode".into()),
    }
}

/// A `#[saga_tool]`'s round stated again from its saved state
/// ([`SagaTool::restate`](crate::engine::SagaTool::restate)): `step` runs in its
/// restating mode ([`MacroState::Restate`]), which resumes at the suspension and ends
/// there with its requests, built from the saved locals; no other code of the tool runs,
/// and nothing waits, so one poll finishes it. `None` where the suspension cannot state
/// its requests again (the token then keeps them).
pub fn macro_restate<T, A>(tool: &T, state: MacroState<A>, cx: &SagaContext) -> Option<Vec<Request>>
where
    T: crate::engine::contract::tool::SagaTool<State = MacroState<A>>,
{
    let MacroState::Resume(bytes) = state else {
        return None;
    };
    match step_in_mode(tool, in_mode::<T>(MacroState::Restate(bytes)), cx) {
        Some(Step::AskAgain(requests)) => Some(requests),
        _ => None,
    }
}

/// `tool`'s step run in `mode` (trace, inspect, restate), which never waits: where it
/// ended, after one poll, or `None` had it waited. The step is polled through its erased
/// future ([`Typed::step`]), the one a transition polls, so that its body, the biggest
/// function of a tool, is compiled once per tool rather than again for the modes
/// (issue 43); and this function, with no type of the tool's, is compiled once.
fn step_in_mode(tool: &dyn Typed, mode: TypedState, cx: &SagaContext) -> Option<Step<TypedState>> {
    let mut step = tool.step(mode, Answers::none(), cx);
    let mut poll_cx = std::task::Context::from_waker(std::task::Waker::noop());
    match step.as_mut().poll(&mut poll_cx) {
        std::task::Poll::Ready(step) => Some(step),
        std::task::Poll::Pending => None,
    }
}

/// The state a step in a mode ended with, as `T`'s; `None` for another tool's, which
/// [`Typed`] never gives back.
fn out_of_mode<T: crate::engine::contract::tool::SagaTool>(state: TypedState) -> Option<T::State> {
    state.downcast::<Option<T::State>>().ok()?.take()
}

/// A mode, as [`step_in_mode`] takes it: the state `Typed` boxes.
fn in_mode<T: crate::engine::contract::tool::SagaTool>(mode: T::State) -> TypedState {
    Box::new(Some(mode))
}

/// The resume arm's encoded state, for a later round and for the restating mode alike:
/// in that mode the suspension reads no answer, and states its requests again (see
/// [`asking_again`](super::expand_support::asking_again)).
pub fn resumed<A>(state: MacroState<A>, answers: &mut Answers) -> Vec<u8> {
    match state {
        MacroState::Resume(bytes) => bytes,
        MacroState::Restate(bytes) => {
            *answers = Answers::restating();
            bytes
        }
        // The generated step reaches here with the two variants above only.
        _ => Vec::new(),
    }
}

/// A sealed state that authenticated but does not decode: a build with the same point
/// identity but another state layout, which the identity is there to prevent.
pub fn undecodable<R: Exit>(error: &postcard::Error) -> R {
    R::failed(undecodable_reason(error))
}

/// Why the step ends at a state that does not decode: a fault, logged. A state that holds
/// more values than this server reads (sealed under a higher bound) is not: its call is
/// refused as a token this server cannot read.
fn undecodable_reason(error: &postcard::Error) -> &'static str {
    slot::values::refuse_if_exceeded();
    tracing::error!(%error, "an authenticated saga state does not decode");
    "the saga's state could not be read"
}

/// Records the layout of the state enum `slot` is typed as, in the running trace, with
/// what tells apart the variants that share a name (`site_tags`, one per variant).
pub fn record_state<S: StateEnum>(slot: &StateSlot<S>, site_tags: &[&'static str]) {
    let _ = slot;
    crate::engine::identity::layout::frame::record_traced(trace_state::<S>(), site_tags);
}

/// Ends a step that traced its layout; none of the tool's code ran.
pub fn traced<R: Exit>() -> R {
    R::failed("traced")
}

/// A `#[saga_tool]`'s state layout, point by point: the types of its saved locals are
/// inferred by rustc inside `step`, so this runs `step` in its trace mode
/// ([`MacroState::Trace`]), whose arm records the state enum and each helper's (through
/// the helper's own step, in its trace mode) and ends. No code of the tool runs and no
/// request is made; the arm never waits, so one poll finishes it.
pub fn macro_layout<T, A>(
    tool: &T,
) -> Result<
    crate::engine::identity::points::StateLayout,
    crate::engine::identity::layout::shape::LayoutError,
>
where
    T: crate::engine::contract::tool::SagaTool<State = MacroState<A>>,
{
    let frame = crate::engine::identity::layout::frame::in_frame(|| {
        let cx = SagaContext::new("layout");
        let _ = step_in_mode(tool, in_mode::<T>(MacroState::Trace), &cx);
    });
    let mut layout = crate::engine::identity::points::StateLayout::of_frame(frame)?;
    layout.state_type = std::any::type_name::<MacroState<A>>();
    layout.version = Some(tool.version());
    Ok(layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step's modes, and an inspection's answer, are never sealed: a runtime that tried
    /// would get an error, never bytes another build could read as a state.
    #[test]
    fn modes_are_never_sealed() {
        for mode in [
            MacroState::<()>::Trace,
            MacroState::Restate(vec![1, 2]),
            MacroState::Inspect(vec![1, 2]),
            MacroState::Inspected(Box::new(Ok(serde_json::json!({})))),
        ] {
            assert!(postcard::to_allocvec(&mode).is_err(), "{mode:?} was sealed");
        }
        assert!(postcard::to_allocvec(&MacroState::<()>::Resume(vec![7])).is_ok());
    }
}
