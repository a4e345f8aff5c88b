//! Reading a question's answer as what the user chose: [`Elicited`], made by
//! [`ElicitForm::outcome`] and [`ElicitUrl::outcome`].
//!
//! With `elicit(..).await?` a decline or a cancel is an error, and `?` ends the whole call
//! with it; that suits a question the tool cannot do without. A tool that goes on when the
//! user says no asks for the outcome instead, and matches on it.

use serde::{Deserialize, Serialize};

use crate::engine::asks::outside::AwaitedOutsideASaga;
use crate::engine::caller::error::SagaError;
use crate::engine::forms::elicit::Elicit;
use crate::engine::kinds::form::ask::ElicitForm;
use crate::engine::kinds::url::ask::ElicitUrl;
use crate::engine::round::answers::Answers;
use crate::engine::round::requests::{Request, Suspension};

// Awaiting this request outside a saga is one error that says what to write
// (`asks/outside.rs`).
crate::engine::asks::outside::awaited_outside! {
    AwaitedOutsideASaga:
    [T: Elicit] ElicitOutcome<ElicitForm<T>> => <ElicitOutcome<ElicitForm<T>> as Suspension>::Output;
    [] ElicitOutcome<ElicitUrl> => <ElicitOutcome<ElicitUrl> as Suspension>::Output;
}

/// What the user did with a question: the three actions of an MCP elicitation result.
///
/// ```
/// use saga_runtime::prelude::*;
///
/// #[saga_tool]
/// async fn greet(name: String) -> Result<String, SagaError> {
///     Ok(match elicit::<bool>(format!("Greet {name}?")).outcome().await? {
///         Elicited::Accepted(true) => format!("Hello, {name}!"),
///         Elicited::Accepted(false) | Elicited::Declined => "Not greeted.".to_owned(),
///         Elicited::Cancelled => "Cancelled.".to_owned(),
///     })
/// }
/// ```
///
/// The `Err` that remains is for what no user chose: an answer that cannot be read, or a
/// client-side failure ([`SagaError::StepFailed`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Elicited<T> {
    /// `accept`, with the content read as a `T` (a URL elicitation's is `()`).
    Accepted(T),
    /// `decline`: the user said no.
    Declined,
    /// `cancel`: the user dismissed the question without choosing.
    Cancelled,
}

impl<T> Elicited<T> {
    /// The accepted answer, or `None` for a decline or a cancel.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicited::Accepted(value) => Some(value),
            Elicited::Declined | Elicited::Cancelled => None,
        }
    }

    /// Whether the user accepted.
    pub fn is_accepted(&self) -> bool {
        matches!(self, Elicited::Accepted(_))
    }

    /// The accepted answer mapped by `f`; a decline or a cancel stays as it is.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Elicited<U> {
        match self {
            Elicited::Accepted(value) => Elicited::Accepted(f(value)),
            Elicited::Declined => Elicited::Declined,
            Elicited::Cancelled => Elicited::Cancelled,
        }
    }

    /// The outcome of an answer read the `?` way: a decline and a cancel are outcomes,
    /// every other error stays one.
    pub fn from_answer(answer: Result<T, SagaError>) -> Result<Self, SagaError> {
        match answer {
            Ok(value) => Ok(Elicited::Accepted(value)),
            Err(SagaError::Declined) => Ok(Elicited::Declined),
            Err(SagaError::Cancelled) => Ok(Elicited::Cancelled),
            Err(error) => Err(error),
        }
    }
}

/// A question whose `.await` gives its [`Elicited`] outcome instead of failing on a
/// decline or a cancel; see [`ElicitForm::outcome`].
#[must_use = "a request does nothing until the saga awaits it"]
#[derive(Debug)]
pub struct ElicitOutcome<R>(R);

impl<T> ElicitForm<T> {
    /// Answers with what the user chose: `.await` gives
    /// `Result<Elicited<T>, SagaError>`, where `elicit(..).await` gives
    /// `Result<T, SagaError>` and fails on a decline or a cancel. The question sent is the
    /// same.
    pub fn outcome(self) -> ElicitOutcome<Self> {
        ElicitOutcome(self)
    }
}

impl ElicitUrl {
    /// Answers with what the user chose (`Elicited<()>`); see [`ElicitForm::outcome`].
    pub fn outcome(self) -> ElicitOutcome<Self> {
        ElicitOutcome(self)
    }
}

impl<T> ElicitOutcome<ElicitForm<T>> {
    /// Pins the `inputRequests` key; see [`ElicitForm::key`].
    pub fn key(self, key: impl Into<String>) -> Self {
        ElicitOutcome(self.0.key(key))
    }
}

impl ElicitOutcome<ElicitUrl> {
    /// Pins the `inputRequests` key; see [`ElicitUrl::key`].
    pub fn key(self, key: impl Into<String>) -> Self {
        ElicitOutcome(self.0.key(key))
    }
}

impl<R: Into<Request>> From<ElicitOutcome<R>> for Request {
    fn from(outcome: ElicitOutcome<R>) -> Self {
        outcome.0.into()
    }
}

impl<T: Elicit> Suspension for ElicitOutcome<ElicitForm<T>> {
    type Output = Result<Elicited<T>, SagaError>;
    fn requests(self, round: &mut Vec<Request>) {
        round.push(self.0.into());
    }
    fn take(answers: &mut Answers, index: usize) -> Self::Output {
        Elicited::from_answer(<ElicitForm<T> as Suspension>::take(answers, index))
    }
    fn fits(answers: &Answers, index: usize) -> bool {
        <ElicitForm<T> as Suspension>::fits(answers, index)
    }
}

impl Suspension for ElicitOutcome<ElicitUrl> {
    type Output = Result<Elicited<()>, SagaError>;
    fn requests(self, round: &mut Vec<Request>) {
        round.push(self.0.into());
    }
    fn take(answers: &mut Answers, index: usize) -> Self::Output {
        Elicited::from_answer(<ElicitUrl as Suspension>::take(answers, index))
    }
}

impl Answers {
    /// The answer to an [`elicit`](crate::engine::elicit) at `index` as what the user chose: a decline or a
    /// cancel is an [`Elicited`], not an error (see
    /// [`ElicitForm::outcome`]).
    pub fn elicit_outcome<T: Elicit>(&mut self, index: usize) -> Result<Elicited<T>, SagaError> {
        Elicited::from_answer(self.elicit(index))
    }
}
