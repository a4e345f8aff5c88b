//! The client's answers to a round's requests, as the tool reads them.

use crate::engine::call::error::SagaError;
use crate::engine::kinds::table::Answer;

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
    /// [`Step::AskAgain`](crate::engine::Step::AskAgain), built from its saved state exactly as
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
        _ => SagaError::InvalidAnswer(format!("expected {expected}")),
    }
}
