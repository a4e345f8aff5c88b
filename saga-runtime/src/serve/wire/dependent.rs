//! The "dependent requests" format (seed 001, the streamless round-trip proposal): an
//! incomplete call is answered at the JSON-RPC envelope with `dependent_requests` instead
//! of `result`, and the retry carries `dependent_responses` beside `params`.
//! Selected with `Mcp-Result-Format: dependent-requests`.
//!
//! The format has no state token, so each request replays the saga from its arguments,
//! one transition at a time in process, feeding it the answers the client sent, until it
//! completes or needs an answer the client has not given. Code between suspensions
//! therefore runs again on every round; MRTR's token avoids that.
//!
//! In MRTR terms the request is a first `tools/call` whose `inputResponses` are the
//! `dependent_responses` that carry a `result`; those that carry an `error` are step
//! failures, passed beside it.

use std::collections::BTreeMap;

use rmcp::ErrorData;
use serde_json::{Map, Value};

use super::format::{ResultFormat, input_required};
use crate::engine::StepFailure;

pub(crate) struct DependentRequests;

impl ResultFormat for DependentRequests {
    const HEADER_VALUE: &'static str = "dependent-requests";
    const BOUND_METHOD: &'static str = "tools/call#dependent-requests";

    /// Moves `dependent_responses` into `params.inputResponses` and the failures aside.
    fn decode(
        message: &mut Value,
        failures: &mut BTreeMap<String, StepFailure>,
    ) -> Result<(), ErrorData> {
        let Some(envelope) = message.as_object_mut() else {
            return Ok(());
        };
        let responses = match envelope.remove("dependent_responses") {
            None | Some(Value::Null) => return Ok(()),
            Some(Value::Object(responses)) => responses,
            Some(_) => {
                return Err(ErrorData::invalid_params(
                    "`dependent_responses` must be an object",
                    None,
                ));
            }
        };
        let mut answers = Map::new();
        for (key, response) in responses {
            if let Some(result) = response.get("result") {
                answers.insert(key, result.clone());
            } else if let Some(error) = response.get("error") {
                let failure = StepFailure::from_client(
                    error.get("code").and_then(Value::as_i64).unwrap_or(0),
                    error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                );
                failures.insert(key, failure);
            } else {
                return Err(ErrorData::invalid_params(
                    format!(
                        "dependent_responses[{:?}] has neither `result` nor `error`",
                        crate::log::Escaped(&key)
                    ),
                    None,
                ));
            }
        }
        if let Some(Value::Object(params)) = envelope.get_mut("params")
            && !answers.is_empty()
        {
            params.insert("inputResponses".into(), Value::Object(answers));
        }
        Ok(())
    }

    /// An `input_required` result becomes `dependent_requests` at the envelope.
    fn encode(mut response: Value) -> Value {
        let Some(requests) = input_required(&response).map(|result| {
            result
                .get("inputRequests")
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new()))
        }) else {
            return response;
        };
        if let Some(envelope) = response.as_object_mut() {
            envelope.remove("result");
            envelope.insert("dependent_requests".into(), requests);
        }
        response
    }
}
