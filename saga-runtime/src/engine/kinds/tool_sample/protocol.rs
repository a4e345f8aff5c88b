//! Sampling with tools' protocol (`sampling/createMessage` with `tools`, SEP-1577); a
//! tool asks with [`Sample::tools`](crate::engine::Sample::tools).
//!
//! A kind of its own, apart from a text sample, because what the client must declare
//! (`sampling.tools`) and what its answer may hold (tool uses) differ: a client that can
//! sample text is not sent tools it never said it takes.

use crate::engine::caller::error::Failure;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, InputRequest, JsonObject,
    SamplingCapability, SamplingMessageContentBlock,
};
use serde_json::Value;

use crate::engine::caller::context::SagaContext;
use crate::engine::caller::tool_use::MAX_TOOL_USES;
use crate::engine::identity::fnv::Fnv;
use crate::engine::kinds::kind::{AskKind, refused};

pub(crate) struct ToolSampleKind;

impl AskKind for ToolSampleKind {
    type Asked = Box<CreateMessageRequestParams>;
    type Answered = Box<CreateMessageResult>;

    const PREFIX: &'static str = "sample";

    fn lacks(cx: &SagaContext, required: &mut ClientCapabilities) -> bool {
        if cx.can_sample_with_tools() {
            return false;
        }
        let mut sampling = SamplingCapability::default();
        sampling.tools = Some(JsonObject::new());
        required.sampling = Some(sampling);
        true
    }

    fn digest(asked: &Self::Asked, hash: &mut Fnv) {
        hash.write(b"T");
        hash.write(&Fnv::of_json(asked).to_le_bytes());
    }

    fn input(asked: Self::Asked, _tool: &str) -> Result<InputRequest, Failure> {
        Ok(crate::engine::kinds::sample::protocol::input(*asked))
    }

    fn resend(params: &str) -> serde_json::Result<InputRequest> {
        crate::engine::kinds::sample::protocol::resend(params)
    }

    /// The model speaking: role `assistant`, text and tool uses only (never a tool's
    /// result, which is the user's), at most [`MAX_TOOL_USES`] of them, their ids
    /// distinct and not empty, so that each result answers one. Whether each tool was
    /// offered is checked against the request when the round is resumed
    /// (`runner::transition`).
    fn parse(value: Value, _kept: bool, key: &str) -> Result<Self::Answered, Failure> {
        let result = crate::engine::kinds::sample::protocol::read_result(value, key)?;
        let mut ids: Vec<&str> = Vec::new();
        for block in result.message.content.iter() {
            match block {
                SamplingMessageContentBlock::Text(_) => {}
                SamplingMessageContentBlock::ToolUse(used) => {
                    if used.id.is_empty() || ids.contains(&used.id.as_str()) {
                        return Err(refused(
                            key,
                            "sampling",
                            "has a tool use whose id is empty or not unique",
                        ));
                    }
                    if ids.len() == MAX_TOOL_USES {
                        return Err(refused(
                            key,
                            "sampling",
                            "has too many tool uses (64 at most)",
                        ));
                    }
                    ids.push(&used.id);
                }
                _ => {
                    return Err(refused(
                        key,
                        "sampling",
                        "must hold text and tool uses only: the request asked for them",
                    ));
                }
            }
        }
        Ok(Box::new(result))
    }
}

impl SagaContext {
    /// Whether a sample that offers tools ([`Sample::tools`](crate::engine::Sample::tools))
    /// is answered in this request: the client declares `sampling.tools`, or the server's
    /// model answers it. A tool that can do without checks this first.
    pub fn can_sample_with_tools(&self) -> bool {
        self.client_can_sample_with_tools() || self.server_model_for(true).is_some()
    }

    /// Whether the client itself takes samples that offer tools (it declared
    /// `sampling.tools`), whatever the server's model does.
    pub fn client_can_sample_with_tools(&self) -> bool {
        self.capabilities()
            .sampling
            .as_ref()
            .is_some_and(|sampling| sampling.tools.is_some())
    }
}
