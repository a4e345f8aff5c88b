//! Sampling's protocol (`sampling/createMessage`); a tool asks with
//! [`sample`](crate::engine::sample).

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    InputRequest, Role, SamplingCapability, SamplingMessageContentBlock,
};
use serde_json::Value;

use super::kind::{AskKind, read_answer, refused};
use crate::engine::call::context::SagaContext;
use crate::engine::identity::fnv::Fnv;

pub(crate) struct SampleKind;

impl AskKind for SampleKind {
    type Asked = Box<CreateMessageRequestParams>;
    type Answered = Box<CreateMessageResult>;

    const PREFIX: &'static str = "sample";

    fn lacks(cx: &SagaContext, required: &mut ClientCapabilities) -> bool {
        // The server's model answers where the client cannot (`crate::model`).
        if cx.can_sample() || cx.server_model().is_some() {
            return false;
        }
        required.sampling = Some(SamplingCapability::default());
        true
    }

    fn digest(asked: &Self::Asked, hash: &mut Fnv) {
        hash.write(b"S");
        hash.write(&Fnv::of_json(asked).to_le_bytes());
    }

    fn input(asked: Self::Asked, _tool: &str) -> Result<InputRequest, ErrorData> {
        Ok(InputRequest::CreateMessage(CreateMessageRequest::new(
            *asked,
        )))
    }

    fn resend(params: &str) -> serde_json::Result<InputRequest> {
        serde_json::from_str::<CreateMessageRequestParams>(params)
            .map(|params| InputRequest::CreateMessage(CreateMessageRequest::new(params)))
    }

    /// A sampling answer is the client's LLM speaking: role `assistant`, and text, since
    /// saga asks only for text (MCP 2026-07-28 `CreateMessageResult`).
    fn parse(value: Value, _kept: bool, key: &str) -> Result<Self::Answered, ErrorData> {
        let result: CreateMessageResult = read_answer(value, key, "CreateMessageResult")?;
        if result.message.role != Role::Assistant {
            return Err(refused(key, "sampling", "must have role \"assistant\""));
        }
        if !result
            .message
            .content
            .iter()
            .all(|block| matches!(block, SamplingMessageContentBlock::Text(_)))
        {
            return Err(refused(
                key,
                "sampling",
                "must hold text content only: the request asked for text",
            ));
        }
        Ok(Box::new(result))
    }
}

impl SagaContext {
    /// Whether the client accepts `sampling/createMessage`.
    pub fn can_sample(&self) -> bool {
        self.capabilities().sampling.is_some()
    }
}
