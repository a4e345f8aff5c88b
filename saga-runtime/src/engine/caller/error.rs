//! Errors: what a suspension point gives back to the tool ([`SagaError`]), and the
//! protocol errors the engine answers a request with. Every layer builds its refusals
//! here, so that one refused token reads the same in the log and on the wire whichever
//! path refused it.

use rmcp::ErrorData;
use serde::{Deserialize, Serialize};

use crate::log::Escaped;
use crate::metrics::AsRefusal;
use crate::state::INVALID_STATE_MESSAGE;

/// Why a suspension point did not give the tool its answer.
///
/// Serializable, so a saga may keep one in a local across a later suspension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[non_exhaustive]
pub enum SagaError {
    /// The user declined the elicitation.
    #[error("the user declined the request")]
    Declined,
    /// The user dismissed the elicitation without choosing.
    #[error("the user cancelled the request")]
    Cancelled,
    /// The client reported that it could not perform the step.
    #[error("the client could not perform the step ({code}): {message}")]
    StepFailed {
        /// The client's error code.
        code: i64,
        /// The client's message.
        message: String,
    },
    /// The server's model ([`crate::model`]) gave no answer to a `sample()` it took: it
    /// timed out, its provider failed, or a bound of
    /// [`SamplingLimits`](crate::model::SamplingLimits) refused it. The client had no part
    /// in it.
    #[error("the server's model could not answer: {0}")]
    ModelFailed(String),
    /// The client's answer was well-formed but unusable, e.g. a sampling result with no
    /// text where the tool asked for text.
    #[error("unusable answer: {0}")]
    InvalidAnswer(String),
    /// A failure raised by the tool itself.
    #[error("{0}")]
    Tool(String),
    /// The user's answer to a form does not fit the form (a required field missing, a
    /// value out of its bounds). The runtime checks answers to the forms a token keeps,
    /// and asks again before the tool runs; a hand-written tool that states its forms
    /// again ([`Step::suspend_restatable`](crate::engine::Step::suspend_restatable)) gets this
    /// error when it reads such an answer, and answers it with
    /// [`Step::AskAgain`](crate::engine::Step::AskAgain), as MRTR asks.
    #[error("the answer does not fit the form: {0}")]
    DoesNotFit(String),
    /// A model's input to a tool offered by a sample ([`ToolUse::input`]) does not fit
    /// the tool's arguments: the model's words are not trusted. A loop may answer it as an
    /// error result ([`ToolUse::error`]) and let the model try again.
    ///
    /// [`ToolUse::input`]: crate::engine::ToolUse::input
    /// [`ToolUse::error`]: crate::engine::ToolUse::error
    #[error("the model's input to the tool `{tool}` does not fit its arguments: {reason}")]
    ToolInput {
        /// The tool's name, as the model wrote it (control characters escaped).
        tool: String,
        /// Where in the input and what does not fit, as serde says it: `price: invalid
        /// type: string "forty-nine", expected u64`, `items[2].sku: …`, or `missing
        /// field `query``.
        reason: String,
    },
}

impl SagaError {
    /// A tool-defined failure with a message for the user.
    ///
    /// ```
    /// use saga_runtime::prelude::*;
    /// let err = SagaError::msg("nothing to deploy");
    /// assert_eq!(err.to_string(), "nothing to deploy");
    /// ```
    pub fn msg(message: impl std::fmt::Display) -> Self {
        Self::Tool(message.to_string())
    }
}

/// Why a request failed inside the engine: typed while the engine runs, a JSON-RPC error
/// ([`ErrorData`]) once, where the engine answers the server. Each refusal is logged (and
/// counted) where it is made; this carries only what the client is told.
#[derive(Debug)]
pub(crate) enum Failure {
    /// `-32602`: the request is refused (its arguments, its answers, its token).
    InvalidParams(std::borrow::Cow<'static, str>),
    /// `-32603`: the tool broke the saga contract, or the runtime could not do its part.
    Internal(std::borrow::Cow<'static, str>),
    /// `-32603` that the same request, sent again later, may not meet (a store that is
    /// full, unavailable, or whose quota is spent now): its `data` says it may be sent
    /// again, and a claim of its token is given back rather than spent, so that the retry
    /// runs the round (see [`is_retryable`]).
    Unavailable(std::borrow::Cow<'static, str>),
    /// The client lacks a capability this round needs (MCP's missing-capability error).
    MissingCapability(Box<rmcp::model::ClientCapabilities>),
    /// An error the tool's own code gave (`SagaTool::start`), passed on as it is.
    Tool(Box<ErrorData>),
}

impl From<Failure> for ErrorData {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::InvalidParams(message) => ErrorData::invalid_params(message, None),
            Failure::Internal(message) => ErrorData::internal_error(message, None),
            Failure::Unavailable(message) => ErrorData::internal_error(message, Some(retryable())),
            Failure::MissingCapability(required) => {
                ErrorData::missing_required_client_capability(*required)
            }
            Failure::Tool(error) => *error,
        }
    }
}

impl From<ErrorData> for Failure {
    fn from(error: ErrorData) -> Self {
        Failure::Tool(Box::new(error))
    }
}

/// What a refusal the same request may not meet later says in its `data`.
pub(crate) fn retryable() -> serde_json::Value {
    serde_json::json!({"retryable": true, "retryAfterMs": 1000})
}

/// Whether `error` says the same request may be sent again (`data.retryable`): such an
/// answer is not recorded as the request's outcome, and its claim is given back.
pub(crate) fn is_retryable(error: &ErrorData) -> bool {
    error
        .data
        .as_ref()
        .and_then(|data| data.get("retryable"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// The error every refused token gets: `-32602` with one fixed message, whatever the
/// reason, so that a client learns nothing by probing. The reason goes to the log.
pub(crate) fn invalid_state(tool: &str, reason: &dyn AsRefusal) -> Failure {
    let refusal = reason.refusal();
    crate::metrics::refused(&refusal);
    tracing::warn!(
        tool = %Escaped(tool),
        refusal = refusal.as_str(),
        reason = %Escaped(&reason.to_string()),
        "refused requestState"
    );
    Failure::InvalidParams(INVALID_STATE_MESSAGE.into())
}

/// A token that did not open, as the client is told: a refusal ([`invalid_state`]) for
/// anything the token itself is to blame for; a kept state the store no longer holds
/// said plainly (nothing about it is secret: the reference opened); the store failing to
/// read or keep a state is the server's, and may be retried.
pub(crate) fn unopened(tool: &str, error: &crate::state::OpenError) -> Failure {
    use crate::state::OpenError;
    match error {
        OpenError::Lost => {
            crate::metrics::refused(&crate::metrics::Refusal::Other("lost".into()));
            tracing::warn!(tool = %Escaped(tool), "a kept state is no longer in the state store");
            Failure::InvalidParams(
                "the state this requestState refers to is no longer kept by the server (it \
                 expired, or the server's state store lost it); start the call again"
                    .into(),
            )
        }
        OpenError::StoreUnavailable(reason) => {
            tracing::error!(tool = %Escaped(tool), reason = %Escaped(reason), "the state store cannot be read");
            Failure::Internal("the server's state store is unavailable; retry later".into())
        }
        OpenError::NotKept(reason) => kept_failure(tool, reason),
        other => invalid_state(tool, other),
    }
}

/// A state past the inline bound the store would not keep: the round's answer is not
/// handed out (the token the client holds still opens, unless tokens are single use).
pub(crate) fn kept_failure(tool: &str, error: &crate::state::StoreError) -> Failure {
    tracing::warn!(tool = %Escaped(tool), %error, "a saga state could not be kept");
    match error {
        crate::state::StoreError::Quota(bound) => Failure::Unavailable(
            format!(
                "the server could not keep this call's state: {bound}; send the same \
                 request again later"
            )
            .into(),
        ),
        _ => Failure::Unavailable(
            "the server could not keep this call's state (its state store is full or \
             unavailable); send the same request again later"
                .into(),
        ),
    }
}

/// A tool that broke the saga contract (a request it cannot make, a round it cannot ask
/// again): a bug in the tool, not in the request. The reason goes to the log; the client
/// learns only that the tool failed.
pub(crate) fn tool_bug(tool: &str, reason: &str) -> Failure {
    tracing::error!(tool = %Escaped(tool), reason, "the tool broke the saga contract");
    Failure::Internal(format!("tool {tool} broke the saga contract").into())
}

/// Why [`SagaTools::inspect`](crate::serve::SagaTools::inspect) could not show a token's state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InspectError {
    /// No tool of this name.
    #[error("no tool named {0:?}")]
    UnknownTool(String),
    /// The token does not open for this request (wrong key, binding, expiry or build).
    #[error("the token does not open: {0}")]
    Refused(crate::state::OpenError),
    /// It opened, but the state does not decode into the tool's types.
    #[error("the state does not decode: {0}")]
    Undecodable(String),
    /// It stopped at a suspension point no build of the tool here has.
    #[error("no build of the tool here resumes it: {0}")]
    OtherBuild(crate::engine::identity::points::PointRefusal),
}
