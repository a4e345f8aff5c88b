//! `tools/callSaga` and `tools/resumeSaga`, the proposal saga grew out of: the same sagas
//! and the same sealed state, with the requests as `steps` and the answers as
//! `completedSteps`.
//!
//! ```text
//! → tools/callSaga   {name, arguments}
//! ← {state: "suspended", sagaToken, steps: [{type, stepId, params}]}
//! → tools/resumeSaga {sagaToken, completedSteps: [{stepId, result} | {stepId, error}]}
//! ← … and finally a CallToolResult
//! ```
//!
//! A resume carries no tool name and no arguments, so the token names its tool in front
//! (`base64url(name).token`; the name is also bound inside the token) and binds no
//! arguments: they are part of the saved state.
//!
//! This file translates; the server runs the call between `decode_*` and `encode`.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, InputRequest, InputResponses, JsonObject};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::engine::{Call, SagaContext, StepFailure, invalid_state};

/// The method that starts a saga.
pub(crate) const CALL_SAGA: &str = "tools/callSaga";
/// The method that resumes one.
pub(crate) const RESUME_SAGA: &str = "tools/resumeSaga";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallSagaParams {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
    #[serde(default, rename = "_meta")]
    _meta: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ResumeSagaParams {
    saga_token: String,
    #[serde(default)]
    completed_steps: Vec<CompletedStep>,
    #[serde(default, rename = "_meta")]
    _meta: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CompletedStep {
    step_id: String,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<StepError>,
}

#[derive(Deserialize)]
struct StepError {
    #[serde(default)]
    code: i64,
    #[serde(default)]
    message: String,
}

fn params<T: for<'de> Deserialize<'de>>(
    method: &str,
    params: Option<Value>,
) -> Result<T, ErrorData> {
    serde_json::from_value(params.unwrap_or(Value::Null)).map_err(|error| {
        ErrorData::invalid_params(format!("invalid params for {method}: {error}"), None)
    })
}

/// The context of a round: as for MRTR (`cx`), except that a client declaring no
/// capabilities (`declared` false) gets those the proposal assumes (it predates declaring
/// them).
pub(crate) fn context(cx: SagaContext, declared: bool) -> SagaContext {
    if declared {
        return cx;
    }
    cx.with_capabilities(super::undeclared_capabilities())
}

/// The call of a `tools/callSaga`.
pub(crate) fn decode_call(raw: Option<Value>) -> Result<Call, ErrorData> {
    let request: CallSagaParams = params(CALL_SAGA, raw)?;
    Ok(Call {
        method: CALL_SAGA.into(),
        name: request.name,
        arguments: request.arguments,
        unbound_arguments: true,
        ..Call::default()
    })
}

/// The call of a `tools/resumeSaga`: its tool named by the token.
pub(crate) fn decode_resume(raw: Option<Value>) -> Result<Call, ErrorData> {
    let request: ResumeSagaParams = params(RESUME_SAGA, raw)?;
    let (name, token) = split_token(&request.saga_token)
        .ok_or_else(|| invalid_state(RESUME_SAGA, &"a sagaToken without its tool name"))?;
    let mut responses = InputResponses::new();
    let mut failures = BTreeMap::new();
    for step in request.completed_steps {
        match (step.result, step.error) {
            (_, Some(error)) => {
                failures.insert(
                    step.step_id,
                    StepFailure::from_client(error.code, &error.message),
                );
            }
            (Some(result), None) => {
                responses.insert(step.step_id, result);
            }
            (None, None) => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "completedSteps[{:?}] has neither a result nor an error",
                        step.step_id
                    ),
                    None,
                ));
            }
        }
    }
    Ok(Call {
        method: CALL_SAGA.into(),
        name,
        arguments: None,
        request_state: Some(token.to_owned()),
        input_responses: Some(responses),
        failures,
        unbound_arguments: true,
        ..Call::default()
    })
}

/// The refusal of a `sagaToken` that names a tool this server does not know.
pub(crate) fn unknown_tool(name: &str) -> ErrorData {
    invalid_state(
        RESUME_SAGA,
        &format!("a sagaToken for unknown tool {name:?}"),
    )
    .into()
}

/// The response to either method, for a call of tool `name`.
pub(crate) fn encode(name: &str, response: CallToolResponse) -> Result<Value, ErrorData> {
    match response {
        CallToolResponse::Complete(result) => to_value(&result),
        CallToolResponse::InputRequired(required) => {
            let token = required.request_state.unwrap_or_default();
            let steps = required
                .input_requests
                .unwrap_or_default()
                .into_iter()
                .map(|(key, request)| step(key, &request))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(json!({
                "state": "suspended",
                "sagaToken": format!("{}.{}", URL_SAFE_NO_PAD.encode(name.as_bytes()), token),
                "steps": steps,
            }))
        }
        _ => Err(ErrorData::internal_error("unexpected response kind", None)),
    }
}

/// One request as a step: its type, its id (the MRTR key) and its params, without the
/// MRTR-only form `mode`.
fn step(key: String, request: &InputRequest) -> Result<Value, ErrorData> {
    let wire = to_value(request)?;
    let kind = match wire["method"].as_str() {
        Some("elicitation/create") => "elicitation",
        Some("sampling/createMessage") => "sampling",
        Some("roots/list") => "roots",
        _ => "unknown",
    };
    let mut params = wire.get("params").cloned().unwrap_or_else(|| json!({}));
    if params["mode"] == "form"
        && let Some(object) = params.as_object_mut()
    {
        object.remove("mode");
    }
    Ok(json!({"type": kind, "stepId": key, "params": params}))
}

/// A saga token's tool name (before its dot, base64url) and the token after it; the
/// authorization layer reads the name to know the tool's scopes.
pub(crate) fn split_token(saga_token: &str) -> Option<(String, &str)> {
    let (name, token) = saga_token.split_once('.')?;
    let name = String::from_utf8(URL_SAFE_NO_PAD.decode(name).ok()?).ok()?;
    Some((name, token))
}

fn to_value(value: &impl serde::Serialize) -> Result<Value, ErrorData> {
    serde_json::to_value(value).map_err(|error| {
        ErrorData::internal_error(format!("result does not encode: {error}"), None)
    })
}
