//! The suspension points: what a saga can ask the client for.
//!
//! Each function returns a request value with builder methods. In a `#[saga_tool]`
//! function, `.await` on it suspends the saga until the client answers; a hand-written
//! [`SagaTool`](crate::engine::SagaTool) passes it to [`Step::suspend`](crate::engine::Step::suspend).

use crate::engine::forms::elicit::FormError;
use crate::engine::kinds::table::Asked;
use crate::engine::round::answers::Answers;

/// One request to the client, its type erased: what a round's `inputRequests` are built
/// from.
#[derive(Debug, Clone)]
pub struct Request {
    pub(crate) key: Option<String>,
    pub(crate) asked: Asked,
    /// Whether the tool can state this request again from its saved state (see
    /// [`SagaTool::restate`](crate::engine::SagaTool::restate)): the token then keeps only
    /// its kind and key, not its params.
    pub(crate) restatable: bool,
    /// Why the answer to this request, asked again, did not fit its form (see
    /// [`FormError`]): said to the user in the question asked again.
    pub(crate) misfit: Option<FormError>,
}

impl Request {
    pub(crate) fn new(key: Option<String>, asked: Asked) -> Self {
        Request {
            key,
            asked,
            restatable: false,
            misfit: None,
        }
    }

    /// The `inputRequests` key the tool pinned with `.key(..)`, if any.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// Marks the request as one the tool states again, word for word, from the state it
    /// suspends with, so that the token keeps only its key: the promise
    /// [`Step::suspend_restatable`](crate::engine::Step::suspend_restatable) makes for a whole
    /// round, made for this request alone (the others of its round are kept).
    pub fn restatable(mut self) -> Self {
        self.restatable = true;
        self
    }
}

/// A request a saga can await, and the answer it gives back.
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait Suspension {
    /// What `.await` on the request gives the tool.
    type Output;
    /// Appends the requests it sends to the round, in order.
    fn requests(self, round: &mut Vec<Request>);
    /// Reads the answer at `index` of the round.
    fn take(answers: &mut Answers, index: usize) -> Self::Output;
    /// Whether the answer at `index` fits what was asked, where the runtime could not
    /// check it (a form whose token keeps no schema). `false` asks again.
    fn fits(_answers: &Answers, _index: usize) -> bool {
        true
    }
}

/// Yields to the client without asking anything: the round's result carries only
/// `requestState`, and the client retries at once. Long work split by checkpoints never
/// holds one request for long, and any replica can pick up the next chunk.
pub fn checkpoint() -> Checkpoint {
    Checkpoint
}

/// A pending checkpoint; see [`checkpoint`].
#[must_use = "a checkpoint does nothing until the saga awaits it"]
#[derive(Debug, Clone, Copy)]
pub struct Checkpoint;
