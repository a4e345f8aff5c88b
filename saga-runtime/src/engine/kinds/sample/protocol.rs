//! Sampling's protocol (`sampling/createMessage`); a tool asks with
//! [`sample`](crate::engine::sample).

use crate::engine::caller::error::Failure;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    InputRequest, Role, SamplingCapability, SamplingMessageContentBlock,
};
use serde_json::Value;

use crate::engine::caller::context::SagaContext;
use crate::engine::identity::fnv::Fnv;
use crate::engine::kinds::kind::{AskKind, read_answer, refused};

pub(crate) struct SampleKind;

impl AskKind for SampleKind {
    type Asked = Box<CreateMessageRequestParams>;
    type Answered = Box<CreateMessageResult>;

    const PREFIX: &'static str = "sample";

    fn lacks(cx: &SagaContext, required: &mut ClientCapabilities) -> bool {
        // The server's model answers where the client cannot (`crate::model`).
        if cx.can_sample() {
            return false;
        }
        required.sampling = Some(SamplingCapability::default());
        true
    }

    fn digest(asked: &Self::Asked, hash: &mut Fnv) {
        hash.write(b"S");
        hash.write(&Fnv::of_json(asked).to_le_bytes());
    }

    fn input(asked: Self::Asked, _tool: &str) -> Result<InputRequest, Failure> {
        Ok(input(*asked))
    }

    fn resend(params: &str) -> serde_json::Result<InputRequest> {
        resend(params)
    }

    /// A sampling answer is the client's LLM speaking: role `assistant`, and text, since
    /// saga asks only for text (MCP 2026-07-28 `CreateMessageResult`).
    fn parse(value: Value, _kept: bool, key: &str) -> Result<Self::Answered, Failure> {
        let result = read_result(value, key)?;
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

/// A sample as it is sent, with tools or without.
pub(in crate::engine::kinds) fn input(params: CreateMessageRequestParams) -> InputRequest {
    InputRequest::CreateMessage(CreateMessageRequest::new(params))
}

/// A sample sent again from the params a token kept.
pub(in crate::engine::kinds) fn resend(params: &str) -> serde_json::Result<InputRequest> {
    serde_json::from_str::<CreateMessageRequestParams>(params).map(input)
}

/// A sample's answer read as a `CreateMessageResult` that the model speaks (role
/// `assistant`), with tools or without; what its content may hold is each kind's.
pub(in crate::engine::kinds) fn read_result(
    value: Value,
    key: &str,
) -> Result<CreateMessageResult, Failure> {
    let result: CreateMessageResult = read_answer(value, key, "CreateMessageResult")?;
    if result.message.role != Role::Assistant {
        return Err(refused(key, "sampling", "must have role \"assistant\""));
    }
    Ok(result)
}

impl SagaContext {
    /// Whether a [`sample`](crate::engine::sample) is answered in this request: the
    /// client accepts `sampling/createMessage`, or the server's model answers it (see
    /// [`crate::model`]). A tool that can do without a sample checks this first.
    pub fn can_sample(&self) -> bool {
        self.client_can_sample() || self.server_model().is_some()
    }

    /// Whether the client itself accepts `sampling/createMessage`, whatever the server's
    /// model does.
    pub fn client_can_sample(&self) -> bool {
        self.capabilities().sampling.is_some()
    }
}
