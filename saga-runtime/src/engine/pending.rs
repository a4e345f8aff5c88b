//! The requests a suspended saga is waiting on, kept inside its token, and the checks an
//! answer must pass before the tool sees it.

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    InputRequest, InputRequests, InputResponses, ListRootsRequest, ListRootsResult, Role,
    RootsCapabilities, SamplingCapability, SamplingMessageContentBlock, UrlElicitationCapability,
};
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::answers::{Answer, StepFailure};
use super::context::SagaContext;
use super::elicit::check_content;
use super::requests::{Request, RequestKind};
use crate::log::Escaped;

/// The part of a token's plaintext the runtime reads without knowing the tool's state
/// type; the tool's state follows it.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Head {
    /// The next number for a generated `inputRequests` key: keys stay unique over the
    /// whole saga, so a stale answer from an earlier round can never be mistaken for one
    /// of this round.
    pub(crate) next_key: u32,
    /// The requests of the last round, in the order the tool reads their answers.
    pub(crate) pending: Vec<Pending>,
    /// How many transitions the saga has run, for the log.
    pub(crate) round: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Kind {
    Form,
    Url,
    Sample,
    Roots,
}

/// One outstanding request: its key, what kind it is, and the request's params as JSON
/// (the kind gives its method), so that it can be sent again word for word if the answer
/// is missing or unusable. Tokens sealed before the params-only form hold the whole
/// request; both are read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Pending {
    pub(crate) key: String,
    pub(crate) kind: Kind,
    pub(crate) request: String,
}

impl Pending {
    pub(crate) fn input_request(&self) -> Result<InputRequest, ErrorData> {
        let params = match self.kind {
            Kind::Roots => return Ok(InputRequest::ListRoots(ListRootsRequest::default())),
            Kind::Form | Kind::Url => serde_json::from_str::<ElicitRequestParams>(&self.request)
                .map(|params| InputRequest::Elicitation(ElicitRequest::new(params))),
            Kind::Sample => serde_json::from_str::<CreateMessageRequestParams>(&self.request)
                .map(|params| InputRequest::CreateMessage(CreateMessageRequest::new(params))),
        };
        params
            .or_else(|error| serde_json::from_str::<InputRequest>(&self.request).map_err(|_| error))
            .map_err(|error| {
                tracing::error!(key = %self.key, %error, "a sealed request does not decode");
                ErrorData::internal_error("the saga's pending request could not be rebuilt", None)
            })
    }

    fn requested_schema(&self) -> Option<Map<String, Value>> {
        // Only the schema is built; the rest of the request is skipped over.
        #[derive(Deserialize)]
        struct Params {
            #[serde(rename = "requestedSchema")]
            requested_schema: Option<Map<String, Value>>,
            /// A whole request, as tokens sealed before the params-only form hold it.
            params: Option<Box<Params>>,
        }
        let params = serde_json::from_str::<Params>(&self.request).ok()?;
        params
            .requested_schema
            .or_else(|| params.params.and_then(|inner| inner.requested_schema))
    }
}

/// The JSON kept in a token for `input`: its params (the method follows from the kind).
fn params_json(input: &InputRequest) -> serde_json::Result<String> {
    match input {
        InputRequest::Elicitation(request) => serde_json::to_string(&request.params),
        InputRequest::CreateMessage(request) => serde_json::to_string(&request.params),
        InputRequest::ListRoots(_) => Ok(String::new()),
        other => serde_json::to_string(other),
    }
}

/// Turns the tool's requests into pending entries, giving each its key; also returns
/// them as the round's `inputRequests`, so that they need not be decoded back from the
/// entries (which costs more than sealing the token).
pub(crate) fn assign(
    requests: Vec<Request>,
    next_key: &mut u32,
    tool: &str,
) -> Result<(Vec<Pending>, InputRequests), ErrorData> {
    let mut pending: Vec<Pending> = Vec::with_capacity(requests.len());
    let mut input_requests = InputRequests::new();
    for request in requests {
        let (kind, prefix, input) = match request.kind {
            RequestKind::Elicit { message, schema } => {
                let requested_schema = schema.map_err(|reason| tool_bug(tool, reason))?;
                let params = ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message,
                    requested_schema,
                };
                (
                    Kind::Form,
                    "elicit",
                    InputRequest::Elicitation(ElicitRequest::new(params)),
                )
            }
            RequestKind::ElicitUrl {
                message,
                url,
                elicitation_id,
            } => {
                let params = ElicitRequestParams::UrlElicitationParams {
                    meta: None,
                    message,
                    url,
                    elicitation_id: elicitation_id.unwrap_or_else(crate::state::random_id),
                };
                (
                    Kind::Url,
                    "elicit",
                    InputRequest::Elicitation(ElicitRequest::new(params)),
                )
            }
            RequestKind::Sample(params) => (
                Kind::Sample,
                "sample",
                InputRequest::CreateMessage(CreateMessageRequest::new(*params)),
            ),
            RequestKind::ListRoots => (
                Kind::Roots,
                "roots",
                InputRequest::ListRoots(ListRootsRequest::default()),
            ),
        };
        let key = match request.key {
            Some(key) => key,
            None => {
                *next_key += 1;
                format!("{prefix}-{next_key}")
            }
        };
        if pending.iter().any(|other| other.key == key) {
            return Err(tool_bug(
                tool,
                format!(
                    "two requests of one round share the key {key:?}; give each a distinct .key(..)"
                ),
            ));
        }
        let request = params_json(&input)
            .map_err(|error| tool_bug(tool, format!("a request does not encode: {error}")))?;
        pending.push(Pending {
            key: key.clone(),
            kind,
            request,
        });
        input_requests.insert(key, input);
    }
    Ok((pending, input_requests))
}

fn tool_bug(tool: &str, reason: String) -> ErrorData {
    tracing::error!(tool, %reason, "the tool made an invalid request");
    ErrorData::internal_error(format!("tool {tool} made an invalid request"), None)
}

/// Refuses the round with `-32021` if the request did not declare a capability that one of
/// `pending` needs. Checked on every request: a client's capabilities are whatever this
/// request says, never what an earlier one said.
pub(crate) fn gate(pending: &[Pending], cx: &SagaContext) -> Result<(), ErrorData> {
    let mut required = ClientCapabilities::default();
    let mut missing = false;
    for entry in pending {
        match entry.kind {
            Kind::Form if !cx.can_elicit() => {
                required
                    .elicitation
                    .get_or_insert_with(ElicitationCapability::default);
                missing = true;
            }
            Kind::Url if !cx.can_elicit_url() => {
                let elicitation = required
                    .elicitation
                    .get_or_insert_with(ElicitationCapability::default);
                elicitation.url = Some(UrlElicitationCapability::default());
                missing = true;
            }
            Kind::Sample if !cx.can_sample() => {
                required.sampling = Some(SamplingCapability::default());
                missing = true;
            }
            Kind::Roots if !cx.can_list_roots() => {
                required.roots = Some(RootsCapabilities::default());
                missing = true;
            }
            _ => {}
        }
    }
    if missing {
        tracing::info!(
            ?required,
            "the client did not declare a capability the saga needs"
        );
        return Err(ErrorData::missing_required_client_capability(required));
    }
    Ok(())
}

/// The `inputRequests` of a round.
pub(crate) fn input_requests(pending: &[Pending]) -> Result<InputRequests, ErrorData> {
    pending
        .iter()
        .map(|entry| Ok((entry.key.clone(), entry.input_request()?)))
        .collect()
}

/// What the client's `inputResponses` amount to.
pub(crate) enum Collected {
    /// Every pending request has a usable answer, in pending order.
    All(Vec<Answer>),
    /// Something is missing or unusable: ask the same requests again.
    Ask(String),
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
    let mut answers = Vec::with_capacity(pending.len());
    let mut missing = Vec::new();
    for entry in pending {
        if let Some(failure) = failures.get(&entry.key) {
            answers.push(Answer::Failed(failure.clone()));
            continue;
        }
        let Some(value) = responses.remove(&entry.key) else {
            missing.push(entry.key.as_str());
            continue;
        };
        answers.push(parse(entry, value)?);
    }
    if !missing.is_empty() {
        return Ok(Collected::Ask(format!("no answer for {missing:?}")));
    }
    for (entry, answer) in pending.iter().zip(&answers) {
        if let (Kind::Form, Answer::Elicit(result)) = (entry.kind, answer)
            && result.action == ElicitationAction::Accept
        {
            let schema = entry.requested_schema().unwrap_or_default();
            let content = result.content.as_ref().unwrap_or(&Value::Null);
            if let Err(why) = check_content(&schema, content) {
                return Ok(Collected::Ask(format!(
                    "the answer to {:?} does not match its schema: {why}",
                    entry.key
                )));
            }
        }
    }
    Ok(Collected::All(answers))
}

fn parse(entry: &Pending, value: Value) -> Result<Answer, ErrorData> {
    let malformed = |expected: &str, error: serde_json::Error| {
        tracing::info!(
            key = %Escaped(&entry.key),
            error = %Escaped(&error.to_string()),
            "malformed input response"
        );
        ErrorData::invalid_params(
            format!(
                "inputResponses[{:?}] is not a valid {expected}: {error}",
                entry.key
            ),
            None,
        )
    };
    Ok(match entry.kind {
        Kind::Form | Kind::Url => Answer::Elicit(
            serde_json::from_value::<ElicitResult>(value)
                .map_err(|e| malformed("ElicitResult", e))?,
        ),
        Kind::Sample => {
            let result = serde_json::from_value::<CreateMessageResult>(value)
                .map_err(|e| malformed("CreateMessageResult", e))?;
            check_sampled(&entry.key, &result)?;
            Answer::Sample(Box::new(result))
        }
        Kind::Roots => {
            let result = serde_json::from_value::<ListRootsResult>(value)
                .map_err(|e| malformed("ListRootsResult", e))?;
            check_roots(&entry.key, &result)?;
            Answer::Roots(result)
        }
    })
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Kind, Pending, assign};
    use crate::engine::requests::{Request, elicit, list_roots, sample};

    fn requests() -> Vec<Request> {
        vec![
            elicit::<bool>("Sure?").into(),
            sample("Summarise").max_tokens(7).into(),
            list_roots().into(),
        ]
    }

    #[test]
    fn pending_entries_keep_params_only_and_rebuild_the_same_requests() {
        let mut next_key = 0;
        let (pending, asked) = assign(requests(), &mut next_key, "t").expect("valid requests");
        assert_eq!(pending.len(), 3);
        for entry in &pending {
            assert!(!entry.request.contains("\"method\""), "{}", entry.request);
            let rebuilt = entry.input_request().expect("the entry rebuilds");
            assert_eq!(
                serde_json::to_value(&rebuilt).ok(),
                serde_json::to_value(&asked[&entry.key]).ok(),
                "{} is asked again word for word",
                entry.key
            );
        }
        let schema = pending[0].requested_schema().expect("a form has a schema");
        assert_eq!(schema["properties"]["value"]["type"], "boolean");
    }

    #[test]
    fn entries_sealed_with_the_whole_request_still_read() {
        let mut next_key = 0;
        let (_, asked) = assign(requests(), &mut next_key, "t").expect("valid requests");
        let (key, form) = asked.iter().next().expect("a request");
        let old = Pending {
            key: key.clone(),
            kind: Kind::Form,
            request: serde_json::to_string(form).expect("a request serializes"),
        };
        assert_eq!(
            serde_json::to_value(old.input_request().expect("the old form rebuilds")).ok(),
            serde_json::to_value(form).ok()
        );
        assert_eq!(
            old.requested_schema().map(|schema| schema["type"].clone()),
            Some(json!("object"))
        );
    }
}
