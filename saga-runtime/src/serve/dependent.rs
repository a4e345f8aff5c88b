//! The "dependent requests" format (seed 001, the streamless round-trip proposal): an
//! incomplete call is answered at the JSON-RPC envelope with `dependent_requests`
//! instead of `result`, and the retry carries `dependent_responses` beside `params`.
//! Selected with `Mcp-Result-Format: dependent-requests`.
//!
//! The format has no state token, so each request replays the saga from its arguments,
//! one transition at a time in process, feeding it the answers the client sent, until it
//! completes or needs an answer the client has not given. Code between suspensions
//! therefore runs again on every round; MRTR's token avoids that.

use std::collections::BTreeMap;

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, InputResponses};
use serde_json::Value;

use super::SagaTools;
use super::result_format::ToolCall;
use crate::engine::{Call, SagaContext, StepFailure};

/// Runs the call; returns the envelope field to answer with (`result` or
/// `dependent_requests`) and its value.
pub(super) async fn call(
    tools: &SagaTools,
    cx: &SagaContext,
    request: ToolCall,
) -> Result<(&'static str, Value), ErrorData> {
    let (answers, failures) = dependent_responses(request.message.get("dependent_responses"))?;
    let call = Call {
        method: "tools/call#dependent-requests".into(),
        name: request.name,
        arguments: request.arguments,
        ..Call::default()
    };
    match tools.replay_tool(call, answers, failures, cx).await? {
        CallToolResponse::Complete(result) => Ok(("result", encode(&result)?)),
        CallToolResponse::InputRequired(required) => Ok((
            "dependent_requests",
            encode(&required.input_requests.unwrap_or_default())?,
        )),
        _ => Err(ErrorData::internal_error("unexpected response kind", None)),
    }
}

pub(super) fn encode(value: &impl serde::Serialize) -> Result<Value, ErrorData> {
    serde_json::to_value(value).map_err(|error| ErrorData::internal_error(error.to_string(), None))
}

/// `{key: {result: …}}` or `{key: {error: {code, message}}}`.
fn dependent_responses(
    value: Option<&Value>,
) -> Result<(InputResponses, BTreeMap<String, StepFailure>), ErrorData> {
    let mut answers = InputResponses::new();
    let mut failures = BTreeMap::new();
    let Some(value) = value.filter(|value| !value.is_null()) else {
        return Ok((answers, failures));
    };
    let map = value.as_object().ok_or_else(|| {
        ErrorData::invalid_params("`dependent_responses` must be an object", None)
    })?;
    for (key, response) in map {
        if let Some(result) = response.get("result") {
            answers.insert(key.clone(), result.clone());
        } else if let Some(error) = response.get("error") {
            failures.insert(
                key.clone(),
                StepFailure {
                    code: error["code"].as_i64().unwrap_or(0),
                    message: error["message"].as_str().unwrap_or_default().to_owned(),
                },
            );
        } else {
            return Err(ErrorData::invalid_params(
                format!("dependent_responses[{key:?}] has neither `result` nor `error`"),
                None,
            ));
        }
    }
    Ok((answers, failures))
}
