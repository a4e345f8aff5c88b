//! The client's roots (`roots/list`): [`list_roots`].

use serde::{Deserialize, Serialize};

use crate::engine::asks::outside::AwaitedOutsideASaga;
use crate::engine::caller::error::SagaError;
use crate::engine::kinds::table::{Answer, Asked};
use crate::engine::round::answers::{Answers, mismatch};
use crate::engine::round::requests::{Request, Suspension};

// Awaiting this request outside a saga is one error that says what to write
// (`asks/outside.rs`).
crate::engine::asks::outside::awaited_outside! {
    AwaitedOutsideASaga:
    [] ListRoots => <ListRoots as Suspension>::Output;
}

/// Asks the client for its roots (`roots/list`).
pub fn list_roots() -> ListRoots {
    ListRoots { key: None }
}

/// A pending `roots/list`; see [`list_roots`].
#[must_use = "a request does nothing until the saga awaits it"]
#[derive(Debug)]
pub struct ListRoots {
    key: Option<String>,
}

impl ListRoots {
    /// Pins the `inputRequests` key.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

impl From<ListRoots> for Request {
    fn from(roots: ListRoots) -> Self {
        Request::new(roots.key, Asked::Roots(()))
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

impl Suspension for ListRoots {
    type Output = Result<Vec<Root>, SagaError>;
    fn requests(self, round: &mut Vec<Request>) {
        round.push(self.into());
    }
    fn take(answers: &mut Answers, index: usize) -> Self::Output {
        answers.roots(index)
    }
}

impl Answers {
    /// The answer to a [`list_roots`] at `index`.
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
