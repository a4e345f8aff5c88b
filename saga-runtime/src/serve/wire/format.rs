//! What a header-selected format is: a translation of an MRTR `tools/call` on its way in
//! and of its response on its way out, with the helpers the translations share. The
//! table that registers each format (`mod.rs`) names the translations; they name only this.

use std::collections::BTreeMap;

use rmcp::ErrorData;
use serde_json::Value;

use crate::engine::StepFailure;

/// A format selected by [`FORMAT_HEADER`](super::FORMAT_HEADER): a translation of an MRTR `tools/call` and its
/// response. Adding one is a file implementing this and its row in the `formats!` table
/// below.
pub(crate) trait ResultFormat {
    /// The header value that selects it (compared without case or surrounding spaces).
    const HEADER_VALUE: &'static str;

    /// The method bound into its tokens, so that a token issued in one format is refused
    /// in another.
    const BOUND_METHOD: &'static str;

    /// Rewrites an incoming `tools/call` into MRTR form; the client's reports that a step
    /// failed, which MRTR cannot say, go into `failures`.
    fn decode(
        message: &mut Value,
        failures: &mut BTreeMap<String, StepFailure>,
    ) -> Result<(), ErrorData>;

    /// Rewrites the MRTR response to a `tools/call` into this format.
    fn encode(response: Value) -> Value;
}

/// The `result` of a JSON-RPC response envelope that is an MRTR `input_required` result.
pub(super) fn input_required(response: &Value) -> Option<&Value> {
    let result = response.get("result")?;
    (result.get("resultType")?.as_str()? == "input_required").then_some(result)
}

/// A JSON-RPC error envelope answering the same id.
pub(super) fn error_envelope(response: &Value, error: ErrorData) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": response.get("id").cloned().unwrap_or(Value::Null),
        "error": error,
    })
}
