//! The protocol of the client's roots (`roots/list`); a tool asks with
//! [`list_roots`](crate::engine::list_roots).

use crate::engine::caller::error::Failure;
use rmcp::model::{
    ClientCapabilities, InputRequest, ListRootsRequest, ListRootsResult, RootsCapabilities,
};
use serde_json::Value;

use crate::engine::caller::context::SagaContext;
use crate::engine::identity::fnv::Fnv;
use crate::engine::kinds::kind::{AskKind, read_answer, refused};

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

    fn input((): (), _tool: &str) -> Result<InputRequest, Failure> {
        Ok(InputRequest::ListRoots(ListRootsRequest::default()))
    }

    fn resend(_params: &str) -> serde_json::Result<InputRequest> {
        Ok(InputRequest::ListRoots(ListRootsRequest::default()))
    }

    /// Roots are `file://` URIs (MCP 2026-07-28 `Root.uri`).
    fn parse(value: Value, _kept: bool, key: &str) -> Result<ListRootsResult, Failure> {
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

impl SagaContext {
    /// Whether the client answers `roots/list`.
    pub fn can_list_roots(&self) -> bool {
        self.capabilities().roots.is_some()
    }
}
