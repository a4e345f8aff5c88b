//! The errors a saga's suspension points give back to the tool.

use serde::{Deserialize, Serialize};

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
    /// again ([`Step::suspend_restatable`](super::Step::suspend_restatable)) gets this
    /// error when it reads such an answer, and answers it with
    /// [`Step::AskAgain`](super::Step::AskAgain), as MRTR asks.
    #[error("the answer does not fit the form: {0}")]
    DoesNotFit(String),
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
