//! The printing: a result, its state, and who answered its samples.

#![allow(deprecated)] // sampling and roots: deprecated in 2026-07-28, still served

use rmcp::model::{CallToolResponse, CallToolResult};
use serde_json::Value;

use super::respond::content_text;
use crate::terminal::one_line;

/// Says which samples the server's own model answered in this request (its `_meta`
/// `saga/samples`): the client never saw them.
pub(super) fn say_served_samples(response: &CallToolResponse) {
    let meta = match response {
        CallToolResponse::Complete(result) => result.meta.as_ref(),
        CallToolResponse::InputRequired(result) => result.meta.as_ref(),
        _ => None,
    };
    let Some(served) = meta
        .and_then(|meta| meta.0.get("saga/samples"))
        .and_then(Value::as_array)
    else {
        return;
    };
    for sample in served {
        let key = one_line(sample["key"].as_str().unwrap_or("?"));
        match sample["model"].as_str() {
            Some(model) if sample["outcome"] != "failed" => say!(
                "← [{key}] sampling answered by the server's model ({})",
                one_line(model)
            ),
            _ => say!("← [{key}] sampling: the server's model did not answer"),
        }
    }
}

/// The token as printed: whole with `--show-state`, else its ends and its length.
pub(super) fn shown_state(state: &str, whole: bool) -> String {
    let chars: Vec<char> = state.chars().collect();
    if whole || chars.len() <= 24 {
        return state.to_owned();
    }
    let head: String = chars[..12].iter().collect();
    let tail: String = chars[chars.len() - 6..].iter().collect();
    format!(
        "{head}…{tail} ({} chars; --show-state prints it whole)",
        chars.len()
    )
}

/// Prints a tool's result (`when`: "after 2 round(s)", "of task …"); gives whether it
/// is an error.
pub(crate) fn print_result(result: &CallToolResult, when: &str) -> anyhow::Result<bool> {
    let is_error = result.is_error.unwrap_or(false);
    if is_error {
        say!("── ERROR (isError: true) {when} ──");
    } else {
        say!("── result {when} ──");
    }
    for block in &result.content {
        let value = serde_json::to_value(block)?;
        let text = content_text(Some(&value));
        if is_error {
            say!("error: {text}");
        } else {
            say!("{text}");
        }
    }
    if let Some(structured) = &result.structured_content {
        say!(
            "structuredContent:\n{}",
            serde_json::to_string_pretty(structured)?
        );
    }
    Ok(is_error)
}
