//! The differential harness: runs a saga as one plain async function with scripted
//! answers, and as the state machine, one transition per request (`SagaTools::run`),
//! sealing and opening the state at every step; then compares the two.

#![allow(deprecated)] // sampling and roots: deprecated in MCP 2026-07-28, still served

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use saga_examples::plain::{PlainRun, Scope, Script as PlainScript};
use saga_runtime::engine::{Call, SagaContext, ToolOutput};
use saga_runtime::prelude::*;
use saga_runtime::rmcp::ErrorData;
use saga_runtime::rmcp::model::{
    CallToolResponse, ClientCapabilities, ElicitationCapability, FormElicitationCapability,
    InputRequests, InputResponses, JsonObject, UrlElicitationCapability,
};
use serde_json::Value;

/// Answers requests from their JSON (`{"method": …, "params": …}`), as a client would.
pub struct Script {
    answer: AnswerFn,
    /// Requests answered so far: a saga that never ends fails its test instead of
    /// hanging it.
    answered: usize,
}

/// More answers than any corpus saga needs.
const MAX_ANSWERS: usize = 10_000;

/// Answers one request, given its key and JSON.
type AnswerFn = Box<dyn FnMut(&str, &Value) -> Value + Send>;

impl Script {
    /// A script answering each request (given its key and JSON) with `answer`.
    pub fn new(answer: impl FnMut(&str, &Value) -> Value + Send + 'static) -> Self {
        Self {
            answer: Box::new(answer),
            answered: 0,
        }
    }

    pub fn respond(&mut self, requests: &InputRequests) -> InputResponses {
        self.answered += requests.len();
        assert!(
            self.answered <= MAX_ANSWERS,
            "the saga never finished: {MAX_ANSWERS} requests answered"
        );
        requests
            .iter()
            .map(|(key, request)| {
                let json = serde_json::to_value(request).expect("requests serialize");
                (key.clone(), (self.answer)(key, &json))
            })
            .collect()
    }
}

impl PlainScript for Script {
    fn respond(&mut self, requests: &InputRequests) -> InputResponses {
        Script::respond(self, requests)
    }
}

/// The message of an elicitation, or the last user text of a sampling request.
pub fn prompt_of(request: &Value) -> String {
    let params = &request["params"];
    if let Some(message) = params["message"].as_str() {
        return message.to_owned();
    }
    params["messages"]
        .as_array()
        .and_then(|messages| messages.last())
        .and_then(|message| message["content"]["text"].as_str())
        .unwrap_or_default()
        .to_owned()
}

pub fn accept(content: Value) -> Value {
    serde_json::json!({"action": "accept", "content": content})
}

pub fn says(text: &str) -> Value {
    serde_json::json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": "scripted"})
}

/// Form and URL elicitation, sampling and roots.
pub fn all_capabilities() -> ClientCapabilities {
    let mut capabilities = ClientCapabilities::builder()
        .enable_elicitation()
        .enable_sampling()
        .enable_roots()
        .build();
    let mut elicitation = ElicitationCapability::default();
    elicitation.form = Some(FormElicitationCapability::default());
    elicitation.url = Some(UrlElicitationCapability::default());
    capabilities.elicitation = Some(elicitation);
    capabilities
}

/// The context of every differential run unless a test gives its own.
pub fn context() -> SagaContext {
    SagaContext::new("tester").with_capabilities(all_capabilities())
}

/// What a run produced.
#[derive(Debug)]
pub struct Outcome {
    /// The final `CallToolResult`, as JSON.
    pub result: Value,
    /// Requests to the client (state machine: rounds that asked or checkpointed).
    pub rounds: u32,
    /// The longest token sealed along the way.
    pub longest_token: usize,
    /// The `inputRequests` keys of every round, in order (empty for a checkpoint).
    pub keys: Vec<Vec<String>>,
}

impl Outcome {
    pub fn text(&self) -> &str {
        self.result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
    }
}

pub type PlainFuture<'a, O> = Pin<Box<dyn Future<Output = Result<O, ErrorData>> + Send + 'a>>;

/// Runs `tool` both ways with fresh scripts from `script` and asserts the results agree.
pub async fn differential<T, O, P>(
    tool: &T,
    plain: P,
    arguments: Value,
    script: impl Fn() -> Script,
) -> Outcome
where
    T: SagaTool + Clone,
    O: ToolOutput,
    P: for<'a> FnOnce(JsonObject, &'a SagaContext) -> PlainFuture<'a, O>,
{
    differential_in(context(), tool, plain, arguments, script).await
}

/// [`differential`] with the request context `cx` (e.g. a client without sampling).
pub async fn differential_in<T, O, P>(
    cx: SagaContext,
    tool: &T,
    plain: P,
    arguments: Value,
    script: impl Fn() -> Script,
) -> Outcome
where
    T: SagaTool + Clone,
    O: ToolOutput,
    P: for<'a> FnOnce(JsonObject, &'a SagaContext) -> PlainFuture<'a, O>,
{
    let arguments = arguments
        .as_object()
        .cloned()
        .expect("arguments are an object");

    let (output, run) = Scope::new(plain(arguments.clone(), &cx), PlainRun::new(script())).await;
    let output = output.expect("the plain run accepts the arguments");
    assert_eq!(
        run.failure, None,
        "the script answered the plain run usably"
    );
    let plain_result =
        serde_json::to_value(output.into_call_tool_result()).expect("results serialize");

    let machine = machine_in(&cx, tool, arguments, script()).await;
    assert_eq!(
        machine.result, plain_result,
        "state machine and plain run disagree"
    );
    assert_eq!(
        machine.rounds, run.rounds,
        "state machine and plain run asked a different number of rounds"
    );
    machine
}

/// Drives `tool` as the state machine to completion, one transition per request, the
/// state sealed and opened at every step.
pub async fn machine<T: SagaTool + Clone>(
    tool: &T,
    arguments: JsonObject,
    script: Script,
) -> Outcome {
    machine_in(&context(), tool, arguments, script).await
}

/// [`machine`] with the request context `cx`.
pub async fn machine_in<T: SagaTool + Clone>(
    cx: &SagaContext,
    tool: &T,
    arguments: JsonObject,
    mut script: Script,
) -> Outcome {
    // The saga in a registry of its own, as a server holds it: building it traces every
    // saved layout (a server could not be built otherwise).
    let tools = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .ttl(Duration::from_secs(600))
        .tool(tool.clone())
        .build()
        .expect("the saga's points trace");
    let name = tool.tool().name.to_string();
    let mut call = Call::tool(name, Some(arguments));
    let mut rounds = 0;
    let mut longest_token = 0;
    let mut keys = Vec::new();
    loop {
        match tools
            .run(call.clone(), cx)
            .await
            .expect("every transition succeeds")
        {
            CallToolResponse::Complete(result) => {
                return Outcome {
                    result: serde_json::to_value(result).expect("results serialize"),
                    rounds,
                    longest_token,
                    keys,
                };
            }
            CallToolResponse::InputRequired(required) => {
                rounds += 1;
                assert!(rounds < 10_000, "the saga never finished");
                let token = required.request_state.expect("every round carries a token");
                longest_token = longest_token.max(token.len());
                keys.push(
                    required
                        .input_requests
                        .iter()
                        .flat_map(|requests| requests.keys().cloned())
                        .collect(),
                );
                call.input_responses = required
                    .input_requests
                    .as_ref()
                    .map(|requests| script.respond(requests));
                call.request_state = Some(token);
            }
            other => panic!("unexpected response {other:?}"),
        }
    }
}

/// `differential(&tool, plain!(plain::tool), args, script)`: the plain run of a tool, from
/// the plain copy of its file (see `main.rs`).
#[macro_export]
macro_rules! plain {
    ($tool:expr) => {
        |arguments, cx| $tool(arguments, cx)
    };
}
