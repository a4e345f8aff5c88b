//! A model's tool use and its result (sampling with tools, SEP-1577): what the model,
//! the client's or the server's, asks to be called, and what the tool answers it. Below
//! both answerers: a sample's [`Turn`](crate::engine::Turn) holds these, and the server's
//! model's [`Completion`](crate::model::Completion) too.

use rmcp::model::{ContentBlock, JsonObject, ToolResultContent};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::engine::caller::error::SagaError;

/// The most tool uses one answer may carry: more is refused as the client's error, or
/// the server's model's failure (a bound on what one answer costs to keep and replay).
pub const MAX_TOOL_USES: usize = 64;

/// One tool the model asks to be called: its id (which the result names), the tool's
/// name, and its input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolUse {
    id: String,
    name: String,
    input: JsonObject,
}

impl ToolUse {
    /// A tool use as a model would ask for it: what a scripted answer (a
    /// [`TestCall`](crate::testing::TestCall)'s, a server model of your own) gives.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: JsonObject) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            input,
        }
    }

    /// Its id: the result answers it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The tool's name, one of those the sample offered.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The input as the model wrote it.
    pub fn input_json(&self) -> &JsonObject {
        &self.input
    }

    /// The input read as the tool's `Args` (the type its [`SamplingTool::of`](crate::engine::SamplingTool::of) named). The
    /// model's input is not trusted: one that does not fit is
    /// [`SagaError::ToolInput`], which names the tool and what does not fit; a loop can
    /// also answer it as an error result ([`ToolUse::error`]) and let the model try again.
    pub fn input<Args: DeserializeOwned>(&self) -> Result<Args, SagaError> {
        let value = serde_json::Value::Object(self.input.clone());
        serde_path_to_error::deserialize(value).map_err(|error| {
            // Where in the input, then what: `price: invalid type: string "…", expected
            // u64`. Both hold the model's (or the client's) words: escaped.
            SagaError::ToolInput {
                tool: crate::log::sanitized(&self.name),
                reason: at_path(&error),
            }
        })
    }

    /// Its result: `text`, for the model's next turn.
    pub fn result(&self, text: impl Into<String>) -> ToolResult {
        ToolResult {
            tool_use_id: self.id.clone(),
            text: text.into(),
            is_error: false,
        }
    }

    /// Its result as an error (`isError`): the tool failed, and the model reads why.
    pub fn error(&self, text: impl Into<String>) -> ToolResult {
        ToolResult {
            tool_use_id: self.id.clone(),
            text: text.into(),
            is_error: true,
        }
    }
}

/// The result of one [`ToolUse`], made by [`ToolUse::result`] or [`ToolUse::error`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    tool_use_id: String,
    text: String,
    is_error: bool,
}

impl ToolResult {
    /// The id of the tool use it answers.
    pub fn tool_use_id(&self) -> &str {
        &self.tool_use_id
    }

    /// Its text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether it reports a failure.
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    pub(crate) fn into_mcp(self) -> ToolResultContent {
        let content = vec![ContentBlock::text(self.text)];
        if self.is_error {
            ToolResultContent::error(self.tool_use_id, content)
        } else {
            ToolResultContent::new(self.tool_use_id, content)
        }
    }
}

/// An argument error with where it is (`age: invalid type: string "seventy", expected
/// u32`), escaped: the path and the value are the client's. A missing or unknown field's
/// error names it already, and is the object's (path `.`).
pub(crate) fn at_path(error: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let mut path = error.path().to_string();
    let inner = error.inner().to_string();
    // An unknown field's path ends with that field, which the message names already.
    if inner.starts_with("unknown field") {
        path = path
            .rsplit_once('.')
            .map_or(".", |(parent, _)| parent)
            .to_owned();
    }
    let reason = if path == "." || path.is_empty() {
        inner
    } else {
        format!("{path}: {inner}")
    };
    crate::log::sanitized(&reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)] // read only to see whether it fits
    struct Order {
        price: u64,
        items: Vec<Item>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Item {
        sku: String,
    }

    fn reason(input: serde_json::Value) -> String {
        let input = input.as_object().cloned().unwrap_or_default();
        match ToolUse::new("u1", "order", input).input::<Order>() {
            Err(SagaError::ToolInput { tool, reason }) => {
                assert_eq!(tool, "order");
                reason
            }
            other => panic!("not a misfit: {other:?}"),
        }
    }

    /// Issue 76: what does not fit names where it is in the input.
    #[test]
    fn a_misfit_names_its_path() {
        assert_eq!(
            reason(serde_json::json!({"price": "forty-nine ninety-nine", "items": []})),
            "price: invalid type: string \"forty-nine ninety-nine\", expected u64"
        );
        let nested = reason(serde_json::json!({"price": 5, "items": [{"sku": "a"}, {"sku": 7}]}));
        assert!(
            nested.starts_with("items[1].sku: invalid type: integer `7`"),
            "{nested}"
        );
        assert_eq!(
            reason(serde_json::json!({"items": []})),
            "missing field `price`"
        );
    }
}
