//! The result formats of the proposals MRTR grew from, selected per request with the
//! header `Mcp-Result-Format` on the usual endpoint; every request without it (or that
//! is not a `tools/call`) goes to the MCP handler unchanged.
//!
//! - `dependent-requests` (seed 001): see [`super::dependent`].
//! - `resume-token` (seed 003): see [`super::resume_token`].

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use rmcp::ErrorData;
use rmcp::model::{ClientCapabilities, JsonObject, RequestMetaObject};
use serde_json::{Value, json};

use super::SagaTools;
use crate::engine::SagaContext;

/// The header that selects a format.
pub const FORMAT_HEADER: &str = "mcp-result-format";

/// A format a request can select.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `dependent-requests`: seed 001.
    DependentRequests,
    /// `resume-token`: seed 003.
    ResumeToken,
}

impl Format {
    fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "dependent-requests" => Some(Format::DependentRequests),
            "resume-token" => Some(Format::ResumeToken),
            _ => None,
        }
    }
}

/// The largest request body read here.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// A `tools/call` in one of these formats, parsed.
pub(super) struct ToolCall {
    pub name: String,
    pub arguments: Option<JsonObject>,
    pub params: Value,
    pub message: Value,
}

/// Middleware: serves `tools/call` requests that select this format, and passes every
/// other request on. `allowed_hosts` is the transport's list (empty: any host), checked
/// here too since these requests do not reach the MCP transport.
pub async fn layer(
    tools: SagaTools,
    allowed_hosts: std::sync::Arc<Vec<String>>,
    request: Request,
    next: Next,
) -> Response {
    let format = request
        .headers()
        .get(FORMAT_HEADER)
        .and_then(|value| value.to_str().ok())
        .and_then(Format::parse);
    let Some(format) = format else {
        return next.run(request).await;
    };
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
        // Only tool calls have these forms; the rest is plain MCP.
        let request = Request::from_parts(parts, Body::from(bytes));
        return next.run(request).await;
    }
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let outcome = match tool_call(message) {
        Ok(call) => {
            let cx = context(&tools, &parts, &call.params);
            match format {
                Format::DependentRequests => super::dependent::call(&tools, &cx, call).await,
                Format::ResumeToken => super::resume_token::call(&tools, &cx, call).await,
            }
        }
        Err(error) => Err(error),
    };
    let mut envelope = json!({"jsonrpc": "2.0", "id": id});
    match outcome {
        Ok((field, value)) => envelope[field] = value,
        Err(error) => envelope["error"] = json!(error),
    }
    reply(envelope)
}

fn tool_call(message: Value) -> Result<ToolCall, ErrorData> {
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
    Ok(ToolCall {
        name,
        arguments,
        params,
        message,
    })
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

/// The principal as for MRTR; the capabilities the request declares, or, as the
/// proposal predates declaring them, everything it can be asked.
fn context(tools: &SagaTools, parts: &http::request::Parts, params: &Value) -> SagaContext {
    let meta: Option<RequestMetaObject> = params
        .get("_meta")
        .and_then(|meta| serde_json::from_value(meta.clone()).ok());
    let capabilities = meta
        .as_ref()
        .and_then(RequestMetaObject::client_capabilities)
        .unwrap_or_else(undeclared_capabilities);
    SagaContext::new(tools.principal_of(parts)).with_capabilities(capabilities)
}

/// The capabilities assumed for a client of the proposals MCP 2026-07-28 grew from when
/// it declares none: those proposals predate declaring them, and their clients perform
/// the steps they are sent.
pub(super) fn undeclared_capabilities() -> ClientCapabilities {
    ClientCapabilities::builder()
        .enable_elicitation()
        .enable_sampling()
        .enable_roots()
        .build()
}
