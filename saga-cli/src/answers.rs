//! `--answers FILE`: the answers to a call's input requests, from JSON, for scripts and CI.
//!
//! The file is one JSON object keyed by the `inputRequests` key the server gives:
//!
//! ```json
//! {
//!   "elicit-1": {"action": "accept", "content": {"target": "production"}},
//!   "sample-2": "Yes, all systems are green.",
//!   "confirm": "decline"
//! }
//! ```
//!
//! - an elicitation takes an `ElicitResult` (`{"action": …, "content": …}`), or just
//!   `"accept"` / `"decline"` / `"cancel"`, or a bare object that is the accepted content;
//! - a sampling request takes the model's answer as a string, or a whole
//!   `CreateMessageResult` (with `role` and `content`);
//! - a roots request needs no entry (the roots come from `--root`), or takes a
//!   `ListRootsResult`.
//!
//! A request whose key is missing from the file is an error.

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// The answers of a file, by `inputRequests` key.
#[derive(Debug, Clone, Default)]
pub struct Answers(BTreeMap<String, Value>);

impl Answers {
    /// Parses the text of an answers file.
    pub fn parse(text: &str) -> Result<Self, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
        match value {
            Value::Object(map) => Ok(Self(map.into_iter().collect())),
            _ => Err("must be a JSON object keyed by inputRequests key".into()),
        }
    }

    /// The raw entry for `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// The `ElicitResult` for the elicitation keyed `key`.
    pub fn elicitation(&self, key: &str) -> Result<Value, String> {
        let entry = self.require(key)?;
        elicit_result(entry).ok_or_else(|| {
            format!(
                "the answer to {key:?} is not an elicitation answer \
                 ({{\"action\": \"accept\", \"content\": {{…}}}}, \"decline\" or \"cancel\")"
            )
        })
    }

    /// The `CreateMessageResult` for the sampling request keyed `key`: the model's text,
    /// `{"tool_use": {"name": …, "input": {…}}}` for a call of a tool the request
    /// offered (its id is `key`), or the whole result.
    pub fn sampling(&self, key: &str) -> Result<Value, String> {
        match self.require(key)? {
            Value::String(text) => Ok(sampling_result(text)),
            Value::Object(object) if object.contains_key("tool_use") => {
                let call = &object["tool_use"];
                match (call.get("name").and_then(Value::as_str), call.get("input")) {
                    (Some(name), Some(input @ Value::Object(_))) => {
                        Ok(tool_use_result(key, name, input.clone()))
                    }
                    (Some(name), None) => Ok(tool_use_result(key, name, json!({}))),
                    _ => Err(format!(
                        "the answer to {key:?} is not a tool use \
                         ({{\"tool_use\": {{\"name\": \"…\", \"input\": {{…}}}}}})"
                    )),
                }
            }
            Value::Object(object)
                if object.contains_key("content") && object.contains_key("role") =>
            {
                Ok(Value::Object(object.clone()))
            }
            _ => Err(format!(
                "the answer to {key:?} is not a sampling answer (the model's text as a string)"
            )),
        }
    }

    fn require(&self, key: &str) -> Result<&Value, String> {
        self.0
            .get(key)
            .ok_or_else(|| format!("the answers file has no answer for {key:?}"))
    }
}

fn elicit_result(entry: &Value) -> Option<Value> {
    match entry {
        Value::String(action) if matches!(action.as_str(), "accept" | "decline" | "cancel") => {
            Some(json!({"action": action}))
        }
        Value::Object(object) => match object.get("action") {
            Some(Value::String(action))
                if matches!(action.as_str(), "accept" | "decline" | "cancel") =>
            {
                Some(entry.clone())
            }
            Some(_) => None,
            None => Some(json!({"action": "accept", "content": entry})),
        },
        _ => None,
    }
}

/// A `CreateMessageResult` calling the tool `name` with `input` (a call whose id is
/// `id`), as chosen by a person.
pub fn tool_use_result(id: &str, name: &str, input: Value) -> Value {
    json!({
        "role": "assistant",
        "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
        "model": "human-at-saga-cli",
        "stopReason": "toolUse"
    })
}

/// A `CreateMessageResult` holding the assistant's `text`, as typed by a person.
pub fn sampling_result(text: &str) -> Value {
    json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": "human-at-saga-cli",
        "stopReason": "endTurn"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_answer_shape() {
        let answers = Answers::parse(
            r#"{
                "elicit-1": {"action": "accept", "content": {"target": "production"}},
                "bare": {"target": "staging"},
                "no": "decline",
                "sample-2": "Yes.",
                "full": {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"},
                "bad": 5
            }"#,
        )
        .unwrap();
        assert_eq!(
            answers.elicitation("elicit-1").unwrap(),
            json!({"action": "accept", "content": {"target": "production"}})
        );
        assert_eq!(
            answers.elicitation("bare").unwrap(),
            json!({"action": "accept", "content": {"target": "staging"}})
        );
        assert_eq!(
            answers.elicitation("no").unwrap(),
            json!({"action": "decline"})
        );
        assert_eq!(
            answers.sampling("sample-2").unwrap()["content"]["text"],
            "Yes."
        );
        assert_eq!(answers.sampling("full").unwrap()["model"], "m");
        assert!(answers.elicitation("bad").is_err());
        assert!(answers.sampling("bad").is_err());
        let called =
            Answers::parse(r#"{"s": {"tool_use": {"name": "search", "input": {"q": 1}}}}"#)
                .unwrap();
        let result = called.sampling("s").unwrap();
        assert_eq!(result["content"][0]["type"], "tool_use");
        assert_eq!(result["content"][0]["id"], "s");
        assert_eq!(result["content"][0]["input"]["q"], 1);
        let bad = Answers::parse(r#"{"s": {"tool_use": {"input": 3}}}"#).unwrap();
        assert!(bad.sampling("s").is_err());
        assert!(answers.sampling("elicit-1").is_err());
        let missing = answers.elicitation("elicit-9").unwrap_err();
        assert!(missing.contains("elicit-9"), "{missing}");
    }

    #[test]
    fn refuses_files_that_are_not_an_object() {
        assert!(Answers::parse("[]").is_err());
        assert!(Answers::parse("{").is_err());
        assert!(
            Answers::parse(r#"{"k": {"action": "maybe"}}"#)
                .unwrap()
                .elicitation("k")
                .is_err()
        );
    }
}
