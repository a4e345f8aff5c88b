//! What a tool returns, and how it becomes a `CallToolResult`.

use std::fmt::Display;
use std::sync::Arc;

use rmcp::handler::server::common::schema_for_output;
use rmcp::model::{CallToolResult, ContentBlock as Content, JsonObject};
use schemars::JsonSchema;
use serde::Serialize;

/// A structured tool output: sent as `structuredContent` (and as JSON text for older
/// clients), with an `outputSchema` generated from `U`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Json<U>(pub U);

/// A value a tool can return.
///
/// Implemented for `String`, `&'static str`, `CallToolResult`, `Vec<Content>`, [`Json<U>`],
/// and `Result<T, E>` of those with `E: Display` (an `Err` becomes a result with
/// `isError: true` and the message as text).
pub trait ToolOutput {
    /// The result sent to the client.
    fn into_call_tool_result(self) -> CallToolResult;

    /// The tool's `outputSchema`, when the output is structured.
    fn output_schema() -> Option<Arc<JsonObject>> {
        None
    }
}

impl ToolOutput for CallToolResult {
    fn into_call_tool_result(self) -> CallToolResult {
        self
    }
}

impl ToolOutput for String {
    fn into_call_tool_result(self) -> CallToolResult {
        CallToolResult::success(vec![Content::text(self)])
    }
}

impl ToolOutput for &'static str {
    fn into_call_tool_result(self) -> CallToolResult {
        CallToolResult::success(vec![Content::text(self)])
    }
}

impl ToolOutput for Vec<Content> {
    fn into_call_tool_result(self) -> CallToolResult {
        CallToolResult::success(self)
    }
}

impl<U: Serialize + JsonSchema + 'static> ToolOutput for Json<U> {
    fn into_call_tool_result(self) -> CallToolResult {
        match serde_json::to_value(&self.0) {
            Ok(value) => CallToolResult::structured(value),
            Err(error) => {
                tracing::error!(%error, "tool output does not serialize to JSON");
                CallToolResult::error(vec![Content::text(
                    "the tool's output could not be encoded",
                )])
            }
        }
    }

    fn output_schema() -> Option<Arc<JsonObject>> {
        Some(schema_for_output::<U>())
    }
}

impl<T: ToolOutput, E: Display> ToolOutput for Result<T, E> {
    fn into_call_tool_result(self) -> CallToolResult {
        match self {
            Ok(output) => output.into_call_tool_result(),
            Err(error) => CallToolResult::error(vec![Content::text(error.to_string())]),
        }
    }

    fn output_schema() -> Option<Arc<JsonObject>> {
        T::output_schema()
    }
}
