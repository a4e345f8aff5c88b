//! The "dependent requests" format (the streamless round-trip proposal MRTR grew from):
//! an incomplete call is answered at the JSON-RPC envelope with `dependent_requests`
//! instead of `result`, and the retry carries `dependent_responses` beside `params`.
//!
//! A client selects it per request with the header `Mcp-Result-Format:
//! dependent-requests` on the usual endpoint; every other request goes to the MCP
//! handler unchanged. The format has no state token, so each request replays the saga
//! from its arguments, one transition at a time in process, feeding it the answers the
//! client sent, until it completes or needs an answer the client has not given. Code
//! between suspensions therefore runs again on every round; MRTR's token avoids that.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, ClientCapabilities, InputResponses, JsonObject, RequestMetaObject,
};
use serde_json::{Value, json};

use super::SagaTools;
use crate::engine::{Call, SagaContext, StepFailure};

/// The header that selects this format, and its value.
pub const FORMAT_HEADER: &str = "mcp-result-format";
/// The value of [`FORMAT_HEADER`] that selects it.
pub const FORMAT_VALUE: &str = "dependent-requests";

/// The largest request body this format reads.
const MAX_BODY: usize = 4 * 1024 * 1024;
/// The most transitions one request replays.
const MAX_ROUNDS: usize = 1_000;

/// Middleware: serves `tools/call` requests that select this format, and passes every
/// other request on. `allowed_hosts` is the transport's list (empty: any host), checked
/// here too since these requests do not reach the MCP transport.
pub async fn layer(
    tools: SagaTools,
    allowed_hosts: std::sync::Arc<Vec<String>>,
    request: Request,
    next: Next,
) -> Response {
    let selected = request
        .headers()
        .get(FORMAT_HEADER)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim().eq_ignore_ascii_case(FORMAT_VALUE));
    if !selected {
        return next.run(request).await;
    }
    if !host_allowed(&allowed_hosts, request.headers()) {
        return (StatusCode::FORBIDDEN, "forbidden host").into_response();
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(_) => return StatusCode::PAYLOAD_TOO_LARGE.into_response(),
    };
    let message: Value = match serde_json::from_slice(&bytes) {
        Ok(message) => message,
        Err(error) => {
            return reply(
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!("parse error: {error}")}}),
            );
        }
    };
    if message["method"] != "tools/call" {
        // Only tool calls have a dependent-requests form; the rest is plain MCP.
        let request = Request::from_parts(parts, Body::from(bytes));
        return next.run(request).await;
    }
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    match call(&tools, &parts, message).await {
        Ok(Outcome::Result(result)) => reply(json!({"jsonrpc": "2.0", "id": id, "result": result})),
        Ok(Outcome::Dependent(requests)) => {
            reply(json!({"jsonrpc": "2.0", "id": id, "dependent_requests": requests}))
        }
        Err(error) => reply(json!({"jsonrpc": "2.0", "id": id, "error": error})),
    }
}

/// DNS-rebinding protection: the `Host` must be one the transport allows, by host name or
/// by `host:port`.
fn host_allowed(allowed: &[String], headers: &http::HeaderMap) -> bool {
    if allowed.is_empty() {
        return true;
    }
    let Some(host) = headers
        .get(http::header::HOST)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    allowed.iter().any(|entry| entry == host || entry == name)
}

fn reply(body: Value) -> Response {
    (
        StatusCode::OK,
        [(http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

enum Outcome {
    Result(Value),
    Dependent(Value),
}

async fn call(
    tools: &SagaTools,
    parts: &http::request::Parts,
    message: Value,
) -> Result<Outcome, ErrorData> {
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let name = params["name"]
        .as_str()
        .ok_or_else(|| ErrorData::invalid_params("tools/call needs a string `name`", None))?
        .to_owned();
    let arguments: Option<JsonObject> = match params.get("arguments") {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(map.clone()),
        Some(_) => {
            return Err(ErrorData::invalid_params(
                "`arguments` must be an object",
                None,
            ));
        }
    };
    let (answers, failures) = dependent_responses(message.get("dependent_responses"))?;
    let cx = context(tools, parts, &params);

    let mut call = Call {
        method: "tools/call#dependent-requests".into(),
        name,
        arguments,
        ..Call::default()
    };
    for _ in 0..MAX_ROUNDS {
        let required = match tools.run(call.clone(), &cx).await? {
            CallToolResponse::Complete(result) => {
                return serde_json::to_value(result)
                    .map(Outcome::Result)
                    .map_err(|error| ErrorData::internal_error(error.to_string(), None));
            }
            CallToolResponse::InputRequired(required) => required,
            _ => return Err(ErrorData::internal_error("unexpected response kind", None)),
        };
        let requests = required.input_requests.unwrap_or_default();
        let answered = requests
            .keys()
            .all(|key| answers.contains_key(key) || failures.contains_key(key));
        if !answered {
            return serde_json::to_value(&requests)
                .map(Outcome::Dependent)
                .map_err(|error| ErrorData::internal_error(error.to_string(), None));
        }
        call.request_state = required.request_state;
        call.input_responses = Some(
            requests
                .keys()
                .filter_map(|key| answers.get(key).map(|answer| (key.clone(), answer.clone())))
                .collect(),
        );
        call.failures = requests
            .keys()
            .filter_map(|key| {
                failures
                    .get(key)
                    .map(|failure| (key.clone(), failure.clone()))
            })
            .collect();
    }
    Err(ErrorData::internal_error(
        "the saga did not finish within the round limit",
        None,
    ))
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

/// The principal as for MRTR; the capabilities the request declares, or, as the
/// proposal predates declaring them, everything it can be asked.
fn context(tools: &SagaTools, parts: &http::request::Parts, params: &Value) -> SagaContext {
    let meta: Option<RequestMetaObject> = params
        .get("_meta")
        .and_then(|meta| serde_json::from_value(meta.clone()).ok());
    let capabilities = meta
        .as_ref()
        .and_then(RequestMetaObject::client_capabilities)
        .unwrap_or_else(|| {
            ClientCapabilities::builder()
                .enable_elicitation()
                .enable_sampling()
                .enable_roots()
                .build()
        });
    SagaContext::new(tools.principal_of(parts)).with_capabilities(capabilities)
}
