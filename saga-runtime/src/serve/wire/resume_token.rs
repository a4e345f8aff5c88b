//! The resume-token format (seed 003): a call that checkpoints answers with a result
//! carrying `nextResumeToken`, and the client repeats the call with that value as
//! `resumeToken` (in `params`, or in `arguments`) until a result comes without one.
//! Selected with `Mcp-Result-Format: resume-token`; for tools that only checkpoint, since
//! the format has no way to ask the client anything.
//!
//! In MRTR terms `resumeToken` is the `requestState`, and a result with only a
//! `requestState` (a checkpoint) is a result with `nextResumeToken`.

use std::collections::BTreeMap;

use rmcp::ErrorData;
use serde_json::{Value, json};

use super::format::{ResultFormat, error_envelope, input_required};
use crate::engine::StepFailure;

/// The parameter that carries the token back.
pub(crate) const RESUME_TOKEN: &str = "resumeToken";

pub(crate) struct ResumeToken;

impl ResultFormat for ResumeToken {
    const HEADER_VALUE: &'static str = "resume-token";
    const BOUND_METHOD: &'static str = "tools/call#resume-token";

    /// Moves `resumeToken` (from `params` or `params.arguments`) to `params.requestState`.
    fn decode(
        message: &mut Value,
        _failures: &mut BTreeMap<String, StepFailure>,
    ) -> Result<(), ErrorData> {
        let Some(Value::Object(params)) = message.get_mut("params") else {
            return Ok(());
        };
        let from_arguments = match params.get_mut("arguments") {
            Some(Value::Object(arguments)) => arguments.remove(RESUME_TOKEN),
            _ => None,
        };
        let token = params.remove(RESUME_TOKEN).or(from_arguments);
        match token {
            None | Some(Value::Null) => Ok(()),
            Some(token @ Value::String(_)) => {
                params.insert("requestState".into(), token);
                Ok(())
            }
            Some(_) => Err(ErrorData::invalid_params(
                "`resumeToken` must be a string",
                None,
            )),
        }
    }

    /// A checkpoint's `input_required` result becomes a result with `nextResumeToken`; one
    /// that asks the client something cannot be said in this format.
    fn encode(mut response: Value) -> Value {
        let Some(result) = input_required(&response) else {
            return response;
        };
        if result.get("inputRequests").is_some() {
            return error_envelope(
                &response,
                ErrorData::invalid_request(
                    "this tool asks the client for input, which the resume-token format cannot \
                     carry; call it with MRTR (MCP 2026-07-28) instead",
                    None,
                ),
            );
        }
        let token = result.get("requestState").cloned().unwrap_or(Value::Null);
        response["result"] = json!({"content": [], "nextResumeToken": token});
        response
    }
}
