//! The engine: the [`SagaTool`] contract and the one-transition-per-request runner.
//!
//! A request arrives with the tool's arguments and, after the first round, the sealed
//! token and the client's answers. The engine opens the token, checks the answers against
//! what was asked (asking again for anything missing or unusable), runs the tool's step
//! once, and seals what the step leaves into a new token. Nothing is kept between
//! requests.

pub(crate) mod asks;
pub(crate) mod caller;
pub(crate) mod contract;
pub(crate) mod expand;
pub(crate) mod forms;
mod identity;
mod kinds;
mod round;
pub(crate) mod runner;

// Public as `saga_runtime::model`; the crate's own files name it by its folder.
pub use caller::model;
// Public as `saga_runtime::testing::KeyedRound`.
pub use round::collect::ModelAnswers;
#[doc(hidden)]
pub use round::keyed::KeyedRound;

pub use asks::join_all::{JoinAll, join_all};
pub use asks::outcome::{ElicitOutcome, Elicited};
pub use asks::outside::AwaitedOutsideASaga;
// Named in the errors about saved locals: rustc shows this path, not `__private`'s.
pub use asks::prelude::*;
pub use caller::context::SagaContext;
#[cfg(feature = "http")]
pub(crate) use caller::context::StatelessMeta;
pub(crate) use caller::context::{Notices, ProgressSink, RequestHead};
pub use caller::era::Era;
pub use caller::error::{InspectError, SagaError};
pub(crate) use caller::error::{invalid_state, unopened};
pub use caller::state_size::StateSize;
pub use caller::tool_use::MAX_TOOL_USES;
pub use contract::diagram::{DIAGRAM_META_KEY, diagram_of, minimal_diagram};
pub(crate) use contract::diagram::{drop_states, identifier_chars};
pub use contract::output::{Contents, Json, Prompt, PromptOutput, ResourceOutput, ToolOutput};
pub use contract::tool::{
    SagaPrompt, SagaResource, SagaTool, Step, TaskSupport, invalid_arguments, parse_arguments,
};
pub use expand::local::{ASuspension, SavedLocal, SavedLoopItem};
pub use kinds::sample::ask::DEFAULT_MAX_TOKENS;
// Named in the errors about a helper awaited outside a saga: rustc shows these paths.
pub use expand::saga_fn::{HelperAwaitedOutsideASaga, SagaCall, SagaFn};
pub use forms::elicit::{Elicit, FormError};
pub use forms::elicit_field::{ElicitEnum, ElicitField};
pub(crate) use identity::fnv::FnvBuild;
pub use identity::layout::LayoutError;
pub(crate) use identity::points::Points;
pub use identity::points::StateLayout;

pub use kinds::kind::StepFailure;
pub use round::answers::Answers;
pub use round::requests::{Checkpoint, Request, checkpoint};
pub use runner::transition::{Call, MAX_REPLAYED_CHECKPOINTS};

/// What saga's own tests and benches reach beyond the documented API, as
/// [`crate::__support`]: not part of the API, and free to change in any release.
#[doc(hidden)]
pub mod support {
    pub use super::forms::elicit::{as_integer, check_content};
    pub use super::identity::points::{Point, PointRefusal, Points};
    pub use super::runner::unwind::PANIC_MESSAGE;
}
