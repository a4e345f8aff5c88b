//! What a tool returns, and how it becomes a `CallToolResult`.

use std::fmt::Display;
use std::sync::Arc;

use rmcp::handler::server::common::schema_for_output;
use rmcp::model::{
    CallToolResult, ContentBlock as Content, GetPromptResult, JsonObject, PromptMessage,
    ResourceContents,
};
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
        let mut schema = (*schema_for_output::<U>()).clone();
        crate::engine::forms::integer_formats::rewrite(&mut schema);
        Some(Arc::new(schema))
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

/// What a prompt saga (`#[saga_prompt]`, registered with `.prompt(..)`) gives back: the
/// messages of its `prompts/get` result.
///
/// ```
/// use saga_runtime::prelude::*;
/// use saga_runtime::rmcp::model::{PromptMessage, Role};
/// let prompt = Prompt::new(vec![PromptMessage::new_text(Role::User, "Hello")])
///     .description("A greeting");
/// # let _ = prompt;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt(pub GetPromptResult);

impl Prompt {
    /// A prompt of these messages.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        Self(GetPromptResult::new(messages))
    }

    /// Sets the result's description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.0.description = Some(description.into());
        self
    }
}

impl ToolOutput for Prompt {
    fn into_call_tool_result(self) -> CallToolResult {
        packed(&self.0)
    }
}

/// What a resource saga (`#[saga_resource]`, registered with `.resource(..)` or
/// `.resource_template(..)`) gives back: the contents of its `resources/read` result.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Contents(pub Vec<ResourceContents>);

impl Contents {
    /// One text content.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self(vec![
            ResourceContents::text(text, uri).with_mime_type(mime_type),
        ])
    }

    /// One binary content, base64-encoded.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        base64: impl Into<String>,
    ) -> Self {
        Self(vec![
            ResourceContents::blob(base64, uri).with_mime_type(mime_type),
        ])
    }
}

impl ToolOutput for Contents {
    fn into_call_tool_result(self) -> CallToolResult {
        packed(&serde_json::json!({ "contents": self.0 }))
    }
}

/// A prompt's or resource's result travels through the tool machinery as structured
/// content; the server unpacks it into the method's own result.
fn packed(value: &impl Serialize) -> CallToolResult {
    match serde_json::to_value(value) {
        Ok(value) => {
            let mut result = CallToolResult::success(Vec::new());
            result.structured_content = Some(value);
            result
        }
        Err(error) => {
            tracing::error!(%error, "a prompt or resource result does not serialize");
            CallToolResult::error(vec![Content::text("the result could not be encoded")])
        }
    }
}

/// What a `#[saga_prompt]` function may return: a [`Prompt`], or `Result<Prompt, E>`.
#[diagnostic::on_unimplemented(
    message = "a #[saga_prompt] function returns `Result<Prompt, E>`, not `{Self}`",
    label = "a prompt's result is its messages",
    note = "build the messages with `Prompt::new(vec![PromptMessage::new_text(Role::User, ..)])`; for a tool's result, use #[saga_tool]"
)]
pub trait PromptOutput: ToolOutput {}

impl PromptOutput for Prompt {}
impl<E: Display> PromptOutput for Result<Prompt, E> {}

/// What a `#[saga_resource]` function may return: [`Contents`], or `Result<Contents, E>`.
#[diagnostic::on_unimplemented(
    message = "a #[saga_resource] function returns `Result<Contents, E>`, not `{Self}`",
    label = "a resource's result is its contents",
    note = "build them with `Contents::text(uri, mime_type, text)` or `Contents::blob(..)`; for a tool's result, use #[saga_tool]"
)]
pub trait ResourceOutput: ToolOutput {}

impl ResourceOutput for Contents {}
impl<E: Display> ResourceOutput for Result<Contents, E> {}
