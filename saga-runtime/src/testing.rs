//! Testing a saga in process: drive a tool with scripted answers in `#[tokio::test]`, and
//! assert on what it asked, how many rounds it took and what it answered.
//!
//! A [`TestClient`] plays an MCP 2026-07-28 client against the same engine a server runs:
//! every round seals the tool's state into a token and the next round opens it again, so
//! a test exercises exactly what a server does between requests (a state that does not
//! save and read back fails here as it would in production). Nothing listens on a port.
//!
//! ```
//! use saga_runtime::prelude::*;
//! use saga_runtime::testing::{Answer, TestClient};
//! use serde_json::json;
//!
//! #[derive(Elicit, Serialize, Deserialize)]
//! struct Target {
//!     /// Where to deploy.
//!     environment: String,
//! }
//!
//! #[saga_tool]
//! async fn deploy(service: String) -> Result<String, SagaError> {
//!     match elicit::<Target>(format!("Where should {service} go?")).key("target").outcome().await? {
//!         Elicited::Accepted(target) => Ok(format!("{service} → {}", target.environment)),
//!         Elicited::Declined | Elicited::Cancelled => Ok("not deployed".to_owned()),
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let client = TestClient::new(deploy);
//! let run = client
//!     .call("deploy", json!({"service": "api"}))
//!     .answer("target", Answer::accept(json!({"environment": "staging"})))
//!     .run()
//!     .await
//!     .expect("the call completes");
//! assert_eq!(run.text(), "api → staging");
//! assert_eq!(run.rounds().len(), 2);
//! assert_eq!(run.asked()[0].message(), Some("Where should api go?"));
//!
//! let declined = client
//!     .call("deploy", json!({"service": "api"}))
//!     .answer("target", Answer::decline())
//!     .run()
//!     .await
//!     .expect("a decline is an answer");
//! assert_eq!(declined.text(), "not deployed");
//! # });
//! ```
//!
//! Answers are found, for each request asked, in this order: the answer given for its key
//! with [`TestCall::answer`] (used each time the key is asked, so a question asked again
//! gets the same answer), then the next of [`TestCall::then`]'s answers in the order the
//! requests are asked, then the [`TestCall::respond`] function. A request none of them
//! answers ends the run with [`Failed::Unscripted`]. Keys the runtime generates depend on
//! the branch the tool took; a test that pins `.key(..)` in the tool does not.
//!
//! To unit-test a hand-written `SagaTool::step` without a client, [`KeyedRound`] gives a
//! round's requests their keys and reads a client's responses into the step's `Answers`.

pub mod stores;
#[cfg(feature = "oauth")]
mod tokens;
#[cfg(feature = "oauth")]
pub use tokens::TestTokens;

pub use crate::engine::KeyedRound;

use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, FormElicitationCapability, InputRequest,
    InputResponses, JsonObject, UrlElicitationCapability,
};
use serde_json::{Map, Value, json};

use crate::engine::{Call, SagaContext, SagaTool};
use crate::serve::SagaTools;
use crate::serve::route::{Door, dispatch};
use crate::state::KeyRing;

/// The most rounds a [`TestCall`] runs before it gives up ([`Failed::TooManyRounds`]),
/// unless [`TestCall::max_rounds`] says otherwise.
pub const DEFAULT_MAX_ROUNDS: usize = 1_000;

/// An in-process client of a set of saga tools; see the [module docs](self).
#[derive(Debug, Clone)]
pub struct TestClient {
    tools: SagaTools,
    principal: String,
    capabilities: ClientCapabilities,
}

impl TestClient {
    /// A client of one tool, sealed with a fresh ephemeral key, as a server without a
    /// state store serves it: a state past the inline bound (16 KiB) ends the call as
    /// "outgrew its token". For a tool served with a state store
    /// (`SagaServerBuilder::state_store`), test it as it is served:
    /// [`TestClient::with_state_store`].
    ///
    /// # Panics
    ///
    /// If the tool does not register (its saved state cannot be traced, for example):
    /// the test fails with the reason, as `SagaTools::builder().build()` would report it.
    pub fn new(tool: impl SagaTool) -> Self {
        Self::built(SagaTools::builder().keys(KeyRing::ephemeral()).tool(tool))
    }

    /// [`TestClient::new`], with large states kept in `store` as a server built with
    /// `.state_store(store)` keeps them: a long agent loop then passes here exactly when
    /// it passes against that server.
    ///
    /// ```
    /// # use saga_runtime::prelude::*;
    /// # use saga_runtime::testing::TestClient;
    /// # #[saga_tool] async fn research(q: String) -> Result<String, SagaError> { Ok(q) }
    /// let client = TestClient::with_state_store(research, TaskStore::memory());
    /// # let _ = client;
    /// ```
    ///
    /// # Panics
    ///
    /// As [`TestClient::new`].
    pub fn with_state_store(
        tool: impl SagaTool,
        store: impl Into<crate::tasks::StateSettings>,
    ) -> Self {
        Self::built(
            SagaTools::builder()
                .keys(KeyRing::ephemeral())
                .tool(tool)
                .state_store(store),
        )
    }

    fn built(builder: crate::serve::SagaToolsBuilder) -> Self {
        // A task store in memory, as a server that runs task tools has: a task tool
        // called without the tasks extension then runs as it would over HTTP.
        let tools = builder
            .tasks(crate::tasks::TaskStore::memory())
            .build()
            .unwrap_or_else(|error| panic!("the tool does not register: {error}"));
        Self::with_tools(tools)
    }

    /// A client of every tool of `tools` (built with the keys, stores and bounds a test
    /// wants to exercise).
    pub fn with_tools(tools: SagaTools) -> Self {
        Self {
            tools,
            principal: "test".to_owned(),
            capabilities: every_capability(),
        }
    }

    /// Calls as `principal` (tokens are bound to it); `"test"` by default.
    pub fn principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = principal.into();
        self
    }

    /// Declares these capabilities on every request instead of elicitation (form and URL
    /// mode), sampling and roots: to test how a tool copes with a client that lacks one.
    pub fn capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// The registry the client calls.
    pub fn tools(&self) -> &SagaTools {
        &self.tools
    }

    /// A call of the tool `name` with `arguments` (a JSON object), to script and run.
    pub fn call(&self, name: impl Into<String>, arguments: Value) -> TestCall<'_> {
        TestCall {
            client: self,
            name: name.into(),
            arguments,
            by_key: BTreeMap::new(),
            in_order: VecDeque::new(),
            respond: None,
            unasked: BTreeMap::new(),
            max_rounds: DEFAULT_MAX_ROUNDS,
            as_task: false,
        }
    }
}

/// Elicitation in both modes, sampling and roots: what a full client declares.
fn every_capability() -> ClientCapabilities {
    let mut capabilities = ClientCapabilities::builder()
        .enable_elicitation()
        .enable_sampling()
        .enable_roots()
        .build();
    if let Some(elicitation) = capabilities.elicitation.as_mut() {
        elicitation.form = Some(FormElicitationCapability::default());
        elicitation.url = Some(UrlElicitationCapability::default());
    }
    if let Some(sampling) = capabilities.sampling.as_mut() {
        sampling.tools = Some(JsonObject::new());
    }
    capabilities
}

type Responder<'a> = Box<dyn FnMut(&Asked) -> Option<Answer> + Send + 'a>;

/// One call being scripted; [`TestCall::run`] drives it to its end.
#[must_use = "a call does nothing until it is run"]
pub struct TestCall<'a> {
    client: &'a TestClient,
    name: String,
    arguments: Value,
    by_key: BTreeMap<String, Answer>,
    in_order: VecDeque<Answer>,
    respond: Option<Responder<'a>>,
    unasked: BTreeMap<String, Answer>,
    max_rounds: usize,
    as_task: bool,
}

impl fmt::Debug for TestCall<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestCall")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .field("by_key", &self.by_key)
            .field("in_order", &self.in_order)
            .field("unasked", &self.unasked)
            .field("max_rounds", &self.max_rounds)
            .field("as_task", &self.as_task)
            .finish_non_exhaustive()
    }
}

impl<'a> TestCall<'a> {
    /// Answers the request keyed `key` with `answer`, each time it is asked.
    pub fn answer(mut self, key: impl Into<String>, answer: Answer) -> Self {
        self.by_key.insert(key.into(), answer);
        self
    }

    /// Answers the next request asked that has no answer by key: answers given this way
    /// are used once each, in the order the requests are asked.
    pub fn then(mut self, answer: Answer) -> Self {
        self.in_order.push_back(answer);
        self
    }

    /// Answers whatever the other answers do not, from what is asked; `None` leaves the
    /// request unanswered ([`Failed::Unscripted`]).
    pub fn respond(mut self, respond: impl FnMut(&Asked) -> Option<Answer> + Send + 'a) -> Self {
        self.respond = Some(Box::new(respond));
        self
    }

    /// Sends `answer` under `key` with the answers of every round after the first, asked
    /// or not: what a client that answers more than it is asked sends (a test of what the
    /// server takes from such a client).
    pub fn unasked(mut self, key: impl Into<String>, answer: Answer) -> Self {
        self.unasked.insert(key.into(), answer);
        self
    }

    /// Calls as a client that declares the tasks extension: a task tool's call becomes a
    /// task in the tools' task store (the registry must have one:
    /// `SagaToolsBuilder::tasks`), run by its workers; the call then polls it
    /// (`tasks/get`), answers what it asks (`tasks/update`, one [`Round`] each, as the
    /// call's own rounds are), and ends with its result. A call that completes before it
    /// becomes a task ends as an ordinary one.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use saga_runtime::prelude::*;
    /// use saga_runtime::testing::{Answer, TestClient};
    ///
    /// #[saga_tool(task = "required")]
    /// async fn approve(tables: u32) -> Result<String, SagaError> {
    ///     checkpoint().await;
    ///     let ok: bool = elicit(format!("Migrate {tables} tables?")).await?;
    ///     Ok(format!("{ok}"))
    /// }
    ///
    /// let tools = SagaTools::builder()
    ///     .keys(KeyRing::ephemeral())
    ///     .tasks(TaskStore::memory())
    ///     .tool(approve)
    ///     .build()
    ///     .unwrap();
    /// let run = TestClient::with_tools(tools)
    ///     .call("approve", serde_json::json!({"tables": 3}))
    ///     .as_task()
    ///     .then(Answer::accept(serde_json::json!(true)))
    ///     .run()
    ///     .await
    ///     .unwrap();
    /// assert_eq!(run.text(), "true");
    /// # });
    /// ```
    pub fn as_task(mut self) -> Self {
        self.as_task = true;
        self
    }

    /// Gives up after `rounds` rounds ([`Failed::TooManyRounds`]).
    pub fn max_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = rounds;
        self
    }

    /// Runs the call round after round, answering what each round asks, until the tool
    /// completes. Each round takes the route a server's `tools/call` takes, bounded as a
    /// server's request is by the tools' `max_run_time` (60 s by default): a tool that
    /// runs longer fails here as it would when served. (Under paused Tokio time the
    /// clock jumps to the next timer whenever the runtime idles, and this bound is a
    /// timer: a tool that waits on real I/O in a test with paused time is stopped by it.)
    pub async fn run(mut self) -> Result<Run, Failed> {
        let arguments = match self.arguments.take() {
            Value::Object(arguments) => Some(arguments),
            Value::Null => None,
            other => {
                return Err(Failed::Server {
                    error: ErrorData::invalid_params(
                        format!("the arguments of a call are a JSON object, not {other}"),
                        None,
                    ),
                    rounds: Vec::new(),
                });
            }
        };
        let mut rounds: Vec<Round> = Vec::new();
        let mut token: Option<String> = None;
        let mut responses: Option<InputResponses> = None;
        loop {
            if rounds.len() >= self.max_rounds {
                return Err(Failed::TooManyRounds { rounds });
            }
            let call = Call {
                request_state: token.take(),
                input_responses: responses.take(),
                ..Call::tool(self.name.clone(), arguments.clone())
            };
            let mut capabilities = self.client.capabilities.clone();
            if self.as_task {
                capabilities
                    .extensions
                    .get_or_insert_with(Default::default)
                    .insert(
                        rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                        Default::default(),
                    );
            }
            let cx = SagaContext::new(self.client.principal.clone())
                .with_capabilities(capabilities)
                .with_model(self.client.tools.server_model());
            // The route a server's `tools/call` takes: a task tool called without the
            // tasks extension passes its checkpoints within one request, as over HTTP.
            let tools = &self.client.tools;
            let response = dispatch(tools, call, &cx, Door::ToolsCall).await;
            let response = match response {
                Ok(response) => response,
                Err(error) => return Err(Failed::Server { error, rounds }),
            };
            let required = match response {
                CallToolResponse::Complete(result) => {
                    rounds.push(Round {
                        asked: Vec::new(),
                        token_len: None,
                    });
                    return Ok(Run { rounds, result });
                }
                CallToolResponse::InputRequired(required) => required,
                CallToolResponse::Task(created) if self.as_task => {
                    return self.follow_task(&created.task.task_id, rounds).await;
                }
                other => {
                    let error = ErrorData::internal_error(
                        format!("the call answered neither a result nor input_required: {other:?}"),
                        None,
                    );
                    return Err(Failed::Server { error, rounds });
                }
            };
            let token_len = required.request_state.as_ref().map(String::len);
            let requests = required.input_requests.unwrap_or_default();
            let mut answers = match self.answer_round(requests, token_len, &mut rounds) {
                Ok(answers) => answers,
                Err(key) => return Err(Failed::Unscripted { key, rounds }),
            };
            for (key, answer) in &self.unasked {
                answers
                    .entry(key.clone())
                    .or_insert_with(|| answer.clone().into_value());
            }
            token = required.request_state;
            responses = (!answers.is_empty()).then_some(answers);
        }
    }

    /// Follows the task `id` the call became to its end: polled, its requests answered
    /// with `tasks/update`, within the tools' run-time bound for each wait.
    async fn follow_task(mut self, id: &str, mut rounds: Vec<Round>) -> Result<Run, Failed> {
        use rmcp::model::TaskPayload;
        let tools = &self.client.tools;
        let Some(tasks) = tools.tasks() else {
            let error = ErrorData::internal_error("a task without a task store", None);
            return Err(Failed::Server { error, rounds });
        };
        let principal = self.client.principal.clone();
        let mut waited_since = std::time::Instant::now();
        loop {
            let got = match tasks.get(tools, id, &principal).await {
                Ok(got) => got,
                Err(error) => return Err(Failed::Server { error, rounds }),
            };
            match got.task.payload {
                TaskPayload::Completed { result } => {
                    let result: CallToolResult = match serde_json::from_value(Value::Object(result))
                    {
                        Ok(result) => result,
                        Err(error) => {
                            let error = ErrorData::internal_error(
                                format!("the task's result is not a tool's: {error}"),
                                None,
                            );
                            return Err(Failed::Server { error, rounds });
                        }
                    };
                    rounds.push(Round {
                        asked: Vec::new(),
                        token_len: None,
                    });
                    return Ok(Run { rounds, result });
                }
                TaskPayload::Failed { error } => {
                    let error: ErrorData = serde_json::from_value(Value::Object(error))
                        .unwrap_or_else(|error| {
                            ErrorData::internal_error(format!("the task failed: {error}"), None)
                        });
                    return Err(Failed::Server { error, rounds });
                }
                TaskPayload::Cancelled => {
                    let error = ErrorData::internal_error("the task was cancelled", None);
                    return Err(Failed::Server { error, rounds });
                }
                TaskPayload::InputRequired { input_requests } if !input_requests.is_empty() => {
                    if rounds.len() >= self.max_rounds {
                        return Err(Failed::TooManyRounds { rounds });
                    }
                    let answers = match self.answer_round(input_requests, None, &mut rounds) {
                        Ok(answers) => answers,
                        Err(key) => return Err(Failed::Unscripted { key, rounds }),
                    };
                    if let Err(error) = tasks.update(tools, id, &principal, answers).await {
                        return Err(Failed::Server { error, rounds });
                    }
                    waited_since = std::time::Instant::now();
                }
                _ => {
                    // Working (or asking nothing yet): the task's workers run it.
                    if waited_since.elapsed() > tools.bounds().max_run_time {
                        let error = ErrorData::internal_error(
                            "the task did not settle within the tools' max_run_time",
                            None,
                        );
                        return Err(Failed::Server { error, rounds });
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
            }
        }
    }

    /// Answers the requests of one round, as the script says, and counts the round (its
    /// token `token_len` long, if it has one); `Err` names the first request the script
    /// has no answer for.
    fn answer_round(
        &mut self,
        requests: rmcp::model::InputRequests,
        token_len: Option<usize>,
        rounds: &mut Vec<Round>,
    ) -> Result<InputResponses, String> {
        let asked: Vec<Asked> = requests
            .into_iter()
            .map(|(key, request)| Asked::new(key, &request))
            .collect();
        let mut answers = InputResponses::new();
        let mut unscripted = None;
        for request in &asked {
            match self.answer_for(request) {
                Some(answer) => {
                    answers.insert(request.key.clone(), answer.into_value());
                }
                None => {
                    unscripted = Some(request.key.clone());
                    break;
                }
            }
        }
        rounds.push(Round { asked, token_len });
        match unscripted {
            Some(key) => Err(key),
            None => Ok(answers),
        }
    }

    fn answer_for(&mut self, asked: &Asked) -> Option<Answer> {
        if let Some(answer) = self.by_key.get(&asked.key) {
            return Some(answer.clone());
        }
        if let Some(answer) = self.in_order.pop_front() {
            return Some(answer);
        }
        self.respond.as_mut().and_then(|respond| respond(asked))
    }
}

/// An answer to one request, as the client sends it back.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer(Value);

impl Answer {
    /// Accepts a form with `content`. A form is an object; anything else is the value of a
    /// one-field form (`elicit::<bool>`, `elicit::<String>`, …), so `Answer::accept(json!(true))`
    /// sends `{"value": true}`.
    pub fn accept(content: Value) -> Self {
        let content = match content {
            Value::Object(content) => content,
            value => Map::from_iter([("value".to_owned(), value)]),
        };
        Self(json!({"action": "accept", "content": content}))
    }

    /// Accepts a URL elicitation (no content).
    pub fn accept_url() -> Self {
        Self(json!({"action": "accept"}))
    }

    /// Declines the question.
    pub fn decline() -> Self {
        Self(json!({"action": "decline"}))
    }

    /// Dismisses the question without choosing.
    pub fn cancel() -> Self {
        Self(json!({"action": "cancel"}))
    }

    /// The client's LLM answers `text`.
    pub fn sampled(text: impl Into<String>) -> Self {
        Self(json!({
            "role": "assistant",
            "content": {"type": "text", "text": text.into()},
            "model": "test-model",
            "stopReason": "endTurn",
        }))
    }

    /// The client's LLM asks for tools to be called (`(id, name, input)`, in order), for
    /// a sample that offered tools.
    pub fn tool_uses<'t>(uses: impl IntoIterator<Item = (&'t str, &'t str, Value)>) -> Self {
        let content: Vec<Value> = uses
            .into_iter()
            .map(|(id, name, input)| {
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            })
            .collect();
        Self(json!({
            "role": "assistant",
            "content": content,
            "model": "test-model",
            "stopReason": "toolUse",
        }))
    }

    /// The client's roots, as `file://` URIs.
    pub fn roots<S: AsRef<str>>(uris: impl IntoIterator<Item = S>) -> Self {
        let roots: Vec<Value> = uris
            .into_iter()
            .map(|uri| json!({"uri": uri.as_ref()}))
            .collect();
        Self(json!({ "roots": roots }))
    }

    /// Any answer, as its JSON (to test what the server does with a malformed one).
    pub fn raw(value: Value) -> Self {
        Self(value)
    }

    fn into_value(self) -> Value {
        self.0
    }
}

/// One request a round asked, under its `inputRequests` key.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    key: String,
    request: Value,
}

impl Asked {
    fn new(key: String, request: &InputRequest) -> Self {
        let request = serde_json::to_value(request).unwrap_or(Value::Null);
        Self { key, request }
    }

    /// The `inputRequests` key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The method: `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub fn method(&self) -> &str {
        self.request["method"].as_str().unwrap_or_default()
    }

    /// The request's params, as sent.
    pub fn params(&self) -> &Value {
        &self.request["params"]
    }

    /// The elicitation's message, if this is one.
    pub fn message(&self) -> Option<&str> {
        self.params()["message"].as_str()
    }

    /// A form's `requestedSchema`, if this is one.
    pub fn requested_schema(&self) -> Option<&JsonObject> {
        self.params()["requestedSchema"].as_object()
    }

    /// A form's fields, in the order they are sent (and shown).
    pub fn fields(&self) -> Vec<&str> {
        self.requested_schema()
            .and_then(|schema| schema.get("properties"))
            .and_then(Value::as_object)
            .map(|properties| properties.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// A URL elicitation's URL, if this is one.
    pub fn url(&self) -> Option<&str> {
        self.params()["url"].as_str()
    }

    /// A sampling request's first message's text, if this is one.
    pub fn prompt(&self) -> Option<&str> {
        self.params()["messages"][0]["content"]["text"].as_str()
    }

    /// The names of the tools a sampling request offered, in order (none if it is not
    /// one, or offered none).
    pub fn tool_names(&self) -> Vec<&str> {
        self.params()["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|tool| tool["name"].as_str())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The request as it went over the wire (`{"method": …, "params": …}`).
    pub fn as_json(&self) -> &Value {
        &self.request
    }
}

/// One request-response of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    asked: Vec<Asked>,
    token_len: Option<usize>,
}

impl Round {
    /// What the round asked, in key order; empty for a checkpoint and for the last round.
    pub fn asked(&self) -> &[Asked] {
        &self.asked
    }

    /// The length of the token the round sealed (`None` for the last round).
    pub fn token_len(&self) -> Option<usize> {
        self.token_len
    }
}

/// A call that completed.
#[derive(Debug, Clone)]
pub struct Run {
    rounds: Vec<Round>,
    result: CallToolResult,
}

impl Run {
    /// The tool's result, as the client gets it.
    pub fn result(&self) -> &CallToolResult {
        &self.result
    }

    /// The result's text content, joined with newlines.
    pub fn text(&self) -> String {
        self.result
            .content
            .iter()
            .filter_map(|content| content.as_text().map(|text| text.text.as_str()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Whether the tool ended with an error result (`isError`).
    pub fn is_error(&self) -> bool {
        self.result.is_error == Some(true)
    }

    /// The result's `structuredContent`, if any.
    pub fn structured(&self) -> Option<&Value> {
        self.result.structured_content.as_ref()
    }

    /// Every round, the last (which completed) included.
    pub fn rounds(&self) -> &[Round] {
        &self.rounds
    }

    /// Every request asked, round after round.
    pub fn asked(&self) -> Vec<&Asked> {
        self.rounds.iter().flat_map(|round| &round.asked).collect()
    }
}

/// Why a [`TestCall`] did not complete.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Failed {
    /// The server answered a JSON-RPC error (a tool error is a result, [`Run::is_error`]).
    Server {
        /// The error.
        error: ErrorData,
        /// The rounds before it.
        rounds: Vec<Round>,
    },
    /// A request that nothing in the script answers.
    Unscripted {
        /// Its key.
        key: String,
        /// The rounds so far, the last one asking it.
        rounds: Vec<Round>,
    },
    /// The run passed [`TestCall::max_rounds`].
    TooManyRounds {
        /// The rounds it ran.
        rounds: Vec<Round>,
    },
}

impl Failed {
    /// The rounds run before the failure.
    pub fn rounds(&self) -> &[Round] {
        match self {
            Failed::Server { rounds, .. }
            | Failed::Unscripted { rounds, .. }
            | Failed::TooManyRounds { rounds } => rounds,
        }
    }
}

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failed::Server { error, rounds } => write!(
                f,
                "the server answered error {} after {} rounds: {}",
                error.code.0,
                rounds.len(),
                error.message
            ),
            Failed::Unscripted { key, rounds } => {
                let asked = rounds
                    .last()
                    .and_then(|round| round.asked.iter().find(|asked| asked.key == *key));
                write!(f, "nothing in the script answers {key:?}")?;
                if let Some(asked) = asked {
                    write!(f, " ({} {})", asked.method(), asked.params())?;
                }
                Ok(())
            }
            Failed::TooManyRounds { rounds } => {
                write!(f, "the call did not complete in {} rounds", rounds.len())
            }
        }
    }
}

impl std::error::Error for Failed {}
