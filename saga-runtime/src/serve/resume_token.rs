//! The resume-token format (seed 003): a call that checkpoints answers with a result
//! carrying `nextResumeToken`, and the client repeats the call with that value as
//! `resumeToken` (in `params`, or in `arguments`) until a result comes without one.
//! Selected with `Mcp-Result-Format: resume-token`; for tools that only checkpoint, since
//! the format has no way to ask the client anything.

use rmcp::ErrorData;
use rmcp::model::CallToolResponse;
use serde_json::{Value, json};

use super::SagaTools;
use super::dependent::encode;
use super::result_format::ToolCall;
use crate::engine::{Call, SagaContext};

/// The parameter that carries the token back.
pub const RESUME_TOKEN: &str = "resumeToken";

pub(super) async fn call(
    tools: &SagaTools,
    cx: &SagaContext,
    request: ToolCall,
) -> Result<(&'static str, Value), ErrorData> {
    let mut arguments = request.arguments;
    let from_arguments = arguments
        .as_mut()
        .and_then(|arguments| arguments.remove(RESUME_TOKEN));
    let token = match request.params.get(RESUME_TOKEN).cloned().or(from_arguments) {
        None | Some(Value::Null) => None,
        Some(Value::String(token)) => Some(token),
        Some(_) => {
            return Err(ErrorData::invalid_params(
                "`resumeToken` must be a string",
                None,
            ));
        }
    };
    let call = Call {
        method: "tools/call#resume-token".into(),
        name: request.name,
        arguments,
        request_state: token,
        ..Call::default()
    };
    match tools.run(call, cx).await? {
        CallToolResponse::Complete(result) => Ok(("result", encode(&result)?)),
        CallToolResponse::InputRequired(required) if required.input_requests.is_none() => {
            let token = required.request_state.unwrap_or_default();
            Ok(("result", json!({"content": [], "nextResumeToken": token})))
        }
        CallToolResponse::InputRequired(_) => Err(ErrorData::invalid_request(
            "this tool asks the client for input, which the resume-token format cannot carry; \
             call it with MRTR (MCP 2026-07-28) instead",
            None,
        )),
        _ => Err(ErrorData::internal_error("unexpected response kind", None)),
    }
}
