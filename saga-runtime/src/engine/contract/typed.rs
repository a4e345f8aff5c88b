//! The part of a transition that has the tool's types, behind an object: its state read,
//! started, stepped once, written and shown. Everything else a transition does (open and
//! spend the token, read the answers, seal the next round) works on bytes and is compiled
//! once for every tool, not once per tool: a server of fifty tools pays for fifty states
//! and steps, not fifty copies of the runtime (`scripts/bench-compile.sh`).

use std::any::Any;
use std::future::Future;
use std::pin::Pin;

use futures::FutureExt;

use rmcp::ErrorData;
use rmcp::model::JsonObject;

use crate::engine::caller::context::SagaContext;
use crate::engine::caller::error::SagaError;
use crate::engine::contract::opaque::opaque;
use crate::engine::contract::tool::{SagaTool, Step};
use crate::engine::identity::variant::variant_name;
use crate::engine::round::answers::Answers;
use crate::engine::round::requests::Request;

/// A tool's state, its type erased (a box of `Option<T::State>`). Only [`Typed`]'s own
/// impl makes one, and reads it back as the same tool's state.
pub(crate) type State = Box<dyn Any + Send>;

/// A step of a tool, its state type erased.
pub(crate) type StepFuture<'a> = Pin<Box<dyn Future<Output = Step<State>> + Send + 'a>>;

/// What a transition asks of a tool's types.
pub(crate) trait Typed: Send + Sync {
    /// [`SagaTool::start`].
    fn start(&self, arguments: JsonObject) -> Result<State, ErrorData>;

    /// [`SagaTool::step`], once.
    fn step<'a>(&'a self, state: State, answers: Answers, cx: &'a SagaContext) -> StepFuture<'a>;

    /// [`SagaTool::restate`]; `None` as well for a state that is not this tool's.
    fn restate(&self, state: State, cx: &SagaContext) -> Option<Vec<Request>>;

    /// The state postcard reads from the front of `bytes`, and how many bytes are left.
    fn decode(&self, bytes: &[u8]) -> Result<(State, usize), postcard::Error>;

    /// `state` written with postcard after `into`.
    fn encode(&self, state: &State, into: Vec<u8>) -> Result<Vec<u8>, String>;

    /// [`SagaTool::state_json`].
    fn state_json(&self, state: State) -> Result<serde_json::Value, String>;

    /// The name of the state's variant, for the log (see `variant_name`).
    fn variant_name(&self, state: &State) -> String;
}

/// Why a state did not read back as the tool's: a state made by another tool. Never
/// seen, since each tool reads only what it made, but a bug to report, not a panic.
const NOT_ITS_STATE: &str = "a state of another tool (a bug in saga)";

/// The step's outcome for a state that is not this tool's (see [`NOT_ITS_STATE`]).
fn not_its_state<S>() -> Step<S> {
    tracing::error!("{NOT_ITS_STATE}");
    Step::done(Err::<String, _>(SagaError::msg(NOT_ITS_STATE)))
}

/// The step's next state put back in the box its state came in (see below).
fn boxed_again<S: Send + 'static>(step: Step<S>, mut slot: Box<Option<S>>) -> Step<State> {
    match step {
        Step::Suspend { state, requests } => {
            *slot = Some(state);
            Step::Suspend {
                state: slot as State,
                requests,
            }
        }
        Step::Checkpoint(state) => {
            *slot = Some(state);
            Step::Checkpoint(slot as State)
        }
        Step::AskAgain(requests) => Step::AskAgain(requests),
        Step::Done(result) => Step::Done(result),
    }
}

// The state lives in a box of `Option<T::State>`: a step takes it out and puts the next
// state back in the same box, so a round costs one allocation for the state, not two.

impl<T: SagaTool> Typed for T {
    fn start(&self, arguments: JsonObject) -> Result<State, ErrorData> {
        SagaTool::start(self, arguments).map(|state| Box::new(Some(state)) as State)
    }

    fn step<'a>(&'a self, state: State, answers: Answers, cx: &'a SagaContext) -> StepFuture<'a> {
        let Ok(mut slot) = state.downcast::<Option<T::State>>() else {
            return Box::pin(std::future::ready(not_its_state::<State>()));
        };
        let Some(state) = slot.take() else {
            return Box::pin(std::future::ready(not_its_state::<State>()));
        };
        // Combinators, not an `async` block: one more state machine per tool, with its
        // drop glue, is what this saves (issue 43). `lazy`: the step is made at the first
        // poll, as the block made it, so that a `step` that panics before it returns its
        // future panics where the transition catches it.
        Box::pin(
            futures::future::lazy(move |_| opaque(SagaTool::step(self, state, answers, cx)))
                .flatten()
                .map(move |step| boxed_again(step, slot)),
        )
    }

    fn restate(&self, state: State, cx: &SagaContext) -> Option<Vec<Request>> {
        let state = state.downcast::<Option<T::State>>().ok()?.take()?;
        SagaTool::restate(self, state, cx)
    }

    fn decode(&self, bytes: &[u8]) -> Result<(State, usize), postcard::Error> {
        let (state, rest) = postcard::take_from_bytes::<T::State>(bytes)?;
        Ok((Box::new(Some(state)), rest.len()))
    }

    fn encode(&self, state: &State, into: Vec<u8>) -> Result<Vec<u8>, String> {
        let state = state
            .downcast_ref::<Option<T::State>>()
            .and_then(Option::as_ref)
            .ok_or(NOT_ITS_STATE)?;
        postcard::to_extend(state, into).map_err(|error| error.to_string())
    }

    fn state_json(&self, state: State) -> Result<serde_json::Value, String> {
        let state = state
            .downcast::<Option<T::State>>()
            .ok()
            .and_then(|mut slot| slot.take())
            .ok_or(NOT_ITS_STATE)?;
        SagaTool::state_json(self, state)
    }

    fn variant_name(&self, state: &State) -> String {
        match state
            .downcast_ref::<Option<T::State>>()
            .and_then(Option::as_ref)
        {
            Some(state) => variant_name(state, self.state_names()),
            None => "?".to_owned(),
        }
    }
}
