//! The wire formats a saga is served in, gathered in one place.
//!
//! MCP 2026-07-28 MRTR is the native format. The proposals it grew from are translations
//! of it, each in its own file:
//!
//! | format | selected by | file |
//! |---|---|---|
//! | MRTR (`inputRequests` / `requestState`) | default | — |
//! | `dependent_requests` (seed 001) | `Mcp-Result-Format: dependent-requests` | [`dependent`] |
//! | `resumeToken` (seed 003) | `Mcp-Result-Format: resume-token` | [`resume_token`] |
//! | `tools/callSaga` (seed 000) | its own methods | [`call_saga`] |
//! | resumable requests (seed 002, SEP-975) | `resumableRequests` in a session's capabilities | [`resumable`] |
//!
//! A header-selected format only rewrites the JSON-RPC message on its way in (into an MRTR
//! `tools/call`) and the response on its way out. In between, the request takes the one
//! path every request takes: the HTTP guard's limits, then rmcp's transport validation
//! (path, method, headers, protocol version, origin, JSON-RPC envelope), then the
//! handler. A new format cannot skip a check, because it never sees the request before
//! they run. (An MRTR `tools/call` that passes rmcp's checks as it is may skip rmcp's
//! per-request service, never its checks: `serve::http` has the direct path's rules.)

pub(crate) mod call_saga;
pub(crate) mod dependent;
pub(crate) mod resumable;
pub(crate) mod resume_token;

use std::collections::BTreeMap;

use rmcp::ErrorData;
use rmcp::model::ClientCapabilities;
use serde_json::Value;

use crate::engine::StepFailure;

/// The header that selects a format other than MRTR.
pub(crate) const FORMAT_HEADER: &str = "mcp-result-format";

/// A format a `tools/call` can be answered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub(crate) enum Format {
    /// MCP 2026-07-28 multi round-trip requests.
    #[default]
    Mrtr,
    /// `dependent-requests`: seed 001.
    DependentRequests,
    /// `resume-token`: seed 003.
    ResumeToken,
}

/// A header value that names no format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown Mcp-Result-Format {0:?}: expected \"dependent-requests\" or \"resume-token\"")]
pub(crate) struct UnknownFormat(pub String);

impl Format {
    /// The format a request selects with [`FORMAT_HEADER`]; MRTR without it.
    pub(crate) fn from_headers(headers: &http::HeaderMap) -> Result<Self, UnknownFormat> {
        let mut values = headers.get_all(FORMAT_HEADER).iter();
        let Some(value) = values.next() else {
            return Ok(Format::Mrtr);
        };
        let text = value.to_str().unwrap_or_default();
        if values.next().is_some() {
            return Err(UnknownFormat(format!(
                "{} (given more than once)",
                crate::log::sanitized(text)
            )));
        }
        match text.trim().to_ascii_lowercase().as_str() {
            "dependent-requests" => Ok(Format::DependentRequests),
            "resume-token" => Ok(Format::ResumeToken),
            _ => Err(UnknownFormat(crate::log::sanitized(text))),
        }
    }

    /// The method bound into this format's tokens, so that a token issued in one format is
    /// refused in another.
    pub(crate) fn bound_method(self) -> &'static str {
        match self {
            Format::Mrtr => "tools/call",
            Format::DependentRequests => "tools/call#dependent-requests",
            Format::ResumeToken => "tools/call#resume-token",
        }
    }

    /// Rewrites an incoming `tools/call` message into MRTR form. What MRTR cannot say (a
    /// client's report that a step failed) and any decoding error travel beside the
    /// message, in the returned [`WireCall`], so that rmcp still validates the request
    /// before anything else is answered.
    pub(crate) fn decode(self, message: &mut Value) -> WireCall {
        let mut call = WireCall {
            format: self,
            ..WireCall::default()
        };
        let decoded = match self {
            Format::Mrtr => Ok(()),
            Format::DependentRequests => dependent::decode(message, &mut call),
            Format::ResumeToken => resume_token::decode(message),
        };
        if let Err(error) = decoded {
            call.error = Some(error);
        }
        call
    }

    /// Rewrites the MRTR response to a `tools/call` into this format.
    pub(crate) fn encode(self, response: Value) -> Value {
        match self {
            Format::Mrtr => response,
            Format::DependentRequests => dependent::encode(response),
            Format::ResumeToken => resume_token::encode(response),
        }
    }
}

/// What a format's decoding leaves beside the rewritten message, for the handler. It
/// travels in the HTTP request's extensions, which rmcp hands to the handler.
#[derive(Debug, Clone, Default)]
pub(crate) struct WireCall {
    pub(crate) format: Format,
    pub(crate) failures: BTreeMap<String, StepFailure>,
    pub(crate) error: Option<ErrorData>,
}

/// The capabilities assumed for a client of the proposals MCP 2026-07-28 grew from when
/// it declares none: those proposals predate declaring them, and their clients perform
/// the steps they are sent.
pub(crate) fn undeclared_capabilities() -> ClientCapabilities {
    ClientCapabilities::builder()
        .enable_elicitation()
        .enable_sampling()
        .enable_roots()
        .build()
}

/// The `result` of a JSON-RPC response envelope that is an MRTR `input_required` result.
fn input_required(response: &Value) -> Option<&Value> {
    let result = response.get("result")?;
    (result.get("resultType")?.as_str()? == "input_required").then_some(result)
}

/// A JSON-RPC error envelope answering the same id.
fn error_envelope(response: &Value, error: ErrorData) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": response.get("id").cloned().unwrap_or(Value::Null),
        "error": error,
    })
}
