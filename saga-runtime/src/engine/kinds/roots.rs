//! The client's roots (`roots/list`): [`list_roots`].

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, InputRequest, ListRootsRequest, ListRootsResult, RootsCapabilities,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Answer, AskKind, Asked, read_answer, refused};
use crate::engine::answers::{Answers, mismatch};
use crate::engine::context::SagaContext;
use crate::engine::error::SagaError;
use crate::engine::expand_support::Suspension;
use crate::engine::fnv::Fnv;
use crate::engine::requests::Request;

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

pub(crate) struct RootsKind;

impl AskKind for RootsKind {
    /// `roots/list` has no params.
    type Asked = ();
    type Answered = ListRootsResult;

    const PREFIX: &'static str = "roots";

    fn lacks(cx: &SagaContext, required: &mut ClientCapabilities) -> bool {
        if cx.can_list_roots() {
            return false;
        }
        required.roots = Some(RootsCapabilities::default());
        true
    }

    fn digest((): &(), hash: &mut Fnv) {
        hash.write(b"R");
    }

    fn input((): (), _tool: &str) -> Result<InputRequest, ErrorData> {
        Ok(InputRequest::ListRoots(ListRootsRequest::default()))
    }

    fn resend(_params: &str) -> serde_json::Result<InputRequest> {
        Ok(InputRequest::ListRoots(ListRootsRequest::default()))
    }

    /// Roots are `file://` URIs (MCP 2026-07-28 `Root.uri`).
    fn parse(value: Value, _kept: bool, key: &str) -> Result<ListRootsResult, ErrorData> {
        let result: ListRootsResult = read_answer(value, key, "ListRootsResult")?;
        // `refused` logs the refusal, once.
        if result
            .roots
            .iter()
            .any(|root| !root.uri.starts_with("file://"))
        {
            return Err(refused(
                key,
                "roots",
                "has a root whose URI is not a file:// URI",
            ));
        }
        Ok(result)
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

impl SagaContext {
    /// Whether the client answers `roots/list`.
    pub fn can_list_roots(&self) -> bool {
        self.capabilities().roots.is_some()
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
