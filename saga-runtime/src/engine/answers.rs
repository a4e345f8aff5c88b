//! The client's answers to a round's requests, as the tool reads them.

use rmcp::model::{
    CreateMessageResult, ElicitResult, ElicitationAction, ListRootsResult,
    SamplingMessageContentBlock,
};
use serde::{Deserialize, Serialize};

use super::elicit::{Elicit, Misfit};
use super::error::SagaError;
use super::requests::{Form, cached_form};

/// The answers to the requests of the round that just ended, in the order the tool made
/// them. A `#[saga_tool]` reads them for you; a hand-written tool takes each by index.
#[derive(Debug, Default)]
pub struct Answers {
    items: AnswerSlots,
    /// Set when the runtime asks the tool for the requests of its last round again, to
    /// resend them: see [`Answers::asking_again`].
    again: bool,
}

/// A round's answers, each until the tool takes it: most rounds have one, which needs no
/// allocation.
pub(crate) type AnswerSlots = smallvec::SmallVec<[Option<Answer>; 1]>;

/// One answer. The runtime has checked its shape (and, for a form, its content) already.
#[derive(Debug, Clone)]
pub(crate) enum Answer {
    Elicit(ElicitResult),
    /// An answer to a form the token keeps no schema of (the tool states it again from its
    /// state): the runtime could not check its content, so it is checked against the form
    /// of the type it is read as.
    FormUnchecked(ElicitResult),
    Sample(Box<CreateMessageResult>),
    Roots(ListRootsResult),
    /// The client reported that it could not perform the step (the `tools/resumeSaga`
    /// format carries this; MRTR has no such answer).
    Failed(StepFailure),
}

/// A client's report that a step failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepFailure {
    /// The client's error code.
    pub code: i64,
    /// The client's message.
    pub message: String,
}

impl StepFailure {
    /// A failure as a client reports it. The message is the client's text and may reach
    /// the tool's result and the log, so its control characters are escaped and its length
    /// bounded.
    pub fn from_client(code: i64, message: &str) -> Self {
        Self {
            code,
            message: crate::log::sanitized(message),
        }
    }
}

impl Answers {
    /// No answers: the first round, or the round after a checkpoint.
    pub fn none() -> Self {
        Self::default()
    }

    pub(crate) fn new(items: AnswerSlots) -> Self {
        Self {
            items,
            again: false,
        }
    }

    /// No answers, and a request to state the last round's requests again.
    pub(crate) fn again() -> Self {
        Self {
            items: AnswerSlots::new(),
            again: true,
        }
    }

    /// Whether the runtime is asking the tool to state the requests of its last round
    /// again, instead of answering them: a request of that round had no answer (or a form
    /// the token keeps got an answer outside it), and the token keeps no copy of some of
    /// them. The tool answers with
    /// [`Step::AskAgain`](super::Step::AskAgain), built from its saved state exactly as
    /// the first time; `#[saga_tool]` does this for every suspension whose requests it can
    /// build again without running anything twice.
    pub fn asking_again(&self) -> bool {
        self.again
    }

    /// How many answers there are.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn take(&mut self, index: usize) -> Result<Answer, SagaError> {
        self.items
            .get_mut(index)
            .and_then(Option::take)
            .ok_or_else(|| SagaError::InvalidAnswer(format!("no answer at position {index}")))
    }

    /// The answer to an [`elicit`](super::elicit) at `index`.
    ///
    /// When the token keeps the form, the runtime has checked the answer against the form
    /// as it was sent, and asked again for a misfit, before the step. When the tool states
    /// the form again from its state
    /// ([`Step::suspend_restatable`](super::Step::suspend_restatable)), the answer is
    /// checked here against `T`'s form: accepted content outside it is
    /// [`SagaError::DoesNotFit`], which the tool answers with
    /// [`Step::AskAgain`](super::Step::AskAgain), as MRTR asks (see [`Answers::fits`] to
    /// check a round's forms before reading any).
    pub fn elicit<T: Elicit>(&mut self, index: usize) -> Result<T, SagaError> {
        self.read_elicit(index, false)
    }

    /// [`Answers::elicit`] where the answer already passed [`Answers::fits`] (a
    /// `#[saga_tool]` checks a round's answers before it reads any).
    pub(crate) fn elicit_fitted<T: Elicit>(&mut self, index: usize) -> Result<T, SagaError> {
        self.read_elicit(index, true)
    }

    fn read_elicit<T: Elicit>(&mut self, index: usize, fitted: bool) -> Result<T, SagaError> {
        let (result, checked) = match self.take(index)? {
            Answer::Elicit(result) => (result, true),
            Answer::FormUnchecked(result) => (result, fitted),
            other => return Err(mismatch("an elicitation", &other)),
        };
        match result.action {
            ElicitationAction::Accept => match result.content {
                Some(serde_json::Value::Object(content)) => {
                    if !checked {
                        cached_form::<T>()
                            .check
                            .check_object(&content)
                            .map_err(|misfit| SagaError::DoesNotFit(misfit.to_string()))?;
                    }
                    T::from_owned_content(content).map_err(SagaError::InvalidAnswer)
                }
                // The runtime asks again for a kept form's answer like this one; the tool
                // that checks its own must be told to do the same.
                _ if !checked => Err(SagaError::DoesNotFit("content is not an object".into())),
                _ => Err(SagaError::InvalidAnswer(
                    "elicitation content is not an object".into(),
                )),
            },
            ElicitationAction::Decline => Err(SagaError::Declined),
            // `cancel`, and any action a later protocol adds: the user did not accept.
            _ => Err(SagaError::Cancelled),
        }
    }

    /// The answer to an [`elicit`](super::elicit) at `index` as what the user chose: a
    /// decline or a cancel is an [`Elicited`](super::Elicited), not an error (see
    /// [`ElicitForm::outcome`](super::ElicitForm::outcome)).
    pub fn elicit_outcome<T: Elicit>(
        &mut self,
        index: usize,
    ) -> Result<super::Elicited<T>, SagaError> {
        super::Elicited::from_answer(self.elicit(index))
    }

    /// Whether the answer at `index` can be read as a `T` without
    /// [`SagaError::DoesNotFit`]: a declined or cancelled form, and any other kind of
    /// answer, fits. A hand-written tool whose round asks several forms checks them all
    /// before it reads any, so that it acts on none of them when it must ask again.
    pub fn fits<T: Elicit>(&self, index: usize) -> bool {
        // Only an answer to a form the token keeps no schema of can misfit here: the
        // runtime checked every other before the step.
        match self.items.get(index) {
            Some(Some(Answer::FormUnchecked(result)))
                if result.action == ElicitationAction::Accept =>
            {
                let content = result.content.as_ref().unwrap_or(&serde_json::Value::Null);
                cached_form::<T>().check.check(content).is_ok()
            }
            _ => true,
        }
    }

    /// Why the answer at `index` does not fit `form`, where the runtime could not check it
    /// before the step (a form whose token keeps no schema): what a form asked again says.
    pub(crate) fn misfit(&self, index: usize, form: &Form) -> Option<Misfit> {
        match self.items.get(index) {
            Some(Some(Answer::FormUnchecked(result)))
                if result.action == ElicitationAction::Accept =>
            {
                let content = result.content.as_ref().unwrap_or(&serde_json::Value::Null);
                form.check.check(content).err()
            }
            _ => None,
        }
    }

    /// The answer to an [`elicit_url`](super::elicit_url) at `index`.
    pub fn elicit_url(&mut self, index: usize) -> Result<(), SagaError> {
        match self.take(index)? {
            Answer::Elicit(result) | Answer::FormUnchecked(result) => match result.action {
                ElicitationAction::Accept => Ok(()),
                ElicitationAction::Decline => Err(SagaError::Declined),
                // `cancel`, and any action a later protocol adds: the user did not accept.
                _ => Err(SagaError::Cancelled),
            },
            other => Err(mismatch("an elicitation", &other)),
        }
    }

    /// The answer to a [`sample`](super::sample) at `index`.
    pub fn sampled(&mut self, index: usize) -> Result<Sampled, SagaError> {
        match self.take(index)? {
            Answer::Sample(result) => Ok(Sampled::from_result(*result)),
            other => Err(mismatch("a sampling result", &other)),
        }
    }

    /// The answer to a [`list_roots`](super::list_roots) at `index`.
    pub fn roots(&mut self, index: usize) -> Result<Vec<Root>, SagaError> {
        match self.take(index)? {
            Answer::Roots(result) => Ok(result
                .roots
                .into_iter()
                .map(|root| Root {
                    uri: root.uri,
                    name: root.name,
                })
                .collect()),
            other => Err(mismatch("a roots list", &other)),
        }
    }
}

fn mismatch(expected: &str, found: &Answer) -> SagaError {
    match found {
        Answer::Failed(failure) => SagaError::StepFailed {
            code: failure.code,
            message: failure.message.clone(),
        },
        _ => SagaError::InvalidAnswer(format!("expected {expected}")),
    }
}

/// What the client's LLM answered to a [`sample`](super::sample).
///
/// Owned and serializable, so it can be kept across later suspensions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sampled {
    text: String,
    model: String,
    stop_reason: Option<String>,
}

impl Sampled {
    /// A result as a client would return it, for tests and scripted runs.
    pub fn new(text: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            model: model.into(),
            stop_reason: None,
        }
    }

    fn from_result(result: CreateMessageResult) -> Self {
        let text = result
            .message
            .content
            .into_vec()
            .into_iter()
            .filter_map(|block| match block {
                SamplingMessageContentBlock::Text(text) => Some(text.text),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("");
        Self {
            text,
            model: result.model,
            stop_reason: result.stop_reason,
        }
    }

    /// The text of the answer (text blocks joined; empty if it had none).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The model that answered.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Why generation stopped (`endTurn`, `maxTokens`, …), when the client said.
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop_reason.as_deref()
    }
}

/// A root the client exposes: a `file://` URI and an optional name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// The root's URI.
    pub uri: String,
    /// A human-readable name.
    pub name: Option<String>,
}
