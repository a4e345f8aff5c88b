//! Reading the client's answers to a round: each checked against what was asked before
//! the tool sees it.

use rmcp::ErrorData;
use rmcp::model::{
    CreateMessageResult, ElicitResult, ElicitationAction, InputResponses, ListRootsResult, Role,
    SamplingMessageContentBlock,
};
use std::collections::BTreeMap;

use serde_json::Value;

use super::answers::{Answer, AnswerSlots, StepFailure};
use super::elicit::{ContentCheck, Misfit};
use super::pending::{Kind, Pending};
use super::requests::Form;
use crate::log::Escaped;

/// What the client's `inputResponses` amount to.
pub(crate) enum Collected {
    /// Every pending request has a usable answer, in pending order (each `Some`, as
    /// [`Answers`](super::Answers) keeps them until the tool takes them).
    All(AnswerSlots),
    /// Something is missing or unusable: ask the same requests again. `misfits` are the
    /// answers outside their forms, by position in the round, to say why.
    Ask {
        reason: String,
        misfits: Vec<(usize, Misfit)>,
    },
}

/// Reads the answers to `pending` out of `responses`. A response that is not the result
/// type its request calls for is a malformed request (`-32602`); a missing response, or a
/// form whose content does not match the schema that was sent, means asking again.
/// Responses to keys that are not pending are ignored.
pub(crate) fn collect(
    pending: &[Pending],
    mut responses: InputResponses,
    failures: &BTreeMap<String, StepFailure>,
) -> Result<Collected, ErrorData> {
    let mut answers = AnswerSlots::with_capacity(pending.len());
    let mut missing = Vec::new();
    for entry in pending {
        let key = entry.key();
        if let Some(failure) = failures.get(&*key) {
            answers.push(Some(Answer::Failed(failure.clone())));
            continue;
        }
        let Some(value) = responses.remove(&*key) else {
            missing.push(key);
            continue;
        };
        answers.push(Some(parse(entry, value)?));
    }
    if !missing.is_empty() {
        return Ok(Collected::Ask {
            reason: format!("no answer for {missing:?}"),
            misfits: Vec::new(),
        });
    }
    let mut misfits = Vec::new();
    for (index, (entry, answer)) in pending.iter().zip(&answers).enumerate() {
        // A form the token keeps no params of is an `Answer::FormUnchecked`, checked as
        // the tool reads it: there is no schema here to check it against.
        if let (Kind::Form, Some(params), Some(Answer::Elicit(result))) =
            (entry.kind, &entry.params, answer)
            && result.action == ElicitationAction::Accept
        {
            let content = result.content.as_ref().unwrap_or(&Value::Null);
            let verdict = match Form::of_params(params) {
                Some(form) => form.kept_check.check(content),
                None => {
                    ContentCheck::new(&entry.requested_schema().unwrap_or_default()).check(content)
                }
            };
            if let Err(misfit) = verdict {
                misfits.push((index, misfit));
            }
        }
    }
    if !misfits.is_empty() {
        return Ok(Collected::Ask {
            reason: "an answer does not fit its form".to_owned(),
            misfits,
        });
    }
    Ok(Collected::All(answers))
}

fn parse(entry: &Pending, value: Value) -> Result<Answer, ErrorData> {
    let key = entry.key();
    let malformed = |expected: &str, error: serde_json::Error| {
        tracing::info!(
            key = %Escaped(&key),
            error = %Escaped(&error.to_string()),
            "malformed input response"
        );
        ErrorData::invalid_params(
            format!(
                "inputResponses[{:?}] is not a valid {expected}: {error}",
                key
            ),
            None,
        )
    };
    Ok(match entry.kind {
        Kind::Form | Kind::Url => {
            let result = match elicit_result(value) {
                Ok(result) => result,
                Err(value) => serde_json::from_value::<ElicitResult>(value)
                    .map_err(|e| malformed("ElicitResult", e))?,
            };
            match (entry.kind, &entry.params) {
                (Kind::Form, None) => Answer::FormUnchecked(result),
                _ => Answer::Elicit(result),
            }
        }
        Kind::Sample => {
            let result = serde_json::from_value::<CreateMessageResult>(value)
                .map_err(|e| malformed("CreateMessageResult", e))?;
            check_sampled(&key, &result)?;
            Answer::Sample(Box::new(result))
        }
        Kind::Roots => {
            let result = serde_json::from_value::<ListRootsResult>(value)
                .map_err(|e| malformed("ListRootsResult", e))?;
            check_roots(&key, &result)?;
            Answer::Roots(result)
        }
    })
}

/// The `ElicitResult` serde would read from `value`, built by moving `content` instead of
/// rebuilding it node by node; anything but the common shape (an object with a known
/// `action` and no `_meta`) is handed back for serde to read, with serde's errors.
pub(crate) fn elicit_result(value: Value) -> Result<ElicitResult, Value> {
    let Value::Object(object) = value else {
        return Err(value);
    };
    let action = match object.get("action").and_then(Value::as_str) {
        Some("accept") => ElicitationAction::Accept,
        Some("decline") => ElicitationAction::Decline,
        Some("cancel") => ElicitationAction::Cancel,
        _ => return Err(Value::Object(object)),
    };
    if object.contains_key("_meta") {
        return Err(Value::Object(object));
    }
    let mut result = ElicitResult::new(action);
    // Taken by consuming the object: removing it from the map cost more. serde reads
    // `"content": null` as no content, as here.
    result.content = object
        .into_iter()
        .find_map(|(name, value)| (name == "content").then_some(value))
        .filter(|content| !content.is_null());
    Ok(result)
}

/// A sampling answer is the client's LLM speaking: role `assistant`, and text, since saga
/// asks only for text (MCP 2026-07-28 `CreateMessageResult`).
fn check_sampled(key: &str, result: &CreateMessageResult) -> Result<(), ErrorData> {
    let refuse = |why: &str| {
        tracing::info!(key = %Escaped(key), why, "refused sampling answer");
        Err(ErrorData::invalid_params(
            format!("inputResponses[{:?}] {why}", Escaped(key)),
            None,
        ))
    };
    if result.message.role != Role::Assistant {
        return refuse("must have role \"assistant\"");
    }
    if !result
        .message
        .content
        .iter()
        .all(|block| matches!(block, SamplingMessageContentBlock::Text(_)))
    {
        return refuse("must hold text content only: the request asked for text");
    }
    Ok(())
}

/// Roots are `file://` URIs (MCP 2026-07-28 `Root.uri`).
fn check_roots(key: &str, result: &ListRootsResult) -> Result<(), ErrorData> {
    if let Some(root) = result
        .roots
        .iter()
        .find(|root| !root.uri.starts_with("file://"))
    {
        tracing::info!(key = %Escaped(key), uri = %Escaped(&root.uri), "refused roots answer");
        return Err(ErrorData::invalid_params(
            format!(
                "inputResponses[{:?}] has a root whose URI is not a file:// URI",
                Escaped(key)
            ),
            None,
        ));
    }
    Ok(())
}
