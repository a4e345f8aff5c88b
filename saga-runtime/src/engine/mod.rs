//! The engine: the [`SagaTool`] contract and the one-transition-per-request runner.
//!
//! A request arrives with the tool's arguments and, after the first round, the sealed
//! token and the client's answers. The engine opens the token, checks the answers against
//! what was asked (asking again for anything missing or unusable), runs the tool's step
//! once, and seals what the step leaves into a new token. Nothing is kept between
//! requests.

mod answers;
mod collect;
mod context;
pub(crate) mod diagram;
mod digest;
mod elicit;
pub(crate) mod elicit_field;
mod era;
mod error;
pub(crate) mod expand_support;
pub(crate) mod family;
mod fnv;
mod form;
mod join_all;
pub(crate) mod kinds;
pub(crate) mod layout;
mod local;
mod macro_state;
pub mod model;
mod outcome;
mod output;
mod pending;
#[cfg(feature = "plain-run")]
pub(crate) mod plain;
mod points;
pub(crate) mod pool;
mod requests;
mod round;
mod saga_fn;
pub(crate) mod slot;
mod tool;
mod transition;
mod unwind;
mod variant;

pub use answers::Answers;
pub use context::SagaContext;
pub(crate) use context::{Head, Notices, ProgressSink, Stateless};
pub use diagram::{DIAGRAM_META_KEY, diagram_of, minimal_diagram};
pub(crate) use diagram::{drop_states, identifier_chars};
pub use elicit::{Elicit, as_integer, check_content};
pub use elicit_field::{ElicitEnum, ElicitField};
pub use era::Era;
pub use error::{InspectError, SagaError};
// The engine driven without a server, for saga's own tests, benches and fuzzing, behind
// the `internals` feature: not the contract (a server, or an rmcp server of your own,
// calls tools through `SagaTools::call`).
#[cfg(feature = "internals")]
pub use error::invalid_state;
#[cfg(not(feature = "internals"))]
pub(crate) use error::invalid_state;
pub use join_all::{JoinAll, join_all};
pub use kinds::prelude::*;
pub use kinds::{DEFAULT_MAX_TOKENS, StepFailure};
pub use layout::LayoutError;
pub use outcome::{Elicited, Outcome};
pub use output::{Contents, Json, Prompt, PromptOutput, ResourceOutput, ToolOutput};
pub use points::{Point, PointRefusal, Points, StateLayout};
pub(crate) use points::{point_key, tagged_point_key};
pub use requests::{Checkpoint, Request, checkpoint};
pub use tool::{
    SagaPrompt, SagaResource, SagaTool, Step, TaskSupport, invalid_arguments, parse_arguments,
};
pub use transition::MAX_REPLAYED_CHECKPOINTS;
#[cfg(feature = "internals")]
pub use transition::{Call, transition};
#[cfg(not(feature = "internals"))]
pub(crate) use transition::{Call, transition};
pub use unwind::PANIC_MESSAGE;
