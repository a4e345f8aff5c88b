//! What a kind of request is to the runtime: the [`AskKind`] trait each kind implements,
//! the failure a client can report instead of an answer, and the readers every kind's
//! answer goes through.

use crate::engine::caller::error::Failure;
use rmcp::model::{ClientCapabilities, ElicitResult, ElicitationAction, InputRequest};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::caller::context::SagaContext;
use crate::engine::identity::fnv::Fnv;
use crate::log::Escaped;

/// One kind of request: everything the runtime does that depends on the kind.
pub(crate) trait AskKind {
    /// What a request of this kind carries from the tool until its round is sealed.
    type Asked: std::fmt::Debug + Clone;
    /// The client's answer, read and checked, until the tool takes it.
    type Answered: std::fmt::Debug + Clone;

    /// The prefix of the `inputRequests` keys generated for requests of this kind (the
    /// key is the prefix, `-`, and a number).
    const PREFIX: &'static str;

    /// Whether the tool can state such a request again, word for word, from its saved
    /// state, so that the token need not keep it.
    const RESTATABLE: bool = true;

    /// Whether `cx` lacks the client capability this kind needs; if so, that capability
    /// is added to `required`, which the refusal names.
    fn lacks(cx: &SagaContext, required: &mut ClientCapabilities) -> bool;

    /// Writes the request into a round's digest (see `round/digest.rs`), a tag byte of its own
    /// first. Sealed: a token's digest binds exactly these bytes.
    fn digest(asked: &Self::Asked, hash: &mut Fnv);

    /// The params a token keeps, where the kind writes them faster than serde does from
    /// the request as it is sent (`None`: serde writes them).
    fn kept_params(_asked: &Self::Asked) -> Option<String> {
        None
    }

    /// The request as it is sent; `tool` names the tool in an error that is its bug.
    fn input(asked: Self::Asked, tool: &str) -> Result<InputRequest, Failure>;

    /// The request sent again, from the params a token kept.
    fn resend(params: &str) -> serde_json::Result<InputRequest>;

    /// Reads the client's answer to the request at `key`; `kept` says whether the token
    /// kept the request's params. A wrong shape is the client's error (`-32602`).
    fn parse(value: Value, kept: bool, key: &str) -> Result<Self::Answered, Failure>;
}

/// A client's report that a step failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepFailure {
    /// The client's error code.
    pub code: i64,
    /// The client's message.
    pub message: String,
}

impl StepFailure {
    /// A failure as a client reports it. The message is the client's text and may reach
    /// the tool's result and the log, so its control characters are escaped and its length
    /// bounded.
    pub fn from_client(code: i64, message: &str) -> Self {
        Self {
            code,
            message: crate::log::sanitized(message),
        }
    }
}

/// The answer at `key` read as a `T`, or the client's error (`-32602`) naming what it is
/// not.
pub(crate) fn read_answer<T: serde::de::DeserializeOwned>(
    value: Value,
    key: &str,
    expected: &str,
) -> Result<T, Failure> {
    serde_json::from_value::<T>(value).map_err(|error| malformed(key, expected, &error))
}

fn malformed(key: &str, expected: &str, error: &serde_json::Error) -> Failure {
    tracing::info!(
        key = %Escaped(key),
        error = %Escaped(&error.to_string()),
        "malformed input response"
    );
    Failure::InvalidParams(
        format!("inputResponses[{key:?}] is not a valid {expected}: {error}").into(),
    )
}

/// A well-shaped answer that says something the request rules out (`-32602`).
pub(crate) fn refused(key: &str, what: &str, why: &str) -> Failure {
    tracing::info!(key = %Escaped(key), why, "refused {what} answer");
    Failure::InvalidParams(format!("inputResponses[{:?}] {why}", Escaped(key)).into())
}

/// An elicitation's answer, form or URL mode.
pub(crate) fn read_elicit_result(value: Value, key: &str) -> Result<ElicitResult, Failure> {
    match elicit_result(value) {
        Ok(result) => Ok(result),
        Err(value) => read_answer(value, key, "ElicitResult"),
    }
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
