//! The client's answers to a round's requests, as the tool reads them.

use crate::engine::caller::error::SagaError;
use crate::engine::kinds::table::Answer;

/// The answers to the requests of the round that just ended, in the order the tool made
/// them. A `#[saga_tool]` reads them for you; a hand-written tool takes each by index.
#[derive(Debug, Default)]
pub struct Answers {
    items: AnswerSlots,
    /// Set by a `#[saga_tool]`'s restating mode (`MacroState::Restate`), which hands it
    /// down to the suspension, in the tool or in a helper it called, that states its
    /// requests again. Never set for a hand-written tool, which is asked through
    /// [`SagaTool::restate`](crate::engine::SagaTool::restate) instead.
    restating: bool,
}

/// A round's answers, each until the tool takes it: most rounds have one, which needs no
/// allocation.
pub(crate) type AnswerSlots = smallvec::SmallVec<[Option<Answer>; 1]>;

impl Answers {
    /// No answers: the first round, or the round after a checkpoint.
    pub fn none() -> Self {
        Self::default()
    }

    pub(crate) fn new(items: AnswerSlots) -> Self {
        Self {
            items,
            restating: false,
        }
    }

    /// No answers: a `#[saga_tool]`'s restating mode, in which the suspension states its
    /// requests again instead of reading answers.
    pub(crate) fn restating() -> Self {
        Self {
            items: AnswerSlots::new(),
            restating: true,
        }
    }

    /// Whether these are the restating mode's (see [`Answers::restating`]).
    pub(crate) fn is_restating(&self) -> bool {
        self.restating
    }

    /// How many answers there are.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The answer at `index`, unless the tool took it.
    pub(crate) fn slot(&self, index: usize) -> Option<&Answer> {
        self.items.get(index)?.as_ref()
    }

    /// Takes the answer at `index`: each is read once.
    pub(crate) fn take(&mut self, index: usize) -> Result<Answer, SagaError> {
        self.items
            .get_mut(index)
            .and_then(Option::take)
            .ok_or_else(|| SagaError::InvalidAnswer(format!("no answer at position {index}")))
    }
}

/// The error for an answer of another kind than the tool reads it as; a step the client
/// reported failed is that failure.
pub(crate) fn mismatch(expected: &str, found: &Answer) -> SagaError {
    match found {
        Answer::Failed(failure) => SagaError::StepFailed {
            code: failure.code,
            message: failure.message.clone(),
        },
        Answer::ModelFailed(reason) => SagaError::ModelFailed(reason.clone()),
        _ => SagaError::InvalidAnswer(format!("expected {expected}")),
    }
}
